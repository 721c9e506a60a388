import Foundation
internal import CNettle

/// MD5 (RFC 1321) of bytes fed in pieces, through Nettle. The cache names directories and
/// spans by it and the tests compare frames with FFmpeg's `framemd5` by it: an identity and
/// a corruption check, not security.
///
/// A value: copying one forks the digest, and each copy goes on by itself. Not shared
/// between threads while fed (it is `mutating`), so it needs no lock.
public struct MD5: Sendable {
    private var context = md5_ctx()

    public init() { nettle_md5_init(&context) }

    public mutating func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return }
            nettle_md5_update(&context, raw.count, base.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// The lowercase hex digest of everything fed since the last reset; starts over.
    public mutating func finalize() -> String {
        var digest = [UInt8](repeating: 0, count: 16)
        reel_md5_digest(&context, &digest) // Nettle starts the context over itself.
        return Hex.lowercase(digest)
    }

    /// Forgets everything fed so far.
    public mutating func reset() { nettle_md5_init(&context) }

    /// The lowercase hex MD5 of `bytes`.
    public static func hex(of bytes: some ContiguousBytes) -> String {
        var md5 = MD5()
        md5.update(bytes)
        return md5.finalize()
    }
}

/// SHA-256 (FIPS 180-4) through Nettle: what the accounts database keeps of a token, so a
/// copy of the database holds no usable token. A value, like ``MD5``.
public struct SHA256: Sendable {
    private var context = sha256_ctx()

    public init() { nettle_sha256_init(&context) }

    public mutating func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return }
            nettle_sha256_update(&context, raw.count, base.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// The lowercase hex digest of everything fed since the last reset; starts over.
    public mutating func finalize() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        reel_sha256_digest(&context, &digest) // Nettle starts the context over itself.
        return Hex.lowercase(digest)
    }

    /// The lowercase hex SHA-256 of `bytes`.
    public static func hex(of bytes: some ContiguousBytes) -> String {
        var sha = SHA256()
        sha.update(bytes)
        return sha.finalize()
    }
}

enum Hex {
    static func lowercase(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
