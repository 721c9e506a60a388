import ArgumentParser
import Foundation
import ReelCore
import ReelStreaming

/// `reel play` of an HLS stream through Reel's own segment reader: the item's URL becomes the
/// reader's (`reel-live://…`) when the stream is a live media playlist, or a master whose
/// variants are live, or (with `--adaptive` or `--variant-plan`) any master. A master's
/// variants are all given to the reader, which starts on the variant the bandwidth estimate
/// chose and switches as the adaptive rule (or the plan) says. A master that names separate
/// audio or video renditions still plays through FFmpeg's HLS demuxer, as does a VOD stream
/// without those options (the reader cannot seek yet). Anything else plays as before.
enum LivePlayback {
    /// Who follows a live playlist.
    enum Scheduler: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// Reel's `LiveSegmentReader` feeding FFmpeg's mov or mpegts demuxer.
        case reel
        /// FFmpeg's HLS demuxer, as before.
        case ffmpeg
    }

    /// How `reel play` may schedule an HLS stream itself.
    struct Options: Sendable {
        var scheduler: Scheduler = .reel
        /// Play a VOD master through the reader too, switching variants.
        var adaptive = false
        /// A fixed plan of switches (segment index → variant rank), for tests and comparisons.
        var plan: [Int: Int]?
        /// The estimate the adaptive rule reads (the process's meter).
        var estimate: (any BandwidthEstimating)?
        /// Reads the master as published (the stack's loader answers with the chosen variant only).
        var masterLoader: (any ResourceLoader)?
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
        // Read through the variant choice: the chosen variant (and the choice traced).
        guard let document = try? await loader.data(url) else { return (url, loader, nil) }
        guard let chosenMaster = HLSMasterPlaylist(document) else {
            guard let playlist = HLSMediaPlaylist(document), !playlist.isFinal || options.adaptive || options.plan != nil else {
                return (url, loader, nil)
            }
            let live = LiveMediaLoader(upstream: loader)
            let item = live.register(variants: [.init(playlist: url, bandwidth: 0)], startRank: 0, switching: .fixed,
                                     startTime: options.startTime, observer: observer)
            return (item, live, url)
        }
        guard chosenMaster.audioVideoRenditions.isEmpty, let chosen = chosenMaster.variants.first,
              let chosenURL = URL(string: chosen.uri, relativeTo: url)?.absoluteURL,
              let data = try? await loader.unstoredLoader.data(chosenURL), let media = HLSMediaPlaylist(data),
              !media.isFinal || options.adaptive || options.plan != nil else { return (url, loader, nil) }
        // Every variant, from the master as published (read again: the stack's copy names one).
        var master = chosenMaster
        if let masterLoader = options.masterLoader, let data = try? await masterLoader.data(url),
           let original = HLSMasterPlaylist(data), original.audioVideoRenditions.isEmpty {
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
        } else if variants.count > 1, let estimate = options.estimate {
            switching = .adaptive(AdaptiveVariantRule(), estimate: estimate)
        } else {
            switching = .fixed
        }
        let live = LiveMediaLoader(upstream: loader)
        let item = live.register(variants: variants.isEmpty ? [.init(playlist: chosenURL, bandwidth: chosen.bandwidth)] : variants,
                                 startRank: startRank, switching: switching, startTime: options.startTime, observer: observer)
        return (item, live, chosenURL)
    }
}
