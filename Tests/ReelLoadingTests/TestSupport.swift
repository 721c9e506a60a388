import Foundation
import NIOCore
import ReelCore
@testable import ReelLoading
import ReelDigest
import ReelOrigin
import ReelTestSupport

/// A fresh temporary directory, removed by `remove()`.
struct TemporaryDirectory: Sendable {
    let url: URL

    init(_ label: String = "reel-test") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var path: String { url.path }

    func write(_ data: Data, to name: String) throws {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
    }

    /// Removes the directory, and the accounts data `reel serve` keeps beside a served directory.
    func remove() {
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.removeItem(atPath: url.standardizedFileURL.path + ".reel-data")
    }
}

/// The read timeout for a test against `fault`: short when the origin stalls on purpose.
func readTimeout(for fault: OriginFault?) -> Duration {
    fault == .stallAfterHeaders ? .seconds(1) : hangWatchdog
}

/// Loader settings for a test against `fault`. Against a stalling origin the read timeout
/// is short (the test waits for it), so a slow machine (a sanitizer, two busy cores) can
/// also let a healthy retry pause that long: it gets more attempts instead of failing.
func httpConfiguration(for fault: OriginFault?) -> HTTPLoader.Configuration {
    fastHTTPConfiguration(maxAttempts: fault == .stallAfterHeaders ? 30 : 4, readTimeout: readTimeout(for: fault))
}

/// An ``OriginServer`` serving given files from a temporary directory.
final class TestOrigin: Sendable {
    let server: OriginServer
    let directory: TemporaryDirectory

    init(files: [String: Data], latency: Duration = .zero, bandwidthKbps: Int? = nil,
         fault: OriginFault? = nil, routes: [OriginRoute] = []) async throws {
        directory = try TemporaryDirectory("reel-origin")
        for (name, data) in files { try directory.write(data, to: name) }
        server = OriginServer(configuration: .init(
            root: directory.url, latency: latency, bandwidthKbps: bandwidthKbps, fault: fault, routes: routes
        ))
        try await server.start()
    }

    func url(_ name: String) -> URL { server.url(for: name) }

    func stop() async {
        await server.stop()
        directory.remove()
    }
}

/// HTTP loader settings for tests: quick retries, and timeouts that only a test waiting
/// for one meets. The read timeout is short only where a test waits for it (a stalled
/// origin, `readTimeout(for:)`); elsewhere every timeout is a watchdog, since on a loaded
/// machine a healthy origin (whose route handlers run as tasks) can pause for seconds, and
/// a timeout there would add a retry the test does not expect: the same ``hangWatchdog`` as
/// every other wait (30 s was met on one core in the whole suite, by an ignore-range origin's
/// whole-body reads).
func fastHTTPConfiguration(maxAttempts: Int = 4, readTimeout: Duration = hangWatchdog) -> HTTPLoader.Configuration {
    HTTPLoader.Configuration(
        connectTimeout: .seconds(60),
        responseTimeout: hangWatchdog,
        readTimeout: readTimeout,
        maxAttemptsWithoutProgress: maxAttempts,
        initialBackoff: .milliseconds(10),
        maxBackoff: .milliseconds(50)
    )
}

/// A byte string's size and MD5, compared instead of the bytes: Swift Testing explains a
/// failed `==` of two collections with a diff, which never ends for megabytes.
struct Fingerprint: Hashable, CustomStringConvertible {
    let count: Int
    let md5: String

    init(_ data: Data) {
        count = data.count
        md5 = MD5.hex(of: data)
    }

    var description: String { "\(count) bytes, md5 \(md5)" }
}

extension Data {
    var fingerprint: Fingerprint { Fingerprint(self) }
}

/// Ends a child process: SIGTERM, then SIGKILL if it lingers, polling without blocking a thread.
func stopProcess(_ process: Process, grace: Duration = .seconds(3)) async {
    guard process.end == nil else { return }
    if grace > .zero { process.terminate() }
    let deadline = ContinuousClock.now + grace
    while process.end == nil, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(10))
    }
    if process.end == nil {
        kill(process.processIdentifier, SIGKILL)
        while process.end == nil { try? await Task.sleep(for: .milliseconds(10)) }
    }
}
