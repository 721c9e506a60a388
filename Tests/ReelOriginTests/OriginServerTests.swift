import Foundation
import NIOCore
import ReelOrigin
import ReelTestSupport
import Testing

/// 4000 bytes that differ at every offset a test looks at.
let clip: Data = {
    var state: UInt32 = 0x9E37_79B9
    return Data((0..<4000).map { _ in
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        return UInt8(truncatingIfNeeded: state)
    })
}()

/// A server for one test, serving `clip.mp4` (and `sub/other.bin`) from a fresh directory.
func withOrigin(
    latency: Duration = .zero, bandwidthKbps: Int? = nil, fault: OriginFault? = nil,
    routes: [OriginRoute] = [], _ body: (OriginServer, Int) async throws -> Void
) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-origin-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory.appendingPathComponent("sub"), withIntermediateDirectories: true)
    try clip.write(to: directory.appendingPathComponent("clip.mp4"))
    try Data("other".utf8).write(to: directory.appendingPathComponent("sub/other.bin"))
    defer { try? FileManager.default.removeItem(at: directory) }
    let server = OriginServer(configuration: .init(
        root: directory, latency: latency, bandwidthKbps: bandwidthKbps, fault: fault, routes: routes
    ))
    let port = try await server.start()
    do {
        try await body(server, port)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

@Suite("ReelOrigin")
struct OriginServerTests {
    /// `reel serve` of an HLS or DASH directory: each file with the type players expect.
    @Test(arguments: [
        ("master.m3u8", "application/vnd.apple.mpegurl"), ("v0/index.m3u8", "application/vnd.apple.mpegurl"),
        ("manifest.mpd", "application/dash+xml"), ("v0/seg-0.m4s", "video/iso.segment"), ("seg-0.ts", "video/mp2t"),
        ("v0/init.mp4", "video/mp4"),
    ])
    func servesStreamingFilesWithTheirContentTypes(_ name: String, _ type: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-origin-stream-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("v0"), withIntermediateDirectories: true)
        try clip.write(to: directory.appendingPathComponent(name))
        let server = OriginServer(configuration: .init(root: directory))
        let port = try await server.start()
        let response = try await rawRequest(port: port, path: "/" + name)
        await server.stop()
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == type)
        #expect(response.body == clip)
    }

    @Test func servesAWholeFileWithValidators() async throws {
        try await withOrigin { server, port in
            #expect(port > 0)
            #expect(server.port == port)
            let response = try await rawRequest(port: port, path: "/clip.mp4")
            #expect(response.status == 200)
            #expect(response.body == clip)
            #expect(response.header("Content-Length") == "4000")
            #expect(response.header("Content-Type") == "video/mp4")
            #expect(response.header("Accept-Ranges") == "bytes")
            let tag = try #require(response.header("ETag"))
            #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && !tag.hasPrefix("W/"))
            #expect(response.header("Last-Modified")?.hasSuffix(" GMT") == true)
        }
    }

    @Test(arguments: [
        ("bytes=10-19", 10, 19),
        ("bytes=3990-", 3990, 3999),
        ("bytes=-5", 3995, 3999),
        ("bytes=3000-9999", 3000, 3999),
        ("bytes=0-0", 0, 0),
    ])
    func servesSingleRanges(_ header: String, _ first: Int, _ last: Int) async throws {
        try await withOrigin { _, port in
            let response = try await rawRequest(port: port, path: "/clip.mp4", headers: [("Range", header)])
            #expect(response.status == 206)
            #expect(response.header("Content-Range") == "bytes \(first)-\(last)/4000")
            #expect(response.header("Content-Length") == String(last - first + 1))
            #expect(response.body == clip.subdata(in: first..<(last + 1)))
        }
    }

    @Test func answers416PastTheEndAndIgnoresWhatItCannotServe() async throws {
        try await withOrigin { _, port in
            let past = try await rawRequest(port: port, path: "/clip.mp4", headers: [("Range", "bytes=4000-")])
            #expect(past.status == 416)
            #expect(past.header("Content-Range") == "bytes */4000")
            // Several ranges or nonsense: the whole file.
            for header in ["bytes=0-1,5-6", "bytes=9-3", "lines=1-2"] {
                let whole = try await rawRequest(port: port, path: "/clip.mp4", headers: [("Range", header)])
                #expect(whole.status == 200, "\(header)")
                #expect(whole.body == clip)
            }
        }
    }

    @Test func honoursIfRange() async throws {
        try await withOrigin { _, port in
            let head = try await rawRequest(port: port, method: "HEAD", path: "/clip.mp4")
            let tag = try #require(head.header("ETag"))
            let same = try await rawRequest(port: port, path: "/clip.mp4", headers: [("Range", "bytes=5-9"), ("If-Range", tag)])
            #expect(same.status == 206)
            #expect(same.body == clip.subdata(in: 5..<10))
            let other = try await rawRequest(port: port, path: "/clip.mp4", headers: [("Range", "bytes=5-9"), ("If-Range", "\"stale\"")])
            #expect(other.status == 200)
            #expect(other.body == clip)
        }
    }

    @Test func headHasHeadersAndNoBody() async throws {
        try await withOrigin { _, port in
            let response = try await rawRequest(port: port, method: "HEAD", path: "/clip.mp4")
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == "4000")
            #expect(response.body.isEmpty)
        }
    }

    @Test func refusesWhatIsNotAFileInsideTheRoot() async throws {
        try await withOrigin { _, port in
            let r1 = try await rawRequest(port: port, path: "/missing.mp4")
            #expect(r1.status == 404)
            let r2 = try await rawRequest(port: port, path: "/sub")
            #expect(r2.status == 404)
            let r3 = try await rawRequest(port: port, path: "/../etc/passwd")
            #expect(r3.status == 404)
            let r4 = try await rawRequest(port: port, path: "/sub/%2e%2e/clip.mp4")
            #expect(r4.status == 404)
            let r5 = try await rawRequest(port: port, path: "/sub/other.bin")
            #expect(r5.body == Data("other".utf8))
            let r6 = try await rawRequest(port: port, method: "POST", path: "/clip.mp4")
            #expect(r6.status == 405)
        }
    }

    @Test func countsRequestsAndBytes() async throws {
        try await withOrigin { server, port in
            _ = try await rawRequest(port: port, path: "/clip.mp4")
            _ = try await rawRequest(port: port, path: "/clip.mp4", headers: [("Range", "bytes=0-99")])
            let stats = server.statistics
            #expect(stats.requestCount == 2)
            #expect(stats.bytesServed == 4100)
            #expect(stats.requests.map(\.status) == [200, 206])
            #expect(stats.requests.map(\.range) == [nil, "bytes=0-99"])
            server.resetStatistics()
            #expect(server.statistics.requestCount == 0)
        }
    }

    @Test func delaysEveryResponseByTheLatency() async throws {
        try await withOrigin(latency: .milliseconds(150)) { _, port in
            let start = ContinuousClock.now
            let response = try await rawRequest(port: port, path: "/clip.mp4", headers: [("Range", "bytes=0-9")])
            #expect(response.status == 206)
            #expect(ContinuousClock.now - start >= .milliseconds(140))
        }
    }

    @Test func capsTheBandwidth() async throws {
        // 4000 bytes at 80 kbit/s (10 000 bytes/s) take at least about 0.4 s.
        try await withOrigin(bandwidthKbps: 80) { _, port in
            let start = ContinuousClock.now
            let response = try await rawRequest(port: port, path: "/clip.mp4")
            #expect(response.body == clip)
            #expect(ContinuousClock.now - start >= .milliseconds(300))
        }
    }

    @Test func answersExtraRoutesBeforeFiles() async throws {
        let feed = OriginRoute(pathPrefix: "/api/feed", methods: ["GET"]) { request in
            .json(Data("{\"page\":\"\(request.queryItems["page"] ?? "")\"}".utf8))
        }
        let redirect = OriginRoute.redirect("/old.mp4", to: "/clip.mp4")
        try await withOrigin(fault: .fiveHundredFirst, routes: [feed, redirect]) { _, port in
            let response = try await rawRequest(port: port, path: "/api/feed/items?page=2")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json")
            #expect(String(decoding: response.body, as: UTF8.self) == "{\"page\":\"2\"}")
            let r7 = try await rawRequest(port: port, path: "/api/feeds")
            #expect(r7.status == 404)
            let moved = try await rawRequest(port: port, path: "/old.mp4")
            #expect(moved.status == 302)
            #expect(moved.header("Location") == "/clip.mp4")
        }
    }

    @Test func stopClosesOpenConnections() async throws {
        try await withOrigin(fault: .stallAfterHeaders) { server, port in
            let stalled = Task.detached { try await rawRequest(port: port, path: "/clip.mp4") }
            // The status is recorded on the event loop right before the head is written
            // and flushed; the close that stop() sends runs on that loop after it.
            #expect(await eventually() { server.statistics.requests.first?.status == 200 })
            await server.stop()
            let response = try await stalled.value
            #expect(response.status == 200)
            #expect(response.truncated)
            #expect(server.statistics.openConnections == 0)
        }
    }

    @Test func faultNamesRoundTrip() {
        for fault in OriginFault.allCases {
            #expect(OriginFault(name: fault.rawValue) == fault)
        }
        #expect(OriginFault(name: "no-such-fault") == nil)
    }
}

