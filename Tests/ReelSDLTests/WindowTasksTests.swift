import Foundation
import ReelCore
@testable import ReelSDL
import ReelTestSupport
import Synchronization
import Testing

/// The window's background commands: what they throw comes back as an outcome the window
/// shows, and the notice it shows goes away on the model's own clock.
@Suite struct WindowTasksTests {
    struct Refused: Error, CustomStringConvertible { var description: String { "403 forbidden" } }

    /// How often the tasks woke the window.
    final class Wakes: Sendable {
        private let count = Atomic(0)
        func wake() { count.add(1, ordering: .relaxed) }
        /// Waits (on the suite's hang watchdog) until the n-th wake-up came.
        func wait(for n: Int) async -> Bool { await eventually(poll: .milliseconds(1)) { self.count.load(ordering: .relaxed) >= n } }
    }

    @Test func aFailureComesBackAndASuccessSaysNothingWrong() async {
        let wakes = Wakes()
        let tasks = WindowTasks(wake: { wakes.wake() })
        tasks.run("分类加载失败 Category failed") { throw Refused() }
        #expect(await wakes.wait(for: 1))
        tasks.run("刷新失败 Reload failed", counted: .reload) {}
        #expect(await wakes.wait(for: 2))
        let outcomes = tasks.takeOutcomes()
        #expect(outcomes.contains(.init(what: "分类加载失败 Category failed", failure: "403 forbidden")))
        #expect(outcomes.contains(.init(what: "刷新失败 Reload failed", failure: nil)))
        #expect(tasks.takeOutcomes().isEmpty)
        #expect(!tasks.isRunning(.reload))
    }

    @Test func aCountedCommandRunsUntilItEnds() async {
        let wakes = Wakes()
        let tasks = WindowTasks(wake: { wakes.wake() })
        let gate = OneShot<Void>()
        tasks.run("刷新失败 Reload failed", counted: .reload) { await gate.wait() }
        #expect(tasks.isRunning(.reload))
        gate.fulfil(())
        #expect(await wakes.wait(for: 1))
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
