import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelOrigin
import ReelTestSupport

/// A fresh temporary directory, removed by `remove()`.
struct Scratch: Sendable {
    let url: URL
    init(_ label: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    var path: String { url.path }
    func file(_ name: String) -> String { url.appendingPathComponent(name).path }
    /// Removes the directory, and the accounts data `reel serve` keeps beside a served directory.
    func remove() {
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.removeItem(atPath: url.standardizedFileURL.path + ".reel-data")
    }
}

/// The JSON objects of a trace file.
func traceObjects(_ path: String) throws -> [[String: Any]] {
    try String(contentsOfFile: path, encoding: .utf8)
        .split(separator: "\n")
        .map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
}

func frames(_ objects: [[String: Any]]) -> [[String: Any]] {
    objects.filter { $0["type"] as? String == "frame" }
}

/// The timestamp (seconds) of every frame a plain decode gives, in order.
func referenceTimes(_ url: URL) throws -> [Double] {
    var times: [Double] = []
    try SequentialDecoder.decodeVideo(url, loader: FileLoader(), threads: 1) { frame in
        times.append(frame.pts.seconds)
        return true
    }
    return times
}

/// md5s of every frame a plain decode gives, in order.
func referenceMD5s(_ url: URL) throws -> [String] {
    var md5s: [String] = []
    try SequentialDecoder.decodeVideo(url, loader: FileLoader(), threads: 1) { frame in
        md5s.append(frame.md5())
        return true
    }
    return md5s
}

/// The URL `reel serve` prints as its first line, looked for every 10 ms, at most `attempts`
/// times; `nil` when it never came.
func servedURL(_ server: Child, attempts: Int) async throws -> URL? {
    for _ in 0..<attempts {
        if let line = server.standardOutput.split(separator: "\n").first, let url = URL(string: String(line)) { return url }
        try await Task.sleep(for: .milliseconds(10))
    }
    return nil
}
