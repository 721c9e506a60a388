import Foundation
import ReelCore
import ReelLoading
import ReelOrigin
import ReelTestSupport
import Testing

/// Serves the contract's resources from a ReelOrigin on loopback, read with HTTPLoader.
struct HTTPLoaderSubject: LoaderContractSubject {
    var fault: OriginFault?
    var reportsLength = true

    func makeFixture(serving resources: [String: Data]) async throws -> LoaderFixture {
        let origin = try await TestOrigin(files: resources, fault: fault)
        let loader = HTTPLoader(configuration: httpConfiguration(for: fault))
        return LoaderFixture(
            loader: loader,
            url: { origin.url($0) },
            missingURL: origin.url("missing.mp4"),
            reportsLength: reportsLength,
            tearDown: {
                await loader.shutdown()
                await origin.stop()
            }
        )
    }
}

@Suite("HTTPLoader")
struct HTTPLoaderTests {
    @Test("keeps the loader contract", arguments: LoaderContract.checks)
    func contract(_ check: LoaderContract.Check) async throws {
        try await check.run(against: HTTPLoaderSubject())
    }
}

/// Every contract check against every origin fault that an HTTP loader can work around.
let recoverableFaults: [OriginFault] = [.ignoreRange, .dropMidBody, .fiveHundredFirst, .stallAfterHeaders, .noContentLength]

extension HTTPLoaderTests {
    @Test("keeps the contract against a faulty origin", arguments: recoverableFaults, LoaderContract.checks)
    func contractWithFault(_ fault: OriginFault, _ check: LoaderContract.Check) async throws {
        try await check.run(against: HTTPLoaderSubject(fault: fault, reportsLength: fault != .noContentLength))
    }
}

/// A pattern big enough to need many chunks.
let mediumBytes = LoaderContract.pattern(count: 600_000, seed: 3)

@Suite("HTTPLoader behaviour")
struct HTTPLoaderBehaviourTests {
    @Test func aWrongContentRangeIsAnErrorAndNoByteIsDelivered() async throws {
        let origin = try await TestOrigin(files: ["a.bin": mediumBytes], fault: .wrongContentRange)
        let loader = HTTPLoader(configuration: fastHTTPConfiguration())
        defer { Task { await loader.shutdown(); await origin.stop() } }
        let stream = loader.read(origin.url("a.bin"), range: ByteRange(offset: 100, length: 1000))
        var delivered = 0
        do {
            for try await chunk in stream { delivered += chunk.count }
            Issue.record("the read succeeded")
        } catch let error as ResourceLoaderError {
            guard case .invalidResponse(let url, let range, _) = error else {
                Issue.record("threw \(error)")
                return
            }
            #expect(url == origin.url("a.bin"))
            #expect(range == ByteRange(offset: 100, length: 1000))
        }
        #expect(delivered == 0)
    }

