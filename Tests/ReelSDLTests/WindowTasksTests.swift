import Foundation
import ReelCore
@testable import ReelSDL
import Synchronization
import Testing

/// The window's background commands: what they throw comes back as an outcome the window
/// shows, and the notice it shows goes away on the model's own clock.
@Suite struct WindowTasksTests {
    struct Refused: Error, CustomStringConvertible { var description: String { "403 forbidden" } }

    /// Counts wake-ups and wakes a test waiting for the n-th; the count and the waiters are
    /// one critical section, so no wake-up is missed.
    final class Wakes: Sendable {
        private struct State {
            var count = 0
            var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
        }
        private let state = Mutex(State())
        func wake() {
            let ready = state.withTrackedLock { s -> [CheckedContinuation<Void, Never>] in
                s.count += 1
                let count = s.count
                defer { s.waiters.removeAll { $0.0 <= count } }
                return s.waiters.filter { $0.0 <= count }.map(\.1)
            }
            for waiter in ready { waiter.resume() }
        }
        func wait(for n: Int) async {
            await withCheckedContinuation { continuation in
                let now = state.withTrackedLock { s -> Bool in
                    if s.count >= n { return true }
                    s.waiters.append((n, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    @Test func aFailureComesBackAndASuccessSaysNothingWrong() async {
        let wakes = Wakes()
        let tasks = WindowTasks(wake: { wakes.wake() })
        tasks.run("分类加载失败 Category failed") { throw Refused() }
        await wakes.wait(for: 1)
        tasks.run("刷新失败 Reload failed", counted: .reload) {}
        await wakes.wait(for: 2)
        let outcomes = tasks.takeOutcomes()
        #expect(outcomes.contains(.init(what: "分类加载失败 Category failed", failure: "403 forbidden")))
        #expect(outcomes.contains(.init(what: "刷新失败 Reload failed", failure: nil)))
        #expect(tasks.takeOutcomes().isEmpty)
        #expect(!tasks.isRunning(.reload))
    }

    @Test func aCountedCommandRunsUntilItEnds() async {
        let wakes = Wakes()
        let tasks = WindowTasks(wake: { wakes.wake() })
        let gate = Wakes()
        tasks.run("刷新失败 Reload failed", counted: .reload) { await gate.wait(for: 1) }
        #expect(tasks.isRunning(.reload))
        gate.wake()
        await wakes.wait(for: 1)
        #expect(!tasks.isRunning(.reload))
    }

    @Test func aFailureNoticeShowsForAWhileAndSignInWins() {
        func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }
        var m = FeedViewModel(drawableWidth: 540, drawableHeight: 960)
        #expect(m.notice == nil)
        m.commandFailed("分类加载失败 Category failed: 403 forbidden", now: ms(1000))
        #expect(m.notice == "分类加载失败 Category failed: 403 forbidden")
        #expect(m.nextDeadline == ms(5000))
        _ = m.tick(now: ms(4999))
        #expect(m.notice != nil)
        m.setNeedsSignIn(true)
        #expect(m.notice == FeedViewModel.signInNotice)
        m.setNeedsSignIn(false)
        _ = m.tick(now: ms(5000))
        #expect(m.notice == nil)
    }
}