@Suite("ReelOrigin faults")
struct OriginFaultTests {
    @Test func ignoreRangeSendsTheWholeBody() async throws {
        try await withOrigin(fault: .ignoreRange) { _, port in
            let response = try await rawRequest(port: port, path: "/clip.mp4", headers: [("Range", "bytes=100-199")])
            #expect(response.status == 200)
            #expect(response.header("Content-Range") == nil)
            #expect(response.body == clip)
        }
    }

    @Test func dropMidBodyClosesAfterHalf() async throws {
        try await withOrigin(fault: .dropMidBody) { _, port in
            let response = try await rawRequest(port: port, path: "/clip.mp4", headers: [("Range", "bytes=1000-1999")])
            #expect(response.status == 206)
            #expect(response.header("Content-Length") == "1000")
            #expect(response.truncated)
            #expect(response.body == clip.subdata(in: 1000..<1500))
        }
    }

    @Test func fiveHundredFirstFailsOncePerPath() async throws {
        try await withOrigin(fault: .fiveHundredFirst) { _, port in
            let r8 = try await rawRequest(port: port, path: "/clip.mp4")
            #expect(r8.status == 500)
            let r9 = try await rawRequest(port: port, path: "/clip.mp4")
            #expect(r9.body == clip)
            let r10 = try await rawRequest(port: port, path: "/sub/other.bin")
            #expect(r10.status == 500)
        }
    }

