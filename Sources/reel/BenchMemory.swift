import Foundation
import Glibc
import ReelCore
import ReelThreads

/// Peak resident memory of whole processes, from the kernel's own accounting: the high-water
/// mark of the child's resident pages (`VmHWM` in `/proc/PID/status`), read every 5 ms until it
/// exits. Not `wait4`'s `ru_maxrss`: a child spawned from this process starts with this
/// process's pages and keeps their count across `exec`. The same figure for Reel and for the
/// reference players, measured the same way in the same run.
enum PeakMemory {
    struct Run: Sendable {
        var exitStatus: Int32
        var peakBytes: Int64
    }

    /// One player's runs: its name, the command, and the peaks.
    struct Row: Sendable {
        var name: String
        var command: [String]
        var peaks: [Int64]
        var failures: Int

        var p50: Double { Distribution(peaks.map(Double.init)).p50 }
    }

    /// Runs `arguments[0]` with the rest (stdin, stdout and stderr to /dev/null) to its end on a
    /// thread of its own, and returns its exit status and peak resident memory.
    static func run(_ arguments: [String]) async throws -> Run {
        try await onOwnThread(named: "reel.memory") { try spawnAndWait(arguments) }
    }

    private static func spawnAndWait(_ arguments: [String]) throws -> Run {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
        }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let code = posix_spawnp(&pid, arguments[0], &actions, nil, &argv, environ)
        guard code == 0 else { throw CommandFailure.media("cannot start \(arguments[0]): \(String(cString: strerror(code)))") }
        var status: Int32 = 0
        var peak: Int64 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 {
                guard errno == EINTR else { throw CommandFailure.media("waiting for \(arguments[0]): \(String(cString: strerror(errno)))") }
                continue
            }
            // The mark only grows; once the process is a zombie its memory is gone and the
            // file no longer has the line, so the last reading stands.
            peak = max(peak, highWaterMark(of: pid) ?? 0)
            usleep(5000)
        }
        // Exited normally: the low 7 bits are 0 and the status is the next byte.
        let exited = status & 0x7f == 0
        return Run(exitStatus: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), peakBytes: peak)
    }

    /// `VmHWM` of a running process, in bytes.
    static func highWaterMark(of pid: pid_t) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kilobytes = Int64(fields[1]) { return kilobytes * 1024 }
        }
        return nil
    }

    /// The reference players found on this machine, as commands that play `file` without output.
    static func references(for file: URL) -> [(name: String, command: [String])] {
        var list: [(String, [String])] = []
        if let mpv = executable("mpv") {
            list.append(("mpv", [mpv, "--no-config", "--vo=null", "--ao=null", "--really-quiet", file.path]))
        }
        if let ffmpeg = executable("ffmpeg") {
            list.append(("ffmpeg -f null", [ffmpeg, "-nostdin", "-v", "error", "-i", file.path, "-f", "null", "-"]))
        }
        return list
    }

    /// The row of Reel playing the whole file.
    static let reelName = "Reel play --headless"
    /// The row of Reel stopped after `frames` frames (its name starts with ``halfPrefix``).
    static func halfName(_ frames: Int) -> String { "\(halfPrefix)\(frames) frames" }
    static let halfPrefix = "Reel, first "

    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Reel (`reel play FILE --headless`, this binary), Reel stopped after `halfFrames` frames
    /// (the file's first half: the peak the pipeline's caps hold it to, against which the
    /// whole file's is judged), and each reference, `runs` times each, interleaved so that none
    /// always runs on a warmer page cache. No half row when `halfFrames` is nil.
    static func measure(_ file: URL, runs: Int, halfFrames: Int?, progress: (String) -> Void) async throws -> [Row] {
        let reel = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        var rows = [Row(name: reelName, command: [reel, "play", file.path, "--headless"], peaks: [], failures: 0)]
        if let halfFrames {
            rows.append(Row(name: halfName(halfFrames), command: [reel, "play", file.path, "--headless", "--frames", String(halfFrames)],
                            peaks: [], failures: 0))
        }
        rows += references(for: file).map { Row(name: $0.name, command: $0.command, peaks: [], failures: 0) }
        for run in 0..<runs {
            progress("peak memory run \(run + 1)/\(runs)")
            let order = run % 2 == 0 ? Array(rows.indices) : Array(rows.indices.reversed())
            for index in order {
                let result = try await Self.run(rows[index].command)
                if result.exitStatus == 0 { rows[index].peaks.append(result.peakBytes) } else { rows[index].failures += 1 }
            }
        }
        return rows
    }
}
