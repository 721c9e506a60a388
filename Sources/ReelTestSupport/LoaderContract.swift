import Foundation
import ReelCore
import Synchronization

/// A loader set up to serve known resources, for the ``LoaderContract`` checks.
public struct LoaderFixture: Sendable {
    /// The loader under test.
    public var loader: any ResourceLoader
    /// The URL at which the loader serves the resource of this name.
    public var url: @Sendable (String) -> URL
    /// A URL the loader has nothing at.
    public var missingURL: URL
    /// Whether the loader reports resource lengths (a chunked HTTP origin does not).
    public var reportsLength: Bool
    /// Undoes what setting up did (stop a server, remove files).
    public var tearDown: @Sendable () async -> Void

    public init(
        loader: any ResourceLoader,
        url: @escaping @Sendable (String) -> URL,
        missingURL: URL,
        reportsLength: Bool = true,
        tearDown: @escaping @Sendable () async -> Void = {}
    ) {
        self.loader = loader
        self.url = url
        self.missingURL = missingURL
        self.reportsLength = reportsLength
        self.tearDown = tearDown
    }
}

/// Something that can make a loader serving given resources: one per loader
/// implementation (file, HTTP, caching, fake), so all of them run the same checks.
public protocol LoaderContractSubject: Sendable {
    /// A loader serving `resources` (a name for each byte string).
    func makeFixture(serving resources: [String: Data]) async throws -> LoaderFixture
}

/// A rule of the ``ResourceLoader`` contract broken by a loader.
public struct ContractViolation: Error, CustomStringConvertible {
    public var check: String
    public var message: String
    public var description: String { "\(check): \(message)" }
}

/// The ``ResourceLoader`` contract as a reusable suite: every loader (and every fake)
/// runs these checks, so they all behave the same at the edges. Use it from a
/// parameterised test:
///
/// ```swift
/// @Test(arguments: LoaderContract.checks)
/// func fileLoaderKeepsTheContract(_ check: LoaderContract.Check) async throws {
///     try await check.run(against: FileLoaderSubject())
/// }
/// ```
public enum LoaderContract {
    /// One rule of the contract.
    public struct Check: Sendable, CustomStringConvertible {
        public let name: String
        let body: @Sendable (LoaderFixture, Resources) async throws -> Void

        /// Sets up a fixture from `subject`, checks the rule, and tears down.
        public func run(against subject: some LoaderContractSubject) async throws {
            let fixture = try await subject.makeFixture(serving: Resources.all)
            do {
                try await body(fixture, Resources())
            } catch {
                await fixture.tearDown()
                throw error
            }
            await fixture.tearDown()
        }

        public var description: String { name }
    }

    /// The resources every check has at hand, by name.
    public struct Resources: Sendable {
        public static let small = "small.bin"
        public static let large = "large.bin"
        public static let empty = "empty.bin"

        private static let smallBytes = LoaderContract.pattern(count: 1000, seed: 7)
        private static let largeBytes = LoaderContract.pattern(count: 3 << 20, seed: 11)

        /// 1000 bytes of a known pattern.
        public var small: Data { Self.smallBytes }
        /// 3 MiB: more than one chunk for any loader.
        public var large: Data { Self.largeBytes }

        static let all: [String: Data] = [
            Resources.small: smallBytes, Resources.large: largeBytes, Resources.empty: Data(),
        ]
    }

    /// Bytes that differ at every offset a test might look at (not a repeating short cycle).
    public static func pattern(count: Int, seed: UInt32) -> Data {
        var state = seed &* 2_654_435_761 | 1
        var bytes = [UInt8](repeating: 0, count: count)
        // Through the buffer: indexing the array checks every byte in a debug build, and
        // megabytes of it held a concurrency thread of the tests for seconds.
        bytes.withUnsafeMutableBufferPointer { buffer in
            for i in buffer.indices {
                state ^= state << 13
                state ^= state >> 17
                state ^= state << 5
                buffer[i] = UInt8(truncatingIfNeeded: state)
            }
        }
        return Data(bytes)
    }

