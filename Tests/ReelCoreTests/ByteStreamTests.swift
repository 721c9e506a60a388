import Foundation
@testable import ReelCore
import Testing

private let info = ContentInformation(length: 10, contentType: "video/mp4")

@Suite struct ByteStreamTests {
    @Test func deliversInformationThenChunksThenEnd() async throws {
        let (stream, continuation) = ByteStream.makeStream()
        #expect(stream.receivedContentInformation == nil)
        continuation.respond(with: info)
        continuation.yield(Data([1, 2, 3]))
        continuation.yield(Data([4]))
        continuation.finish()
        #expect(try await stream.contentInformation() == info)
        var chunks: [Data] = []
        for try await chunk in stream { chunks.append(chunk) }
        #expect(chunks == [Data([1, 2, 3]), Data([4])])
    }

    @Test func errorComesAfterTheBytesBeforeIt() async throws {
        let (stream, continuation) = ByteStream.makeStream()
        continuation.respond(with: info)
        continuation.yield(Data([9, 9]))
        let url = URL(string: "https://origin.example/a.mp4")!
        continuation.finish(throwing: ResourceLoaderError.network(url: url, range: .all, reason: "reset"))
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == Data([9, 9]))
        await #expect(throws: ResourceLoaderError.network(url: url, range: .all, reason: "reset")) {
            _ = try await iterator.next()
        }
    }

    @Test func blockingReadSplitsChunksToTheRequestedSize() throws {
        let (stream, continuation) = ByteStream.makeStream()
        continuation.respond(with: info)
        continuation.yield(Data(0..<10))
        continuation.finish()
        #expect(try stream.waitForContentInformation() == info)
        #expect(try stream.read(maxLength: 4) == Data([0, 1, 2, 3]))
        #expect(try stream.read(maxLength: 4) == Data([4, 5, 6, 7]))
        #expect(try stream.read(maxLength: 4) == Data([8, 9]))
        #expect(try stream.read(maxLength: 4) == nil)
    }

    @Test func readIntoBufferCopiesAcrossChunks() throws {
        let (stream, continuation) = ByteStream.makeStream()
        continuation.respond(with: info)
        continuation.yield(Data([1, 2]))
        continuation.yield(Data([3, 4, 5]))
        continuation.finish()
        var buffer = [UInt8](repeating: 0, count: 4)
        let n = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
        #expect(n == 4)
        #expect(buffer == [1, 2, 3, 4])
        let m = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
        #expect(m == 1)
        #expect(buffer[0] == 5)
        #expect(try buffer.withUnsafeMutableBytes { try stream.read(into: $0) } == 0)
    }

    @Test func blockedReaderWakesWhenBytesArrive() async throws {
        let (stream, continuation) = ByteStream.makeStream()
        continuation.respond(with: info)
        let result = onThread { try stream.read(maxLength: 100) }
        try await Task.sleep(nanoseconds: 5_000_000)
        continuation.yield(Data([42]))
        #expect(try await result.value() == Data([42]))
    }

    @Test func cancelWakesABlockedReaderAndRunsTheProducersHandler() async throws {
        let (stream, continuation) = ByteStream.makeStream()
        let stopped = AsyncGate()
        continuation.onCancel { stopped.open() }
        continuation.respond(with: info)
        let reader = onThread { () -> Bool in
            do { _ = try stream.read(maxLength: 10); return false } catch is CancellationError { return true }
        }
        try await Task.sleep(nanoseconds: 5_000_000)
        stream.cancel()
        #expect(try await reader.value())
        await stopped.wait()
        #expect(continuation.isCancelled)
        // Bytes pushed after cancellation are dropped.
        continuation.yield(Data([1]))
        #expect(stream.bufferedByteCount == 0)
    }

    @Test func sendWaitsAtTheHighWaterMarkUntilTheReaderCatchesUp() async throws {
        let (stream, continuation) = ByteStream.makeStream(highWaterMark: 8)
        continuation.respond(with: info)
        let progress = ManagedCounter()
        let producer = Task {
            for _ in 0..<4 {
                try await continuation.send(Data(repeating: 1, count: 6))
                progress.increment()
            }
            continuation.finish()
        }
        // 6 bytes fit under the mark; the second send buffers 12 > 8 and waits (however
        // long the producer takes to get there on a busy machine: the poll is a watchdog).
        var polls = 0
        while stream.bufferedByteCount < 12, polls < 6000 {
            try await Task.sleep(nanoseconds: 5_000_000)
            polls += 1
        }
        try await Task.sleep(nanoseconds: 5_000_000)
        #expect(progress.value == 1)
        #expect(stream.bufferedByteCount == 12)
        let all = try await stream.collect()
        #expect(all.count == 24)
        try await producer.value
        #expect(progress.value == 4)
    }

    @Test func idleOnlyWhenNothingBufferedAndTheProducerSaysSo() {
        let (stream, continuation) = ByteStream.makeStream()
        continuation.respond(with: info)
        #expect(!stream.isIdle)
        continuation.setIdle(true)
        #expect(stream.isIdle)
        continuation.yield(Data([1]))
        #expect(!stream.isIdle, "a reader has something to read")
        _ = try? stream.read(maxLength: 1)
        #expect(stream.isIdle)
        continuation.finish()
        #expect(!stream.isIdle, "a finished stream is not waiting for anything")
    }

    @Test func pulledStreamReadsOnTheReadersThread() async throws {
        let source = ManagedCounter()
        let stream = ByteStream(contentInformation: info, pull: { max in
            source.increment()
            return source.value <= 3 ? Data(repeating: UInt8(source.value), count: min(max, 2)) : nil
        })
        #expect(try await stream.collect() == Data([1, 1, 2, 2, 3, 3]))
    }

    // MARK: Looking ahead

    @Test func aPeekWaitsForEnoughBytesAndLeavesThemForTheReader() async throws {
        let (stream, continuation) = ByteStream.makeStream()
        continuation.respond(with: info)
        continuation.yield(Data([1, 2]))
        #expect(stream.isIdle == false)
        continuation.setIdle(true)
        #expect(stream.isIdle == false, "2 bytes buffered and nobody waits for more: not idle")
        let peek = onThread { try stream.waitForPrefix(atLeast: 4, atMost: 5) }
        // The peek waits for 4: the stream waits for its producer (a watchdog, not a timing).
        let deadline = Date().addingTimeInterval(10)
        while !stream.isIdle, Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(stream.isIdle, "2 bytes buffered, the peek waits for 4: waiting for the producer")
        continuation.yield(Data([3, 4, 5, 6]))
        #expect(try await peek.value() == Data([1, 2, 3, 4, 5]))
        #expect(try await stream.prefix(atLeast: 1, atMost: 3) == Data([1, 2, 3]))
        continuation.finish()
        #expect(try await stream.collect() == Data([1, 2, 3, 4, 5, 6]))
    }

    @Test func aPeekReturnsWhatThereIsAtTheEndAndThrowsAFailureWithNothingBuffered() async throws {
        let (short, continuation) = ByteStream.makeStream()
        continuation.respond(with: info)
        continuation.yield(Data([7]))
        continuation.finish()
        #expect(try await short.prefix(atLeast: 100, atMost: 100) == Data([7]))
        #expect(try short.read(maxLength: 10) == Data([7]))
        #expect(try await short.prefix(atLeast: 1, atMost: 10) == Data())

        let url = URL(string: "https://origin.example/a")!
        let failed = ByteStream.failed(ResourceLoaderError.notFound(url: url), contentInformation: info)
        #expect(throws: ResourceLoaderError.notFound(url: url)) { try failed.waitForPrefix(atLeast: 1, atMost: 8) }
        await #expect(throws: ResourceLoaderError.notFound(url: url)) { try await failed.prefix(atLeast: 1, atMost: 8) }
    }

    @Test func aPeekDoesNotWaitForAProducerThatWaitsForTheReader() async throws {
        let (stream, continuation) = ByteStream.makeStream(highWaterMark: 4)
        continuation.respond(with: info)
        let producer = Task { try await continuation.send(Data(repeating: 1, count: 6)) }
        #expect(try await stream.prefix(atLeast: 100, atMost: 100).count == 6)
        #expect(try stream.read(maxLength: 100)?.count == 6)
        try await producer.value
    }

    @Test func aPulledStreamsPeekIsReadFirst() async throws {
        let source = ManagedCounter()
        let stream = ByteStream(contentInformation: info, pull: { max in
            source.increment()
            return source.value <= 3 ? Data(repeating: UInt8(source.value), count: min(max, 2)) : nil
        })
        #expect(try stream.waitForPrefix(atLeast: 3, atMost: 8) == Data([1, 1, 2, 2]))
        #expect(try await stream.prefix(atLeast: 1, atMost: 3) == Data([1, 1, 2]), "peeked bytes are not pulled again")
        #expect(try stream.read(maxLength: 3) == Data([1, 1, 2]))
        #expect(try await stream.collect() == Data([2, 3, 3]))

        let tiny = ByteStream(contentInformation: info, pull: { _ in nil })
        #expect(try tiny.waitForPrefix(atLeast: 1, atMost: 8) == Data())
        #expect(try tiny.read(maxLength: 8) == nil)
    }
}

final class ManagedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// Runs blocking work on its own thread (never on the cooperative pool, which it
/// would starve) and hands back its result.
final class ThreadResult<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?
    private var waiter: CheckedContinuation<Result<T, any Error>, Never>?

    func set(_ value: Result<T, any Error>) {
        let w: CheckedContinuation<Result<T, any Error>, Never>? = lock.withLock {
            result = value
            defer { waiter = nil }
            return waiter
        }
        w?.resume(returning: value)
    }

    func value() async throws -> T {
        let r = await withCheckedContinuation { (c: CheckedContinuation<Result<T, any Error>, Never>) in
            lock.lock()
            if let result { lock.unlock(); c.resume(returning: result) } else { waiter = c; lock.unlock() }
        }
        return try r.get()
    }
}

func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) -> ThreadResult<T> {
    let box = ThreadResult<T>()
    Thread.detachNewThread { box.set(Result { try body() }) }
    return box
}
