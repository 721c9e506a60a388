import Foundation
import Testing
import ReelCore
@testable import ReelTerminal

/// What a kitty terminal holds after the encoder's commands: images by id, their one frame
/// with rectangles composed onto it, where each was placed, and whether the cursor moved.
struct KittyTerminal {
    var images: [Int: RGBImage] = [:]
    var placements: [Int: (column: Int, row: Int)] = [:]
    var cursor = (column: 0, row: 0)
    var commands: [[String: String]] = []
    /// The shared-memory objects read (`t=s`), in order.
    var sharedMemoryRead: [String] = []
    private var pendingKeys: [String: String]?
    private var pendingPayload = ""

    mutating func feed(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        var rest = Substring(text)
        while let start = rest.range(of: "\u{1B}") {
            rest = rest[start.upperBound...]
            if rest.hasPrefix("_G"), let end = rest.range(of: "\u{1B}\\") {
                command(String(rest[rest.index(rest.startIndex, offsetBy: 2)..<end.lowerBound]))
                rest = rest[end.upperBound...]
            } else if rest.hasPrefix("["), let h = rest.firstIndex(of: "H") {
                let fields = rest[rest.index(after: rest.startIndex)..<h].split(separator: ";").map { Int($0) ?? 1 }
                cursor = (fields[1] - 1, fields[0] - 1)
                rest = rest[rest.index(after: h)...]
            }
        }
    }

    private mutating func command(_ body: String) {
        let parts = body.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        var keys: [String: String] = [:]
        for pair in parts[0].split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            keys[String(kv[0])] = kv.count > 1 ? String(kv[1]) : ""
        }
        let payload = parts.count > 1 ? String(parts[1]) : ""
        if var first = pendingKeys {
            pendingPayload += payload
            if keys["m"] == "1" { return }
            first["m"] = "0"
            pendingKeys = nil
            run(first, payload: pendingPayload)
        } else if keys["m"] == "1" {
            pendingKeys = keys
            pendingPayload = payload
        } else {
            run(keys, payload: payload)
        }
    }

    private mutating func run(_ keys: [String: String], payload: String) {
        commands.append(keys)
        func int(_ k: String) -> Int { Int(keys[k] ?? "") ?? 0 }
        let id = int("i")
        var pixels = [UInt8](Data(base64Encoded: payload) ?? Data())
        if keys["t"] == "s" {
            // As kitty does: the payload names a shared-memory object, read and then unlinked.
            let name = String(decoding: pixels, as: UTF8.self)
            pixels = KittySharedMemory.contents(of: name) ?? []
            KittySharedMemory.remove(name)
            sharedMemoryRead.append(name)
            if let size = keys["S"], Int(size) != pixels.count { pixels = [] }
        }
        if keys["o"] == "z" { pixels = Zlib.decompress(pixels, capacity: 1 << 24) ?? [] }
        switch keys["a"] {
        case "T":
            images[id] = RGBImage(width: int("s"), height: int("v"), bytes: pixels)
            placements[id] = cursor
        case "f":
            guard keys["r"] == "1", var image = images[id] else { return }
            let (x0, y0, w, h) = (int("x"), int("y"), int("s"), int("v"))
            for y in 0..<h { for x in 0..<w {
                let s = (y * w + x) * 3
                image[x0 + x, y0 + y] = (pixels[s], pixels[s + 1], pixels[s + 2])
            } }
            images[id] = image
        case "d":
            images[id] = nil
            placements[id] = nil
        default: break
        }
    }
}

@Suite struct KittyEncoderTests {
    @Test func theFirstFrameIsPlacedWithoutMovingTheCursorAndComesBackExactly() {
        var encoder = KittyEncoder()
        var terminal = KittyTerminal()
        let image = testPicture(width: 200, height: 100)
        terminal.feed(encoder.encode(image, column: 3, row: 2))
        let id = encoder.configuration.imageID
        #expect(terminal.images[id] == image)
        #expect(terminal.placements[id]?.column == 3 && terminal.placements[id]?.row == 2)
        let first = terminal.commands[0]
        #expect(first["a"] == "T" && first["C"] == "1" && first["q"] == "2" && first["f"] == "24" && first["o"] == "z")
        #expect(encoder.lastFrame.fullRedraw)
        // Noisy pixels: several chunks of at most 4096 base64 characters, m=1 on all but the last.
        var fresh = KittyEncoder()
        let text = String(decoding: fresh.encode(image, column: 0, row: 0), as: UTF8.self)
        let chunks = text.components(separatedBy: "\u{1B}_G").dropFirst()
        #expect(chunks.count > 2 && chunks.dropLast().allSatisfy { $0.contains("m=1;") } && chunks.last?.hasPrefix("m=0;") == true)
        #expect(chunks.allSatisfy { $0.count <= 4096 + 80 })
        // A flat picture compresses to almost nothing.
        var flat = KittyEncoder()
        _ = flat.encode(RGBImage(width: 200, height: 100, fill: (10, 20, 30)))
        #expect(flat.lastFrame.bytes < 600)
    }

    @Test func laterFramesSendOnlyTheChangedRectangleComposedInPlace() {
        var encoder = KittyEncoder()
        var terminal = KittyTerminal()
        var image = testPicture(width: 160, height: 90)
        terminal.feed(encoder.encode(image, column: 0, row: 1))
        let whole = encoder.lastFrame.bytes
        for y in 40..<50 { for x in 70..<90 { image[x, y] = (255, 255, 0) } }
        let update = encoder.encode(image, column: 0, row: 1)
        #expect(encoder.lastFrame == .init(bytes: update.count, x: 70, y: 40, width: 20, height: 10, fullRedraw: false))
        #expect(update.count * 10 < whole)
        terminal.feed(update)
        #expect(terminal.images[encoder.configuration.imageID] == image)
        #expect(terminal.commands.last?["a"] == "a" && terminal.commands.last?["c"] == "1")
        #expect(encoder.encode(image, column: 0, row: 1).isEmpty)
    }

    @Test func aMoveOrANewSizeDeletesTheOldImageFirstAndDeleteRemovesIt() {
        var encoder = KittyEncoder()
        var terminal = KittyTerminal()
        terminal.feed(encoder.encode(testPicture(width: 40, height: 20), column: 0, row: 0))
        terminal.feed(encoder.encode(testPicture(width: 30, height: 20), column: 5, row: 0))
        #expect(terminal.commands.map { $0["a"] } == ["T", "d", "T"])
        #expect(terminal.placements[encoder.configuration.imageID]?.column == 5)
        terminal.feed(encoder.delete)
        #expect(terminal.images.isEmpty && terminal.placements.isEmpty)
    }

    @Test func withoutDiffingEachFrameIsTransmittedWhole() {
        var encoder = KittyEncoder(configuration: .init(diffing: false))
        let image = testPicture(width: 40, height: 20)
        let first = encoder.encode(image)
        #expect(encoder.encode(image) == first)
        #expect(encoder.lastFrame.fullRedraw)
    }
}
