import Foundation
import ReelCore
import ReelMedia

enum Scenario: String {
    case commands
    case stalledOpens = "stalled-opens"
}

/// What a stress run saw: the engine's threads and the resident memory before it began
/// (after a warm-up) and after it ended, and how the final normal play compared.
struct StressResult: Codable {
    var scenario: String
    var operations: Int
    var threadsBefore: Int
    var threadsAfter: Int
    var rssBefore: Int
    var rssAfter: Int
    /// The normal play after the stress: frames shown, frames that differ from a plain decode
    /// of the same time, and whether it reached the end.
    var presented: Int = 0
    var referenceFrames: Int = 0
    var mismatches: Int = 0
    var outOfOrder: Int = 0
    var ended: Bool = false
    /// Pipelines still allocated at the end (a retain cycle would keep them).
    var enginesAlive: Int = 0
}

enum ProcessState {
    /// Threads of the process (the runner is a process of its own, so every thread it has
    /// beyond the baseline was started by the player or by what the player started).
    static func engineThreads() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).count
    }

    /// Resident memory in bytes.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    /// Waits (bounded: 10 s) until the threads are back to `count` (0: until the count holds
    /// still for half a second), giving freed memory back too.
    static func settle(threads count: Int) async -> (threads: Int, rss: Int) {
        var steady = 0
        var last = engineThreads()
        for _ in 0..<500 where count == 0 ? steady < 25 : engineThreads() > count {
            let now = engineThreads()
            steady = now == last ? steady + 1 : 0
            last = now
            try? await Task.sleep(for: .milliseconds(20))
        }
        MediaResources.returnFreedMemory()
        return (engineThreads(), residentBytes())
    }
}

/// Fails the run with every thread's state when it takes longer than `limit` seconds: a
/// deadlock shows as threads parked on futexes, and gdb (when installed) prints their stacks.
enum Watchdog {
    static func start(limit: Double) {
        let thread = Thread {
            Thread.sleep(forTimeInterval: limit)
            var report = "watchdog: no result after \(Int(limit)) s; threads:\n"
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            for task in tasks.sorted() {
                let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "?"
                let stat = (try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8)) ?? ""
                let state = stat.split(separator: ")").last?.split(separator: " ").first ?? "?"
                let wchan = (try? String(contentsOfFile: "/proc/self/task/\(task)/wchan", encoding: .utf8)) ?? ""
                report += "  \(task) \(comm.trimmingCharacters(in: .whitespacesAndNewlines)) \(state) \(wchan)\n"
            }
            FileHandle.standardError.write(Data(report.utf8))
            let gdb = Process()
            gdb.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
            gdb.arguments = ["-p", "\(getpid())", "-batch", "-ex", "thread apply all bt 12"]
            gdb.standardOutput = FileHandle.standardError
            if (try? gdb.run()) != nil { _ = gdb.waitForEndBlocking() }
            exit(2)
        }
        thread.name = "watchdog"
        thread.start()
    }
}
