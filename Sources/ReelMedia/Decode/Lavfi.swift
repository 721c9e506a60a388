import Foundation
// `package`: the clip encoder (ReelMediaTools) builds its sources with these.
package import CFFmpeg

/// libavfilter, loaded the first time something needs it: time-stretching at a rate other
/// than 1 (`atempo`) and the clip encoder's sources. It is not linked: loading it brings some
/// thirty libraries of its own (about 11 MB resident) that plain playback never uses.
package enum Lavfi {
    /// The functions, loading the library on first use.
    package static func functions() throws -> ReelLavfi {
        switch loaded {
        case .success(let table): return table
        case .failure(let error): throw error
        }
    }

    /// Loaded once (a `static let` is initialised once, thread-safely); the library stays loaded.
    private static let loaded: Result<ReelLavfi, MediaError> = {
        let table = UnsafeMutablePointer<ReelLavfi>.allocate(capacity: 1)
        defer { table.deallocate() }
        var error = [CChar](repeating: 0, count: 256)
        guard reel_lavfi_load(table, &error, error.count) == 1 else {
            let message = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(MediaError.ffmpeg(operation: "loading libavfilter", code: -1, message: message, url: nil))
        }
        return .success(table.pointee)
    }()
}