    @Test func wrongContentRangeLiesInTheHeader() async throws {
        try await withOrigin(fault: .wrongContentRange) { _, port in
            let response = try await rawRequest(port: port, path: "/clip.mp4", headers: [("Range", "bytes=10-19")])
            #expect(response.status == 206)
            #expect(response.header("Content-Range") != "bytes 10-19/4000")
            #expect(response.body == clip.subdata(in: 10..<20))
        }
    }

    @Test func stallAfterHeadersSendsNothingMore() async throws {
        try await withOrigin(fault: .stallAfterHeaders) { _, port in
            let first = try await rawRequest(port: port, path: "/clip.mp4", timeout: 0.3)
            #expect(first.status == 200)
            #expect(first.truncated)
            #expect(first.body.isEmpty)
            let second = try await rawRequest(port: port, path: "/clip.mp4")
            #expect(second.body == clip)
        }
    }

    @Test func noContentLengthChunksAndHidesTheLength() async throws {
        try await withOrigin(fault: .noContentLength) { _, port in
            let whole = try await rawRequest(port: port, path: "/clip.mp4")
            #expect(whole.header("Content-Length") == nil)
            #expect(whole.chunked)
            #expect(whole.body == clip)
            let part = try await rawRequest(port: port, path: "/clip.mp4", headers: [("Range", "bytes=10-19")])
            #expect(part.status == 206)
            #expect(part.header("Content-Range") == "bytes 10-19/*")
            #expect(part.body == clip.subdata(in: 10..<20))
        }
    }

    @Test func contentChangedGivesNewBytesAndTagEachTime() async throws {
        try await withOrigin(fault: .contentChanged) { _, port in
            let first = try await rawRequest(port: port, path: "/clip.mp4")
            let second = try await rawRequest(port: port, path: "/clip.mp4")
            #expect(first.body == clip)
            #expect(second.body.count == clip.count)
            #expect(second.body != clip)
            #expect(first.header("ETag") != second.header("ETag"))
        }
    }
}
