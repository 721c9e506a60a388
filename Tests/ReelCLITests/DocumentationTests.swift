import Foundation
import ReelTestSupport
import Testing

/// The documentation's Markdown: its relative links and `#heading` anchors, read as GitHub
/// renders them.
enum MarkdownDocument {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The front door and everything under docs/, relative to the package root.
    static func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        return ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"].filter {
            FileManager.default.fileExists(atPath: root.appendingPathComponent($0).path)
        } + docs
    }

    /// Lines outside fenced code blocks, numbered from 1; inline code spans blanked unless
    /// `keepingCode` (a heading's code is part of its anchor).
    static func prose(_ text: String, keepingCode: Bool = false) -> [(line: Int, text: String)] {
        var out: [(Int, String)] = []
        var fenced = false
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") { fenced.toggle(); continue }
            if fenced { continue }
            if keepingCode { out.append((index + 1, String(line))); continue }
            var kept = ""
            var inCode = false
            for character in line {
                if character == "`" { inCode.toggle(); kept.append(" "); continue }
                kept.append(inCode ? " " : character)
            }
            out.append((index + 1, kept))
        }
        return out
    }

    /// The targets of `[text](target)` and `![alt](target)` on a line.
    static func linkTargets(in line: String) -> [String] {
        var targets: [String] = []
        var rest = Substring(line)
        while let close = rest.range(of: "](") {
            let after = rest[close.upperBound...]
            guard let end = after.firstIndex(of: ")") else { break }
            let target = after[..<end].split(separator: " ").first.map(String.init) ?? ""
            targets.append(target)
            rest = after[end...]
        }
        return targets
    }

    /// GitHub's anchor for a heading: lower case, punctuation dropped (letters, digits, spaces,
    /// `-` and `_` kept), spaces as `-`; a repeated heading gets `-1`, `-2`…
    static func anchors(_ text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var out: Set<String> = []
        for (_, line) in prose(text, keepingCode: true) where line.hasPrefix("#") {
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            let slug = String(title.lowercased().unicodeScalars.filter {
                CharacterSet.letters.contains($0) || CharacterSet.decimalDigits.contains($0) || $0 == " " || $0 == "-" || $0 == "_"
            }.map(Character.init)).replacingOccurrences(of: " ", with: "-")
            let count = seen[slug, default: 0]
            out.insert(count == 0 ? slug : "\(slug)-\(count)")
            seen[slug] = count + 1
        }
        return out
    }

    /// Every relative link of a document that does not resolve: a missing file or a heading the
    /// target does not have.
    static func brokenLinks(in document: String) throws -> [String] {
        let url = root.appendingPathComponent(document)
        let text = try String(contentsOf: url, encoding: .utf8)
        var broken: [String] = []
        for (number, line) in prose(text) {
            for target in linkTargets(in: line) {
                if target.contains("://") || target.hasPrefix("mailto:") { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let path = parts[0]
                let file = path.isEmpty ? url : url.deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL
                guard FileManager.default.fileExists(atPath: file.path) else {
                    broken.append("\(document):\(number): \(target): no such file")
                    continue
                }
                if parts.count == 2 {
                    let anchors = anchors(try String(contentsOf: file, encoding: .utf8))
                    if !anchors.contains(parts[1]) { broken.append("\(document):\(number): \(target): no such heading") }
                }
            }
        }
        return broken
    }
}

@Suite("documentation")
struct DocumentationTests {
    @Test func everyRelativeLinkAndAnchorResolves() throws {
        let documents = try MarkdownDocument.documents()
        #expect(documents.contains("README.md") && documents.contains("docs/architecture.md"))
        let broken = try documents.flatMap(MarkdownDocument.brokenLinks(in:))
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    @Test func theFrontDoorStaysShortAndKeepsTheTwoCommandQuickStart() throws {
        let text = try String(contentsOf: MarkdownDocument.root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 260, "README.md has \(lines.count) lines")
        #expect(text.contains("./setup.sh && swift run -c release reel demo"))
        #expect(text.contains("./setup.sh && swift test "))
        let ci = try String(contentsOf: MarkdownDocument.root.appendingPathComponent(".ci/run"), encoding: .utf8)
        #expect(ci.contains("./setup.sh && swift test\n"), "CI runs the README's test command")
    }

    /// docs/cli.md is what `scripts/docs-cli.sh` makes of the built `reel`'s own definitions: an
    /// option added, renamed or described anew without regenerating it fails here.
    @Test func theCommandLineReferenceIsWhatTheCodeGenerates() async throws {
        let reel = try await ReelBinary.locate()
        let script = MarkdownDocument.root.appendingPathComponent("scripts/docs-cli.sh").path
        let result = try await runSeparately(URL(fileURLWithPath: "/usr/bin/env"), ["bash", script, "--check", "--reel", reel.path])
        #expect(result.status == 0, "\(result.stderr)\n\(result.stdout)")
    }

    @Test func anchorsFollowGitHub() {
        let text = """
        # Reel
        ## `reel bench first-frame`
        ## Reel's scheduler against FFmpeg's HLS demuxer: first frame
        ```
        # not a heading
        ```
        ## Live latency
        ## Live latency
        """
        #expect(MarkdownDocument.anchors(text) == [
            "reel", "reel-bench-first-frame", "reels-scheduler-against-ffmpegs-hls-demuxer-first-frame",
            "live-latency", "live-latency-1",
        ])
    }

    @Test func linksInCodeAreNotLinks() {
        let lines = MarkdownDocument.prose("see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n![d](d.png)")
        #expect(lines.flatMap { MarkdownDocument.linkTargets(in: $0.text) } == ["a.md", "d.png"])
    }
}
