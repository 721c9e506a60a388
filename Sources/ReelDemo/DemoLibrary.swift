import Foundation
import ReelCore
import ReelFeed
import ReelLoading
import ReelMedia
import ReelMediaTools

/// The built-in demo feed: short clips Reel encodes itself (libavfilter sources,
/// libavcodec encoders) on first use, described by a `manifest.json` that
/// ``ReelFeed/ManifestFeedSource`` reads.
///
/// Portrait and landscape clips of 5 to 30 s, H.264 and one HEVC, one MP4 with its
/// `moov` at the end, one image post, titles in English and Chinese, four categories.
/// The manifest is written last and atomically, so an interrupted run leaves no
/// manifest and the next run starts over; a finished library is reused while its
/// version stamp matches.
public enum DemoLibrary {
    /// Bumped (in `demo/feed.json`) whenever the catalogue or its encoding changes: older
    /// libraries are remade.
    public static var version: Int { recipe.version }

    /// What to make: the whole catalogue at 360x640 by default; tests make fewer, smaller clips.
    public struct Configuration: Sendable, Hashable {
        /// How many catalogue entries to make (the first ones: they cover every kind).
        public var count: Int
        /// The short side of every picture, in pixels (even).
        public var shortSide: Int
        /// Clip lengths are capped at this many seconds when set.
        public var maxDuration: Double?
        /// Frames per second of every clip.
        public var frameRate: Int

        public init(count: Int = .max, shortSide: Int = 360, maxDuration: Double? = nil, frameRate: Int = 25) {
            self.count = max(1, min(count, DemoLibrary.catalogue.count))
            self.shortSide = max(16, shortSide / 2 * 2)
            self.maxDuration = maxDuration
            self.frameRate = max(1, frameRate)
        }

        /// The stamp a reusable library must carry.
        var stamp: String {
            "v\(DemoLibrary.version)-\(count)-\(shortSide)-\(maxDuration.map { String($0) } ?? "full")-\(frameRate)"
        }
    }

    /// How far preparing has come.
    public struct Progress: Sendable, Hashable {
        /// Entries finished.
        public var completed: Int
        public var total: Int
        /// 0…1 over the whole library (weighted by clip length).
        public var fraction: Double
        /// The entry being made.
        public var title: String
    }

