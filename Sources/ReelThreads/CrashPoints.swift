import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The process's crash points: every commit step of a file Reel keeps (each rename, fsync
/// and unlink of the range cache, the bandwidth estimate, an upload and its database row)
/// passes through ``reach(_:_:)`` first, so a test can kill a real `reel` process exactly
/// there and check what the next start makes of what it left.
///
/// Off unless the environment asks, and then only in that process:
/// - `REEL_CRASH_AT=N` — the process kills itself with SIGKILL at the N-th point it reaches
///   (counted from 1, over every kind together, in the order the threads reach them; the point
///   logged as N is the one killed at);
/// - `REEL_CRASH_MATCH=TEXT` — with `REEL_CRASH_AT`, only points whose `kind path` contains
///   TEXT count toward N (`rename /tmp/c/bandwidth.json`: the estimate's commit, whatever the
///   threads did before it);
/// - `REEL_CRASH_LOG=FILE` — one line per point reached is appended to FILE
///   (`N kind path`, N counting every point), written before the kill, so a test learns how
///   many points a run has and what the killed one was.
///
/// With neither set a point costs the check of a value read once. Nothing here locks.
public enum CrashPoints {
    /// What is about to happen (or has just happened) at a point.
    public enum Kind: String, Sendable {
        case rename
        case fsync
        case unlink
        /// A database transaction that records a file (an upload's row) is about to commit.
        case commit
        /// The step before has completed (after a rename, after a commit): the other side of it.
        case after
    }

    struct Settings: Sendable {
        var crashAt: Int?
        var match: String?
        var logDescriptor: Int32?
        var isActive: Bool { crashAt != nil || logDescriptor != nil }
    }

    private static let settings: Settings = {
        let environment = ProcessInfo.environmentValue
        let crashAt = environment("REEL_CRASH_AT").flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        var descriptor: Int32?
        if let path = environment("REEL_CRASH_LOG"), !path.isEmpty {
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            if fd >= 0 { descriptor = fd }
        }
        let match = environment("REEL_CRASH_MATCH").flatMap { $0.isEmpty ? nil : $0 }
        return Settings(crashAt: crashAt, match: match, logDescriptor: descriptor)
    }()

    private static let reached = Atomic<Int>(0)
    private static let matched = Atomic<Int>(0)

    /// Passes a crash point: counts it, logs it, and kills the process when it is the one asked for.
    public static func reach(_ kind: Kind, _ path: String) {
        guard settings.isActive else { return }
        let number = reached.add(1, ordering: .sequentiallyConsistent).newValue
        let point = "\(kind.rawValue) \(path)"
        if let fd = settings.logDescriptor {
            let line = Array("\(number) \(point)\n".utf8)
            _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
        guard let crashAt = settings.crashAt else { return }
        // The point's own number decides, the one its log line carries: with a second counter,
        // two threads passing points at once could kill at N in the thread that logged N + 1,
        // before the other wrote N, and the test read a killed run as one that passed its end.
        let ordinal: Int
        if let match = settings.match {
            guard point.contains(match) else { return }
            ordinal = matched.add(1, ordering: .sequentiallyConsistent).newValue
        } else {
            ordinal = number
        }
        if ordinal == crashAt {
            kill(getpid(), SIGKILL)
            // SIGKILL is not caught; nothing after this runs.
            while true { pause() }
        }
    }
}

private enum ProcessInfo {
    /// getenv, read once at the first point (the environment a test started the process with).
    static func environmentValue(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}
