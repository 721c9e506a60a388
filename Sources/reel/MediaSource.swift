import ArgumentParser
import Logging
import Foundation
import ReelCore
import ReelStreaming
import ReelLoading
import ReelMedia

/// A command-line media argument: a file path or an http(s) URL.
struct MediaSource {
    let url: URL
    let displayName: String

    init(_ argument: String) throws {
        if let url = URL(string: argument), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme) {
            self.url = url
            displayName = argument
        } else if let url = URL(string: argument), url.scheme?.lowercased() == "file" {
            self.url = url
            displayName = url.path
        } else if argument.contains("://") {
            throw CommandFailure.usage("unsupported URL scheme in '\(argument)' (use a file path, file://, http:// or https://)")
        } else {
            let path = (argument as NSString).expandingTildeInPath
            self.url = URL(fileURLWithPath: path)
            displayName = argument
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CommandFailure.media("\(argument): no such file")
            }
            if isDirectory.boolValue {
                throw CommandFailure.usage("\(argument) is a directory; give a media file")
            }
        }
    }

    var isRemote: Bool { !url.isFileURL }
}

/// How bytes are loaded: shared by every command that reads media. Files are read
/// directly; http(s) URLs through the range cache unless `--no-cache`.
struct LoadingOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: "The range cache directory (default $XDG_CACHE_HOME/reel).")
    var cacheDirectory: String?

    @Flag(name: .customLong("no-cache"), help: "Read http(s) URLs straight from the network.")
    var noCache = false

    @Option(name: .customLong("initial-bandwidth"),
            help: "The bandwidth estimate (bits/s) before anything is measured: an HLS master starts on the highest variant that fits 0.7 of it (default: unknown, the lowest).")
    var initialBandwidth: Int64?

    /// The range cache's directory (`--cache-dir`, else the default).
    var directory: URL {
        cacheDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? RangeCache.defaultDirectory()
    }

    /// The process's one bandwidth meter, fed by its HTTP loader. With a cache directory it
    /// starts from the estimate an earlier process saved there (unless `--initial-bandwidth`
    /// says otherwise) and saves its own measurements there for the next one.
    func makeMeter(savingIn store: BandwidthEstimateStore? = nil) -> BandwidthMeter {
        var configuration = BandwidthMeter.Configuration(initialBitsPerSecond: initialBandwidth.flatMap { $0 > 0 ? $0 : nil })
        if let store, let saved = SavedBandwidthEstimate.load(from: store.directory) {
            let now = Date().timeIntervalSince1970
            configuration.savedBitsPerSecond = saved.startingBitsPerSecond(at: now)
            configuration.savedAge = saved.age(at: now)
        }
        var measured: (@Sendable (Int64, Int) -> Void)?
        if let store {
            measured = { bitsPerSecond, samples in store.record(bitsPerSecond: bitsPerSecond, samples: samples) }
        }
        return BandwidthMeter(configuration: configuration, measured: measured)
    }

    /// The range cache (nil with `--no-cache`, or when it cannot open: one line says so) and
    /// the bandwidth store beside it.
    func openCache() -> (cache: RangeCache, store: BandwidthEstimateStore)? {
        guard !noCache else { return nil }
        do {
            let cache = try RangeCache(configuration: .init(directory: directory))
            return (cache, BandwidthEstimateStore(directory: directory))
        } catch {
            printError("reel: cache unavailable (\(error)); reading from the network")
            return nil
        }
    }

    func makeLoader(for source: MediaSource, alsoReading others: [URL] = []) throws -> LoaderStack {
        guard source.isRemote || others.contains(where: { !$0.isFileURL }) else {
            return LoaderStack(upstream: FileLoader(), http: nil, caching: nil, meter: makeMeter())
        }
        guard let (cache, store) = openCache() else {
            let meter = makeMeter()
            let http = HTTPLoader(transferListener: meter)
            return LoaderStack(upstream: SchemeRoutingLoader(remote: http), http: http, caching: nil, meter: meter)
        }
        let meter = makeMeter(savingIn: store)
        let http = HTTPLoader(transferListener: meter)
        let caching = CachingLoader(upstream: http, cache: cache)
        return LoaderStack(upstream: SchemeRoutingLoader(remote: caching), http: http, caching: caching, meter: meter, store: store)
    }
}

