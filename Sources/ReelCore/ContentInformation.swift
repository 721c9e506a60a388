import Foundation

/// What a loader knows about a resource before its bytes: the Swift-native form of
/// `AVAssetResourceLoadingContentInformationRequest`, plus what a cache needs to
/// tell one version of a resource from the next.
public struct ContentInformation: Sendable, Hashable, Codable {
    /// The length in bytes, or `nil` when the origin does not say (a chunked HTTP
    /// response without a `Content-Range` total, a growing file).
    public var length: Int64?
    /// The MIME type, when known (`video/mp4`). Never used to refuse content.
    public var contentType: String?
    /// Whether reads may start anywhere; `false` means only from offset 0.
    public var isByteRangeAccessSupported: Bool
    /// An identifier of this version of the resource (an HTTP `ETag`, or for files
    /// one made from inode, size and modification time). A different tag means the
    /// bytes changed and anything cached for the old tag is stale.
    public var entityTag: String?
    /// The HTTP `Last-Modified` value, when there is one.
    public var lastModified: String?
    /// The URL the bytes really come from after redirects.
    public var finalURL: URL?

    public init(
        length: Int64?,
        contentType: String? = nil,
        isByteRangeAccessSupported: Bool = true,
        entityTag: String? = nil,
        lastModified: String? = nil,
        finalURL: URL? = nil
    ) {
        self.length = length
        self.contentType = contentType
        self.isByteRangeAccessSupported = isByteRangeAccessSupported
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.finalURL = finalURL
    }

    /// The MIME type usually meant by a file name's extension, for loaders that
    /// have no header to read it from.
    public static func contentType(forPathExtension ext: String) -> String? {
        switch ext.lowercased() {
        case "mp4", "m4v": "video/mp4"
        case "m4a": "audio/mp4"
        case "mov": "video/quicktime"
        case "webm": "video/webm"
        case "mkv": "video/x-matroska"
        case "avi": "video/x-msvideo"
        case "ts": "video/mp2t"
        case "m3u8": "application/vnd.apple.mpegurl"
        case "mpd": "application/dash+xml"
        case "m4s": "video/iso.segment"
        case "mp3": "audio/mpeg"
        case "aac": "audio/aac"
        case "ogg", "opus": "audio/ogg"
        case "wav": "audio/wav"
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "webp": "image/webp"
        case "json": "application/json"
        default: nil
        }
    }
}
