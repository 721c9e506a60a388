import Foundation
import ReelCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The built `reel` executable: beside this test bundle (the scratch directory in use),
/// else the newest `.build*/debug/reel` of the package, else built for the tests.
public enum ReelBinary {
    enum Failure: Error, CustomStringConvertible {
        case buildFailed(String)
        var description: String {
            switch self {
            case .buildFailed(let output): "could not build reel for the tests: \(output)"
            }
        }
    }

    public static let packageRoot: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) { return directory }
            directory = directory.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// The executable once found, guarded by its mutex.
    private static let located = Mutex<URL?>(nil)

    /// The path of the `reel` executable, building it once when it is missing.
    public static func locate() async throws -> URL {
        if let url = located.withTrackedLock({ $0 }) { return url }
        // The products directory this test bundle was built into.
        let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var candidates = [bundle.deletingLastPathComponent().appendingPathComponent("reel")]
        // Any scratch directory of the package.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: packageRoot.path)) ?? []
        for name in names where name.hasPrefix(".build") {
            let scratch = packageRoot.appendingPathComponent(name)
            candidates.append(scratch.appendingPathComponent("debug/reel"))
        }
        let existing = candidates.filter { FileManager.default.isExecutableFile(atPath: $0.path) }
        if let first = existing.first, first == candidates[0] {
            located.withTrackedLock { $0 = first }
            return first
        }
        if let newest = existing.max(by: { modified($0) < modified($1) }) {
            located.withTrackedLock { $0 = newest }
            return newest
        }
        // Not built yet: build it in a scratch directory of its own (the one `swift test`
        // uses is locked while the tests run).
        let scratch = packageRoot.appendingPathComponent(".build-reel-tests")
        let result = try await run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["swift", "build", "--product", "reel", "--scratch-path", scratch.path, "--package-path", packageRoot.path],
            timeout: .seconds(1200)
        )
        let built = scratch.appendingPathComponent("debug/reel")
        guard result.status == 0, FileManager.default.isExecutableFile(atPath: built.path) else {
            throw Failure.buildFailed(String(result.output.suffix(2000)))
        }
        located.withTrackedLock { $0 = built }
        return built
    }

    private static func modified(_ url: URL) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date) ?? .distantPast
    }
}

/// A value behind a `Mutex`, for tests sharing a small value across tasks and threads.
public final class LockedValue<Value: Sendable>: Sendable {
    private let stored: Mutex<Value>
    public init(_ value: Value) { stored = Mutex(value) }
    public var value: Value { stored.withTrackedLock { $0 } }
    public func set(_ value: Value) { stored.withTrackedLock { $0 = value } }
}

/// A child process whose output is collected as it comes (stdout and stderr
/// together in ``output``, and apart in ``standardOutput`` and ``standardError``).
///
/// Each pipe is read by a thread of its own (``PipeReader``), never by a Swift concurrency
/// thread: the reader resumes ``exitStatus(timeout:)`` once both pipes ended; the exit itself
/// is polled with `Task.sleep` (Foundation's termination handler made libdispatch crash under
/// ThreadSanitizer), and asked of the kernel (`Process.end`), not of `isRunning`, which stays
/// true while another process holds a descriptor the child inherited. Foundation's `FileHandle.readabilityHandler` is not used: installing and
/// tearing down its dispatch sources from many threads at once corrupts libdispatch's epoll
/// bookkeeping on Linux (swift-corelibs-libdispatch#949; here it showed as "corrupted
/// double-linked list" in a suite running dozens of children).
public final class Child: Sendable {
    /// Set up once before it runs; read-only afterwards.
    public let process = Process()

    /// The output so far, whether each pipe ended, and the tasks waiting for both to end,
    /// guarded by one mutex. A waiter is registered in the critical section that finds a pipe
    /// open, and taken in the one that records the last end. The readers hold this, not the
    /// child, so a child can go away while its readers finish.
    private final class Shared: Sendable {
        struct State {
            var collected = Data()
            var outCollected = Data()
            var errCollected = Data()
            var outEnded = false
            var errEnded = false
            var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
            var isDone: Bool { outEnded && errEnded }

            mutating func takeWaitersIfDone() -> [CheckedContinuation<Void, Never>] {
                guard isDone else { return [] }
                defer { waiters = [:] }
                return Array(waiters.values)
            }
        }

        let state = Mutex(State())

        /// Output from one pipe; empty data is its end.
        func received(_ data: Data, standardError: Bool) {
            update { state in
                if data.isEmpty {
                    if standardError { state.errEnded = true } else { state.outEnded = true }
                } else {
                    state.collected.append(data)
                    if standardError { state.errCollected.append(data) } else { state.outCollected.append(data) }
                }
            }
        }

        func update(_ change: (inout State) -> Void) {
            let waiters = state.withTrackedLock { state -> [CheckedContinuation<Void, Never>] in
                change(&state)
                return state.takeWaitersIfDone()
            }
            waiters.forEach { $0.resume() }
        }
    }

