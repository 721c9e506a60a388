import Foundation
import Testing
import ReelCore
import ReelLoading
import ReelMedia
import ReelTerminal
import ReelTestSupport

/// Collects what the renderer writes; can hold writes back to act as a slow terminal.
final class FakeTerminalOutput: @unchecked Sendable {
    private let condition = NSCondition()
    private var writes: [[UInt8]] = []
    private var blocked = false

    func write(_ bytes: [UInt8]) {
        condition.lock()
        writes.append(bytes)
        condition.broadcast()
        while blocked { condition.wait() }
        condition.unlock()
    }

    func block() { condition.withLock { blocked = true } }
    func unblock() { condition.withLock { blocked = false; condition.broadcast() } }
    var all: [[UInt8]] { condition.withLock { writes } }

    /// Waits (at most `timeout` seconds) until `predicate` holds for the writes.
    func wait(timeout: Double = 20, _ predicate: ([[UInt8]]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(writes) {
            if !condition.wait(until: deadline) { return predicate(writes) }
        }
        return true
    }
}

@Suite struct TerminalRendererTests {
    /// The first frames of a solid-colour clip.
    private func frames(_ color: String, count: Int = 3) throws -> [VideoFrame] {
        let url = try Fixtures.clip(ClipSpec(width: 64, height: 48, duration: 0.5, audioCodec: nil,
                                             videoSource: "color=c=\(color):size=64x48:rate=30"))
        var out: [VideoFrame] = []
        try SequentialDecoder.decodeVideo(url, loader: FileLoader(), threads: 1) { frame in
            out.append(frame)
            return out.count < count
        }
        return out
    }

    private func presentation() -> Presentation {
        Presentation(presentedAt: .zero, droppedFrames: 0, isFirstFrameOfSequence: false)
    }

    @Test func aFrameIsScaledEncodedAndWrittenOnceWithItsChrome() throws {
        let blue = try frames("0x0000FF")
        let output = FakeTerminalOutput()
        let renderer = TerminalRenderer { output.write($0) }
        renderer.overlay = { full in full ? Array("CHROME".utf8) : [] }
        renderer.layout(screenColumns: 20, screenRows: 10, area: (0, 1, 20, 6))
        renderer.start()
        defer { renderer.stop() }
        renderer.present(blue[0], presentation: presentation())
        #expect(output.wait { $0.contains { String(decoding: $0, as: UTF8.self).contains("CHROME") } })
        let text = String(decoding: output.all.first { String(decoding: $0, as: UTF8.self).contains("CHROME") }!, as: UTF8.self)
        // One write: synchronized, cleared, the picture in blue, then the chrome.
        #expect(text.hasPrefix("\u{1B}[?2026h"))
        #expect(text.hasSuffix("CHROME\u{1B}[?2026l"))
        #expect(text.contains("\u{1B}[2J"))
        #expect(text.range(of: #"48;2;[0-9]{1,2};[0-9]{1,2};2[45][0-9]m"#, options: .regularExpression) != nil)
        // 64×48 (4:3) into 20×6 cells of 1:2 → 16×6 cells, centred at column 2 of row 1.
        #expect(text.contains("\u{1B}[2;3H"))
        let stats = renderer.statistics
        #expect(stats.rendered == 1)
        #expect(stats.columns == 16 && stats.rows == 6)
        #expect(stats.lastFrameBytes > 0)
    }

    @Test func anUnchangedFrameCostsNoVideoBytes() throws {
        let red = try frames("red", count: 1)
        let output = FakeTerminalOutput()
        let renderer = TerminalRenderer(configuration: .init(measureFullRedraw: true)) { output.write($0) }
        renderer.layout(screenColumns: 20, screenRows: 10, area: (0, 0, 20, 10))
        renderer.start()
        defer { renderer.stop() }
        renderer.present(red[0], presentation: presentation())
        #expect(output.wait { $0.count >= 1 })
        renderer.present(red[0], presentation: presentation())
        let deadline = Date().addingTimeInterval(20)
        while renderer.statistics.rendered < 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let stats = renderer.statistics
        #expect(stats.rendered == 2)
        #expect(stats.lastFrameBytes == 0)
        #expect(output.all.count == 1)  // nothing to write for the second frame
        #expect(stats.fullRedrawBytes > stats.videoBytes)  // the baseline redrew it
    }

    @Test func aSlowTerminalDropsFramesInsteadOfQueueing() throws {
        let clip = try frames("green", count: 1)
        let output = FakeTerminalOutput()
        let renderer = TerminalRenderer { output.write($0) }
        renderer.layout(screenColumns: 20, screenRows: 10, area: (0, 0, 20, 10))
        output.block()
        // Presented before the thread starts, so its first write (stuck in the
        // terminal) holds this frame, not just the initial clear.
        renderer.present(clip[0], presentation: presentation())
        renderer.start()
        defer { renderer.stop() }
        #expect(output.wait { $0.count == 1 })  // the first write is stuck in the terminal
        for _ in 0..<5 { renderer.present(clip[0], presentation: presentation()) }
        output.unblock()
        let deadline = Date().addingTimeInterval(20)
        while renderer.statistics.rendered < 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let stats = renderer.statistics
        #expect(stats.presented == 6)
        #expect(stats.dropped == 4)  // five presented while blocked: only the latest is drawn
        #expect(stats.rendered == 2)
    }
}
