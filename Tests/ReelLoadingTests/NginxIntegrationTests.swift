import Foundation
import ReelCore
import ReelLoading
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real nginx (Debian's, installed by setup.sh) serving files on a free loopback port,
/// from a temporary prefix with its own configuration, logs and temp paths.
final class Nginx: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case notInstalled
        case didNotStart(String)
        var description: String {
            switch self {
            case .notInstalled: "nginx is not installed (./setup.sh installs it)"
            case .didNotStart(let log): "nginx did not start: \(log)"
            }
        }
    }

    let prefix: TemporaryDirectory
    let port: Int
    private let process: Process

    private init(prefix: TemporaryDirectory, port: Int, process: Process) {
        self.prefix = prefix
        self.port = port
        self.process = process
    }

    static var executable: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = ["/usr/sbin/nginx", "/usr/bin/nginx"] + path.split(separator: ":").map { "\($0)/nginx" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts nginx serving `files` under `/` (and `/moved.mp4` redirecting to `/media/clip.mp4`).
    static func start(files: [String: Data]) async throws -> Nginx {
        guard let executable else { throw Failure.notInstalled }
        var lastLog = ""
        for _ in 0..<3 {
            let prefix = try TemporaryDirectory("reel-nginx")
            for (name, data) in files { try prefix.write(data, to: "www/" + name) }
            for directory in ["www", "tmp"] {
                try FileManager.default.createDirectory(atPath: prefix.path + "/" + directory, withIntermediateDirectories: true)
            }
            let port = try freePort()
            let p = prefix.path
            let configuration = """
                daemon off;
                master_process off;
                worker_processes 1;
                pid \(p)/nginx.pid;
                error_log \(p)/error.log warn;
                events { worker_connections 256; }
                http {
                    access_log off;
                    client_body_temp_path \(p)/tmp/body;
                    proxy_temp_path \(p)/tmp/proxy;
                    fastcgi_temp_path \(p)/tmp/fastcgi;
                    uwsgi_temp_path \(p)/tmp/uwsgi;
                    scgi_temp_path \(p)/tmp/scgi;
                    types { video/mp4 mp4; application/octet-stream bin; }
                    default_type application/octet-stream;
                    server {
                        listen 127.0.0.1:\(port);
                        root \(p)/www;
                        location = /moved.mp4 { return 302 /media/clip.mp4; }
                        location / { }
                    }
                }
                """
            try configuration.write(toFile: p + "/nginx.conf", atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["-p", p, "-c", p + "/nginx.conf", "-e", p + "/error.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let nginx = Nginx(prefix: prefix, port: port, process: process)
            if await nginx.waitUntilListening() { return nginx }
            lastLog = (try? String(contentsOfFile: p + "/error.log", encoding: .utf8)) ?? "no log"
            await nginx.stop()
        }
        throw Failure.didNotStart(lastLog)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    /// Stops nginx and removes its prefix. A single-process nginx started by Foundation's
    /// `Process` inherits a mask that blocks SIGTERM, and it has nothing to flush: it is
    /// killed. Waits by polling, since `Process.waitUntilExit()` would block a thread of
    /// the concurrency pool.
    func stop() async {
        await stopProcess(process, grace: .zero)
        prefix.remove()
    }

    private func waitUntilListening() async -> Bool {
        // A watchdog, not a measurement: a busy machine may start nginx slowly.
        _ = await eventually(poll: .milliseconds(20)) {
            process.end != nil || canConnect(port: port)
        }
        return process.end == nil && canConnect(port: port)
    }
}

/// A port nobody listens on right now.
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw POSIXErrorCode(rawValue: errno).map { Foundation.POSIXError($0) } ?? CocoaError(.fileReadUnknown) }
    return Int(UInt16(bigEndian: address.sin_port))
}

func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// HTTPLoader (optionally through a CachingLoader) against nginx.
struct NginxSubject: LoaderContractSubject {
    var caching: Bool
    var warm = false

    func makeFixture(serving resources: [String: Data]) async throws -> LoaderFixture {
        let nginx = try await Nginx.start(files: resources)
        let http = HTTPLoader(configuration: fastHTTPConfiguration())
        let directory = try TemporaryDirectory("reel-cache")
        var loader: any ResourceLoader = http
        var cache: RangeCache?
        if caching {
            let opened = try makeTestCache(directory)
            cache = opened
            loader = CachingLoader(upstream: http, cache: opened)
            if warm {
                for name in resources.keys { _ = try await loader.data(nginx.url(name)) }
            }
        }
        return LoaderFixture(
            loader: loader,
            url: { nginx.url($0) },
            missingURL: nginx.url("missing.mp4"),
            tearDown: { [cache] in
                await http.shutdown()
                cache?.close()
                await nginx.stop()
                directory.remove()
            }
        )
    }
}

@Suite("nginx integration")
struct NginxIntegrationTests {
    @Test func nginxIsInstalled() {
        #expect(Nginx.executable != nil, "nginx is not installed: run ./setup.sh")
    }

    @Test("HTTPLoader keeps the contract against nginx", arguments: LoaderContract.checks)
    func httpContract(_ check: LoaderContract.Check) async throws {
        try await check.run(against: NginxSubject(caching: false))
    }

    @Test("CachingLoader keeps the contract against nginx, cold", arguments: LoaderContract.checks)
    func cachingContractCold(_ check: LoaderContract.Check) async throws {
        try await check.run(against: NginxSubject(caching: true))
    }

    @Test("CachingLoader keeps the contract against nginx, warm", arguments: LoaderContract.checks)
    func cachingContractWarm(_ check: LoaderContract.Check) async throws {
        try await check.run(against: NginxSubject(caching: true, warm: true))
    }

    @Test func redirectsSeeksChangesAndWarmReadsAgainstNginx() async throws {
        let clip = LoaderContract.pattern(count: 1_300_000, seed: 51)
        let nginx = try await Nginx.start(files: ["media/clip.mp4": clip])
        let http = HTTPLoader(configuration: fastHTTPConfiguration())
        let directory = try TemporaryDirectory()
        do {
            try await exerciseNginx(nginx, http: http, directory: directory, clip: clip)
        } catch {
            await http.shutdown()
            await nginx.stop()
            directory.remove()
            throw error
        }
        await http.shutdown()
        await nginx.stop()
        directory.remove()
    }

    private func exerciseNginx(_ nginx: Nginx, http: HTTPLoader, directory: TemporaryDirectory, clip: Data) async throws {
        let cache = try makeTestCache(directory)
        let loader = CachingLoader(upstream: http, cache: cache)

        // Through the redirect: the final URL is reported.
        let stream = loader.read(nginx.url("moved.mp4"), range: ByteRange(offset: 1_000_000, length: 1000))
        let info = try await stream.contentInformation()
        #expect(info.finalURL == nginx.url("media/clip.mp4"))
        #expect(info.entityTag != nil)
        #expect(info.contentType == "video/mp4")
        #expect(try await stream.collect().fingerprint == clip.subdata(in: 1_000_000..<1_001_000).fingerprint)

        // A head, a seek, the whole: right bytes, and then nothing from nginx.
        let url = nginx.url("media/clip.mp4")
        #expect(try await loader.data(url, range: ByteRange(offset: 0, length: 300_000)).fingerprint == clip.prefix(300_000).fingerprint)
        #expect(try await loader.data(url, range: ByteRange(offset: 900_000)).fingerprint == clip.suffix(from: 900_000).fingerprint)
        #expect(try await loader.data(url).fingerprint == clip.fingerprint)
        loader.resetStatistics()
        #expect(try await loader.data(url).fingerprint == clip.fingerprint)
        #expect(loader.statistics.bytesFromNetwork == 0)
        #expect(cache.summary(for: url)?.area == .media)

        // nginx's ETag follows the file: a new file is a new entity, and the cache follows it.
        let newer = LoaderContract.pattern(count: 1_200_000, seed: 52)
        try nginx.prefix.write(newer, to: "www/media/clip.mp4")
        cache.remove(url)
        #expect(try await loader.data(url).fingerprint == newer.fingerprint)
        _ = try await loader.data(url, range: ByteRange(offset: 0, length: 10))
        try nginx.prefix.write(clip, to: "www/media/clip.mp4")
        // Partly cached old version, new one at the origin: the read that meets it fails
        // cleanly, and the next read gets the new bytes.
        let secondDirectory = try TemporaryDirectory()
        defer { secondDirectory.remove() }
        let partial = try makeTestCache(secondDirectory)
        let second = CachingLoader(upstream: http, cache: partial)
        _ = try await second.data(url, range: ByteRange(offset: 0, length: 100_000))
        try nginx.prefix.write(newer, to: "www/media/clip.mp4")
        await #expect(throws: ResourceLoaderError.self) { _ = try await second.data(url) }
        #expect(try await second.data(url).fingerprint == newer.fingerprint)
        partial.close()
    }
}
