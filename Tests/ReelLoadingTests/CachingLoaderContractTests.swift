import Foundation
import ReelCore
import ReelLoading
import ReelOrigin
import ReelTestSupport
import Testing

/// A cache in a fresh directory with small segments (so reads cross span boundaries).
func makeTestCache(
    _ directory: TemporaryDirectory, segmentSize: Int = 256 * 1024,
    configure: (inout RangeCache.Configuration) -> Void = { _ in }
) throws -> RangeCache {
    var configuration = RangeCache.Configuration(directory: directory.url, segmentSize: segmentSize, syncWrites: false)
    configure(&configuration)
    return try RangeCache(configuration: configuration)
}

/// CachingLoader over HTTPLoader over ReelOrigin; `warm` reads every resource once first.
struct CachingHTTPSubject: LoaderContractSubject {
    var warm: Bool
    var fault: OriginFault?

    func makeFixture(serving resources: [String: Data]) async throws -> LoaderFixture {
        let origin = try await TestOrigin(files: resources, fault: fault)
        let http = HTTPLoader(configuration: httpConfiguration(for: fault))
        let directory = try TemporaryDirectory("reel-cache")
        let cache = try makeTestCache(directory)
        let loader = CachingLoader(upstream: http, cache: cache)
        if warm {
            for name in resources.keys {
                _ = try await loader.data(origin.url(name))
            }
        }
        return LoaderFixture(
            loader: loader,
            url: { origin.url($0) },
            missingURL: origin.url("missing.mp4"),
            reportsLength: fault != .noContentLength,
            tearDown: {
                await http.shutdown()
                await origin.stop()
                cache.close()
                directory.remove()
            }
        )
    }
}

/// CachingLoader over the in-memory fake (fast; unknown lengths too).
struct CachingFakeSubject: LoaderContractSubject {
    var reportsLength = true
    var warm = false

    func makeFixture(serving resources: [String: Data]) async throws -> LoaderFixture {
        let fake = FakeResourceLoader(clock: HostClock.shared, script: .instant)
        let base = URL(string: "https://fake.example/media/")!
        for (name, data) in resources {
            fake.add(data, at: base.appendingPathComponent(name), reportsLength: reportsLength)
        }
        let directory = try TemporaryDirectory("reel-cache")
        let cache = try makeTestCache(directory)
        let loader = CachingLoader(upstream: fake, cache: cache)
        if warm {
            for name in resources.keys { _ = try await loader.data(base.appendingPathComponent(name)) }
        }
        return LoaderFixture(
            loader: loader,
            url: { base.appendingPathComponent($0) },
            missingURL: base.appendingPathComponent("missing.mp4"),
            reportsLength: reportsLength,
            tearDown: {
                cache.close()
                directory.remove()
            }
        )
    }
}

@Suite("CachingLoader contract")
struct CachingLoaderContractTests {
    @Test("cold, over HTTP", arguments: LoaderContract.checks)
    func coldHTTP(_ check: LoaderContract.Check) async throws {
        try await check.run(against: CachingHTTPSubject(warm: false))
    }

    @Test("warm, over HTTP", arguments: LoaderContract.checks)
    func warmHTTP(_ check: LoaderContract.Check) async throws {
        try await check.run(against: CachingHTTPSubject(warm: true))
    }

    @Test("cold, over the fake", arguments: LoaderContract.checks)
    func coldFake(_ check: LoaderContract.Check) async throws {
        try await check.run(against: CachingFakeSubject())
    }

    @Test("warm, over the fake, unknown length", arguments: LoaderContract.checks)
    func warmFakeUnknownLength(_ check: LoaderContract.Check) async throws {
        try await check.run(against: CachingFakeSubject(reportsLength: false, warm: true))
    }

    @Test("cold, over the fake, unknown length", arguments: LoaderContract.checks)
    func coldFakeUnknownLength(_ check: LoaderContract.Check) async throws {
        try await check.run(against: CachingFakeSubject(reportsLength: false))
    }
}