    @Test func aResumeThatFindsANewEntityIsContentChanged() async throws {
        // The first response is cut in half; before the resume arrives the file is replaced.
        let origin = try await TestOrigin(files: ["a.bin": mediumBytes], latency: .milliseconds(150), fault: .dropMidBody)
        let loader = HTTPLoader(configuration: fastHTTPConfiguration())
        defer { Task { await loader.shutdown(); await origin.stop() } }
        let stream = loader.read(origin.url("a.bin"), range: .all)
        var iterator = stream.makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.fingerprint == mediumBytes.prefix(first.count).fingerprint)
        try origin.directory.write(LoaderContract.pattern(count: 600_001, seed: 4), to: "a.bin")
        do {
            while let _ = try await iterator.next() {}
            Issue.record("the read succeeded across a change of entity")
        } catch let error as ResourceLoaderError {
            guard case .contentChanged = error else {
                Issue.record("threw \(error), want contentChanged")
                return
            }
        }
        let resumes = origin.server.statistics.requests.dropFirst()
        #expect(!resumes.isEmpty)
        #expect(resumes.allSatisfy { $0.ifRange != nil })
    }

    @Test func dropsAreResumedFromTheLastByteWithIfRange() async throws {
        let origin = try await TestOrigin(files: ["a.bin": mediumBytes], fault: .dropMidBody)
        let loader = HTTPLoader(configuration: fastHTTPConfiguration())
        defer { Task { await loader.shutdown(); await origin.stop() } }
        let got = try await loader.data(origin.url("a.bin"))
        #expect((got).fingerprint == (mediumBytes).fingerprint)
        let requests = origin.server.statistics.requests
        #expect(requests.count > 5)
        let starts = requests.compactMap { $0.range?.dropFirst("bytes=".count).split(separator: "-").first.flatMap { Int($0) } }
        #expect(starts == starts.sorted())
        #expect(Set(starts).count == starts.count)
        #expect(requests.dropFirst().allSatisfy { $0.ifRange != nil })
        #expect(loader.statistics.retries == requests.count - 1)
    }

    @Test func fiveHundredIsRetriedAndPersistentFailureIsReported() async throws {
        let always503 = OriginRoute(pathPrefix: "/busy") { _ in .text("busy", status: 503) }
        let origin = try await TestOrigin(files: ["a.bin": mediumBytes], fault: .fiveHundredFirst, routes: [always503])
        let loader = HTTPLoader(configuration: fastHTTPConfiguration(maxAttempts: 3))
        defer { Task { await loader.shutdown(); await origin.stop() } }
        #expect((try await loader.data(origin.url("a.bin"))).fingerprint == (mediumBytes).fingerprint)
        // The 500, then the retry's 206. On a starved machine a 206 may be cut by a timeout and
        // resumed: each later answer is a 206 that starts further on, never from zero again.
        let answers = origin.server.statistics.requests(for: "/a.bin")
        #expect(answers.first?.status == 500)
        #expect(answers.count >= 2 && answers.dropFirst().allSatisfy { $0.status == 206 })
        let starts = answers.dropFirst().map { $0.range?.dropFirst("bytes=".count).split(separator: "-").first.flatMap { Int($0) } ?? 0 }
        #expect(starts == starts.sorted() && Set(starts).count == starts.count)
        await #expect(throws: ResourceLoaderError.httpStatus(url: origin.url("busy"), range: .all, status: 503)) {
            _ = try await loader.data(origin.url("busy"))
        }
        #expect(origin.server.statistics.requests(for: "/busy").count == 3)
    }

    @Test func aStalledBodyTimesOutAndIsResumed() async throws {
        let origin = try await TestOrigin(files: ["a.bin": mediumBytes], fault: .stallAfterHeaders)
        // A 1 s read timeout also trips on a starved machine (the origin is in this process);
        // attempts enough that only a loader that never resumes fails.
        let loader = HTTPLoader(configuration: fastHTTPConfiguration(maxAttempts: 30, readTimeout: .seconds(1)))
        defer { Task { await loader.shutdown(); await origin.stop() } }
        let start = ContinuousClock.now
        #expect((try await loader.data(origin.url("a.bin"))).fingerprint == (mediumBytes).fingerprint)
        #expect(ContinuousClock.now - start >= .milliseconds(950))
        // The stalled first answer, then at least one more (a busy machine may need another).
        #expect(origin.server.statistics.requests(for: "/a.bin").count >= 2)
        #expect(loader.statistics.retries >= 1)
    }

    @Test func redirectsAreFollowedAndTheFinalURLKept() async throws {
        let origin = try await TestOrigin(files: ["media/a.bin": mediumBytes], routes: [
            .redirect("/short", to: "/hop"), .redirect("/hop", to: "/media/a.bin", status: 301),
            .redirect("/loop", to: "/loop"),
        ])
        let loader = HTTPLoader(configuration: fastHTTPConfiguration())
        defer { Task { await loader.shutdown(); await origin.stop() } }
        let stream = loader.read(origin.url("short"), range: ByteRange(offset: 10, length: 100))
        let info = try await stream.contentInformation()
        #expect(info.finalURL == origin.url("media/a.bin"))
        #expect((try await stream.collect()).fingerprint == (mediumBytes.subdata(in: 10..<110)).fingerprint)
        await #expect(throws: ResourceLoaderError.self) { _ = try await loader.data(origin.url("loop")) }
    }

    @Test func unauthorizedAndHeaders() async throws {
        let guarded = OriginRoute(pathPrefix: "/private") { request in
            guard request.header("Authorization") == "Bearer t0k", request.header("X-Reel") == "1" else {
                return .text("no", status: 401)
            }
            return OriginResponse(status: 200, body: Data("secret".utf8))
        }
        let forbidden = OriginRoute(pathPrefix: "/forbidden") { _ in .text("no", status: 403) }
        let origin = try await TestOrigin(files: [:], routes: [guarded, forbidden])
        let anonymous = HTTPLoader(configuration: fastHTTPConfiguration())
        var configuration = fastHTTPConfiguration()
        configuration.bearerToken = "t0k"
        configuration.headers = [("X-Reel", "1")]
        let authorized = HTTPLoader(configuration: configuration)
        defer { Task { await anonymous.shutdown(); await authorized.shutdown(); await origin.stop() } }
        await #expect(throws: ResourceLoaderError.unauthorized(url: origin.url("private"), status: 401)) {
            _ = try await anonymous.data(origin.url("private"))
        }
        await #expect(throws: ResourceLoaderError.unauthorized(url: origin.url("forbidden"), status: 403)) {
            _ = try await anonymous.data(origin.url("forbidden"))
        }
        #expect((try await authorized.data(origin.url("private"))).fingerprint == (Data("secret".utf8)).fingerprint)
    }

    @Test func unknownLengthAndIgnoredRangesAreReported() async throws {
        let chunked = try await TestOrigin(files: ["a.bin": mediumBytes], fault: .noContentLength)
        let whole = try await TestOrigin(files: ["a.bin": mediumBytes], fault: .ignoreRange)
        let loader = HTTPLoader(configuration: fastHTTPConfiguration())
        defer { Task { await loader.shutdown(); await chunked.stop(); await whole.stop() } }
        let info = try await loader.contentInformation(for: chunked.url("a.bin"))
        #expect(info.length == nil)
        #expect((try await loader.data(chunked.url("a.bin"), range: ByteRange(offset: 599_990))).fingerprint == (mediumBytes.suffix(10)).fingerprint)
        let stream = loader.read(whole.url("a.bin"), range: ByteRange(offset: 500_000, length: 10))
        let wholeInfo = try await stream.contentInformation()
        #expect(wholeInfo.length == 600_000)
        #expect(wholeInfo.isByteRangeAccessSupported == false)
        #expect((try await stream.collect()).fingerprint == (mediumBytes.subdata(in: 500_000..<500_010)).fingerprint)
    }

    @Test func cancellingClosesTheConnectionAtOnce() async throws {
        // 8 kbit/s: the first kilobyte comes at once, the 600 kB body would take ten
        // minutes, so the read is mid-body when cancelled however busy the machine is,
        // and a connection that closes within the watchdog was closed by the cancel.
        let origin = try await TestOrigin(files: ["a.bin": mediumBytes], bandwidthKbps: 8)
        // A read timeout far beyond the test: the connection closes by the cancel or not at all.
        let loader = HTTPLoader(configuration: fastHTTPConfiguration(readTimeout: .seconds(600)))
        defer { Task { await loader.shutdown(); await origin.stop() } }
        let stream = loader.read(origin.url("a.bin"), range: .all)
        var iterator = stream.makeAsyncIterator()
        _ = try await iterator.next()
        #expect(origin.server.statistics.openConnections == 1)
        stream.cancel()
        // Kept alive, a finished connection would stay open in the pool: closed means cancelled.
        #expect(await eventually() { origin.server.statistics.openConnections == 0 })
        #expect(origin.server.statistics.bytesServed < Int64(mediumBytes.count))
    }

    @Test func aServerThatIsGoneIsANetworkError() async throws {
        let origin = try await TestOrigin(files: ["a.bin": mediumBytes])
        let url = origin.url("a.bin")
        await origin.stop()
        var configuration = fastHTTPConfiguration(maxAttempts: 2)
        configuration.connectTimeout = .milliseconds(200)
        let loader = HTTPLoader(configuration: configuration)
        defer { Task { await loader.shutdown() } }
        do {
            _ = try await loader.data(url)
            Issue.record("read from a stopped server")
        } catch let error as ResourceLoaderError {
            guard case .network(let errorURL, _, _) = error else { Issue.record("threw \(error)"); return }
            #expect(errorURL == url)
        }
    }
}