    /// `<cache>/demo-feed`, beside the range cache's own folders.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        RangeCache.defaultDirectory(environment: environment).appendingPathComponent(RangeCache.demoFeedFolder, isDirectory: true)
    }

    /// The manifest's file name inside the library directory.
    public static let manifestName = "manifest.json"

    /// Whether `directory` holds a finished library made with `configuration`.
    public static func isPrepared(directory: URL, configuration: Configuration = Configuration()) -> Bool {
        let manifest = directory.appendingPathComponent(manifestName)
        guard let data = try? Data(contentsOf: manifest),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              object["reelDemo"] as? String == configuration.stamp,
              let items = object["items"] as? [[String: Any]] else { return false }
        for item in items {
            var files = (item["images"] as? [String]) ?? []
            // A live item's files are those of the stream it publishes again.
            if let video = item["video"] as? String { files.append(video.hasPrefix(livePrefix) ? String(video.dropFirst(livePrefix.count)) : video) }
            if let cover = item["cover"] as? String { files.append(cover) }
            for file in files where !FileManager.default.fileExists(atPath: directory.appendingPathComponent(file).path) {
                return false
            }
        }
        return true
    }

    /// Makes the library in `directory` unless a finished one is there, and returns the
    /// manifest's URL. `progress` is called from the encoding thread.
    public static func prepare(directory: URL = defaultDirectory(), configuration: Configuration = Configuration(),
                               progress: (@Sendable (Progress) -> Void)? = nil) async throws -> URL {
        let manifest = directory.appendingPathComponent(manifestName)
        if isPrepared(directory: directory, configuration: configuration) { return manifest }
        return try await onOwnThread(named: "reel.demo-library", stackSize: 8 << 20) {
            try build(directory: directory, configuration: configuration, progress: progress)
        }
    }

    // MARK: Building

    private static func build(directory: URL, configuration: Configuration, progress: (@Sendable (Progress) -> Void)?) throws -> URL {
        let files = FileManager.default
        try files.createDirectory(at: directory, withIntermediateDirectories: true)
        let manifest = directory.appendingPathComponent(manifestName)
        // Whatever an older or interrupted run left is redone from scratch: the manifest is
        // the library's commit point, written last, so without it nothing here is trusted.
        try? files.removeItem(at: manifest)
        try? files.removeItem(at: directory.appendingPathComponent(manifestName + ".tmp"))
        for folder in ["clips", "covers", "images", "streams", "captions"] {
            try? files.removeItem(at: directory.appendingPathComponent(folder))
            try files.createDirectory(at: directory.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        let entries = Array(catalogue.prefix(configuration.count))
        func length(_ entry: Entry) -> Double {
            if case .images = entry.kind { return 1 }
            return min(entry.duration, configuration.maxDuration ?? entry.duration)
        }
        let totalWeight = entries.map(length).reduce(0, +)
        var doneWeight = 0.0
        var items: [[String: Any]] = []
        for (index, entry) in entries.enumerated() {
            let report: (Double) -> Void = { part in
                progress?(Progress(completed: index, total: entries.count,
                                   fraction: min(1, (doneWeight + part * length(entry)) / totalWeight), title: entry.title))
            }
            report(0)
            let (w, h) = entry.portrait ? (configuration.shortSide, configuration.shortSide * 16 / 9 / 2 * 2)
                                        : (configuration.shortSide * 16 / 9 / 2 * 2, configuration.shortSide)
            var item: [String: Any] = ["id": entry.id, "title": entry.title, "uploader": entry.uploader, "category": entry.category]
            let made: [String: Any]
            let place = Placement(directory: directory, width: w, height: h, duration: length(entry), report: report)
            switch entry.kind {
            case .stream(let codec, let source, let live):
                made = try makeStream(entry, codec: codec, source: source, live: live, place, configuration)
            case .video(let codec, let container, let source):
                made = try makeVideo(entry, codec: codec, container: container, source: source, place, configuration)
            case .images(let sources):
                made = try makeImages(entry, sources: sources, place)
            }
            item.merge(made) { _, new in new }
            if !entry.captions.isEmpty {
                item["captions"] = try entry.captions.map { caption -> [String: Any] in
                    let name = "captions/\(entry.id).\(caption.language).srt"
                    try Data(Self.subRip(caption.lines, duration: length(entry)).utf8).write(to: directory.appendingPathComponent(name))
                    return ["url": name, "language": caption.language, "label": caption.label]
                }
            }
            items.append(item)
            // A crash point between items: a test kills a first run here, half way through.
            CrashPoints.reach(.after, "demo item \(entry.id)")
            doneWeight += length(entry)
        }
        let usedCategories = Set(entries.map(\.category))
        let document: [String: Any] = [
            "reelDemo": configuration.stamp,
            "categories": categories.filter { usedCategories.contains($0.id) }.map { ["id": $0.id, "title": $0.title] },
            "items": items,
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try commit(data, to: manifest)
        progress?(Progress(completed: entries.count, total: entries.count, fraction: 1, title: ""))
        return manifest
    }

    /// Writes the manifest whole (synced) beside its final name, then renames it there: the one
    /// step after which the library counts as made. A kill before it leaves no manifest, and the
    /// next run makes the library again.
    private static func commit(_ data: Data, to manifest: URL) throws {
        let temporary = manifest.path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot create \(temporary)"])
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
        defer { try? handle.close() }
        try handle.write(contentsOf: data)
        CrashPoints.reach(.fsync, temporary)
        try handle.synchronize()
        CrashPoints.reach(.rename, manifest.path)
        guard rename(temporary, manifest.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot write \(manifest.path): \(reason)"])
        }
    }

    /// A SubRip file showing `lines` one after another over `duration` seconds, each for an
    /// equal share less a short gap.
    static func subRip(_ lines: [String], duration: Double) -> String {
        guard !lines.isEmpty, duration > 0 else { return "" }
        func stamp(_ seconds: Double) -> String {
            let ms = Int((seconds * 1000).rounded())
            return String(format: "%02d:%02d:%02d,%03d", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
        }
        let share = duration / Double(lines.count)
        return lines.enumerated().map { index, line in
            let start = Double(index) * share + 0.2
            let end = Double(index + 1) * share - 0.2
            return "\(index + 1)\n\(stamp(start)) --> \(stamp(max(start + 0.1, end)))\n\(line)\n"
        }.joined(separator: "\n")
    }

    /// Where an item's files go, its picture size and length, and its progress callback.
    private struct Placement {
        let directory: URL
        let width: Int
        let height: Int
        let duration: Double
        let report: (Double) -> Void
    }

    /// Where the demo's origin publishes a stream again as a live one (`/live/streams/ID/master.m3u8`).
    public static let livePrefix = "live/"

    /// The masters (relative to `directory`) of the library's live items, which its origin
    /// publishes live under ``livePrefix``.
    public static func livePlaylists(in directory: URL) -> [String] {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(manifestName)),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let items = object["items"] as? [[String: Any]] else { return [] }
        return items.compactMap { $0["video"] as? String }.filter { $0.hasPrefix(livePrefix) }.map { String($0.dropFirst(livePrefix.count)) }
    }

    /// Three renditions (a half, three quarters and all of the size) made by Reel's encoder,
    /// packaged by FFmpeg's hls muxer, named by one master playlist; and a cover.
    private static func makeStream(_ entry: Entry, codec: ClipSpec.VideoCodec, source: Picture, live: Bool, _ place: Placement,
                                   _ configuration: Configuration) throws -> [String: Any] {
        let (directory, w, h, report) = (place.directory, place.width, place.height, place.report)
        let files = FileManager.default
        var item: [String: Any] = [:]
                let folder = directory.appendingPathComponent("streams/\(entry.id)", isDirectory: true)
        var clips: [URL] = []
        for (n, scale) in [0.5, 0.75, 1.0].enumerated() {
            let (rw, rh) = (Int(Double(w) * scale) / 2 * 2, Int(Double(h) * scale) / 2 * 2)
            let spec = ClipSpec(
                width: rw, height: rh, frameRate: configuration.frameRate, duration: place.duration,
                videoCodec: codec, keyframeInterval: configuration.frameRate * 2, bFrames: 2,
                audioCodec: .aac, audioSampleRate: 44_100, toneFrequency: entry.tone, container: .mp4,
                videoSource: source.graph(width: rw, height: rh, rate: configuration.frameRate),
                overlayText: overlay(entry.title), title: entry.title, preset: "ultrafast", bitRateKbps: nil
            )
            let clip = directory.appendingPathComponent("clips/\(entry.id)-\(n).mp4")
            try ClipEncoder.encode(spec, to: clip) { report((Double(n) + $0) / 3 * 0.9) }
            clips.append(clip)
        }
        let (master, _) = try StreamPackager.packageVariants(clips, loader: FileLoader(), format: .hlsFMP4, into: folder,
                                                             segmentSeconds: 2)
        // The renditions are what is served; the clips they came from are not.
        for clip in clips { try? files.removeItem(at: clip) }
        let cover = "covers/\(entry.id).jpg"
        try ClipEncoder.encodeImage(source: source.graph(width: w, height: h, rate: configuration.frameRate), width: w, height: h,
                                    to: directory.appendingPathComponent(cover))
        item["video"] = (live ? livePrefix : "") + "streams/\(entry.id)/\(master.lastPathComponent)"
        item["cover"] = cover
        return item
    }

    /// One clip in `container` and its cover.
    private static func makeVideo(_ entry: Entry, codec: ClipSpec.VideoCodec, container: ClipSpec.Container, source: Picture,
                                  _ place: Placement, _ configuration: Configuration) throws -> [String: Any] {
        let (directory, w, h, report) = (place.directory, place.width, place.height, place.report)
        var item: [String: Any] = [:]
        let name = "clips/\(entry.id).mp4"
        let graph = source.graph(width: w, height: h, rate: configuration.frameRate)
        let spec = ClipSpec(
            width: w, height: h, frameRate: configuration.frameRate, duration: place.duration,
            videoCodec: codec, keyframeInterval: configuration.frameRate * 2, bFrames: 2,
            audioCodec: .aac, audioSampleRate: 44_100, toneFrequency: entry.tone, container: container,
            videoSource: graph, overlayText: overlay(entry.title), title: entry.title,
            preset: "ultrafast", bitRateKbps: nil
        )
        try ClipEncoder.encode(spec, to: directory.appendingPathComponent(name)) { report($0 * 0.95) }
        let cover = "covers/\(entry.id).jpg"
        try ClipEncoder.encodeImage(source: graph, width: w, height: h, to: directory.appendingPathComponent(cover))
        item["video"] = name
        item["cover"] = cover
        return item
    }

    /// An image post: its pictures, the first of them the cover.
    private static func makeImages(_ entry: Entry, sources: [Picture], _ place: Placement) throws -> [String: Any] {
        let (directory, w, h, report) = (place.directory, place.width, place.height, place.report)
        var item: [String: Any] = [:]
        var names: [String] = []
        for (n, source) in sources.enumerated() {
            let name = "images/\(entry.id)-\(n + 1).jpg"
            try ClipEncoder.encodeImage(source: source.graph(width: w, height: h, rate: 1), width: w, height: h,
                                        to: directory.appendingPathComponent(name))
            names.append(name)
            report(Double(n + 1) / Double(sources.count))
        }
        item["images"] = names
        item["cover"] = names[0]
        return item
    }

    /// The title as drawn on the picture: the English and the Chinese part on lines of
    /// their own, so a portrait picture has room for both.
    static func overlay(_ title: String) -> String {
        guard let split = title.unicodeScalars.firstIndex(where: { $0.value >= 0x2E80 }) else { return title }
        let english = String(title.unicodeScalars[..<split]).trimmingCharacters(in: .whitespaces)
        let chinese = String(title.unicodeScalars[split...]).trimmingCharacters(in: .whitespaces)
        return english.isEmpty ? chinese : english + "\n" + chinese
    }

    // MARK: The catalogue, from the recipe in the top-level demo/feed.json

    /// A picture a libavfilter source draws: `pattern` names it, `colours` feed `gradients`.
    struct Picture: Sendable, Hashable, Decodable {
        var pattern: String
        var colours: [String]?

        static let patterns: Set<String> = [
            "testsrc2", "testsrc", "mandelbrot", "life", "bars", "gradients", "cellauto", "sierpinski",
            "spectrum", "rgb", "colorchart",
        ]

        func graph(width w: Int, height h: Int, rate r: Int) -> String {
            switch pattern {
            case "testsrc": return "testsrc=size=\(w)x\(h):rate=\(r)"
            case "mandelbrot": return "mandelbrot=size=\(w)x\(h):rate=\(r):maxiter=256:end_scale=0.05:end_pts=400"
            case "life": return "life=size=\(w / 4)x\(h / 4):rate=\(r):mold=10:ratio=0.12:life_color=#7CFC00:death_color=#6A1B9A,scale=\(w):\(h):flags=neighbor"
            case "bars": return "smptehdbars=size=\(w)x\(h):rate=\(r)"
            case "gradients":
                let colours = self.colours ?? []
                let list = colours.enumerated().map { "c\($0)=\($1)" }.joined(separator: ":")
                return "gradients=size=\(w)x\(h):rate=\(r):\(list):nb_colors=\(colours.count):speed=0.03"
            case "cellauto": return "cellauto=size=\(w)x\(h):rate=\(r):rule=110:random_fill_ratio=0.5,negate"
            case "sierpinski": return "sierpinski=size=\(w)x\(h):rate=\(r):type=carpet"
            case "spectrum": return "colorspectrum=size=\(w)x\(h):rate=\(r):type=all,hue=H=2*PI*t/6"
            case "rgb": return "rgbtestsrc=size=\(w)x\(h):rate=\(r)"
            case "colorchart": return "colorchart=rate=\(r):patch_size=\(max(8, w / 8))x\(max(8, w / 8)),scale=\(w):\(h)"
            default: return "testsrc2=size=\(w)x\(h):rate=\(r)"
            }
        }
    }

    enum Kind: Sendable {
        case video(ClipSpec.VideoCodec, ClipSpec.Container, Picture)
        /// An HLS stream with three renditions (`"container": "hls"`); `live`
        /// (`"container": "hls-live"`): the demo's origin publishes it again as a live stream that
        /// loops for ever, and the item names that one.
        case stream(ClipSpec.VideoCodec, Picture, live: Bool)
        case images([Picture])
    }

    struct Entry: Sendable {
        var id: String
        var title: String
        var uploader: String
        var category: String
        var portrait: Bool
        var duration: Double
        var tone: Double
        var kind: Kind
        var captions: [Caption] = []
    }

    /// A caption file the demo writes for an item: its language, its label, its lines (shown one
    /// after another across the item).
    struct Caption: Sendable, Hashable, Decodable {
        var language: String
        var label: String
        var lines: [String]
    }

    /// The demo feed's recipe: what `demo/feed.json` says (embedded at build time).
    struct Recipe: Sendable {
        var version: Int
        var categories: [FeedCategory]
        var entries: [Entry]

        enum Problem: Error, CustomStringConvertible {
            case invalid(String)
            var description: String { switch self { case .invalid(let text): text } }
        }

        private struct Document: Decodable {
            var version: Int
            var categories: [FeedCategory]
            var items: [Item]
        }

        private struct Item: Decodable {
            var id: String
            var title: String
            var uploader: String
            var category: String
            var portrait: Bool
            var duration: Double?
            var tone: Double?
            var video: Video?
            var images: [Picture]?
            var captions: [Caption]?
        }

        private struct Video: Decodable {
            var codec: String
            var container: String
            var pattern: String
            var colours: [String]?
        }

        /// Reads and checks a recipe: every item has a known category, a unique id, and either a
        /// video (known codec, container and pattern, a positive duration) or at least one image.
        init(json: Data) throws {
            let document: Document
            do { document = try JSONDecoder().decode(Document.self, from: json) } catch {
                throw Problem.invalid("not a demo recipe: \(error)")
            }
            let categoryIDs = Set(document.categories.map(\.id))
            var seen = Set<String>()
            var entries: [Entry] = []
            for item in document.items {
                guard seen.insert(item.id).inserted else { throw Problem.invalid("item \(item.id): id used twice") }
                guard categoryIDs.contains(item.category) else { throw Problem.invalid("item \(item.id): no category \(item.category)") }
                func checked(_ picture: Picture) throws -> Picture {
                    guard Picture.patterns.contains(picture.pattern) else { throw Problem.invalid("item \(item.id): no pattern \(picture.pattern)") }
                    if picture.pattern == "gradients", (picture.colours ?? []).count < 2 {
                        throw Problem.invalid("item \(item.id): gradients need two colours or more")
                    }
                    return picture
                }
                let kind: Kind
                switch (item.video, item.images) {
                case (let video?, nil):
                    guard let codec = ClipSpec.VideoCodec(rawValue: video.codec) else { throw Problem.invalid("item \(item.id): no codec \(video.codec)") }
                    if video.container == "hls" || video.container == "hls-live" {
                        guard (item.duration ?? 0) > 0 else { throw Problem.invalid("item \(item.id): a video needs a duration") }
                        kind = .stream(codec, try checked(Picture(pattern: video.pattern, colours: video.colours)),
                                       live: video.container == "hls-live")
                        break
                    }
                    guard let container = ClipSpec.Container(rawValue: video.container) else { throw Problem.invalid("item \(item.id): no container \(video.container)") }
                    guard (item.duration ?? 0) > 0 else { throw Problem.invalid("item \(item.id): a video needs a duration") }
                    kind = .video(codec, container, try checked(Picture(pattern: video.pattern, colours: video.colours)))
                case (nil, let images?) where !images.isEmpty:
                    kind = .images(try images.map(checked))
                default:
                    throw Problem.invalid("item \(item.id): needs a video or images, not both")
                }
                entries.append(Entry(id: item.id, title: item.title, uploader: item.uploader, category: item.category,
                                     portrait: item.portrait, duration: item.duration ?? 0, tone: item.tone ?? 440, kind: kind,
                                     captions: item.captions ?? []))
            }
            guard !entries.isEmpty else { throw Problem.invalid("no items") }
            self.version = document.version
            self.categories = document.categories
            self.entries = entries
        }
    }

    /// The recipe Reel was built with. It is checked by the tests, so a broken one never ships.
    static let recipe: Recipe = {
        do { return try Recipe(json: Data(PackageResources.feed_json)) } catch {
            fatalError("demo/feed.json: \(error)")
        }
    }()

    static var categories: [FeedCategory] { recipe.categories }

    /// The first entries cover every kind, so a small library still has HEVC, moov at the
    /// end, landscape and an image post.
    public static var catalogueCount: Int { catalogue.count }

    static var catalogue: [Entry] { recipe.entries }
}