/// The loader a command reads through, and what must be shut down after.
struct LoaderStack: Sendable {
    /// What media is read through: HLS masters answered with the chosen variant only.
    let loader: any ResourceLoader
    let http: HTTPLoader?
    let caching: CachingLoader?
    let meter: BandwidthMeter
    let variants: VariantSelectingLoader
    /// Where the meter's measurements are kept for the next process.
    let store: BandwidthEstimateStore?

    init(upstream: any ResourceLoader, http: HTTPLoader?, caching: CachingLoader?, meter: BandwidthMeter,
         store: BandwidthEstimateStore? = nil) {
        variants = VariantSelectingLoader(upstream: upstream, bandwidth: meter)
        loader = variants
        self.http = http
        self.caching = caching
        self.meter = meter
        self.store = store
    }

    func shutdown() async {
        caching?.cache.close()
        await http?.shutdown()
        await store?.flush()
    }
}

/// The one line a user sees for an error.
func describe(_ error: any Error) -> String {
    if let media = error as? MediaError { return media.description }
    if let loader = error as? ResourceLoaderError { return loader.description }
    if let failure = error as? CommandFailure { return failure.message }
    return String(describing: error)
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Flag(name: .long, help: "Log what the engine does (and FFmpeg's own messages) to stderr.")
    var verbose = false

    func apply() {
        FFmpegLog.setVerbose(verbose)
        CommandLogging.bootstrap(verbose: verbose)
    }
}

/// Captions for `reel play`: files beside the item and which captions show.
struct CaptionOptions: ParsableArguments {
    @Option(name: .customLong("captions"), help: ArgumentHelp(
        "A caption file (SubRip, WebVTT or ASS; path or http(s) URL) to show with the item; repeatable.",
        valueName: "file-or-url"))
    var files: [String] = []

    @Option(name: .customLong("caption-language"), help: ArgumentHelp(
        "Show the captions in this language when the item has them (en, zh, zh-Hans, jpn…).", valueName: "lang"))
    var language: String?

    @Flag(name: .customLong("no-captions"), help: "Start with captions off (c turns them on).")
    var off = false

    /// The sideloaded files, as caption sources: a path is checked now (a usage error, exit 2,
    /// when it is missing); a URL is read when the item opens.
    func sources() throws -> [CaptionSource] {
        try files.map { argument in
            if let url = URL(string: argument), let scheme = url.scheme?.lowercased(), ["http", "https", "file"].contains(scheme) {
                return CaptionSource(url: url)
            }
            if argument.contains("://") {
                throw CommandFailure.usage("unsupported URL scheme in --captions '\(argument)' (use a file path, http:// or https://)")
            }
            let path = (argument as NSString).expandingTildeInPath
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                throw CommandFailure.usage("--captions \(argument): no such file")
            }
            return CaptionSource(url: URL(fileURLWithPath: path), language: Self.language(inName: path))
        }
    }

    /// The selection the player starts with.
    var selection: CaptionSelection {
        CaptionSelection(isEnabled: !off, preferredLanguages: language.map { [$0] } ?? [])
    }

    /// `movie.en.srt` → `en`; `movie.zh-Hans.vtt` → `zh-Hans`: the language a sidecar's name gives.
    static func language(inName path: String) -> String? {
        let parts = (path as NSString).lastPathComponent.split(separator: ".")
        guard parts.count >= 3 else { return nil }
        let tag = parts[parts.count - 2]
        let primary = tag.split(separator: "-").first ?? ""
        guard (2...3).contains(primary.count), primary.allSatisfy(\.isLetter) else { return nil }
        return String(tag)
    }
}
