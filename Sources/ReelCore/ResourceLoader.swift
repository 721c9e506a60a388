import Foundation

/// Where every byte the player reads comes from: the Swift-native counterpart of
/// `AVAssetResourceLoaderDelegate`. FFmpeg never opens a URL itself; it reads
/// through a loader, and so does everything else in Reel (cache, preloader, feed).
///
/// One loader serves any number of resources, each named by a URL. A read is
/// started with ``read(_:range:)``, which returns at once; the ``ByteStream`` it
/// returns delivers the resource's ``ContentInformation`` first and then the
/// requested bytes, incrementally, as they arrive.
///
/// ## The contract
///
/// Every implementation (and every fake) behaves the same at the edges; the
/// `LoaderContract` suite in ReelTestSupport checks each rule:
///
/// 1. **Information first.** Every stream that does not fail delivers the content
///    information before any byte, exactly once.
/// 2. **In order, from the offset.** The bytes delivered are exactly the
///    resource's bytes from `range.offset`, contiguous, in chunks of any size.
/// 3. **A short chunk is not an error.** A chunk smaller than asked for, or a pause,
///    means only "not yet". A read ends when the stream ends; it fails only when the
///    stream throws.
/// 4. **To the end.** `ByteRange(offset:)` with no length reads to the end of the
///    resource, known length or not. A range that runs past the end delivers the
///    bytes up to the end and ends normally.
/// 5. **offset == length is the end.** A read starting exactly at the end delivers
///    the information and then ends with no bytes. It is not an error.
/// 6. **offset > length is an error.** A read starting past the end throws
///    ``ResourceLoaderError/rangeNotSatisfiable(url:range:length:)``.
/// 7. **Errors say where.** Every error thrown is a ``ResourceLoaderError`` carrying
///    the URL and, for reads, the range. A missing resource is
///    ``ResourceLoaderError/notFound(url:)``.
/// 8. **Cancellation stops work.** ``ByteStream/cancel()``, or cancelling the task
///    iterating the stream, stops the read promptly and releases what it holds
///    (a file handle, a connection); further reads of that stream throw
///    `CancellationError`.
/// 9. **Reads are independent.** Any number of reads of the same or different
///    resources may run at once; cancelling one does not disturb the others.
public protocol ResourceLoader: Sendable {
    /// Starts reading `range` of the resource at `url` and returns at once.
    func read(_ url: URL, range: ByteRange) -> ByteStream

    /// The resource's content information, without its bytes.
    ///
    /// The default reads the first byte and keeps only the information; loaders
    /// with a cheaper way (a `stat`, an index) override it.
    func contentInformation(for url: URL) async throws -> ContentInformation
}

extension ResourceLoader {
    public func contentInformation(for url: URL) async throws -> ContentInformation {
        let stream = read(url, range: ByteRange(offset: 0, length: 1))
        defer { stream.cancel() }
        return try await stream.contentInformation()
    }

    /// Reads `range` whole (for tests, manifests and other small resources).
    public func data(_ url: URL, range: ByteRange = .all) async throws -> Data {
        let stream = read(url, range: range)
        defer { stream.cancel() }
        _ = try await stream.contentInformation()
        return try await stream.collect()
    }
}

/// A loader that keeps copies of what it reads (a cache) and can also read past them, for
/// resources that change while they are played: a live HLS playlist is refetched through
/// ``unstored`` at every reload, while VOD playlists and segments stay cached.
public protocol StoringResourceLoader: ResourceLoader {
    /// The same resources, read from their origin without the stored copies and without storing.
    var unstored: any ResourceLoader { get }
}

extension ResourceLoader {
    /// This loader, or what it reads through when it keeps copies (see ``StoringResourceLoader``).
    public var unstoredLoader: any ResourceLoader {
        (self as? any StoringResourceLoader)?.unstored ?? self
    }
}
