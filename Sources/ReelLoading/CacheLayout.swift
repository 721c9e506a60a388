import Foundation
import ReelCore
internal import ReelDigest

/// Where a ``RangeCache`` keeps things:
///
/// ```
/// <cache>/lock                          flock'ed by the process that writes the cache
/// <cache>/temp/<md5>/meta.json          a partial resource: its metadata,
/// <cache>/temp/<md5>/<offset>-<length>-<md5>.span   its committed spans,
/// <cache>/temp/<md5>/<offset>-<id>.partial          and spans being written
/// <cache>/media/<md5>/…                 a complete resource (same files)
/// <cache>/trash/<md5>-<id>/…            deleted resources, purged in the background
/// <cache>/bandwidth.json                the last measured bandwidth (SavedBandwidthEstimate)
/// <cache>/.bandwidth.json.<pid>.<id>.tmp  the next one, being written by process <pid>
/// <cache>/demo-feed/…                   the feed `reel demo` makes (its manifest, written
///                                       last, is its commit point; the cache leaves it alone)
/// ```
///
/// Every file Reel writes under a cache directory is one of these. What a killed process
/// leaves is an unfinished write the next open discards: a `.partial` span, a
/// `meta.json.tmp`, a resource directory without metadata, or an estimate's temporary file
/// whose process is gone (one whose process still runs is left alone: it is being written).
///
/// A span's name carries its offset, its length and the MD5 of its bytes, and it gets
/// that name only by a rename after every byte was written (and synced): a committed
/// span is never partial, a `.partial` file is never trusted, and `verify` can check
/// every byte without a separate index.
enum CacheLayout {
    static let temp = "temp"
    static let media = "media"
    static let trash = "trash"
    static let lockFile = "lock"
    /// The last measured bandwidth, kept for the next process (``SavedBandwidthEstimate``).
    static let bandwidthFile = SavedBandwidthEstimate.fileName
    static let metadataFile = "meta.json"
    static let spanExtension = ".span"
    static let partialExtension = ".partial"

    /// The name of the temporary file a process writes the bandwidth estimate into before
    /// renaming it over ``bandwidthFile``.
    static func estimateTemporaryName(pid: Int32) -> String {
        ".\(bandwidthFile).\(pid).\(UInt32.random(in: 0 ... .max)).tmp"
    }

    /// The writing process of an estimate's temporary file, or `nil` if `name` is not one.
    static func estimateTemporaryPID(_ name: String) -> Int32? {
        let prefix = ".\(bandwidthFile)."
        guard name.hasPrefix(prefix), name.hasSuffix(".tmp") else { return nil }
        let parts = name.dropFirst(prefix.count).dropLast(".tmp".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, UInt32(parts[1]) != nil else { return nil }
        return pid
    }

    /// The directory name for a cache key: the hex MD5 of the key.
    static func directoryName(forKey key: String) -> String {
        MD5.hex(of: Data(key.utf8))
    }

    static func isDirectoryName(_ name: String) -> Bool {
        name.count == 32 && name.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    static func spanName(offset: Int64, length: Int64, digest: String) -> String {
        "\(offset)-\(length)-\(digest)\(spanExtension)"
    }

    static func partialName(offset: Int64) -> String {
        "\(offset)-\(UUID().uuidString.lowercased())\(partialExtension)"
    }

    /// `(offset, length, md5)` from a span file name, or `nil` if it is not one.
    static func parseSpanName(_ name: String) -> (offset: Int64, length: Int64, digest: String)? {
        guard name.hasSuffix(spanExtension) else { return nil }
        let parts = name.dropLast(spanExtension.count).split(separator: "-")
        guard parts.count == 3, let offset = Int64(parts[0]), let length = Int64(parts[1]),
              offset >= 0, length > 0, parts[2].count == 32,
              parts[2].allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
              String(offset) == parts[0], String(length) == parts[1] else { return nil }
        return (offset, length, String(parts[2]))
    }
}

/// What is known about a cached resource, stored as `meta.json` beside its spans.
struct CacheMetadata: Codable, Sendable, Equatable {
    static let currentFormat = 1

    var format: Int = CacheMetadata.currentFormat
    /// The cache key (the URL unless a key function says otherwise).
    var key: String
    /// The URL it was first cached from.
    var url: String
    var length: Int64?
    var contentType: String?
    var isByteRangeAccessSupported: Bool
    var entityTag: String?
    var lastModified: String?
    var finalURL: String?
    /// Seconds since 1970 of the last use (for least-recently-used eviction and ages).
    var lastAccess: Double
    /// Where the index (`moov`) of an MP4 whose index follows its media data starts:
    /// the tail to fetch with the head. `nil` when not known or not such a file.
    var mp4IndexOffset: Int64?
    /// Whether the head was examined for the MP4 layout.
    var layoutChecked: Bool = false

    init(key: String, url: URL, information: ContentInformation, now: Date) {
        self.key = key
        self.url = url.absoluteString
        self.length = information.length
        self.contentType = information.contentType
        self.isByteRangeAccessSupported = information.isByteRangeAccessSupported
        self.entityTag = information.entityTag
        self.lastModified = information.lastModified
        self.finalURL = information.finalURL?.absoluteString
        self.lastAccess = now.timeIntervalSince1970
    }

    /// The content information a read of the cached resource reports.
    var information: ContentInformation {
        ContentInformation(
            length: length,
            contentType: contentType,
            isByteRangeAccessSupported: isByteRangeAccessSupported,
            entityTag: entityTag,
            lastModified: lastModified,
            finalURL: finalURL.flatMap(URL.init(string:))
        )
    }

    /// Whether `information` describes a different version of the resource than this
    /// metadata: another entity tag, another modification date, another length.
    func isDifferentEntity(from information: ContentInformation) -> Bool {
        if let old = entityTag, let new = information.entityTag, old != new { return true }
        if entityTag == nil || information.entityTag == nil,
           let old = lastModified, let new = information.lastModified, old != new { return true }
        if let old = length, let new = information.length, old != new { return true }
        return false
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    static func decode(_ data: Data) -> CacheMetadata? {
        guard let metadata = try? JSONDecoder().decode(CacheMetadata.self, from: data),
              metadata.format == currentFormat else { return nil }
        return metadata
    }
}