    /// Every rule, in the order of the ``ResourceLoader`` doc comment.
    public static let checks: [Check] = [
        Check(name: "information comes first, with the length", body: informationFirst),
        Check(name: "a whole resource reads back byte for byte", body: wholeResource),
        Check(name: "a range in the middle reads exactly those bytes", body: middleRange),
        Check(name: "a range without a length reads to the end", body: toEnd),
        Check(name: "a range past the end stops at the end without error", body: pastEndClamped),
        Check(name: "offset equal to length is an empty read", body: offsetAtEnd),
        Check(name: "offset past the length throws a range error with URL and range", body: offsetPastEnd),
        Check(name: "a missing resource throws notFound with its URL", body: missing),
        Check(name: "an empty resource reads as empty", body: emptyResource),
        Check(name: "cancel() stops a read", body: cancelStops),
        Check(name: "cancelling the reading task stops a read", body: taskCancellationStops),
        Check(name: "concurrent reads are independent", body: concurrentReads),
        Check(name: "contentInformation(for:) agrees with reads", body: informationAgrees),
        Check(name: "the blocking read gives the same bytes", body: blockingRead),
    ]

    // MARK: - The checks

    private static func fail(_ check: String, _ message: String) -> ContractViolation {
        ContractViolation(check: check, message: message)
    }

    private static func expectEqual(_ got: Data, _ want: Data, _ check: String) throws {
        guard got == want else {
            let firstDifference = zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            throw fail(check, "got \(got.count) bytes, want \(want.count); first difference at \(firstDifference.map(String.init) ?? "the end")")
        }
    }

