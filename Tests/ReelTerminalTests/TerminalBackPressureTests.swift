import Foundation
import Synchronization
import Testing
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
import ReelThreads
@testable import ReelTerminal
#if canImport(Glibc)
import Glibc
#endif

/// A terminal that falls behind, for real: the renderer writes through a `TerminalSession`
/// into a pseudo-terminal nobody reads, so its `write()` blocks when the kernel's buffer is
/// full (as it does when a terminal draws slower than frames come). Frames presented
/// meanwhile replace the one waiting and are counted dropped; none is queued, and the player's
/// `present` never waits — in every output.
@Suite("write back-pressure", .serialized)
struct TerminalBackPressureTests {
    /// Eight frames of noise, each far more than a pseudo-terminal holds once encoded.
    private func noisyFrames() async throws -> [VideoFrame] {
        let url = try Fixtures.clip(ClipSpec(width: 320, height: 240, frameRate: 30, duration: 0.5, audioCodec: nil,
                                             videoSource: "testsrc2=size=320x240:rate=30,noise=alls=100:allf=t"))
        return try await onOwnThread {
            Result {
                var out: [VideoFrame] = []
                try SequentialDecoder.decodeVideo(url, loader: FileLoader(), threads: 1) { frame in
                    out.append(frame)
                    return out.count < 8
                }
                return out
            }
        }.get()
    }

    /// Reads the master side on a thread of its own until stopped (the terminal catching up).
    private final class Reader: Sendable {
        private let stopped = Mutex(false)
        let bytes = Mutex(0)
        private let exit = ExitSignal()

        init(_ master: Int32) {
            let thread = Thread { [self] in
                var buffer = [UInt8](repeating: 0, count: 65536)
                while !stopped.withLock({ $0 }) {
                    var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                    guard poll(&poller, 1, 20) > 0 else { continue }
                    let n = read(master, &buffer, buffer.count)
                    if n > 0 { bytes.withLock { $0 += n } }
                }
                exit.fire()
            }
            thread.start()
        }

        func stop() async {
            stopped.withLock { $0 = true }
            await exit.wait()
        }
    }

    @Test(arguments: [TerminalGraphics.Output.cells, .sixel, .kitty])
    func aBlockedWriteDropsTheFramesPresentedMeanwhile(_ output: TerminalGraphics.Output) async throws {
        let frames = try await noisyFrames()
        try #require(frames.count == 8)
        let pty = try #require(PseudoTerminal())
        let session = TerminalSession(input: pty.slave, output: pty.slave)
        try session.enter()
        _ = pty.drain()
        let renderer = TerminalRenderer { session.write($0) }
        renderer.graphics = output == .cells ? .cells("test")
            : TerminalGraphics(output: output, cellWidth: 8, cellHeight: 16, reason: "test")
        renderer.layout(screenColumns: 120, screenRows: 45, area: (0, 1, 120, 41))
        let presentation = Presentation(presentedAt: .zero, droppedFrames: 0, isFirstFrameOfSequence: false)
        renderer.present(frames[0], presentation: presentation)
        renderer.start()
        // The first frame is counted as it goes to the terminal, which takes only part of it.
        #expect(await eventually { renderer.statistics.rendered == 1 })
        for frame in frames.dropFirst() { renderer.present(frame, presentation: presentation) }
        // Nobody reads: the render thread is still in its first write, the rest wait as one.
        let blocked = renderer.statistics
        #expect(blocked.presented == 8 && blocked.rendered == 1 && blocked.dropped == 6, "\(blocked)")

        // The terminal catches up: the latest frame is drawn, the ones it replaced never are.
        let reader = Reader(pty.master)
        #expect(await eventually { renderer.statistics.rendered == 2 })
        renderer.stop()
        await renderer.finished()
        await reader.stop()
        let after = renderer.statistics
        #expect(after.presented == 8 && after.rendered == 2 && after.dropped == 6, "\(after)")
        #expect(reader.bytes.withLock { $0 } > 65536)
        session.restore()
    }
}
