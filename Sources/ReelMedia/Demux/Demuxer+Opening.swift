import Foundation
import ReelCore
import ReelStreaming
internal import CFFmpeg

/// Opening an item: what its first bytes say it is, the playlists a scheduler needs read
/// first, libavformat's open options, and what a failed open tells the user.
extension Demuxer {
    /// What a scheduler took in a playlist's place (``detectFormat(url:loader:hooks:onBridge:scheduling:startTime:audio:)``).
    struct ScheduledItem {
        /// The first section's URL.
        var section: URL
        /// The playlist or manifest as the loader served it.
        var document: Data
        /// The audio tracks the scheduler offered (empty: none of its own), the chosen one
        /// marked, and why it was chosen.
        var audioTracks: [AudioTrack]
        var audioChoice: String?
    }

    /// Looks at the item's first read through a bridge of its own (interruptible by the owner,
    /// counted as waiting for the loader) and returns the format and the read, unconsumed.
    /// With `scheduling`, an HLS playlist is read whole and offered to it, with the audio track
    /// `audio` chooses among those it offers; when it takes it, the same for the first section
    /// it answers with, whose URL (the playlist, the audio tracks offered with the one chosen
    /// marked, and why) comes third.
    static func detectFormat(url: URL, loader: any ResourceLoader, hooks: AVIOBridge.Hooks,
                             onBridge: ((AVIOBridge) -> Void)?, scheduling: (any StreamSchedulingLoader)? = nil,
                             startTime: Double? = nil, audio: AudioSelection = AudioSelection())
        throws -> (StreamingFormat, ByteStream?, ScheduledItem?) {
        let probe = try AVIOBridge(url: url, loader: loader, hooks: hooks)
        onBridge?(probe)
        defer { probe.close() }
        do {
            let format = try probe.detectFormat()
            if format == .hls || format == .dash, let scheduling, let document = try probe.readDocument(limit: maxScheduledPlaylistBytes) {
                var tracks = scheduling.audioTracks(url, document: document)
                let choice = tracks.isEmpty ? nil : audio.choose(from: tracks)
                let chosen = choice?.track?.id
                let playlists = try readPlaylists(scheduling.playlistsToRead(url, document: document, audio: chosen),
                                                  loader: loader, hooks: hooks, onBridge: onBridge)
                if let section = scheduling.schedule(url, document: document, playlists: playlists, startTime: startTime, audio: chosen) {
                    probe.close()
                    let (media, started, _) = try detectFormat(url: section.url, loader: loader, hooks: hooks, onBridge: onBridge)
                    for index in tracks.indices { tracks[index].isSelected = tracks[index].id == chosen }
                    return (media, started, ScheduledItem(section: section.url, document: document, audioTracks: tracks,
                                                          audioChoice: choice?.reason))
                }
            }
            return (format, probe.takeStream(), nil)
        } catch {
            if probe.isInterrupted || error is CancellationError { throw MediaError.cancelled }
            if let loading = error as? ResourceLoaderError { throw MediaError.loading(loading) }
            if let media = error as? MediaError { throw media }
            throw MediaError.ffmpeg(operation: "open", code: -1, message: "\(error)", url: url)
        }
    }

    /// The playlists a scheduler asks for before it decides, each read whole through a bridge
    /// the owner can interrupt; one that cannot be read (or is too long) is left out.
    static func readPlaylists(_ urls: [URL], loader: any ResourceLoader, hooks: AVIOBridge.Hooks,
                                      onBridge: ((AVIOBridge) -> Void)?) throws -> [URL: Data] {
        var playlists: [URL: Data] = [:]
        // Side by side: every read starts now.
        var reads = urls.map { loader.read($0, range: .all) }
        defer { reads.forEach { $0.cancel() } }
        for url in urls {
            let reader = try AVIOBridge(url: url, loader: loader, hooks: AVIOBridge.Hooks(io: hooks.io), started: reads.removeFirst())
            onBridge?(reader)
            defer { reader.close() }
            do {
                playlists[url] = try reader.readDocument(limit: maxScheduledPlaylistBytes)
            } catch {
                if reader.isInterrupted || error is CancellationError { throw MediaError.cancelled }
            }
        }
        return playlists
    }

    /// The longest playlist offered to a scheduler (a longer one is left to FFmpeg's HLS demuxer
    /// and its own limits).
    static let maxScheduledPlaylistBytes = 4 << 20

    /// Every demuxer this FFmpeg has except `dash`: FFmpeg's DASH demuxer opens segments with
    /// its own protocols, not through `io_open` (before 8.1.2), so it would bypass the loader and
    /// the closed door; a manifest Reel did not recognise must fail, not reach it. (The HLS
    /// demuxer's inner demuxers inherit the list.)
    static let formatWhitelist: String = {
        var names: [String] = []
        var opaque: UnsafeMutableRawPointer?
        while let format = av_demuxer_iterate(&opaque) {
            guard let name = format.pointee.name else { continue }
            names += String(cString: name).split(separator: ",").map(String.init).filter { $0 != "dash" }
        }
        return names.joined(separator: ",")
    }()

    /// The options `avformat_open_input` gets: a small probe with `fastStart`, no protocol
    /// of FFmpeg's own (nested opens come through `NestedIO`) and no DASH demuxer.
    static func openOptions(fastStart: Bool) -> OpaquePointer? {
        var options: OpaquePointer?
        if fastStart {
            av_dict_set(&options, "probesize", "524288", 0)
            av_dict_set(&options, "analyzeduration", "1000000", 0)
            av_dict_set(&options, "fpsprobesize", "0", 0)
        }
        // The HLS demuxer must not reuse an HTTP connection it does not have.
        av_dict_set(&options, "protocol_whitelist", "none", 0)
        av_dict_set(&options, "format_whitelist", formatWhitelist, 0)
        av_dict_set(&options, "http_persistent", "0", 0)
        av_dict_set(&options, "http_multiple", "0", 0)
        return options
    }

    /// What a failed `avformat_open_input` means for the user: the closed door's refusal, the
    /// loader's error, a cancel, an unrecognised format, or FFmpeg's own message.
    static func openFailure(_ code: Int32, bridge: AVIOBridge, nested: NestedIO, url: URL) -> MediaError {
        let loaderError = bridge.lastLoaderError
        let kind = bridge.documentKind
        bridge.close()
        if let failure = nested.failure { return failure }
        if kind == .dash {
            // Markup whose first element is not MPD within what StreamingFormat looks at (a
            // manifest is read by DASHAsHLS; FFmpeg's DASH demuxer is not allowed).
            return MediaError.unrecognizedFormat(
                url: url, message: "markup whose first element in its first \(StreamingFormat.sniffLimit / 1024) KiB is not a DASH MPD")
        }
        if let loaderError { return MediaError.loading(loaderError) }
        if bridge.isInterrupted || code == AVERROR_EXIT_CODE { return MediaError.cancelled }
        if code == reel_averror_invaliddata() {
            return MediaError.unrecognizedFormat(url: url, message: ffmpegErrorString(code))
        }
        return MediaError.ffmpeg(operation: "avformat_open_input", code: code, message: ffmpegErrorString(code), url: url)
    }
}