    private let shared = Shared()
    private let readers: [PipeReader]

    /// `input`, when given, is what the child reads on standard input (then end of file);
    /// otherwise it reads from /dev/null.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil, input: Data? = nil) throws {
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        if let input {
            let inPipe = Pipe()
            inPipe.fileHandleForWriting.write(input)
            try inPipe.fileHandleForWriting.close()
            process.standardInput = inPipe
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        // Process.run closes the parent's write ends: the pipes end when the child's copies do.
        try process.run()
        let shared = self.shared
        readers = [
            PipeReader(outPipe.fileHandleForReading, name: "child.stdout") { shared.received($0, standardError: false) },
            PipeReader(errPipe.fileHandleForReading, name: "child.stderr") { shared.received($0, standardError: true) },
        ]
    }

    /// A child dropped before its output ended (a timeout, a descendant holding the pipes)
    /// stops reading: its readers close the pipes within a poll interval.
    deinit {
        readers.forEach { $0.stop() }
    }

    public var output: String { shared.state.withTrackedLock { String(decoding: $0.collected, as: UTF8.self) } }
    public var standardOutput: String { shared.state.withTrackedLock { String(decoding: $0.outCollected, as: UTF8.self) } }
    public var standardError: String { shared.state.withTrackedLock { String(decoding: $0.errCollected, as: UTF8.self) } }
    public var pid: Int32 { process.processIdentifier }

    /// Suspends until both pipes ended (the process and whatever inherited them closed
    /// them), or the task is cancelled.
    private func waitForEndOfOutput() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = shared.state.withTrackedLock { state -> Bool in
                    if state.isDone || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let waiter = shared.state.withTrackedLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    /// How long a child may take before a test gives up on it (``hangWatchdog``):
    /// on one loaded core a child shares the CPU with the whole suite, and a run of a few
    /// seconds can take minutes.
    public static let watchdog: Duration = hangWatchdog

    /// Waits for the exit and the end of its output, at most `timeout` (a watchdog, not a
    /// measurement). `nil` on timeout. A descendant that keeps the pipes open past the
    /// exit gets two more seconds before the exit status is returned without its output.
    public func exitStatus(timeout: Duration = Child.watchdog) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        // `process.end`, not `isRunning`: Foundation sees an exit late when another process
        // inherited the socket it watches (see `Process.end`).
        var ended = process.end
        while ended == nil {
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(5))
            ended = process.end
        }
        guard let ended else { return nil }
        _ = await withTaskGroup(of: Bool.self) { group -> Bool in
            group.addTask { await self.waitForEndOfOutput(); return true }
            group.addTask { try? await Task.sleep(for: .seconds(2)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        return ended.status
    }

    /// How the child ended; `nil` while it runs.
    public var end: ProcessEnd? { process.end }

    public func kill(_ signal: Int32) { Glibc.kill(process.processIdentifier, signal) }
}

/// Runs a command to its end; its exit status and output (stdout and stderr together).
public func run(_ executable: URL, _ arguments: [String], timeout: Duration = Child.watchdog) async throws -> (status: Int32, output: String) {
    let child = try Child(executable, arguments)
    guard let status = await child.exitStatus(timeout: timeout) else {
        child.kill(SIGKILL)
        _ = await child.exitStatus()
        return (-1, child.output + "\n(timed out)")
    }
    return (status, child.output)
}

/// Runs a command to its end; its exit status, stdout and stderr apart.
public func runSeparately(
    _ executable: URL, _ arguments: [String], timeout: Duration = Child.watchdog,
    environment: [String: String]? = nil, input: Data? = nil
) async throws -> (status: Int32, stdout: String, stderr: String) {
    let child = try Child(executable, arguments, environment: environment, input: input)
    guard let status = await child.exitStatus(timeout: timeout) else {
        child.kill(SIGKILL)
        _ = await child.exitStatus()
        return (-1, child.standardOutput, child.standardError + "\n(timed out)")
    }
    return (status, child.standardOutput, child.standardError)
}


/// Reads one pipe to its end on a thread of its own, handing each chunk to `deliver` and then
/// an empty `Data` for the end. It polls, so ``stop()`` ends it within 100 ms even while a
/// descendant of the child keeps the pipe open. The thread owns the handle and closes it.
final class PipeReader: Sendable {
    private let stopped = Atomic<Bool>(false)

    init(_ handle: FileHandle, name: String, deliver: @escaping @Sendable (Data) -> Void) {
        let thread = Thread { [self] in
            self.read(handle, deliver: deliver)
            try? handle.close()
            deliver(Data())
        }
        thread.name = name
        thread.start()
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    private func read(_ handle: FileHandle, deliver: (Data) -> Void) {
        let fd = handle.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !stopped.load(ordering: .relaxed) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready < 0 { if errno == EINTR { continue } else { return } }
            if ready == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                deliver(Data(buffer[0..<count]))
            } else if count < 0, errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
