import Foundation
import Testing

/// What may ship in `corpus/`: media under a licence that lets it sit beside Reel's Apache-2.0
/// code, each file with its line in `corpus/MANIFEST.tsv` and its source's licence text in
/// `corpus/licenses/` (see `corpus/README.md`).
struct CorpusManifest {
    /// SPDX identifiers (and the two public-domain forms the manifest uses). MPL-2.0 only for
    /// files shipped unmodified, which the corpus's are.
    static let allowedLicences: Set<String> = [
        "Apache-2.0", "MIT", "BSD-2-Clause", "BSD-3-Clause", "0BSD", "ISC", "Zlib", "MPL-2.0",
        "CC0-1.0", "CC-BY-3.0", "CC-BY-4.0", "public-domain", "public-domain-waiver",
    ]

    /// Files of `corpus/` that are about the corpus rather than in it.
    static func isBookkeeping(_ path: String) -> Bool {
        ["README.md", "MANIFEST.tsv", "EXCEPTIONS.tsv", "streams/ENTRIES"].contains(path) || path.hasPrefix("licenses/")
    }

    static let expectedHeader = ["file", "bytes", "sha256", "repository", "path", "commit", "licence", "covers"]

    /// Every problem with a manifest against the files (paths relative to `corpus/`, with their
    /// sizes) and the licence texts (file names in `licenses/`): a licence outside the list, a
    /// listed file that is missing or of another size, a file with no line, a source without its
    /// licence text. Empty when the corpus may ship.
    static func problems(manifest: String, files: [String: Int], licenceTexts: [String]) -> [String] {
        var problems: [String] = []
        let lines = manifest.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard let header = lines.first, header.split(separator: "\t").map(String.init) == expectedHeader else {
            return ["MANIFEST.tsv: the first line is not the header \(expectedHeader.joined(separator: " "))"]
        }
        var listed: Set<String> = []
        for (number, line) in lines.enumerated().dropFirst() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == expectedHeader.count else {
                problems.append("MANIFEST.tsv:\(number + 1): \(fields.count) fields, not \(expectedHeader.count)")
                continue
            }
            let (file, bytes, repository, licence) = (fields[0], fields[1], fields[3], fields[6])
            listed.insert(file)
            if !allowedLicences.contains(licence) {
                problems.append("MANIFEST.tsv:\(number + 1): \(file): licence \(licence) is not one the corpus may ship")
            }
            if let size = files[file] {
                if Int(bytes) != size { problems.append("MANIFEST.tsv:\(number + 1): \(file): \(size) bytes, the manifest says \(bytes)") }
            } else {
                problems.append("MANIFEST.tsv:\(number + 1): \(file) is listed but not in corpus/")
            }
            let slug = repository.replacingOccurrences(of: "/", with: "-") + "."
            if !licenceTexts.contains(where: { $0.hasPrefix(slug) }) {
                problems.append("MANIFEST.tsv:\(number + 1): no licence text licenses/\(slug)*.txt for \(repository)")
            }
        }
        for file in files.keys.sorted() where !isBookkeeping(file) && !listed.contains(file) {
            problems.append("corpus/\(file) has no line in MANIFEST.tsv")
        }
        return problems
    }

    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("corpus")

    /// Every regular file under `corpus/`, relative path → size.
    static func filesOnDisk() throws -> [String: Int] {
        let root = directory.standardizedFileURL.path + "/"
        var out: [String: Int] = [:]
        let enumerator = FileManager.default.enumerator(
            at: directory, includingPropertiesForKeys: [.isRegularFileKey, .fileSizeKey])
        while let url = enumerator?.nextObject() as? URL {
            let values = try url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey])
            guard values.isRegularFile == true else { continue }
            out[String(url.standardizedFileURL.path.dropFirst(root.count))] = values.fileSize ?? -1
        }
        return out
    }
}

@Suite("corpus licences")
struct CorpusLicenceTests {
    @Test func everyCorpusFileIsListedUnderAnAllowedLicence() throws {
        let manifest = try String(contentsOf: CorpusManifest.directory.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
        let files = try CorpusManifest.filesOnDisk()
        let licences = try FileManager.default.contentsOfDirectory(atPath: CorpusManifest.directory.appendingPathComponent("licenses").path)
        #expect(files.count > 50, "corpus/ read: \(files.count) files")
        let problems = CorpusManifest.problems(manifest: manifest, files: files, licenceTexts: licences)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    static let header = CorpusManifest.expectedHeader.joined(separator: "\t")
    static let good = "files/a/x.mp4\t10\t00\towner/a\tx.mp4\tc0ffee\tMIT\ta case"

    @Test func aGPLLineIsAProblem() {
        let manifest = [Self.header, Self.good, "files/b/y.flac\t20\t00\towner/b\ty.flac\tc0ffee\tGPL-2.0-or-later\tanother"]
            .joined(separator: "\n")
        let problems = CorpusManifest.problems(manifest: manifest, files: ["files/a/x.mp4": 10, "files/b/y.flac": 20],
                                               licenceTexts: ["owner-a.MIT.txt", "owner-b.GPL-2.0.txt"])
        #expect(problems == ["MANIFEST.tsv:3: files/b/y.flac: licence GPL-2.0-or-later is not one the corpus may ship"])
    }

    @Test func aFileWithoutALineIsAProblem() {
        let problems = CorpusManifest.problems(
            manifest: [Self.header, Self.good].joined(separator: "\n"),
            files: ["files/a/x.mp4": 10, "files/a/stray.mp4": 3, "README.md": 1, "licenses/owner-a.MIT.txt": 1],
            licenceTexts: ["owner-a.MIT.txt"])
        #expect(problems == ["corpus/files/a/stray.mp4 has no line in MANIFEST.tsv"])
    }

    @Test func aListedFileMustBeThereWithItsSizeAndLicenceText() {
        let problems = CorpusManifest.problems(
            manifest: [Self.header, Self.good, "files/c/z.mp4\t5\t00\towner/c\tz.mp4\tc0ffee\tApache-2.0\tgone"]
                .joined(separator: "\n"),
            files: ["files/a/x.mp4": 11], licenceTexts: ["owner-a.MIT.txt"])
        #expect(problems == [
            "MANIFEST.tsv:2: files/a/x.mp4: 11 bytes, the manifest says 10",
            "MANIFEST.tsv:3: files/c/z.mp4 is listed but not in corpus/",
            "MANIFEST.tsv:3: no licence text licenses/owner-c.*.txt for owner/c",
        ])
    }
}
