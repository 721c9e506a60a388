import Foundation
import ReelCore
import ReelTestSupport
import Testing

/// A fenced ```swift block of the README, CONTRIBUTING.md or a page under docs/.
struct ReadmeSnippet: Sendable, CustomTestStringConvertible {
    var line: Int
    var code: String
    var file = "README.md"
    var testDescription: String { "\(file):\(line)" }
    var isManifest: Bool { code.contains("import PackageDescription") }

    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let readme = root.appendingPathComponent("README.md")

    static func parse(_ text: String) -> [ReadmeSnippet] {
        var out: [ReadmeSnippet] = []
        var current: (line: Int, lines: [String])?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = current {
                if trimmed == "```" {
                    out.append(ReadmeSnippet(line: block.line, code: block.lines.joined(separator: "\n") + "\n"))
                    current = nil
                } else {
                    block.lines.append(String(line))
                    current = block
                }
            } else if trimmed == "```swift" {
                current = (index + 1, [])
            }
        }
        return out
    }

    /// Every document's blocks: the README's, those moved from it into CONTRIBUTING.md and docs/,
    /// and the DocC articles' (`Sources/<Module>/<Module>.docc/*.md`).
    static let all: [ReadmeSnippet] = {
        let files = FileManager.default
        let docs = ((try? files.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? [])
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        var articles: [String] = []
        for module in ((try? files.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path)) ?? []).sorted() {
            let catalog = "Sources/\(module)/\(module).docc"
            let names = (try? files.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path)) ?? []
            articles += names.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
        }
        return (["README.md", "CONTRIBUTING.md"] + docs + articles).flatMap { file in
            let text = (try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)) ?? ""
            let snippets = parse(text).map { var snippet = $0; snippet.file = file; return snippet }
            return file.contains(".docc/") ? joined(snippets) : snippets
        }
    }()

    /// An article's blocks are the files of one walk-through (a type declared in one block is
    /// used in the next): its Swift blocks compile as one, its manifests each alone.
    static func joined(_ snippets: [ReadmeSnippet]) -> [ReadmeSnippet] {
        let code = snippets.filter { !$0.isManifest }
        guard var first = code.first else { return snippets }
        first.code = code.map(\.code).joined(separator: "\n")
        return snippets.filter(\.isManifest) + [first]
    }
}

/// Every ```swift block in README.md compiles as printed (the compiler's front end checks
/// it against the modules this test target was built with; a `Package.swift` block against
/// SwiftPM's PackageDescription), so the README cannot drift from the API.
@Suite("README snippets")
struct ReadmeSnippetTests {
    @Test func theReadmeHasSwiftBlocks() {
        #expect(ReadmeSnippet.all.count >= 5)
        #expect(ReadmeSnippet.all.contains { $0.file == "README.md" && $0.isManifest && $0.code.contains("ReelTestSupport") },
                "the SwiftPM dependency snippet for ReelTestSupport")
    }

    @Test(arguments: ReadmeSnippet.all)
    func compilesAsPrinted(_ snippet: ReadmeSnippet) async throws {
        let compiler = try #require(Self.swiftc, "no swiftc in PATH")
        let build = try #require(Self.buildDirectory, "cannot find the build's Modules directory")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let source = work.appendingPathComponent("main.swift")
        try snippet.code.write(to: source, atomically: true, encoding: .utf8)

        var arguments = ["-typecheck", "-swift-version", "6", "-module-cache-path", work.appendingPathComponent("cache").path]
        if snippet.isManifest {
            let manifestAPI = compiler.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("lib/swift/pm/ManifestAPI").path
            arguments += ["-I", manifestAPI, "-package-description-version", "6.1.0"]
        } else {
            arguments += ["-I", build.appendingPathComponent("Modules").path]
            for map in Self.moduleMaps(build: build) {
                arguments += ["-Xcc", "-fmodule-map-file=\(map.path)", "-Xcc", "-I", "-Xcc", map.deletingLastPathComponent().path]
            }
        }
        arguments.append(source.path)
        let (status, output) = try await Self.run(compiler, arguments, in: work)
        #expect(status == 0, "\(snippet.file):\(snippet.line) does not compile:\n\(output)\n\(snippet.code)")
    }

    // MARK: The toolchain and the build

    static var swiftc: URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("swiftc")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// The directory this test binary was built into (`.build/<triple>/debug`), which holds
    /// `Modules/`.
    static var buildDirectory: URL? {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        for _ in 0..<4 {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Modules").path) { return directory }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    /// The module maps of every C module the Swift modules may load: SwiftPM's generated
    /// ones beside the build products, the dependencies' own, and Reel's bridges.
    static func moduleMaps(build: URL) -> [URL] {
        let files = FileManager.default
        var maps: [URL] = []
        for name in (try? files.contentsOfDirectory(atPath: build.path)) ?? [] where name.hasSuffix(".build") {
            let map = build.appendingPathComponent(name).appendingPathComponent("module.modulemap")
            if files.fileExists(atPath: map.path) { maps.append(map) }
        }
        let checkouts = build.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("checkouts")
        if let walk = files.enumerator(at: checkouts, includingPropertiesForKeys: nil) {
            for case let url as URL in walk where url.lastPathComponent == "module.modulemap" && url.path.contains("/Sources/") {
                maps.append(url)
            }
        }
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        for bridge in ["CFFmpeg", "CSDL2", "CNettle"] {
            maps.append(sources.appendingPathComponent(bridge).appendingPathComponent("module.modulemap"))
        }
        return maps
    }

    /// Runs a program to its end without blocking a concurrency thread; its exit status and output.
    static func run(_ program: URL, _ arguments: [String], in directory: URL) async throws -> (Int32, String) {
        let log = directory.appendingPathComponent("output.txt")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        // Polled with a watchdog, as Child does: a termination handler that is never called
        // (a child reaped elsewhere) would leave the test waiting for ever.
        let deadline = ContinuousClock.now + hangWatchdog
        while process.end == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        guard let end = process.end else {
            process.terminate()
            return (-1, output + "\n(timed out)")
        }
        return (end.status, output)
    }
}
