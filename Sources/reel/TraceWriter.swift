import Foundation
import ReelCore
import ReelStreaming
import ReelLoading
import ReelMedia
import Synchronization

/// Writes a JSON-lines trace: one object per presented frame and per event.
///
/// Any thread writes (the player's clock context for events, the video sink's caller
/// for frames); each object becomes one whole line, in the order the writes took the
/// mutex. Lines are buffered and reach the file at 64 KiB, on ``flush()`` and on
/// ``close()``, which the command calls on every way out once its player has stopped
/// (the end, `--frames`, a failure, a signal). After ``close()`` writes are ignored:
/// the file holds exactly what was written before it.
final class TraceWriter: Sendable {
    // Immutable after init.
    /// Nil when tracing is off.
    private let handle: FileHandle?
    private let closesHandle: Bool

    private struct State {
        var buffer = Data()
        var closed = false
    }

    /// Guarded by `state`: the buffer, and the file's writes (made with the mutex held, so
    /// lines reach the file whole and in order).
    private let state = Mutex(State())

    init(path: String?) throws {
        if path == "-" {
            handle = FileHandle.standardOutput
            closesHandle = false
        } else if let path {
            guard FileManager.default.createFile(atPath: path, contents: nil),
                  let file = FileHandle(forWritingAtPath: path) else {
                throw CommandFailure.usage("cannot write the trace file \(path)")
            }
            handle = file
            closesHandle = true
        } else {
            handle = nil
            closesHandle = false
        }
    }

    var isEnabled: Bool { handle != nil }

    func write(_ object: [String: Any]) {
        guard handle != nil,
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        state.withTrackedLock { state in
            guard !state.closed else { return }
            state.buffer.append(data)
            state.buffer.append(0x0A)
            if state.buffer.count > 64 * 1024 { write(&state) }
        }
    }

    /// Writes what is buffered to the file.
    func flush() {
        state.withTrackedLock { write(&$0) }
    }

    /// Flushes and closes the file (idempotent); later writes are ignored.
    func close() {
        state.withTrackedLock { state in
            guard !state.closed else { return }
            write(&state)
            state.closed = true
            if closesHandle { try? handle?.close() }
        }
    }

    /// With the mutex held.
    private func write(_ state: inout State) {
        guard !state.buffer.isEmpty, !state.closed else { return }
        try? handle?.write(contentsOf: state.buffer)
        state.buffer.removeAll(keepingCapacity: true)
    }

    /// What loudness levelling decided for an item: the loudness it went by (LUFS; null for
    /// silence), its true peak (dBTP), where the figure came from (`item`: the feed's;
    /// `measured`: Reel's meter, over `measuredSeconds`), the gain applied (dB) and the target.
    static func loudness(_ report: LoudnessReport, at seconds: Double) -> [String: Any] {
        func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
        return ["type": "loudness", "loudness": report.loudness.map(rounded) ?? NSNull(),
                "truePeak": report.truePeak.map(rounded) ?? NSNull(), "source": report.source.rawValue,
                "gain": rounded(report.gain), "target": report.target,
                "measuredSeconds": rounded(report.measuredSeconds), "at": seconds]
    }

    /// The variant an HLS master (or the video Representation a DASH manifest) starts on: its
    /// bandwidth, resolution and why; `representation` is the DASH Representation's `@id`.
    static func variant(_ choice: VariantChoice) -> [String: Any] {
        var object: [String: Any] = [
            "type": "variant", "master": choice.master.absoluteString, "url": choice.variantURL.absoluteString,
            "bandwidth": choice.bandwidth, "rank": choice.rank, "variants": choice.count, "why": choice.why,
            "safetyFraction": choice.safetyFraction,
        ]
        if let resolution = choice.resolution { object["resolution"] = resolution }
        if let representation = choice.representationID { object["representation"] = representation }
        if let estimate = choice.estimate.bitsPerSecond { object["estimate"] = estimate }
        object["estimateSource"] = switch choice.estimate.source {
        case .unknown: "unknown"
        case .initial: "initial"
        case .measured: "measured"
        case .saved: "saved"
        }
        if case .saved(let age) = choice.estimate.source { object["estimateAgeSeconds"] = age.rounded() }
        return object
    }

