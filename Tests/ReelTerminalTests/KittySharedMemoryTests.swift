import Foundation
import Testing
import ReelCore
import ReelThreads
@testable import ReelTerminal

/// Kitty frames through POSIX shared memory (`t=s`): the command, the objects, their clean-up.
@Suite struct KittySharedMemoryTests {
    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// The shared-memory names a run of kitty commands carries.
    private static func names(in bytes: [UInt8]) -> [String] {
        text(bytes).components(separatedBy: "\u{1B}_G").dropFirst().compactMap { command in
            guard command.contains("t=s"), let semicolon = command.firstIndex(of: ";"),
                  let end = command.range(of: "\u{1B}\\") else { return nil }
            let payload = command[command.index(after: semicolon)..<end.lowerBound]
            return Data(base64Encoded: String(payload)).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    @Test func theFirstFrameIsOneCommandNamingAnObjectThatHoldsThePixels() throws {
        let store = KittySharedMemory()
        defer { store.removeAll() }
        var encoder = KittyEncoder(sharedMemory: store)
        let image = testPicture(width: 120, height: 80)
        let bytes = encoder.encode(image, column: 4, row: 2)
        let name = try #require(store.unread.first)
        #expect(store.unread == [name])
        #expect(name.hasPrefix("/reel-kitty-\(getpid())-"))
        let id = encoder.configuration.imageID
        let expected = "\u{1B}[3;5H\u{1B}_Ga=T,i=\(id),f=24,s=120,v=80,q=2,C=1,t=s,S=\(120 * 80 * 3);"
            + Data(name.utf8).base64EncodedString() + "\u{1B}\\"
        #expect(Self.text(bytes) == expected)
        // Uncompressed RGB, exactly the picture; a hundred bytes down the terminal instead of it.
        #expect(KittySharedMemory.contents(of: name) == image.bytes)
        #expect(encoder.lastFrame.sharedMemory && encoder.lastFrame.fullRedraw && encoder.lastFrame.bytes == bytes.count)
        var direct = KittyEncoder()
        #expect(bytes.count * 100 < direct.encode(image, column: 4, row: 2).count)
    }

    @Test func aTerminalReadingTheObjectsHoldsEveryFrameAndEachFrameHasItsOwnName() {
        let store = KittySharedMemory()
        defer { store.removeAll() }
        var encoder = KittyEncoder(sharedMemory: store)
        var terminal = KittyTerminal()
        var image = testPicture(width: 160, height: 90)
        terminal.feed(encoder.encode(image, column: 0, row: 1))
        for step in 0..<3 {
            for y in (10 * step)..<(10 * step + 8) { for x in 30..<70 { image[x, y] = (255, UInt8(step * 60), 0) } }
            let update = encoder.encode(image, column: 0, row: 1)
            #expect(encoder.lastFrame.sharedMemory && !encoder.lastFrame.fullRedraw)
            #expect(encoder.lastFrame.width == 40 && encoder.lastFrame.height == 8 && encoder.lastFrame.y == 10 * step)
            #expect(update.count < 200)
            terminal.feed(update)
            #expect(terminal.commands.last?["a"] == "a")
            #expect(terminal.commands.dropLast().last?["t"] == "s" && terminal.commands.dropLast().last?["a"] == "f")
        }
        #expect(terminal.images[encoder.configuration.imageID] == image)
        // Four frames, four objects, every one read and unlinked by the terminal.
        #expect(Set(terminal.sharedMemoryRead).count == 4)
        #expect(terminal.sharedMemoryRead.allSatisfy { !KittySharedMemory.exists($0) })
        #expect(store.unread.isEmpty)
    }

    @Test func aTerminalThatStopsReadingGetsCompressedFramesAndNothingIsLeft() {
        // One object may wait unread; the terminal reads none, and no wait is allowed.
        let store = KittySharedMemory(maxUnread: 1, patience: 0)
        var encoder = KittyEncoder(sharedMemory: store)
        var image = testPicture(width: 64, height: 48)
        let first = encoder.encode(image)
        #expect(encoder.lastFrame.sharedMemory)
        let unread = Self.names(in: first)
        #expect(unread.count == 1 && KittySharedMemory.exists(unread[0]))
        image[5, 5] = (0, 0, 0)
        let second = encoder.encode(image)
        #expect(!encoder.lastFrame.sharedMemory && store.gaveUp)
        #expect(Self.text(second).contains("o=z") && !Self.text(second).contains("t=s"))
        // Given up for good: later frames go direct too, without waiting again.
        image[6, 6] = (0, 0, 0)
        _ = encoder.encode(image)
        #expect(!encoder.lastFrame.sharedMemory)
        store.removeAll()
        #expect(!KittySharedMemory.exists(unread[0]) && store.unread.isEmpty)
    }

    @Test func theRendererUnlinksWhatTheTerminalDidNotReadWhenItStops() async throws {
        let output = FakeTerminalOutput()
        let renderer = TerminalRenderer { output.write($0) }
        var graphics = TerminalGraphics(output: .kitty, cellWidth: 10, cellHeight: 20, reason: "test")
        graphics.transfer = .sharedMemory
        renderer.graphics = graphics
        renderer.layout(screenColumns: 40, screenRows: 12, area: (0, 0, 40, 12))
        renderer.presentPicture(testPicture(width: 64, height: 48))
        renderer.start()
        // Nobody reads: a terminal that died with the frame's name in its input.
        let writes = try #require(await output.writes.wait { !$0.isEmpty })
        let names = Self.names(in: writes[0])
        #expect(names.count == 1)
        #expect(names.allSatisfy(KittySharedMemory.exists))
        renderer.stop()
        await renderer.finished()
        #expect(output.all.last == KittyEncoder().delete)
        #expect(!names.contains(where: KittySharedMemory.exists))
    }
}
