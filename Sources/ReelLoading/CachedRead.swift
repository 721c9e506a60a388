import Foundation
import ReelCore
#if canImport(Glibc)
import Glibc
#endif

/// One read (or fill) through the cache: a loop that takes each next byte from a
/// committed span, from a writer's partial file, from a writer it waits for, or from
/// the network through a writer of its own. Owned by one task; not shared (and not
/// `Sendable`: it is made for the task that runs it and handed over to it).
final class CachedRead {
    enum Mode {
        /// Deliver the bytes to a consumer.
        case deliver(ByteStream.Continuation)
        /// Only fill the cache: skip what is cached, leave what others write, deliver nothing.
        case fill(gate: (@Sendable () async throws -> Void)?)
    }

    private enum Stop: Error { case fillDone }

    private let loader: CachingLoader
    private let url: URL
    private let range: ByteRange
    private var mode: Mode
    private let priority: SpanWriter.Priority
    private let control: ReadControl?
    private let lease: ResourceLease

    /// The information in force (reported to the consumer, when delivering).
    private var information: ContentInformation?
    private var position: Int64
    /// One past the last byte to read, once known.
    private var end: Int64?
    private var fetched: Int64 = 0
    /// The first bytes from the network, kept until the MP4 layout is known.
    private var head: Data?
    private var openFile: (path: String, descriptor: Int32)?

    init(loader: CachingLoader, url: URL, range: ByteRange, mode: Mode, priority: SpanWriter.Priority, control: ReadControl?) {
        self.loader = loader
        self.url = url
        self.range = range
        self.mode = mode
        self.priority = priority
        self.control = control
        self.position = range.offset
        self.end = range.end
        self.lease = loader.cache.lease(url)
    }

    deinit {
        closeFile()
        lease.release()
    }

    private var isDelivering: Bool {
        if case .deliver = mode { return true }
        return false
    }

    // MARK: - Running

    func runDelivering() async {
        guard case .deliver(let continuation) = mode else { return }
        do {
            try await loop()
            continuation.finish()
        } catch Stop.fillDone {
            continuation.finish()
        } catch let error as ResourceLoaderError {
            continuation.finish(throwing: error)
        } catch is CancellationError {
            continuation.finish(throwing: CancellationError())
        } catch {
            continuation.finish(throwing: ResourceLoaderError.network(url: url, range: range, reason: "\(error)"))
        }
        closeFile()
        lease.release()
    }

    func runFilling() async throws -> CachingLoader.FillResult {
        defer {
            closeFile()
            lease.release()
        }
        do {
            try await loop()
        } catch Stop.fillDone {
        }
        return CachingLoader.FillResult(information: information, bytesFetched: fetched)
    }

    private func loop() async throws {
        if let metadata = lease.metadata {
            try accept(metadata.information)
            if range.offset == 0, let offset = metadata.mp4IndexOffset, let length = metadata.length {
                startIndexPrefetchIfMissing(offset: offset, length: length)
            }
        }
        var missingFileRetries = 0
        while true {
            try Task.checkCancellation()
            if end == nil, information != nil, let length = lease.metadata?.length {
                // Another read found where a resource of unknown length ends.
                end = min(range.end ?? length, length)
            }
            if let end, position >= end, information != nil { break }
            if lease.isInvalidated {
                if isDelivering, information != nil {
                    throw ResourceLoaderError.contentChanged(url: url, expected: information?.entityTag, found: nil)
                }
                lease.renew()
                information = nil
                end = range.end
                continue
            }
            switch lease.lookup(position) {
            case .cached(let path, let fileOffset, let available), .written(let path, let fileOffset, let available):
                if information == nil {
                    // Another read recorded the resource after this one started.
                    guard let metadata = lease.metadata else { continue }
                    try accept(metadata.information)
                    continue
                }
                let wanted = min(available, (end ?? Int64.max) - position)
                guard case .deliver = mode else {
                    position += wanted
                    continue
                }
                let count = Int(min(wanted, Int64(loader.configuration.chunkSize)))
                guard let data = readFile(path, at: fileOffset, count: count) else {
                    // Renamed (committed), evicted or invalidated under us: look again.
                    missingFileRetries += 1
                    if missingFileRetries > 8 {
                        try await fetch(takeOver: true, store: false, until: position + Int64(count))
                    }
                    continue
                }
                missingFileRetries = 0
                loader.count(fromCache: data.count)
                try await deliver(data)
            case .pending(let writer):
                let distance = position - writer.writtenEndSnapshot()
                if case .fill = mode {
                    if distance > loader.configuration.waitWindow {
                        // That writer is far behind: these bytes are this fill's to fetch.
                        try await fetch(takeOver: true, store: true, until: nil)
                        continue
                    }
                    // Someone else is about to fetch these bytes; leave them to it.
                    guard let limit = writer.limitSnapshot(), limit > position else { throw Stop.fillDone }
                    position = limit
                    continue
                }
                if writer.priority == .preload || distance > loader.configuration.waitWindow {
                    try await fetch(takeOver: true, store: true, until: nil)
                } else if !(await writer.waitForProgress(beyond: position, timeout: loader.configuration.writerStallTimeout)) {
                    try Task.checkCancellation()
                    try await fetch(takeOver: true, store: true, until: nil)
                }
            case .hole:
                try await fetch(takeOver: false, store: true, until: nil)
            }
        }
    }

