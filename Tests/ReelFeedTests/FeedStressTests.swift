import Foundation
import ReelCore
import ReelFeed
import ReelMedia
import ReelTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A feed swiped every 10 ms for 300 swipes over 12 items (host clock, a fake loader
/// with a little latency), then left to play: no crash, no deadlock, the threads it
/// started end, and resident memory comes back.
///
/// Thread counts and resident memory are per process, and the other suites run in
/// this one at the same time: the test runs itself again in a process of its own
/// (this test bundle, filtered to this suite) and checks that process's exit. A
/// watchdog thread in that process reports the threads' states, the session's state
/// and every thread's stack (gdb) if the swipes do not finish.
@Suite struct FeedStressTests {
    static let childVariable = "REEL_FEED_STRESS_CHILD"
    static let swipes = 300
    static let itemCount = 12
    /// Against hangs only: the swipes take about 3 s (plus the players' work on a busy machine).
    static let watchdogSeconds = 120.0

    @Test func swipingEvery10msFor300SwipesLeavesNoThreadAndNoMemoryBehind() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] == "1" {
            try await Self.stress()
            return
        }
        let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childVariable] = "1"
        // As `reel` does first thing in main (MediaResources.limitAllocatorArenas).
        if environment["MALLOC_ARENA_MAX"] == nil { environment["MALLOC_ARENA_MAX"] = "2" }
        let child = try Child(bundle, ["--testing-library", "swift-testing", "--filter", "FeedStressTests"], environment: environment)
        guard let status = await child.exitStatus(timeout: .seconds(Self.watchdogSeconds + 120)) else {
            // The child's own watchdog did not get to report: take the stacks from here.
            let pid = child.pid
            let stacks = await offThePool { ProcessProbe.stacks(of: pid) }
            child.kill(SIGKILL)
            _ = await child.exitStatus()
            Issue.record("the stress process hung; its threads:\n\(stacks)\nits output:\n\(child.output.suffix(8000))")
            return
        }
        #expect(child.end?.signalled == false, "the stress process died of signal \(status):\n\(child.output.suffix(8000))")
        #expect(status == 0, "the stress process failed (\(status)):\n\(child.output.suffix(8000))")
        #expect(child.output.contains("swipingEvery10msFor300Swipes"), "the child ran the test:\n\(child.output.suffix(2000))")
    }

    /// The stress itself, in a process of its own.
    static func stress() async throws {
        let clip = try Fixtures.data(ClipSpec(width: 64, height: 48, frameRate: 25, duration: 1, keyframeInterval: 25, audioCodec: .aac))
        let loader = FakeResourceLoader(clock: HostClock.shared, script: .init(latency: MediaTime(value: 3, timescale: 1000)))
        let items = (0..<itemCount).map { i in
            let url = URL(string: "https://fake.example/stress\(i).mp4")!
            loader.add(clip, at: url)
            return FeedItem(id: "stress\(i)", title: "Stress \(i)", videoURL: url)
        }
        let source = ListFeedSource(items: items)
        func makeSession() -> FeedSession {
            FeedSession(source: source, loader: loader,
                        configuration: FeedSession.Configuration(pageSize: 20, wrapsAround: true, displaySize: (32, 32)),
                        audioSink: { NullAudioSink() })
        }

        // Warm-up: what a first session allocates for good (FFmpeg's tables, the
        // runtime's threads) is part of the baseline.
        let warm = makeSession()
        try await warm.start()
        for _ in 0..<30 {
            warm.next()
            try await Task.sleep(for: .milliseconds(10))
        }
        await warm.shutdown()
        MediaResources.returnFreedMemory()
        try await Task.sleep(for: .seconds(1))
        let threadsBefore = ProcessProbe.threadCount()
        let residentBefore = ProcessProbe.residentBytes()

        let session = makeSession()
        let shown = Mutex<Set<Int>>([])
        session.addObserver { event in
            if case .firstFrame(let index, _, _) = event { shown.withTrackedLock { _ = $0.insert(index) } }
        }
        let progress = Mutex(0)
        let watchdog = Watchdog(seconds: watchdogSeconds) {
            "\(progress.withTrackedLock { $0 }) of \(swipes) swipes done; session: \(session.diagnostics)"
        }
        try await session.start()
        for swipe in 1...swipes {
            session.next()
            progress.withTrackedLock { $0 = swipe }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(session.currentIndex == swipes % itemCount)
        // It stopped: the page it stopped on plays.
        let landed = session.currentIndex
        #expect(await eventually() { shown.withTrackedLock { $0.contains(landed) } },
                "the last page shows its first frame after the storm: \(session.diagnostics)")
        #expect(session.livePlayers <= 3)
        await session.shutdown()
        watchdog.disarm()
        #expect(session.livePlayers == 0)

        // The players' threads end, and the count returns to where it was.
        let settled = await eventually() {
            ProcessProbe.threadCount() <= threadsBefore && !ProcessProbe.threads().contains { $0.name.hasPrefix("reel.") }
        }
        #expect(settled, "threads before: \(threadsBefore), after: \(ProcessProbe.threadCount()):\n\(ProcessProbe.describeThreads())")
        // Memory comes back within 10 % of the warmed-up baseline.
        let limit = Double(residentBefore) * 1.1
        let returned = await eventually() {
            MediaResources.returnFreedMemory()
            return Double(ProcessProbe.residentBytes()) <= limit
        }
        #expect(returned, "resident memory \(ProcessProbe.residentBytes() >> 20) MiB after, \(residentBefore >> 20) MiB before")
        print("stress: \(swipes) swipes, \(shown.withTrackedLock { $0.count }) pages showed a frame; threads \(threadsBefore) → "
              + "\(ProcessProbe.threadCount()); resident \(residentBefore >> 10) KiB → \(ProcessProbe.residentBytes() >> 10) KiB")
    }
}

