import Foundation
import Synchronization
import ReelCore
import ReelMedia

/// Milliseconds on the monotonic clock.
func monotonicMs() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e6 }

/// Order statistics of a sample.
struct Distribution: Sendable {
    let sorted: [Double]
    init(_ values: [Double]) { sorted = values.filter { $0.isFinite }.sorted() }

    var count: Int { sorted.count }
    var isEmpty: Bool { sorted.isEmpty }
    /// Linear interpolation between closest ranks.
    func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        if sorted.count == 1 { return sorted[0] }
        let rank = p / 100 * Double(sorted.count - 1)
        let low = Int(rank.rounded(.down))
        let high = Swift.min(sorted.count - 1, low + 1)
        return sorted[low] + (sorted[high] - sorted[low]) * (rank - Double(low))
    }
    var p50: Double { percentile(50) }
    var p95: Double { percentile(95) }
    var max: Double { sorted.last ?? .nan }
    var min: Double { sorted.first ?? .nan }
}

/// A number for a table cell.
func formatMs(_ value: Double?, width: Int = 8) -> String {
    guard let value, value.isFinite else { return String(repeating: " ", count: max(0, width - 1)) + "–" }
    let text = value >= 1000 ? String(format: "%.0f", value) : value >= 100 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    return text.leftPadded(to: width)
}

func formatBytes(_ bytes: Double) -> String {
    guard bytes.isFinite else { return "–" }
    if bytes >= 1_048_576 { return String(format: "%.2f MB", bytes / 1_048_576) }
    if bytes >= 1024 { return String(format: "%.0f kB", bytes / 1024) }
    return String(format: "%.0f B", bytes)
}

extension String {
    func leftPadded(to width: Int) -> String {
        let n = count
        return n >= width ? self : String(repeating: " ", count: width - n) + self
    }
    func rightPadded(to width: Int) -> String {
        let n = count
        return n >= width ? self : self + String(repeating: " ", count: width - n)
    }
}

/// A JSON number: finite values as they are (rounded to µs), others as null.
func jsonNumber(_ value: Double?) -> String {
    guard let value, value.isFinite else { return "null" }
    let rounded = (value * 1000).rounded() / 1000
    if rounded == rounded.rounded() && abs(rounded) < 1e15 { return String(Int64(rounded)) }
    return String(rounded)
}

func jsonString(_ text: String) -> String {
    let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
    let array = String(decoding: data, as: UTF8.self)
    return String(array.dropFirst().dropLast())
}

enum MP4Boxes {
    /// Whether an MP4/MOV file's `moov` box comes after its `mdat` (nil: not an MP4 or unreadable).
    static func moovIsAtEnd(_ file: URL) -> Bool? {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return nil }
        defer { try? handle.close() }
        var offset: UInt64 = 0
        var sawMdat = false
        for _ in 0..<64 {
            try? handle.seek(toOffset: offset)
            guard let header = try? handle.read(upToCount: 16), header.count >= 8 else { return nil }
            let bytes = [UInt8](header)
            var size = UInt64(bytes[0]) << 24 | UInt64(bytes[1]) << 16 | UInt64(bytes[2]) << 8 | UInt64(bytes[3])
            let type = String(decoding: bytes[4..<8], as: UTF8.self)
            if size == 1, bytes.count >= 16 {
                size = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
            }
            if type == "moov" { return sawMdat }
            if type == "mdat" { sawMdat = true }
            guard size >= 8 else { return nil }
            offset += size
        }
        return nil
    }
}

/// A dictionary shared between threads.
final class LockedDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let storage = Mutex<[Key: Value]>([:])
    func set(_ key: Key, _ value: Value) { storage.withTrackedLock { $0[key] = value } }
    func get(_ key: Key) -> Value? { storage.withTrackedLock { $0[key] } }
    func remove(_ key: Key) { storage.withTrackedLock { _ = $0.removeValue(forKey: key) } }
}

/// A temporary directory removed when the run ends.
struct TemporaryDirectory {
    let url: URL
    init(_ label: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-\(label)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func remove() { try? FileManager.default.removeItem(at: url) }
}