    /// Takes on the information of the resource: works out the end and reports it.
    private func accept(_ info: ContentInformation) throws {
        information = info
        if let length = info.length {
            if range.offset > length {
                if case .deliver(let continuation) = mode { continuation.respond(with: info) }
                throw ResourceLoaderError.rangeNotSatisfiable(url: url, range: range, length: length)
            }
            end = min(range.end ?? length, length)
        }
        if case .deliver(let continuation) = mode { continuation.respond(with: info) }
    }

    // MARK: - Fetching a hole

    /// Fetches from `position` to the end of the hole there (or `until`), storing through
    /// a writer when it can.
    private func fetch(takeOver: Bool, store: Bool, until: Int64?) async throws {
        var writer: SpanWriter?
        var holeEnd: Int64?
        if store {
            let claim = lease.prepareFetch(at: position, takeOver: takeOver, priority: priority)
            if claim.blocked { return }  // someone claimed it since the lookup: look again
            writer = claim.writer
            holeEnd = claim.holeEnd
        } else {
            holeEnd = until
        }
        defer { writer?.finish() }
        if let until { holeEnd = min(holeEnd ?? until, until) }
        let fetchEnd = [holeEnd, end].compactMap { $0 }.min()
        let start = position
        let upstream = loader.upstream.read(url, range: ByteRange(offset: start, length: fetchEnd.map { $0 - start }))
        defer { upstream.cancel() }
        loader.countRequest()

        let upstreamInfo: ContentInformation
        do {
            upstreamInfo = try await upstream.contentInformation()
        } catch {
            throw rewrap(error)
        }
        try reconcile(upstreamInfo, writer: &writer, store: store)
        if information == nil {
            try accept(upstreamInfo)
            if let end, position >= end { return }
        } else if end == nil, let length = upstreamInfo.length {
            end = min(range.end ?? length, length)
        }

        var sawBytes = false
        do {
            for try await chunk in upstream {
                var data = chunk
                if let end, position + Int64(data.count) > end {
                    data = data.prefix(Int(end - position))
                }
                guard !data.isEmpty else { break }
                sawBytes = true
                loader.count(fromNetwork: data.count)
                fetched += Int64(data.count)
                if let active = writer, active.append(data) < data.count {
                    // The writer stopped (its range was taken over, the disk failed).
                    writer = nil
                    if case .fill = mode {
                        position += Int64(data.count)
                        throw Stop.fillDone
                    }
                }
                if start == 0 || head != nil { examineHead(data) }
                try await deliver(data)
                if let end, position >= end { return }
            }
        } catch let error as ResourceLoaderError {
            throw rewrap(error)
        }
        // The upstream read ended without error short of where it was asked to go.
        if position < (fetchEnd ?? Int64.max) {
            guard upstreamInfo.length == nil else {
                throw ResourceLoaderError.invalidResponse(
                    url: url, range: range,
                    reason: "the origin ended at byte \(position) of a \(upstreamInfo.length!)-byte resource" + (sawBytes ? "" : " without sending anything")
                )
            }
            // A resource of unknown length ends here.
            lease.recordLength(position)
            end = position
        }
    }

