import Foundation
import ReelCore
import ReelFeed
import ReelLoading
import ReelMedia

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
    /// Bumped whenever the catalogue or its encoding changes: older libraries are remade.
    public static let version = 2

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
        RangeCache.defaultDirectory(environment: environment).appendingPathComponent("demo-feed", isDirectory: true)
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
            if let video = item["video"] as? String { files.append(video) }
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
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try build(directory: directory, configuration: configuration, progress: progress) })
            }
            thread.name = "reel.demo-library"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    // MARK: Building

    private static func build(directory: URL, configuration: Configuration, progress: (@Sendable (Progress) -> Void)?) throws -> URL {
        let files = FileManager.default
        try files.createDirectory(at: directory, withIntermediateDirectories: true)
        let manifest = directory.appendingPathComponent(manifestName)
        // Whatever an older or interrupted run left is redone from scratch.
        try? files.removeItem(at: manifest)
        for folder in ["clips", "covers", "images"] {
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
            switch entry.kind {
            case .video(let codec, let container, let source):
                let name = "clips/\(entry.id).mp4"
                let graph = source.graph(width: w, height: h, rate: configuration.frameRate)
                let spec = ClipSpec(
                    width: w, height: h, frameRate: configuration.frameRate, duration: length(entry),
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
            case .images(let sources):
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
            }
            items.append(item)
            doneWeight += length(entry)
        }
        let usedCategories = Set(entries.map(\.category))
        let document: [String: Any] = [
            "reelDemo": configuration.stamp,
            "categories": categories.filter { usedCategories.contains($0.id) }.map { ["id": $0.id, "title": $0.title] },
            "items": items,
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try data.write(to: manifest, options: .atomic)
        progress?(Progress(completed: entries.count, total: entries.count, fraction: 1, title: ""))
        return manifest
    }

    /// The title as drawn on the picture: the English and the Chinese part on lines of
    /// their own, so a portrait picture has room for both.
    static func overlay(_ title: String) -> String {
        guard let split = title.unicodeScalars.firstIndex(where: { $0.value >= 0x2E80 }) else { return title }
        let english = String(title.unicodeScalars[..<split]).trimmingCharacters(in: .whitespaces)
        let chinese = String(title.unicodeScalars[split...]).trimmingCharacters(in: .whitespaces)
        return english.isEmpty ? chinese : english + "\n" + chinese
    }

    // MARK: The catalogue

    enum Source: Sendable {
        case testsrc2, testsrc, mandelbrot, life, bars, gradients([String]), cellauto, sierpinski, spectrum, rgb, colorchart

        func graph(width w: Int, height h: Int, rate r: Int) -> String {
            switch self {
            case .testsrc2: return "testsrc2=size=\(w)x\(h):rate=\(r)"
            case .testsrc: return "testsrc=size=\(w)x\(h):rate=\(r)"
            case .mandelbrot: return "mandelbrot=size=\(w)x\(h):rate=\(r):maxiter=256:end_scale=0.05:end_pts=400"
            case .life: return "life=size=\(w / 4)x\(h / 4):rate=\(r):mold=10:ratio=0.12:life_color=#7CFC00:death_color=#6A1B9A,scale=\(w):\(h):flags=neighbor"
            case .bars: return "smptehdbars=size=\(w)x\(h):rate=\(r)"
            case .gradients(let colours):
                let list = colours.enumerated().map { "c\($0)=\($1)" }.joined(separator: ":")
                return "gradients=size=\(w)x\(h):rate=\(r):\(list):nb_colors=\(colours.count):speed=0.03"
            case .cellauto: return "cellauto=size=\(w)x\(h):rate=\(r):rule=110:random_fill_ratio=0.5,negate"
            case .sierpinski: return "sierpinski=size=\(w)x\(h):rate=\(r):type=carpet"
            case .spectrum: return "colorspectrum=size=\(w)x\(h):rate=\(r):type=all,hue=H=2*PI*t/6"
            case .rgb: return "rgbtestsrc=size=\(w)x\(h):rate=\(r)"
            case .colorchart: return "colorchart=rate=\(r):patch_size=\(max(8, w / 8))x\(max(8, w / 8)),scale=\(w):\(h)"
            }
        }
    }

    enum Kind: Sendable {
        case video(ClipSpec.VideoCodec, ClipSpec.Container, Source)
        case images([Source])
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
    }

    static let categories: [FeedCategory] = [
        FeedCategory(id: "recommended", title: "推荐 Recommended"),
        FeedCategory(id: "nature", title: "自然 Nature"),
        FeedCategory(id: "music", title: "音乐 Music"),
        FeedCategory(id: "science", title: "科学 Science"),
    ]

    /// The first entries cover every kind, so a small library still has HEVC, moov at the
    /// end, landscape and an image post.
    public static var catalogueCount: Int { catalogue.count }

    static let catalogue: [Entry] = [
        Entry(id: "welcome", title: "Welcome to Reel 欢迎", uploader: "@reel", category: "recommended",
              portrait: true, duration: 8, tone: 440, kind: .video(.h264, .mp4, .testsrc2)),
        Entry(id: "hevc-pattern", title: "HEVC test card 高效视频编码", uploader: "@codec", category: "recommended",
              portrait: true, duration: 6, tone: 523.25, kind: .video(.hevc, .mp4, .testsrc)),
        Entry(id: "moov-at-end", title: "Index at the end 尾部索引", uploader: "@muxer", category: "recommended",
              portrait: false, duration: 8, tone: 329.63, kind: .video(.h264, .mp4MoovAtEnd, .bars)),
        Entry(id: "album", title: "Photo album 相册", uploader: "@mei", category: "nature",
              portrait: true, duration: 0, tone: 0,
              kind: .images([.gradients(["#ff7e5f", "#feb47b", "#6a3093"]), .mandelbrot, .colorchart, .gradients(["#134e5e", "#71b280"])])),
        Entry(id: "life", title: "Game of Life 生命游戏", uploader: "@conway", category: "science",
              portrait: true, duration: 30, tone: 220, kind: .video(.h264, .mp4, .life)),
        Entry(id: "sunset", title: "Sunset 日落", uploader: "@lin", category: "nature",
              portrait: true, duration: 12, tone: 392, kind: .video(.h264, .mp4, .gradients(["#ff512f", "#f09819", "#dd2476"]))),
        Entry(id: "mandelbrot", title: "Mandelbrot zoom 曼德博集合", uploader: "@benoit", category: "science",
              portrait: true, duration: 6, tone: 261.63, kind: .video(.h264, .mp4, .mandelbrot)),
        Entry(id: "rule110", title: "Rule 110 元胞自动机", uploader: "@wolfram", category: "science",
              portrait: false, duration: 8, tone: 293.66, kind: .video(.h264, .mp4, .cellauto)),
        Entry(id: "ocean", title: "Ocean blue 海洋", uploader: "@hai", category: "nature",
              portrait: false, duration: 15, tone: 196, kind: .video(.h264, .mp4, .gradients(["#2193b0", "#6dd5ed", "#0f2027"]))),
        Entry(id: "spectrum", title: "Spectrum 光谱", uploader: "@prism", category: "music",
              portrait: true, duration: 6, tone: 659.25, kind: .video(.h264, .mp4, .spectrum)),
        Entry(id: "carpet", title: "Sierpinski carpet 谢尔宾斯基地毯", uploader: "@waclaw", category: "science",
              portrait: false, duration: 10, tone: 349.23, kind: .video(.h264, .mp4, .sierpinski)),
        Entry(id: "a440", title: "Concert A 标准音", uploader: "@tuner", category: "music",
              portrait: true, duration: 5, tone: 440, kind: .video(.h264, .mp4, .rgb)),
        Entry(id: "forest", title: "Forest 森林", uploader: "@lin", category: "nature",
              portrait: true, duration: 20, tone: 174.61, kind: .video(.h264, .mp4, .gradients(["#11998e", "#38ef7d", "#0b3d20"]))),
        Entry(id: "test-pattern", title: "Test pattern 测试图", uploader: "@reel", category: "music",
              portrait: false, duration: 7, tone: 880, kind: .video(.h264, .mp4, .testsrc2)),
    ]
}
