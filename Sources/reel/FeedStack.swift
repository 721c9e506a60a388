import ArgumentParser
import Foundation
import ReelCore
import ReelStreaming
import ReelFeed
import ReelLoading
import ReelMedia
import Synchronization

/// What a feed front-end (headless, window, terminal, demo, bench) runs on: the feed
/// source named on the command line, the loader its media is read through (files
/// directly, http(s) through the range cache), and the preloader filling the cache
/// for the items two to four away, yielding to the players.
final class FeedStack: Sendable {
    let source: any FeedSource
    /// Reads media: files directly, http(s) through the cache, HLS through Reel's segment scheduler.
    let mediaLoader: any ResourceLoader
    let coordinator: PlaybackLoadCoordinator
    let preloader: Preloader?
    let caching: CachingLoader?
    /// The feed's one bandwidth meter (fed by its HTTP loader) and the variant choice it drives.
    let meter: BandwidthMeter
    /// Where the meter's measurements are kept for the next process.
    let store: BandwidthEstimateStore?
    let variants: VariantSelectingLoader
    private let http: HTTPLoader
    private let bearer: LockedToken
    /// Reads the API's JSON (uncached).
    var apiLoader: any ResourceLoader { http }

    private init(source: any FeedSource, mediaLoader: any ResourceLoader, coordinator: PlaybackLoadCoordinator,
                 preloader: Preloader?, caching: CachingLoader?, http: HTTPLoader, bearer: LockedToken,
                 meter: BandwidthMeter, variants: VariantSelectingLoader, store: BandwidthEstimateStore?) {
        self.store = store
        self.bearer = bearer
        self.source = source
        self.mediaLoader = mediaLoader
        self.meter = meter
        self.variants = variants
        self.coordinator = coordinator
        self.preloader = preloader
        self.caching = caching
        self.http = http
    }

    /// Opens the feed `argument` names: a directory of media, a manifest (.json file
    /// or URL), or the base URL of a feed API (`http://host:port/api/`).
    static func open(_ argument: String, loading: LoadingOptions, token: String?) async throws -> FeedStack {
        // The token can change while the feed plays (signing in or out in the window).
        let bearer = LockedToken(token)
        var configuration = HTTPLoader.Configuration()
        configuration.bearerTokenProvider = { bearer.value }
        let opened = loading.openCache()
        let meter = loading.makeMeter(savingIn: opened?.store)
        let http = HTTPLoader(configuration: configuration, transferListener: meter)
        let coordinator = PlaybackLoadCoordinator()
        let caching = opened.map { CachingLoader(upstream: http, cache: $0.cache) }
        let variants = VariantSelectingLoader(upstream: SchemeRoutingLoader(files: FileLoader(), remote: caching ?? http), bandwidth: meter)
        // Every HLS stream over HTTP a player opens goes through Reel's segment scheduler,
        // switching variants by the feed's one meter.
        let mediaLoader = HLSSchedulingLoader(upstream: variants, variants: variants, configuration: .init(estimate: meter))
        let preloader = caching.map { caching in
            Preloader(loader: caching, coordinator: coordinator, estimator: { url, seconds in
                await MediaProbe.byteCount(forSeconds: seconds, of: url, loader: caching)
            }, variants: variants)
        }
        let source: any FeedSource
        do {
            source = try await Self.source(for: argument, http: http)
        } catch {
            caching?.cache.close()
            await http.shutdown()
            throw error
        }
        return FeedStack(source: source, mediaLoader: mediaLoader, coordinator: coordinator, preloader: preloader,
                         caching: caching, http: http, bearer: bearer, meter: meter, variants: variants, store: opened?.store)
    }

    /// The token the feed API and media requests carry from now on.
    func setToken(_ token: String?) { bearer.set(token) }

    private static func source(for argument: String, http: HTTPLoader) async throws -> any FeedSource {
        if let url = URL(string: argument), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme) {
            if url.pathExtension.lowercased() == "json" {
                return try await ManifestFeedSource(url: url, loader: http)
            }
            return HTTPFeedSource(baseURL: url, loader: http)
        }
        if argument.contains("://"), !argument.hasPrefix("file://") {
            throw CommandFailure.usage("unsupported URL scheme in '\(argument)' (use a directory, a manifest .json, or an http(s) URL)")
        }
        let path = argument.hasPrefix("file://") ? (URL(string: argument)?.path ?? argument) : (argument as NSString).expandingTildeInPath
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandFailure.media("\(argument): no such file or directory")
        }
        let url = URL(fileURLWithPath: path, isDirectory: isDirectory.boolValue)
        if isDirectory.boolValue { return try DirectoryFeedSource(directory: url) }
        return try await ManifestFeedSource(url: url, loader: FileLoader())
    }

    /// A feed of `category` over this stack (of `source`'s items when given: search results).
    func makeSession(source: (any FeedSource)? = nil, category: String? = nil, clock: any EngineClock = HostClock.shared,
                     measurementClock: (any EngineClock)? = nil,
                     configuration: FeedSession.Configuration = FeedSession.Configuration(),
                     audioSink: (@Sendable () -> (any AudioSink)?)? = nil,
                     captionSink: (@Sendable () -> (any CaptionSink)?)? = nil) -> FeedSession {
        FeedSession(source: source ?? self.source, category: category, loader: mediaLoader, preloader: preloader,
                    coordinator: coordinator, clock: clock, measurementClock: measurementClock,
                    configuration: configuration, audioSink: audioSink, captionSink: captionSink)
    }

    func shutdown() async {
        preloader?.stop()
        await preloader?.waitUntilIdle()
        caching?.cache.close()
        await http.shutdown()
        await store?.flush()
    }
}

/// The bearer token the stack's HTTP loader sends, changed when the user signs in or out.
final class LockedToken: Sendable {
    private let token: Mutex<String?>
    init(_ token: String?) { self.token = Mutex(token) }
    var value: String? { token.withTrackedLock { $0 } }
    func set(_ value: String?) { token.withTrackedLock { $0 = value } }
}

/// Resident memory of this process, from /proc/self/statm (0 when unreadable).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
