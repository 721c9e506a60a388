internal import CFFmpeg

/// MD5 through libavutil (the same code `framemd5` uses).
enum MD5 {
    static func hex(of bytes: [UInt8]) -> String {
        guard let context = av_md5_alloc() else { return "" }
        defer { av_free(UnsafeMutableRawPointer(context)) }
        av_md5_init(context)
        bytes.withUnsafeBufferPointer { buffer in
            av_md5_update(context, buffer.baseAddress, buffer.count)
        }
        var digest = [UInt8](repeating: 0, count: 16)
        av_md5_final(context, &digest)
        return digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
