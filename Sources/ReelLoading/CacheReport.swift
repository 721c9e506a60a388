import Foundation
internal import ReelDigest

/// What is in a cache directory, read straight from the disk without opening (or
/// repairing) the cache: the numbers behind `reel cache stats`, and with contents
/// checked, the findings of `reel cache verify`.
public struct CacheReport: Sendable {
    /// Something in the directory that cannot be trusted or does not belong.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// The kind of fault; its raw value is the words `reel cache verify` prints.
        public enum Kind: String, Sendable {
            /// A span whose size or bytes differ from what its name records.
            case corruptSpan = "corrupt span"
            /// Spans overlapping each other, or lying past the resource's length.
            case inconsistentSpan = "inconsistent span"
            /// A resource directory without readable metadata.
            case badMetadata = "bad metadata"
            /// A file or directory the cache did not make.
            case orphan = "orphan"
            /// A resource in `media/` with bytes missing.
            case incomplete = "incomplete resource"
        }

        /// What is wrong.
        public var kind: Kind
        /// Relative to the cache directory.
        public var path: String
        /// The particulars (sizes, digests).
        public var detail: String

        /// One line, as `reel cache verify` prints it: `kind: path: detail`.
        public var description: String { "\(kind.rawValue): \(path): \(detail)" }
    }

    /// The cache directory.
    public var directory: String
    /// Resource directories with readable metadata.
    public var resources = 0
    /// Those with every byte present.
    public var completeResources = 0
    /// Span files whose size matches their name.
    public var spans = 0
    /// Bytes in such spans in `temp/`: resources with bytes still missing.
    public var tempBytes: Int64 = 0
    /// Bytes in such spans in `media/`: complete resources.
    public var mediaBytes: Int64 = 0
    /// Files of writes a crash interrupted; the next open discards them. Not a problem.
    public var unfinishedWrites = 0
    /// Deleted resources not purged yet. Not a problem.
    public var trashEntries = 0
    /// Whether span bytes were read and checked against their MD5.
    public var contentsVerified = false
    /// The pid of the process writing the cache, when one is (its files in progress are skipped).
    public var writerPID: Int32?
    /// Whether some process holds the cache lock.
    public var isInUse = false
    /// What cannot be trusted or does not belong, one entry per file or directory.
    public var problems: [Problem] = []

    /// No problem found.
    public var isClean: Bool { problems.isEmpty }
}

extension RangeCache {
    /// Reads what is in `directory` without opening the cache. With `verifyContents`,
    /// every span's bytes are read and checked against the MD5 in its name.
    public static func inspect(directory: URL, verifyContents: Bool) -> CacheReport {
        let root = directory.standardizedFileURL.path
        var report = CacheReport(directory: root)
        report.contentsVerified = verifyContents
        guard POSIXFile.isDirectory(root) else { return report }
        if let holder = ProcessLock.holder(at: root + "/" + CacheLayout.lockFile) {
            report.isInUse = true
            report.writerPID = holder
        }
        let known: Set<String> = [CacheLayout.temp, CacheLayout.media, CacheLayout.trash, CacheLayout.lockFile, CacheLayout.bandwidthFile,
                                  RangeCache.demoFeedFolder]
        for name in POSIXFile.list(root) where !known.contains(name) {
            if CacheLayout.estimateTemporaryPID(name) != nil {
                // An estimate being written, or one a killed process left: the next open removes it.
                report.unfinishedWrites += 1
                continue
            }
            report.problems.append(.init(kind: .orphan, path: name, detail: "not part of the cache layout"))
        }
        report.trashEntries = POSIXFile.list(root + "/" + CacheLayout.trash).count
        for area in Area.allCases {
            let areaPath = root + "/" + area.rawValue
            for name in POSIXFile.list(areaPath) {
                let relative = area.rawValue + "/" + name
                let path = areaPath + "/" + name
                guard CacheLayout.isDirectoryName(name), POSIXFile.isDirectory(path) else {
                    report.problems.append(.init(kind: .orphan, path: relative, detail: "not a resource directory"))
                    continue
                }
                inspectResource(path: path, relative: relative, area: area, verifyContents: verifyContents, into: &report)
            }
        }
        return report
    }

    private static func inspectResource(path: String, relative: String, area: Area, verifyContents: Bool, into report: inout CacheReport) {
        let scan = DirectoryScan(path: path)
        report.unfinishedWrites += scan.unfinished.count
        guard let metadata = scan.metadata else {
            if scan.hasMetadataFile {
                report.problems.append(.init(kind: .badMetadata, path: relative + "/" + CacheLayout.metadataFile, detail: "unreadable"))
            } else if !scan.spans.isEmpty || !scan.damaged.isEmpty || !scan.rejectedSpans.isEmpty || !scan.strays.isEmpty {
                report.problems.append(.init(kind: .badMetadata, path: relative, detail: "spans without \(CacheLayout.metadataFile)"))
            } else {
                // A directory whose creation a crash interrupted: the next open discards it.
                report.unfinishedWrites += 1
            }
            return
        }
        if metadata.key.isEmpty || CacheLayout.directoryName(forKey: metadata.key) != (path as NSString).lastPathComponent {
            report.problems.append(.init(kind: .badMetadata, path: relative + "/" + CacheLayout.metadataFile, detail: "its key does not hash to the directory name"))
        }
        report.resources += 1
        for file in scan.damaged {
            let expected = CacheLayout.parseSpanName(file)?.length ?? 0
            let actual = POSIXFile.size(path + "/" + file) ?? -1
            report.problems.append(.init(kind: .corruptSpan, path: relative + "/" + file, detail: "\(actual) bytes, its name says \(expected)"))
        }
        for span in scan.rejectedSpans {
            report.problems.append(.init(kind: .inconsistentSpan, path: relative + "/" + span.name, detail: "overlaps another span or lies past the end"))
        }
        for file in scan.strays {
            report.problems.append(.init(kind: .orphan, path: relative + "/" + file, detail: "not a span or metadata file"))
        }
        var bytes: Int64 = 0
        for span in scan.spans {
            report.spans += 1
            bytes += span.length
            guard verifyContents else { continue }
            let spanPath = path + "/" + span.name
            switch digest(ofFile: spanPath) {
            case .some(let digest) where digest == span.digest:
                break
            case .some(let digest):
                report.problems.append(.init(kind: .corruptSpan, path: relative + "/" + span.name, detail: "MD5 \(digest) does not match"))
            case .none:
                // Renamed or removed while we looked: a writer is at work, not a problem.
                if !report.isInUse {
                    report.problems.append(.init(kind: .corruptSpan, path: relative + "/" + span.name, detail: "unreadable"))
                }
            }
        }
        if area == .temp { report.tempBytes += bytes } else { report.mediaBytes += bytes }
        var covered: Int64 = 0
        for span in scan.spans where span.offset <= covered { covered = max(covered, span.end) }
        let complete = metadata.length.map { covered >= $0 } ?? false
        if complete { report.completeResources += 1 }
        if area == .media, !complete {
            report.problems.append(.init(kind: .incomplete, path: relative, detail: "in media/ with bytes missing"))
        }
    }

    private static func digest(ofFile path: String) -> String? {
        guard let fd = try? POSIXFile.openForReading(path) else { return nil }
        defer { POSIXFile.close(fd) }
        var hasher = MD5()
        var offset: Int64 = 0
        while true {
            guard let data = try? POSIXFile.read(fd, at: offset, count: 1 << 20, path: path) else { return nil }
            if data.isEmpty { break }
            hasher.update(data)
            offset += Int64(data.count)
        }
        return hasher.finalize()
    }
}
