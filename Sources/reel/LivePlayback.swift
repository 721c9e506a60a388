import ArgumentParser
import Foundation
import ReelCore
import ReelStreaming

/// `reel play` of a live HLS stream through Reel's own segment reader: the item's URL becomes
/// the reader's (`reel-live://…`) when the stream is a live media playlist, or a master whose
/// chosen variant is one (and which names no separate audio or video rendition: those still
/// need FFmpeg's HLS demuxer). Anything else plays as before.
enum LivePlayback {
    /// Who follows a live playlist.
    enum Scheduler: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// Reel's `LiveSegmentReader` feeding FFmpeg's mov or mpegts demuxer.
        case reel
        /// FFmpeg's HLS demuxer, as before.
        case ffmpeg
    }

    /// The URL and loader to play `url` with, and the live media playlist if it is one.
    static func prepare(_ url: URL, loader: any ResourceLoader, scheduler: Scheduler,
                        observer: (@Sendable (LiveSegmentReader.Event) -> Void)?) async -> (URL, any ResourceLoader, URL?) {
        guard scheduler == .reel, ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
              ["m3u8", "m3u"].contains(url.pathExtension.lowercased()) else { return (url, loader, nil) }
        guard let document = try? await loader.data(url) else { return (url, loader, nil) }
        var mediaURL = url
        var media = document
        if let master = HLSMasterPlaylist(document) {
            // Read through the variant choice: one variant is left (and the choice traced).
            guard master.variants.count == 1, master.audioVideoRenditions.isEmpty,
                  let variant = URL(string: master.variants[0].uri, relativeTo: url)?.absoluteURL,
                  let data = try? await loader.unstoredLoader.data(variant) else { return (url, loader, nil) }
            mediaURL = variant
            media = data
        }
        guard let playlist = HLSMediaPlaylist(media), !playlist.isFinal else { return (url, loader, nil) }
        let live = LiveMediaLoader(upstream: loader)
        return (live.register(playlist: mediaURL, observer: observer), live, mediaURL)
    }
}
