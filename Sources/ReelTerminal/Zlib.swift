internal import CZlib

/// zlib's one-shot compression (RFC 1950: what kitty's `o=z` expects), behind the bridge.
enum Zlib {
    /// `bytes` compressed at `level` (1 fastest … 9 smallest); nil only when zlib fails.
    static func compress(_ bytes: [UInt8], level: Int32 = 1) -> [UInt8]? {
        var length = compressBound(uLong(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(length))
        let status = out.withUnsafeMutableBufferPointer { dst in
            bytes.withUnsafeBufferPointer { src in
                compress2(dst.baseAddress, &length, src.baseAddress, uLong(src.count), level)
            }
        }
        guard status == Z_OK else { return nil }
        out.removeSubrange(Int(length)...)
        return out
    }

    /// `bytes` decompressed, when they hold at most `capacity` bytes (tests, checks).
    static func decompress(_ bytes: [UInt8], capacity: Int) -> [UInt8]? {
        var length = uLong(capacity)
        var out = [UInt8](repeating: 0, count: capacity)
        let status = out.withUnsafeMutableBufferPointer { dst in
            bytes.withUnsafeBufferPointer { src in
                uncompress(dst.baseAddress, &length, src.baseAddress, uLong(src.count))
            }
        }
        guard status == Z_OK else { return nil }
        out.removeSubrange(Int(length)...)
        return out
    }
}
