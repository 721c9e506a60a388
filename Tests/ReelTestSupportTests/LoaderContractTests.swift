import Foundation
import ReelCore
import ReelLoading
import ReelTestSupport
import Synchronization
import Testing

/// Serves the contract's resources from files in a fresh temporary directory.
struct FileLoaderSubject: LoaderContractSubject {
    func makeFixture(serving resources: [String: Data]) async throws -> LoaderFixture {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("reel-contract-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, data) in resources {
            try data.write(to: directory.appendingPathComponent(name))
        }
        return LoaderFixture(
            loader: FileLoader(chunkSize: 64 * 1024),
            url: { directory.appendingPathComponent($0) },
            missingURL: directory.appendingPathComponent("missing.mp4"),
            tearDown: { try? FileManager.default.removeItem(at: directory) }
        )
    }
}

/// Serves the contract's resources from memory, with a script.
struct FakeLoaderSubject: LoaderContractSubject {
    var script: FakeResourceLoader.Script
    var reportsLength = true

    func makeFixture(serving resources: [String: Data]) async throws -> LoaderFixture {
        let loader = FakeResourceLoader(clock: HostClock.shared, script: script)
        let base = URL(string: "https://fake.example/media/")!
        for (name, data) in resources {
            loader.add(data, at: base.appendingPathComponent(name), reportsLength: reportsLength)
        }
        return LoaderFixture(
            loader: loader,
            url: { base.appendingPathComponent($0) },
            missingURL: base.appendingPathComponent("missing.mp4"),
            reportsLength: reportsLength
        )
    }
}

@Suite("ResourceLoader contract")
struct LoaderContractTests {
    @Test("FileLoader", arguments: LoaderContract.checks)
    func fileLoader(_ check: LoaderContract.Check) async throws {
        try await check.run(against: FileLoaderSubject())
    }

    @Test("FakeResourceLoader, instant", arguments: LoaderContract.checks)
    func fakeInstant(_ check: LoaderContract.Check) async throws {
        try await check.run(against: FakeLoaderSubject(script: .instant))
    }

    @Test("FakeResourceLoader, real-time latency and throughput", arguments: LoaderContract.checks)
    func fakeTimed(_ check: LoaderContract.Check) async throws {
        let script = FakeResourceLoader.Script(
            latency: MediaTime(value: 2, timescale: 1000),
            bytesPerSecond: 400_000_000,
            chunkSize: 48 * 1024
        )
        try await check.run(against: FakeLoaderSubject(script: script))
    }

    @Test("FakeResourceLoader, unknown length", arguments: LoaderContract.checks)
    func fakeUnknownLength(_ check: LoaderContract.Check) async throws {
        try await check.run(against: FakeLoaderSubject(script: .instant, reportsLength: false))
    }

    /// The suite must catch a loader that breaks the contract, or it proves nothing.
    @Test func theSuiteCatchesABrokenLoader() async throws {
        struct OffByOneLoader: ResourceLoader {
            let inner: any ResourceLoader
            func read(_ url: URL, range: ByteRange) -> ByteStream {
                inner.read(url, range: ByteRange(offset: range.offset + 1, length: range.length))
            }
        }
        struct BrokenSubject: LoaderContractSubject {
            func makeFixture(serving resources: [String: Data]) async throws -> LoaderFixture {
                var fixture = try await FakeLoaderSubject(script: .instant).makeFixture(serving: resources)
                fixture.loader = OffByOneLoader(inner: fixture.loader)
                return fixture
            }
        }
        var failures = 0
        for check in LoaderContract.checks {
            do { try await check.run(against: BrokenSubject()) } catch { failures += 1 }
        }
        #expect(failures >= 5)
    }

    /// A loader whose every read fails before any byte: each check must end with a
    /// violation (or pass), never wait for a byte that cannot come. The task
    /// cancellation check used to wait for a first chunk for ever.
    @Test func everyCheckEndsAgainstALoaderWhoseReadsFail() async throws {
        struct FailingLoader: ResourceLoader {
            func read(_ url: URL, range: ByteRange) -> ByteStream {
                .failed(ResourceLoaderError.network(url: url, range: range, reason: "down"))
            }
        }
        struct FailingSubject: LoaderContractSubject {
            func makeFixture(serving resources: [String: Data]) async throws -> LoaderFixture {
                let base = URL(string: "https://down.example/")!
                return LoaderFixture(loader: FailingLoader(), url: { base.appendingPathComponent($0) }, missingURL: base.appendingPathComponent("missing"))
            }
        }
        for check in LoaderContract.checks {
            let ended = Ended()
            Task {
                _ = try? await check.run(against: FailingSubject())
                ended.set()
            }
            #expect(await eventually(poll: .milliseconds(2)) { ended.isSet }, "\(check) never ended")
        }
    }
}

/// Set by a task when it is done.
private final class Ended: Sendable {
    private let flag = Mutex(false)
    func set() { flag.withTrackedLock { $0 = true } }
    var isSet: Bool { flag.withTrackedLock { $0 } }
}
