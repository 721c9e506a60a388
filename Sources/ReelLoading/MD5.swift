import Foundation
internal import CFFmpeg

/// MD5 (RFC 1321) of bytes fed in pieces, through libavutil's `av_md5` — the cache names
/// directories and spans by it (an identity and a corruption check, not security).
/// Owned by one thread at a time; not copyable, so the C context has exactly one owner.
struct MD5: ~Copyable {
    private let context: OpaquePointer

    init() {
        guard let context = av_md5_alloc() else {
            fatalError("av_md5_alloc: out of memory")
        }
        av_md5_init(context)
        self.context = context
    }

    deinit { av_free(UnsafeMutableRawPointer(context)) }

    mutating func update(_ bytes: Data) {
        bytes.withUnsafeBytes { update($0) }
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var remaining = bytes.count
        // av_md5_update takes an int length before libavutil 59 (size_t since).
        while remaining > 0 {
            let piece = min(remaining, 1 << 30)
            av_md5_update(context, base, .init(piece))
            base += piece
            remaining -= piece
        }
    }

    /// The lowercase hex digest of everything fed since the last reset; starts over.
    mutating func finalize() -> String {
        var digest = [UInt8](repeating: 0, count: 16)
        av_md5_final(context, &digest)
        av_md5_init(context)
        return MD5.hex(digest)
    }

    /// Forgets everything fed so far.
    mutating func reset() { av_md5_init(context) }

    /// The lowercase hex MD5 of `bytes`.
    static func hex(of bytes: Data) -> String {
        var md5 = MD5()
        md5.update(bytes)
        return md5.finalize()
    }

    static func hex(_ digest: [UInt8]) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
