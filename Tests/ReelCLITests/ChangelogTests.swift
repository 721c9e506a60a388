import Foundation
import ReelTestSupport
import Testing

/// CHANGELOG.md and `reel version` tell the same version: the newest `## X.Y.Z` heading is
/// what the built `reel` prints.
@Suite("changelog")
struct ChangelogTests {
    static let changelog = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CHANGELOG.md")

    /// The version of the first `## ` heading that starts with a digit.
    static func newestVersion(_ text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix("## ") {
            let title = line.dropFirst(3)
            guard title.first?.isNumber == true else { continue }
            return String(title.prefix { $0.isNumber || $0 == "." })
        }
        return nil
    }

    @Test func theNewestHeadingIsTheVersionReelPrints() async throws {
        let text = try String(contentsOf: Self.changelog, encoding: .utf8)
        let newest = try #require(Self.newestVersion(text), "CHANGELOG.md has no version heading")
        let result = try await runSeparately(try await ReelBinary.locate(), ["version"])
        #expect(result.status == 0)
        let first = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("reel \(newest) "), "reel version says \(first); CHANGELOG.md's newest is \(newest)")
    }

    @Test func theNewestHeadingIsFound() {
        #expect(Self.newestVersion("# Changelog\n\nintro\n\n## 1.2.10 — unreleased\n\n## 1.2.9\n") == "1.2.10")
        #expect(Self.newestVersion("# Changelog\n## Unreleased notes\n") == nil)
    }
}