/// A watchdog on a thread of its own (it must run even when every other thread is
/// stuck): unless disarmed within `seconds`, it writes `describe()`, every thread's
/// state and every thread's stack to standard error, and ends the process (status 70).
final class Watchdog: Sendable {
    private let disarmed = DispatchSemaphore(value: 0)

    init(seconds: Double, describe: @escaping @Sendable () -> String) {
        let disarmed = self.disarmed
        let thread = Thread {
            guard disarmed.wait(timeout: .now() + seconds) == .timedOut else { return }
            var report = "WATCHDOG: no progress after \(Int(seconds)) s\n\(describe())\n"
            report += "threads:\n\(ProcessProbe.describeThreads())\n"
            report += "stacks:\n\(ProcessProbe.stacks(of: getpid()))\n"
            FileHandle.standardError.write(Data(report.utf8))
            _exit(70)
        }
        thread.name = "stress.watchdog"
        thread.start()
    }

    func disarm() { disarmed.signal() }
}

/// What /proc says about this process.
enum ProcessProbe {
    struct ThreadInfo {
        var id: Int
        var name: String
        /// R running, S sleeping, D disk, T stopped, Z zombie.
        var state: String
        /// The kernel function it waits in.
        var waitChannel: String
    }

    /// Entries of /proc/self/task: the live threads.
    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count ?? 0
    }

    static func threads() -> [ThreadInfo] {
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return ids.compactMap(Int.init).sorted().map { id in
            let base = "/proc/self/task/\(id)/"
            let read = { (name: String) in
                ((try? String(contentsOfFile: base + name, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let stat = read("stat")
            // "tid (comm) S …": the state follows the last ')'.
            let state = stat.range(of: ")", options: .backwards).map { String(stat[$0.upperBound...].dropFirst().prefix(1)) } ?? "?"
            return ThreadInfo(id: id, name: read("comm"), state: state, waitChannel: read("wchan"))
        }
    }

    static func describeThreads() -> String {
        threads().map { "  \($0.id) \($0.name) \($0.state) \($0.waitChannel)" }.joined(separator: "\n")
    }

    /// /proc/self/statm's resident pages, in bytes.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Every thread's stack of process `pid`, from gdb (blocking: call it from a thread of
    /// your own), or why not. gdb writes to a file: while it holds the process stopped, a
    /// pipe read by one of the process's own threads would fill up and stall it.
    static func stacks(of pid: Int32) -> String {
        let gdb = URL(fileURLWithPath: "/usr/bin/gdb")
        guard FileManager.default.isExecutableFile(atPath: gdb.path) else { return "(no gdb to take the stacks)" }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("reel-stacks-\(pid)-\(UUID().uuidString).txt")
        guard FileManager.default.createFile(atPath: file.path, contents: nil), let output = FileHandle(forWritingAtPath: file.path) else {
            return "(cannot write \(file.path))"
        }
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = gdb
        process.arguments = ["-p", "\(pid)", "-batch", "-nx", "-ex", "thread apply all bt"]
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return "(gdb: \(error))" }
        _ = process.waitForEndBlocking()
        try? output.close()
        return (try? String(contentsOf: file, encoding: .utf8)) ?? "(gdb wrote nothing)"
    }
}
