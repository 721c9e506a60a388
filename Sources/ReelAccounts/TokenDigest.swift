import Foundation
internal import CFFmpeg

/// SHA-256 (FIPS 180-4) through libavutil's `av_sha`: what the database keeps of a token, so a
/// copy of the database holds no usable token. One TLS stack and no second crypto library:
/// libavutil is linked already.
enum TokenDigest {
    /// The lowercase hex SHA-256 of `bytes`.
    static func sha256Hex(_ bytes: Data) -> String {
        guard let context = av_sha_alloc() else { fatalError("av_sha_alloc: out of memory") }
        defer { av_free(UnsafeMutableRawPointer(context)) }
        av_sha_init(context, 256)
        bytes.withUnsafeBytes { raw in
            guard var base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            var remaining = raw.count
            // The length is an int before libavutil 59 (size_t since): feed it in pieces.
            while remaining > 0 {
                let piece = min(remaining, 1 << 30)
                av_sha_update(context, base, .init(piece))
                base += piece
                remaining -= piece
            }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        av_sha_final(context, &digest)
        return digest.map { String(format: "%02x", $0) }.joined()
    }
}
