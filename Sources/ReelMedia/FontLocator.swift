import Foundation
import ReelCore

/// Finds a font file through fontconfig (`fc-match`), preferring one with CJK glyphs.
public enum FontLocator {
    /// A font path for drawing text, CJK-capable when one is installed.
    public static func defaultFontPath() -> String? {
        cached
    }

    nonisolated(unsafe) private static var cached: String? = {
        // fontconfig knows Chinese as zh-cn/zh-tw, not zh (which falls back to the default font).
        for pattern in ["sans-serif:lang=zh-cn", "sans-serif"] {
            if let path = match(pattern), FileManager.default.fileExists(atPath: path) { return path }
        }
        return nil
    }()

    /// The file fontconfig picks for `pattern`.
    public static func match(_ pattern: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/fc-match")
        process.arguments = ["-f", "%{file}", pattern]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return process.waitForEndBlocking().status == 0 && !text.isEmpty ? text : nil
    }
}