    /// A segment reader's event: a playlist load, a fetch (with how far behind the newest
    /// listed media the fetching was), a switch of variant (with why), or a jump over what left
    /// the live window.
    static func live(_ event: LiveSegmentReader.Event) -> [String: Any] {
        switch event {
        case .playlist(let url, let changed, let at):
            return ["type": "livePlaylist", "url": url.absoluteString, "changed": changed, "at": (at * 1000).rounded() / 1000]
        case .fetched(let url, let range, let bytes, let behind):
            var object: [String: Any] = ["type": "liveFetch", "url": url.absoluteString, "bytes": bytes,
                                         "behindEdgeSeconds": (behind * 1000).rounded() / 1000]
            if let range { object["range"] = "\(range.offset)-\(range.end.map { String($0 - 1) } ?? "")" }
            return object
        case .switched(let change):
            // The same type as the start's choice: every variant the item plays says why.
            var object: [String: Any] = [
                "type": "variant", "switch": true, "url": change.playlist.absoluteString, "bandwidth": change.bandwidth,
                "rank": change.to, "fromRank": change.from, "sequence": change.sequence, "why": change.why,
                "bufferedSeconds": (change.buffered * 1000).rounded() / 1000, "section": change.section,
            ]
            if let estimate = change.estimate { object["estimate"] = estimate }
            if let representation = change.representation { object["representation"] = representation }
            return object
        case .skippedAhead(let from, let to):
            return ["type": "liveSkippedAhead", "fromSequence": from, "toSequence": to]
        }
    }

    static func firstFrame(_ report: FirstFrameReport) -> [String: Any] {
        var phases: [String: Any] = [:]
        func put(_ key: String, _ value: Double?) { if let value { phases[key] = (value * 1000).rounded() / 1000 } }
        put("contentInfo", report.contentInfoMs)
        put("firstByte", report.firstByteMs)
        put("headerParsed", report.headerParsedMs)
        put("firstPacket", report.firstPacketMs)
        put("firstFrameDecoded", report.firstFrameDecodedMs)
        put("firstFramePresented", report.firstFramePresentedMs)
        return [
            "type": "firstFrame", "phasesMs": phases, "bytesRead": report.bytesRead, "requests": report.requests,
            "probedStreamInfo": report.probedStreamInfo,
        ]
    }
}

/// One player's trace in `reel play`: its presented frames (through the sink that
/// ``videoSink(forwardingTo:)`` makes) and its events (``record(_:player:)``), timed from
/// when the item was opened.
final class PlaybackTrace: Sendable {
    // Immutable after init.
    let writer: TraceWriter
    private let clock: any EngineClock
    private let openedAt: MediaTime
    /// Which cues have their `caption` line (guarded; written on the player's clock context).
    private let captionLog = Mutex(CaptionTraceLog())
    /// The colour of the last frame traced (guarded; written on the player's clock context).
    private let lastColor = Mutex<ColorDescription?>(nil)

    init(writer: TraceWriter, clock: any EngineClock) {
        self.writer = writer
        self.clock = clock
        openedAt = clock.now
    }

    var isEnabled: Bool { writer.isEnabled }

    /// A sink that counts each presented frame against `limit` and writes a `frame`
    /// object (pts, framemd5-compatible md5, when, drops) for it — for the first N only
    /// with a limit — then hands it to `inner`.
    func videoSink(forwardingTo inner: (any VideoSink)?, limit: FrameLimit? = nil) -> any VideoSink {
        TracingVideoSink(trace: self, inner: inner, limit: limit)
    }

    fileprivate func frame(_ frame: VideoFrame, _ presentation: Presentation) {
        guard writer.isEnabled else { return }
        // A `color` line when the frames' colour changes (the first frame, a new item):
        // the tags and what the outputs apply.
        let newColor = lastColor.withLock { last in
            defer { last = frame.color }
            return last != frame.color
        }
        if newColor { writer.write(["type": "color"].merging(ColorProbe.json(frame.color)) { a, _ in a }) }
        writer.write([
            "type": "frame", "pts": frame.pts.stringValue, "seconds": frame.pts.seconds,
            "md5": frame.md5(), "presentedAt": (presentation.presentedAt - openedAt).seconds,
            "dropped": presentation.droppedFrames,
        ])
    }

