import Dispatch
import Foundation
import ReelThreads
import Synchronization

/// The tests' window thread: one thread of its own on which every window these tests open
/// is created, driven and closed, as an application's main thread would be. SDL and GL
/// calls are confined to the thread that made the window (`ThreadConfinement` stops the
/// process otherwise), and a window's loop blocks in `SDL_WaitEventTimeout` — neither
/// belongs on the Swift concurrency pool, which the other tests share.
///
/// It is a ``ThreadExecutor``: ``run(_:)`` runs a test's window code on this thread *inside the
/// test's task*, so `#expect` and `Issue.record` are attributed to the test as usual,
/// while the test itself only awaits (the pool thread it came from is free meanwhile).
final class WindowThread: Sendable {
    static let shared = WindowThread()

    /// The thread and its queue of jobs.
    private let executor = ThreadExecutor(named: "reel.tests.window")

    private init() {}

    /// Whether the caller runs on the window thread.
    var isCurrent: Bool { executor.isCurrent }

    /// Runs `body` on the window thread, in the calling test's task. Everything `body`
    /// makes that holds a window must be gone when it returns (a window closes on its thread).
    static func run<T>(_ body: () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(shared.executor) {
            precondition(shared.isCurrent, "window code must run on the window thread")
            return try body()
        }
    }

    /// Runs async work (`FeedBrowser.start`, …) on the pool while the window thread
    /// blocks (at most `timeout` seconds, a watchdog: on one loaded core a feed has taken
    /// over 20 s to start, and a sign-up and upload beside the whole suite and other builds
    /// over 120 s): for window code that is synchronous.
    static func blocking(timeout: Double = 600, _ body: @escaping @Sendable () async throws -> Void) throws {
        struct Timeout: Error, CustomStringConvertible {
            var description: String { "the async work did not finish in time" }
        }
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        // On the global executor explicitly: this thread is about to block.
        Task(executorPreference: globalConcurrentExecutor) {
            do { try await body() } catch { failure.withTrackedLock { $0 = error } }
            done.signal()
        }
        if done.wait(timeout: .now() + timeout) == .timedOut { throw Timeout() }
        if let error = failure.withTrackedLock({ $0 }) { throw error }
    }

    /// Runs `body` on a new thread and blocks until it returns: to look at a window from
    /// a thread that does not own it. What `body` captures is released here, on the
    /// calling thread (a window released on the other thread would close off its thread,
    /// which the window's confinement check stops).
    static func onAnotherThread<T>(_ body: @escaping () -> T) -> T {
        let box = HandOver(body)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.result = box.body?()
            done.signal()
        }
        thread.start()
        done.wait()
        box.body = nil
        return box.result!
    }
}

/// Carries a closure to another thread and its result back; the semaphore in
/// ``WindowThread/onAnotherThread(_:)`` orders the accesses.
private final class HandOver<T>: @unchecked Sendable {
    var body: (() -> T)?
    var result: T?
    init(_ body: @escaping () -> T) { self.body = body }
}
