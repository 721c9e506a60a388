import Foundation
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

    private static let located = LockedValue<URL?>(nil)

    /// The path of the `reel` executable, building it once when it is missing.
    public static func locate() async throws -> URL {
        if let url = located.value { return url }
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
            located.set(first)
            return first
        }
        if let newest = existing.max(by: { modified($0) < modified($1) }) {
            located.set(newest)
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
        located.set(built)
        return built
    }

    private static func modified(_ url: URL) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date) ?? .distantPast
    }
}

public final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    public init(_ value: Value) { stored = value }
    public var value: Value { lock.withLock { stored } }
    public func set(_ value: Value) { lock.withLock { stored = value } }
}

/// A child process whose output is collected as it comes (stdout and stderr
/// together in ``output``, and apart in ``standardOutput`` and ``standardError``).
public final class Child: @unchecked Sendable {
    public let process = Process()
    private let lock = NSLock()
    private var collected = Data()
    private var outCollected = Data()
    private var errCollected = Data()

    public init(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = FileHandle.nullDevice
        outPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
            } else {
                self?.lock.withLock { self?.collected.append(data); self?.outCollected.append(data) }
            }
        }
        errPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
            } else {
                self?.lock.withLock { self?.collected.append(data); self?.errCollected.append(data) }
            }
        }
        try process.run()
    }

    public var output: String { lock.withLock { String(decoding: collected, as: UTF8.self) } }
    public var standardOutput: String { lock.withLock { String(decoding: outCollected, as: UTF8.self) } }
    public var standardError: String { lock.withLock { String(decoding: errCollected, as: UTF8.self) } }
    public var pid: Int32 { process.processIdentifier }

    /// Waits for the exit (polling; `waitUntilExit` would block a pool thread). `nil` on timeout.
    public func exitStatus(timeout: Duration = .seconds(30)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
        // Let the last output arrive.
        try? await Task.sleep(for: .milliseconds(20))
        return process.terminationStatus
    }

    public func kill(_ signal: Int32) { Glibc.kill(process.processIdentifier, signal) }
}

/// Runs a command to its end; its exit status and output (stdout and stderr together).
public func run(_ executable: URL, _ arguments: [String], timeout: Duration = .seconds(30)) async throws -> (status: Int32, output: String) {
    let child = try Child(executable, arguments)
    guard let status = await child.exitStatus(timeout: timeout) else {
        child.kill(SIGKILL)
        _ = await child.exitStatus()
        return (-1, child.output + "\n(timed out)")
    }
    return (status, child.output)
}

/// Runs a command to its end; its exit status, stdout and stderr apart.
public func runSeparately(_ executable: URL, _ arguments: [String], timeout: Duration = .seconds(60)) async throws -> (status: Int32, stdout: String, stderr: String) {
    let child = try Child(executable, arguments)
    guard let status = await child.exitStatus(timeout: timeout) else {
        child.kill(SIGKILL)
        _ = await child.exitStatus()
        return (-1, child.standardOutput, child.standardError + "\n(timed out)")
    }
    return (status, child.standardOutput, child.standardError)
}

