import Foundation
import Testing
import ReelCore
import ReelMedia
@testable import ReelSDL

/// SDL and GL calls are confined to the window's thread, and the confinement is checked,
/// not described: a call from another thread stops the process (checked in a child
/// process, so this one goes on).
@Suite struct ThreadConfinementTests {
    /// Runs `body` on a new thread and awaits it (never blocking the pool).
    static func onNewThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test func theOwnerIsTheThreadThatMadeIt() async {
        let made = await Self.onNewThread { () -> (ThreadConfinement, Bool) in
            let confinement = ThreadConfinement("a test")
            return (confinement, confinement.isOnOwnerThread)
        }
        #expect(made.1, "true on the thread that made it")
        #expect(!made.0.isOnOwnerThread, "false anywhere else")
        let other = await Self.onNewThread { made.0.isOnOwnerThread }
        #expect(!other)
    }

    @Test func aCheckOffTheOwnerThreadStopsTheProcess() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let confinement = await ThreadConfinementTests.onNewThread { ThreadConfinement("the test window") }
            confinement.check("draw")
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("the test window used off its thread (draw)"), "\(message)")
    }

    @Test func aCheckOnTheOwnerThreadPasses() async {
        await #expect(processExitsWith: .success) {
            await ThreadConfinementTests.onNewThread {
                ThreadConfinement("the test window").check("draw")
            }
        }
    }

    /// A real window (SDL's dummy video driver, the software renderer) made on one thread
    /// and pumped from another: the process stops at the first SDL call, before SDL sees it.
    @Test func aWindowPumpedFromAnotherThreadStopsTheProcess() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            setenv("SDL_VIDEODRIVER", "dummy", 1)
            let made = await ThreadConfinementTests.onNewThread { () -> WindowHandOver in
                let frames = FrameStore()
                let player = Player(clock: HostClock.shared, videoSink: frames, audioSink: nil)
                let window = try? PlaybackWindow(player: player, frames: frames,
                                                 options: .init(renderer: .software, width: 90, height: 160))
                return WindowHandOver(window)
            }
            guard let window = made.window else {
                FileHandle.standardError.write(Data("no window on the dummy driver\n".utf8))
                exit(0)  // reported as an unexpected success below
            }
            window.pump()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("used off its thread"), "\(message)")
    }
}

/// Carries a window from the thread that made it to the one that misuses it (the test's point).
final class WindowHandOver: @unchecked Sendable {
    let window: PlaybackWindow?
    init(_ window: PlaybackWindow?) { self.window = window }
}