    private static let informationFirst: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, resources in
        let check = "information first"
        let stream = fixture.loader.read(fixture.url(Resources.large), range: .all)
        defer { stream.cancel() }
        var sawData = false
        for try await chunk in stream where !chunk.isEmpty {
            guard let info = stream.receivedContentInformation else {
                throw fail(check, "a chunk arrived before the content information")
            }
            if fixture.reportsLength, info.length != Int64(resources.large.count) {
                throw fail(check, "length \(String(describing: info.length)), want \(resources.large.count)")
            }
            sawData = true
            break
        }
        if !sawData { throw fail(check, "no data") }
        let info = try await stream.contentInformation()
        if fixture.reportsLength, info.length != Int64(resources.large.count) {
            throw fail(check, "length \(String(describing: info.length)), want \(resources.large.count)")
        }
    }

    private static let wholeResource: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, resources in
        for (name, bytes) in [(Resources.small, resources.small), (Resources.large, resources.large)] {
            let got = try await fixture.loader.data(fixture.url(name), range: .all)
            try expectEqual(got, bytes, "whole \(name)")
        }
    }

    private static let middleRange: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, resources in
        let ranges: [ByteRange] = [
            ByteRange(offset: 1, length: 1),
            ByteRange(offset: 100, length: 250),
            ByteRange(offset: 999, length: 1),
            ByteRange(offset: 0, length: 1000),
        ]
        for range in ranges {
            let got = try await fixture.loader.data(fixture.url(Resources.small), range: range)
            let want = resources.small.subdata(in: Int(range.offset)..<Int(range.end!))
            try expectEqual(got, want, "\(range) of small")
        }
        let big = ByteRange(offset: 1_234_567, length: 1_500_001)
        let got = try await fixture.loader.data(fixture.url(Resources.large), range: big)
        try expectEqual(got, resources.large.subdata(in: 1_234_567..<2_734_568), "\(big) of large")
    }

    private static let toEnd: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, resources in
        let got = try await fixture.loader.data(fixture.url(Resources.large), range: ByteRange(offset: 3_000_000))
        try expectEqual(got, resources.large.subdata(in: 3_000_000..<resources.large.count), "to end of large")
        let tail = try await fixture.loader.data(fixture.url(Resources.small), range: ByteRange(offset: 999))
        try expectEqual(tail, resources.small.suffix(1), "last byte of small")
    }

    private static let pastEndClamped: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, resources in
        let got = try await fixture.loader.data(fixture.url(Resources.small), range: ByteRange(offset: 900, length: 500))
        try expectEqual(got, resources.small.subdata(in: 900..<1000), "bytes 900-1399 of a 1000-byte resource")
    }

    private static let offsetAtEnd: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, _ in
        let check = "offset == length"
        for range in [ByteRange(offset: 1000), ByteRange(offset: 1000, length: 10)] {
            let stream = fixture.loader.read(fixture.url(Resources.small), range: range)
            defer { stream.cancel() }
            do {
                let info = try await stream.contentInformation()
                if fixture.reportsLength, info.length != 1000 {
                    throw fail(check, "length \(String(describing: info.length)), want 1000")
                }
                let rest = try await stream.collect()
                if !rest.isEmpty { throw fail(check, "\(range) gave \(rest.count) bytes, want none") }
            } catch let error as ResourceLoaderError {
                throw fail(check, "\(range) threw \(error), want an empty read")
            }
        }
    }

    private static let offsetPastEnd: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, _ in
        let check = "offset > length"
        guard fixture.reportsLength else { return }
        let url = fixture.url(Resources.small)
        let range = ByteRange(offset: 1001, length: 5)
        do {
            let data = try await fixture.loader.data(url, range: range)
            throw fail(check, "read \(data.count) bytes, want rangeNotSatisfiable")
        } catch let error as ResourceLoaderError {
            guard case .rangeNotSatisfiable(let errorURL, let errorRange, _) = error else {
                throw fail(check, "threw \(error), want rangeNotSatisfiable")
            }
            if errorURL != url { throw fail(check, "error names \(errorURL), want \(url)") }
            if errorRange.offset != range.offset { throw fail(check, "error names \(errorRange), want \(range)") }
        }
    }

    private static let missing: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, _ in
        let check = "missing resource"
        do {
            let data = try await fixture.loader.data(fixture.missingURL, range: .all)
            throw fail(check, "read \(data.count) bytes from a missing resource")
        } catch let error as ResourceLoaderError {
            guard case .notFound(let url) = error else { throw fail(check, "threw \(error), want notFound") }
            if url != fixture.missingURL { throw fail(check, "error names \(url), want \(fixture.missingURL)") }
        }
        do {
            _ = try await fixture.loader.contentInformation(for: fixture.missingURL)
            throw fail(check, "contentInformation(for:) of a missing resource succeeded")
        } catch let error as ResourceLoaderError {
            guard case .notFound = error else { throw fail(check, "contentInformation threw \(error), want notFound") }
        }
    }

    private static let emptyResource: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, _ in
        let check = "empty resource"
        let stream = fixture.loader.read(fixture.url(Resources.empty), range: .all)
        defer { stream.cancel() }
        let info = try await stream.contentInformation()
        if fixture.reportsLength, info.length != 0 { throw fail(check, "length \(String(describing: info.length)), want 0") }
        let rest = try await stream.collect()
        if !rest.isEmpty { throw fail(check, "\(rest.count) bytes from an empty resource") }
    }

    private static let cancelStops: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, resources in
        let check = "cancel()"
        let stream = fixture.loader.read(fixture.url(Resources.large), range: .all)
        var iterator = stream.makeAsyncIterator()
        guard let first = try await iterator.next(), !first.isEmpty else { throw fail(check, "no first chunk") }
        if first != resources.large.prefix(first.count) { throw fail(check, "first chunk is wrong") }
        stream.cancel()
        do {
            let more = try await iterator.next()
            throw fail(check, "read \(more?.count ?? 0) more bytes after cancel(), want CancellationError")
        } catch is CancellationError {
        }
        if !stream.isCancelled { throw fail(check, "isCancelled is false after cancel()") }
    }

    private static let taskCancellationStops: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, _ in
        let check = "task cancellation"
        // A read that can't finish on its own quickly: the whole large resource, consumed slowly.
        let stream = fixture.loader.read(fixture.url(Resources.large), range: .all)
        let firstChunk = AsyncSignal()
        let task = Task { () -> Result<Int, any Error> in
            // However the read ends (an error before the first chunk included), the check
            // below is let go: it must fail, never wait forever.
            defer { firstChunk.fire() }
            var total = 0
            do {
                for try await chunk in stream {
                    total += chunk.count
                    firstChunk.fire()
                    try await Task.sleep(nanoseconds: 20_000_000)
                }
                return .success(total)
            } catch {
                return .failure(error)
            }
        }
        await firstChunk.wait()
        task.cancel()
        let outcome = await task.value
        switch outcome {
        case .success(let total):
            // Finishing anyway is allowed only if everything had already arrived.
            if total < 3 << 20 { throw fail(check, "iteration ended quietly after \(total) bytes, want CancellationError") }
        case .failure(let error):
            if !(error is CancellationError) { throw fail(check, "threw \(error), want CancellationError") }
            if !stream.isCancelled { throw fail(check, "the stream was not cancelled") }
        }
    }

    private static let concurrentReads: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, resources in
        let loader = fixture.loader
        let url = fixture.url(Resources.large)
        let doomed = loader.read(url, range: ByteRange(offset: 0))
        async let a = loader.data(url, range: ByteRange(offset: 0, length: 1 << 20))
        async let b = loader.data(fixture.url(Resources.small), range: .all)
        async let c = loader.data(url, range: ByteRange(offset: 2 << 20))
        doomed.cancel()
        let (ga, gb, gc) = try await (a, b, c)
        try expectEqual(ga, resources.large.prefix(1 << 20), "concurrent read a")
        try expectEqual(gb, resources.small, "concurrent read b")
        try expectEqual(gc, resources.large.suffix(from: 2 << 20), "concurrent read c")
    }

    private static let informationAgrees: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, resources in
        let check = "contentInformation(for:)"
        let url = fixture.url(Resources.large)
        let info = try await fixture.loader.contentInformation(for: url)
        if fixture.reportsLength, info.length != Int64(resources.large.count) {
            throw fail(check, "length \(String(describing: info.length)), want \(resources.large.count)")
        }
        let stream = fixture.loader.read(url, range: ByteRange(offset: 10, length: 10))
        defer { stream.cancel() }
        let fromRead = try await stream.contentInformation()
        if fromRead.length != info.length { throw fail(check, "a read says length \(String(describing: fromRead.length))") }
        if fromRead.entityTag != info.entityTag {
            throw fail(check, "entity tag \(fromRead.entityTag ?? "none") from a read, \(info.entityTag ?? "none") from contentInformation")
        }
    }

    private static let blockingRead: @Sendable (LoaderFixture, Resources) async throws -> Void = { fixture, resources in
        let stream = fixture.loader.read(fixture.url(Resources.large), range: ByteRange(offset: 5, length: 2_000_000))
        // The blocking reads run on a thread of their own, as FFmpeg's AVIO thread would.
        let all = try await onOwnThread(named: "reel.tests.blocking-read") { () throws -> Data in
            _ = try stream.waitForContentInformation()
            var all = Data()
            while let piece = try stream.read(maxLength: 32 * 1024) {
                if piece.count > 32 * 1024 {
                    throw fail("blocking read", "read(maxLength: 32768) returned \(piece.count) bytes")
                }
                all.append(piece)
            }
            return all
        }
        try expectEqual(all, resources.large.subdata(in: 5..<2_000_005), "blocking read")
    }
}

/// A one-shot signal a task can wait for. The check of `fired` and the registration
/// of a waiter are one critical section, and `fire()` takes the waiters in the one that
/// sets it, so a wait never misses the signal.
final class AsyncSignal: Sendable {
    private struct State {
        var fired = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func fire() {
        let toResume = state.withTrackedLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        toResume.forEach { $0.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let firedAlready = state.withTrackedLock { state -> Bool in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if firedAlready { continuation.resume() }
        }
    }
}
