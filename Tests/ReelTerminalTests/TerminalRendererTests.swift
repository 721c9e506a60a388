import Foundation
import Synchronization
import Testing
import ReelCore
import ReelLoading
import ReelMedia
import ReelTerminal
import ReelTestSupport

/// Collects what the renderer writes (on its render thread); can hold writes back to act
/// as a slow terminal. Tests await the writes; only the render thread ever blocks here.
final class FakeTerminalOutput: Sendable {
    /// Every write so far, in order.
    let writes = Observed<[[UInt8]]>([])

    private struct Gate {
        var blocked = false
        var writerWaiting = false
    }
    /// Guarded: whether writes are held back, and whether the writer is waiting.
    private let gate = Mutex(Gate())
    /// Where a held-back write waits (the render thread's own, never the pool).
    private let release = DispatchSemaphore(value: 0)

    /// The renderer's output (render thread).
    func write(_ bytes: [UInt8]) {
        writes.update { $0.append(bytes) }
        let wait = gate.withTrackedLock { gate in
            if gate.blocked { gate.writerWaiting = true }
            return gate.blocked
        }
        if wait { release.wait() }
    }

    func block() { gate.withTrackedLock { $0.blocked = true } }

    func unblock() {
        let waiting = gate.withTrackedLock { gate in
            gate.blocked = false
            defer { gate.writerWaiting = false }
            return gate.writerWaiting
        }
        if waiting { release.signal() }
    }

    var all: [[UInt8]] { writes.value }
}

@Suite struct TerminalRendererTests {
    /// The first frames of a solid-colour clip (decoded on a thread of its own).
    private func frames(_ color: String, count: Int = 3) async throws -> [VideoFrame] {
        let url = try Fixtures.clip(ClipSpec(width: 64, height: 48, duration: 0.5, audioCodec: nil,
                                             videoSource: "color=c=\(color):size=64x48:rate=30"))
        return try await onOwnThread {
            Result {
                var out: [VideoFrame] = []
                try SequentialDecoder.decodeVideo(url, loader: FileLoader(), threads: 1) { frame in
                    out.append(frame)
                    return out.count < count
                }
                return out
            }
        }.get()
    }

    private func presentation() -> Presentation {
        Presentation(presentedAt: .zero, droppedFrames: 0, isFirstFrameOfSequence: false)
    }

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Waits for the renderer's statistics (they have no event of their own): the render
    /// thread updates them before it writes; the bound is a watchdog.
    private func statistics(of renderer: TerminalRenderer, _ predicate: (TerminalRenderer.Statistics) -> Bool) async -> TerminalRenderer.Statistics {
        _ = await eventually() { predicate(renderer.statistics) }
        return renderer.statistics
    }

    @Test func aFrameIsScaledEncodedAndWrittenOnceWithItsChrome() async throws {
        let blue = try await frames("0x0000FF")
        let output = FakeTerminalOutput()
        let renderer = TerminalRenderer { output.write($0) }
        renderer.overlay = { full in full ? Array("CHROME".utf8) : [] }
        renderer.layout(screenColumns: 20, screenRows: 10, area: (0, 1, 20, 6))
        // Presented before the render thread starts: its first write is the frame (the
        // thread starting first would write a bare clear and then the frame).
        renderer.present(blue[0], presentation: presentation())
        renderer.start()
        let writes = try #require(await output.writes.wait { !$0.isEmpty })
        let text = Self.text(writes[0])
        // One write: synchronized, cleared, the picture in blue, then the chrome.
        #expect(text.hasPrefix("\u{1B}[?2026h"))
        #expect(text.hasSuffix("CHROME\u{1B}[?2026l"))
        #expect(text.contains("\u{1B}[2J"))
        #expect(text.range(of: #"48;2;[0-9]{1,2};[0-9]{1,2};2[45][0-9]m"#, options: .regularExpression) != nil)
        // 64×48 (4:3) into 20×6 cells of 1:2 → 16×6 cells, centred at column 2 of row 1.
        #expect(text.contains("\u{1B}[2;3H"))
        // Counted before the write.
        let stats = renderer.statistics
        #expect(stats.rendered == 1)
        #expect(stats.columns == 16 && stats.rows == 6)
        #expect(stats.lastFrameBytes > 0)
        renderer.stop()
        await renderer.finished()
        #expect(output.all.filter { Self.text($0).contains("CHROME") }.count == 1)
    }

    @Test func anUnchangedFrameCostsNoVideoBytes() async throws {
        let red = try await frames("red", count: 1)
        let output = FakeTerminalOutput()
        let renderer = TerminalRenderer(configuration: .init(measureFullRedraw: true)) { output.write($0) }
        renderer.layout(screenColumns: 20, screenRows: 10, area: (0, 0, 20, 10))
        renderer.present(red[0], presentation: presentation())
        renderer.start()
        // The first frame drawn and written (statistics are counted before the write)...
        _ = try #require(await output.writes.wait { !$0.isEmpty })
        #expect(renderer.statistics.rendered == 1)
        // ...then the same picture again: drawn, but nothing to write.
        renderer.present(red[0], presentation: presentation())
        let stats = await statistics(of: renderer) { $0.rendered >= 2 }
        #expect(stats.rendered == 2)
        #expect(stats.lastFrameBytes == 0)
        renderer.stop()
        await renderer.finished()
        #expect(output.all.count == 1)  // nothing was written for the second frame
        #expect(stats.fullRedrawBytes > stats.videoBytes)  // the baseline redrew it
    }

    @Test func aSlowTerminalDropsFramesInsteadOfQueueing() async throws {
        let clip = try await frames("green", count: 1)
        let output = FakeTerminalOutput()
        let renderer = TerminalRenderer { output.write($0) }
        renderer.layout(screenColumns: 20, screenRows: 10, area: (0, 0, 20, 10))
        output.block()
        // Presented before the thread starts, so its first write (stuck in the
        // terminal) holds this frame, not just the initial clear.
        renderer.present(clip[0], presentation: presentation())
        renderer.start()
        _ = try #require(await output.writes.wait { $0.count == 1 })  // the first write is stuck in the terminal
        for _ in 0..<5 { renderer.present(clip[0], presentation: presentation()) }
        output.unblock()
        let stats = await statistics(of: renderer) { $0.rendered >= 2 }
        #expect(stats.presented == 6)
        #expect(stats.dropped == 4)  // five presented while blocked: only the latest is drawn
        #expect(stats.rendered == 2)
        renderer.stop()
        await renderer.finished()
    }

    @Test func anOverlaySetWhileRunningIsUsedForTheNextWrite() async throws {
        let clip = try await frames("green", count: 1)
        let output = FakeTerminalOutput()
        let renderer = TerminalRenderer { output.write($0) }
        renderer.layout(screenColumns: 20, screenRows: 10, area: (0, 0, 20, 10))
        renderer.present(clip[0], presentation: presentation())
        renderer.start()
        _ = try #require(await output.writes.wait { !$0.isEmpty })
        // Replaced while the render thread runs: read under the renderer's mutex, it is
        // the one called for the next chrome write.
        renderer.overlay = { _ in Array("LATE".utf8) }
        renderer.setNeedsChrome()
        let writes = try #require(await output.writes.wait { $0.contains { Self.text($0).contains("LATE") } })
        #expect(writes.count >= 2)
        renderer.stop()
        await renderer.finished()
    }
}