    /// Checks the upstream's information against the cache. A changed entity fails a read
    /// that already reported the old one; otherwise the read goes on with the new one,
    /// through a writer on the fresh entry (`writer` is replaced).
    private func reconcile(_ upstreamInfo: ContentInformation, writer: inout SpanWriter?, store: Bool) throws {
        guard case .changed(let previous) = lease.reconcile(upstreamInfo) else { return }
        loader.countEntityChange()
        writer?.abandon()
        writer = nil
        if isDelivering, information != nil {
            throw ResourceLoaderError.contentChanged(url: url, expected: previous.entityTag, found: upstreamInfo.entityTag)
        }
        // Nothing of the old version was reported: go on with the new one.
        lease.renew()
        _ = lease.reconcile(upstreamInfo)
        information = nil
        if store {
            let claim = lease.prepareFetch(at: position, takeOver: true, priority: priority)
            writer = claim.writer
        }
    }

    /// Hands `data` to the consumer (or the gate, when filling) and moves on.
    private func deliver(_ data: Data) async throws {
        switch mode {
        case .deliver(let continuation):
            do {
                try await continuation.send(data)
            } catch {
                // The consumer is gone. A head the player will come back to keeps filling.
                guard let limit = headLimitAfterCancel, position + Int64(data.count) < limit else {
                    throw CancellationError()
                }
                mode = .fill(gate: nil)
                end = min(end ?? limit, limit)
            }
        case .fill(let gate):
            try await gate?()
        }
        position += Int64(data.count)
    }

    /// Set once this read found an MP4 index after the media: how far the head keeps
    /// downloading if the consumer leaves.
    private var headLimitAfterCancel: Int64?

    // MARK: - MP4 layout

    private func examineHead(_ data: Data) {
        guard loader.configuration.prefetchesMP4Index else { return }
        if head == nil {
            guard position == 0, !(lease.metadata?.layoutChecked ?? true) else { return }
            head = Data()
        }
        head!.append(data)
        let layout = MP4Layout.examine(head: head!, length: information?.length)
        switch layout {
        case .undetermined where head!.count < 64 * 1024:
            return
        case .indexAfterMedia(let offset):
            lease.recordLayout(indexOffset: offset)
            if let length = information?.length {
                startIndexPrefetchIfMissing(offset: offset, length: length)
            }
            if isDelivering, control?.keepGoingWhenCancelled() == true {
                headLimitAfterCancel = loader.configuration.headAfterIndexSeek
            }
        default:
            lease.recordLayout(indexOffset: nil)
        }
        head = nil
    }

    private func startIndexPrefetchIfMissing(offset: Int64, length: Int64) {
        guard case .deliver = mode else { return }
        let ranges = loader.cache.cachedRanges(for: url)
        if ranges.contains(where: { $0.lowerBound <= offset && $0.upperBound >= length }) { return }
        loader.prefetchIndex(url, from: offset, length: length)
    }

    // MARK: - Files

    private func readFile(_ path: String, at offset: Int64, count: Int) -> Data? {
        if openFile?.path != path {
            closeFile()
            guard let fd = try? POSIXFile.openForReading(path) else { return nil }
            openFile = (path, fd)
        }
        guard let fd = openFile?.descriptor,
              let data = try? POSIXFile.read(fd, at: offset, count: count, path: path), !data.isEmpty else {
            closeFile()
            return nil
        }
        return data
    }

    private func closeFile() {
        if let file = openFile {
            close(file.descriptor)
            openFile = nil
        }
    }

    /// An upstream error, told in terms of this read's URL and range.
    private func rewrap(_ error: any Error) -> any Error {
        guard let error = error as? ResourceLoaderError else { return error }
        switch error {
        case .rangeNotSatisfiable(_, _, let length): return ResourceLoaderError.rangeNotSatisfiable(url: url, range: range, length: length)
        case .invalidResponse(_, _, let reason): return ResourceLoaderError.invalidResponse(url: url, range: range, reason: reason)
        case .httpStatus(_, _, let status): return ResourceLoaderError.httpStatus(url: url, range: range, status: status)
        case .network(_, _, let reason): return ResourceLoaderError.network(url: url, range: range, reason: reason)
        case .io(_, _, let reason): return ResourceLoaderError.io(url: url, range: range, reason: reason)
        case .cancelled: return ResourceLoaderError.cancelled(url: url, range: range)
        case .notFound: return ResourceLoaderError.notFound(url: url)
        case .contentChanged(_, let expected, let found): return ResourceLoaderError.contentChanged(url: url, expected: expected, found: found)
        case .unauthorized(_, let status): return ResourceLoaderError.unauthorized(url: url, status: status)
        }
    }
}
