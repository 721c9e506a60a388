import ArgumentParser
import Foundation
import ReelCore
import ReelStreaming

/// `reel play` of an HLS stream over HTTP goes through Reel's own segment reader: the item's
/// URL becomes the reader's (`reel-live://…`), live or not. A master's variants are all given to
/// the reader, which starts on the variant the bandwidth estimate chose and switches as the
/// adaptive rule says (`--no-adaptive`: holds it; `--variant-plan`: switches where the plan
/// says). Playlists of a stream with an end are read through the cache (a warm replay asks the
/// origin for nothing); a live one's reloads reach the origin.
///
/// Still through FFmpeg's HLS demuxer, as before: a master that names separate audio or video
/// renditions, or subtitle renditions (the engine reads those beside FFmpeg's demuxer), a local
/// playlist, and everything with `--scheduler ffmpeg`. Anything else plays as before.
enum LivePlayback {
    /// Who fetches an HLS stream's segments.
    enum Scheduler: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// Reel's `LiveSegmentReader` feeding FFmpeg's mov or mpegts demuxer.
        case reel
        /// FFmpeg's HLS demuxer, as before.
        case ffmpeg
    }

    /// How `reel play` may schedule an HLS stream itself.
    struct Options: Sendable {
        var scheduler: Scheduler = .reel
        /// Switch a master's variants as the estimate and the buffer say (else hold the first).
        var adaptive = true
        /// A fixed plan of switches (segment index → variant rank), for tests and comparisons.
        var plan: [Int: Int]?
        /// The estimate the adaptive rule reads (the process's meter).
        var estimate: (any BandwidthEstimating)?
        /// The master as published (the stack's loader answers with the chosen variant only).
        var published: (@Sendable (URL) -> Data?)?
        /// Where playback starts (`--start`): the reader starts at the segment holding it.
        var startTime: Double?
    }

    /// Parses `--variant-plan` ("2:1,5:0": before segment 2 switch to rank 1, before 5 to rank 0).
    static func parsePlan(_ text: String) -> [Int: Int]? {
        var plan: [Int: Int] = [:]
        for entry in text.split(separator: ",") {
            let pair = entry.split(separator: ":")
            guard pair.count == 2, let segment = Int(pair[0]), let rank = Int(pair[1]), segment >= 0, rank >= 0 else { return nil }
            plan[segment] = rank
        }
        return plan.isEmpty ? nil : plan
    }

    /// The URL and loader to play `url` with, and the media playlist Reel reads, if it does.
    static func prepare(_ url: URL, loader: any ResourceLoader, options: Options,
                        observer: (@Sendable (LiveSegmentReader.Event) -> Void)?) async -> (URL, any ResourceLoader, URL?) {
        guard options.scheduler == .reel, ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
              ["m3u8", "m3u"].contains(url.pathExtension.lowercased()) else { return (url, loader, nil) }
        // Read through the variant choice: the chosen variant (and the choice traced). Stored:
        // a master never changes, and a media playlist's liveness is what it says.
        guard let document = try? await loader.data(url) else { return (url, loader, nil) }
        guard let chosenMaster = HLSMasterPlaylist(document) else {
            guard let playlist = HLSMediaPlaylist(document) else { return (url, loader, nil) }
            let live = LiveMediaLoader(upstream: loader)
            let item = live.register(variants: [.init(playlist: url, bandwidth: 0)], startRank: 0, switching: .fixed,
                                     startTime: options.startTime, hasEnd: playlist.isFinal, observer: observer)
            return (item, live, url)
        }
        guard chosenMaster.audioVideoRenditions.isEmpty, chosenMaster.subtitleRenditions.isEmpty,
              let chosen = chosenMaster.variants.first,
              let chosenURL = URL(string: chosen.uri, relativeTo: url)?.absoluteURL,
              let data = try? await loader.data(chosenURL), let media = HLSMediaPlaylist(data) else { return (url, loader, nil) }
        // Every variant, from the master as published (the choice's copy names one).
        var master = chosenMaster
        if let original = options.published?(url).flatMap(HLSMasterPlaylist.init),
           original.audioVideoRenditions.isEmpty, original.subtitleRenditions.isEmpty {
            master = original
        }
        let variants = master.variants.compactMap { variant -> LiveSegmentReader.Variant? in
            guard let playlist = URL(string: variant.uri, relativeTo: url)?.absoluteURL else { return nil }
            return LiveSegmentReader.Variant(playlist: playlist, bandwidth: variant.bandwidth, resolution: variant.resolution)
        }.sorted { $0.bandwidth < $1.bandwidth }
        let startRank = variants.firstIndex { $0.playlist == chosenURL } ?? 0
        let switching: LiveSegmentReader.Switching
        if let plan = options.plan {
            switching = .plan(plan)
        } else if options.adaptive, variants.count > 1, let estimate = options.estimate {
            switching = .adaptive(AdaptiveVariantRule(), estimate: estimate)
        } else {
            switching = .fixed
        }
        let live = LiveMediaLoader(upstream: loader)
        let item = live.register(variants: variants.isEmpty ? [.init(playlist: chosenURL, bandwidth: chosen.bandwidth)] : variants,
                                 startRank: startRank, switching: switching, startTime: options.startTime,
                                 hasEnd: media.isFinal, observer: observer)
        return (item, live, chosenURL)
    }
}