    /// Writes the object for `event` (frames, status and time-control changes have none).
    func record(_ event: PlayerEvent, player: Player) {
        guard writer.isEnabled else { return }
        switch event {
        case .framePresented, .statusChanged, .timeControlStatusChanged:
            break
        case .firstFrame(let report):
            writer.write(TraceWriter.firstFrame(report))
            if let info = player.mediaInfo, !info.audioTracks.isEmpty { writer.write(TraceWriter.audioTracks(info)) }
            // The measurement a trace is usually read for: on disk at once.
            writer.flush()
        case .seekCompleted(let target, let landed, let finished):
            var object: [String: Any] = ["type": "seek", "target": target.stringValue, "finished": finished]
            if let landed { object["landed"] = landed.stringValue }
            writer.write(object)
        case .rateChanged(let rate):
            writer.write(["type": "rate", "rate": rate, "at": (clock.now - openedAt).seconds])
        case .stall(let stalled):
            writer.write(["type": "stall", "stalled": stalled, "at": (clock.now - openedAt).seconds])
        case .ended(let looping):
            settledCaptions(player).forEach(writeCaption)
            let stats = player.statistics
            writer.write(["type": "end", "at": (clock.now - openedAt).seconds, "looping": looping,
                          "presentedFrames": stats.presentedFrames, "droppedFrames": stats.droppedFrames])
        case .failed(let error):
            writer.write(["type": "error", "message": error.description])
        case .captionsChanged(let frame):
            var lines = captionLog.withLock { $0.presented(frame) }
            lines += settledCaptions(player)
            lines.forEach(writeCaption)
        case .captionTracksChanged(let tracks):
            writer.write(["type": "captionTracks", "tracks": tracks.map { track -> [String: Any] in
                var object: [String: Any] = ["id": track.id.raw, "format": track.format.rawValue]
                if let language = track.language { object["language"] = language }
                if let label = track.label { object["label"] = label }
                return object
            }])
        case .captionSourceFailed(let failure):
            writer.write(["type": "captionError", "url": failure.url.absoluteString, "reason": failure.reason])
        case .loudness(let report):
            writer.write(TraceWriter.loudness(report, at: (clock.now - openedAt).seconds))
        }
    }

    /// A `caption` line: the cue, and when it was first on screen (`pts`, a frame's time).
    private func writeCaption(_ line: CaptionTraceLog.Line) {
        let cue = line.cue
        writer.write(["type": "caption", "track": cue.track.raw, "start": cue.start.stringValue,
                      "end": cue.end.isNumeric ? cue.end.stringValue : "open", "text": cue.plainText,
                      "pts": line.shownAt.stringValue, "at": (clock.now - openedAt).seconds])
    }

    /// Settled cues shown only as provisional so far (CEA-608), from the player's cues.
    private func settledCaptions(_ player: Player) -> [CaptionTraceLog.Line] {
        let tracks = captionLog.withLock { $0.provisionalTracks }
        guard !tracks.isEmpty else { return [] }
        let events = tracks.sorted { $0.raw < $1.raw }.flatMap { player.captionEvents(of: $0) }
        return captionLog.withLock { $0.settled(events) }
    }

    /// Flushes and closes the file: call once the player has stopped.
    func close() { writer.close() }
}

/// Counts and traces each frame, then passes it on (the terminal renderer, the window's
/// store, or nothing when headless). On the player's clock context.
private final class TracingVideoSink: VideoSink {
    // Immutable after init.
    private let trace: PlaybackTrace
    private let inner: (any VideoSink)?
    private let limit: FrameLimit?

    init(trace: PlaybackTrace, inner: (any VideoSink)?, limit: FrameLimit?) {
        self.trace = trace
        self.inner = inner
        self.limit = limit
    }

    func present(_ frame: VideoFrame, presentation: Presentation) {
        if limit?.framePresented() ?? true { trace.frame(frame, presentation) }
        inner?.present(frame, presentation: presentation)
    }

    func clear() { inner?.clear() }
}
