import Foundation
import ReelCore
import ReelCaptions

/// Everything a pipeline's threads share, guarded by the engine's ``PipelineMonitor`` (one
/// mutex). Grouped by who writes it; anyone holding the mutex may read any of it.
struct EngineState: Sendable {
    // MARK: Lifecycle (written by close, fail and the demux thread)

    /// Set once by `close()`: every thread stops, no frame is presented after.
    var closing = false
    /// The first failure; the owner reports it at its next step.
    var failure: MediaError?
    /// The container's streams, once the demux thread opened it.
    var streams: OpenedStreams?
    /// The demuxer, once open (the demux thread reads through it; close interrupts it).
    var demuxer: Demuxer?
    /// The demuxer's I/O while it opens, so a close can interrupt a stalled open.
    var openingBridge: AVIOBridge?
    /// Why a stream was given up, for the failure the owner reports if nothing else plays.
    var undecodable: MediaError?
    /// Whether the video decoder is open (between its creation and its thread's exit).
    var videoDecoderOpen = false

    // MARK: Seeking (written by seek commands; the demux thread carries them out)

    /// The seek generation: a seek bumps it, and every queue entry of an older one is stale.
    var serial = 0
    /// A seek for the demux thread to carry out.
    var seekRequest: SeekRequest?
    /// The serial the decoders' chain began at: a seek that flushes starts a new chain; a
    /// scrub's decode-on bumps the serial inside it (packets and frames restamped, nothing
    /// flushed), so a packet or frame of a serial at or after this one is still good.
    var chainSerial = 0
    /// A frame a decode-on handed back to the video decode thread: the last queued frame at or
    /// before the new target, shown if the next decoded frame passes the target.
    var handoffFrame: VideoFrame?
    /// The last frame the owner presented (its pts as decoded) and its serial.
    var presentedFrame: (serial: Int, pts: MediaTime)?
    /// Frames and samples of `serial` up to this time are decoded but not shown.
    var discardUntil: MediaTime?
    /// Whether the demux thread is inside a read (a seek interrupts it).
    var demuxInIO = false
    var demuxAtEnd = false
    /// Packets of the selected streams read over the item's life (demux thread): none at the
    /// end of the input is a file cut short before its first sample.
    var mediaPacketsRead = 0
    /// The demux side of a seamless loop: which pass the demuxer reads, how packets of it are
    /// timed and trimmed (the demux thread asks it; `setLooping` and seeks tell it).
    var loop = LoopMachine()
    /// A stream ended early for this serial because the other filled the byte budget.
    var videoCutSerial = -1
    var audioCutSerial = -1

    // MARK: Queues (producers push, consumers pop; stale serials are dropped by comparison)

    var videoPackets = PacketQueue()
    var audioPackets = PacketQueue()
    /// Decoded frames, written by the video decoder, taken by the owner.
    var videoFrames: [VideoFrame] = []
    /// Frames the video decoders queued, the first-frame decoder's included (decoder threads).
    var decodedVideoFrames = 0
    var videoEndedSerial = -1
    /// The time of the first frame video queued for `firstVideoSerial` (video decoders).
    var firstVideoTime: MediaTime?
    var firstVideoSerial = -1
    /// Decoded audio in the output format, written by the audio decoder, taken by the renderer.
    var audioChunks: [AudioChunk] = []
    var audioChunksDuration: MediaTime = .zero
    var audioEndedSerial = -1
    /// The first audio time of `firstAudioSerial`, from the audio decoder.
    var firstAudioTime: MediaTime?
    /// The time of the item's own first audio sample (decoded from the stream's start, nothing
    /// trimmed), from the audio decoder: audio that starts there plays the item's own first
    /// sample as it is, with no ramp (its own edge, as its end is); any other start is a cut
    /// and fades in.
    var itemAudioStart: MediaTime?
    /// What loudness levelling decided, for the owner to report (the render thread's).
    var loudnessReports: [LoudnessReport] = []
    var firstAudioSerial = -1

    // MARK: Audio rendering (the owner sets the pace; the renderer writes the rest)

    /// The rate the renderer stretches to (the owner's, when time last started).
    var audioRate: Double = 1
    var volume: Float = 1
    /// Where each run of rendered audio starts in the ring, and its media time (renderer).
    var audioSegments: [AudioSegment] = []
    /// Source frames the renderer took and has not written to the ring yet (renderer).
    var rendererBacklog = 0
    /// The renderer wrote the last sample of this serial (renderer).
    var audioRenderedEndSerial = -1

    // MARK: The owner (the clock context that runs presentation steps)

    /// The presentation state machine, run by the owner's steps only.
    var machine: PresentationMachine
    /// Commands for the owner's next step, in order.
    var commands: [PresentationMachine.Event] = []
    /// The owner's next step, if one is scheduled.
    var stepDeadline: MediaTime?
    var stepAction: ScheduledAction?
    /// The owner waits for data: producers schedule a step when they add some.
    var ownerWantsData = true
    /// The thread handing a frame to the sink now (`close()` waits for it unless it is the caller).
    var presentingThread: pthread_t?
    /// Push sinks: when the current run of audio steps started, and frames taken since.
    var audioStepStart: (host: MediaTime, frames: Int64)?
    var audioStepAction: ScheduledAction?

    // MARK: Captions (demux thread and caption loaders file cues; the owner looks them up)

    /// The item's caption tracks, cues, selection and what is on screen.
    var captions = CaptionPresentation()
    /// Caption sources that failed, for the owner's next step to report.
    var captionFailures: [CaptionSourceFailure] = []
    /// Caption files being read, so `close()` can cancel them.
    var captionReads: [ByteStream] = []

    // MARK: Measurements (owner and demux thread)

    var report = FirstFrameReport(bytesRead: 0, requests: 0, probedStreamInfo: false)
    var firstFrameReported = false
    var avOffsets = OffsetHistogram()
    /// The ring position where audio at a new rate starts, and when time began to run at it.
    var pendingRateChange: (position: Int?, askedAt: MediaTime)?
    /// Whether the audio device was ever told to run (a later rate is a change from an old one).
    var audioHasRun = false
    var rateChangeLatencies: [MediaTime] = []

    // MARK: Network demand (owner and demux thread)

    var connectionDemand: PlaybackDemandToken?
    var lowWaterDemand: PlaybackDemandToken?

    init(machine: PresentationMachine) {
        self.machine = machine
    }

    /// Where the current serial's presentation starts, for audio to start in step with it.
    enum AudioStart: Equatable {
        /// Video's first frame is still to come: audio waits to know where time starts.
        case pending
        /// No video to start with: audio starts at its own first sample.
        case own
        /// Time starts here (video's first frame, or the seek target it lands on): audio that
        /// starts later is preceded by silence from here, as mpv pads it.
        case at(MediaTime)
    }

    var audioStart: AudioStart {
        guard streams?.hasVideo == true else { return .own }
        if firstVideoSerial == serial, let first = firstVideoTime {
            return .at(discardUntil.map { max(first, $0) } ?? first)
        }
        return videoEndedSerial == serial ? .own : .pending
    }
}

/// What the demux thread learned when the container opened.
struct OpenedStreams: Sendable {
    var info: MediaInfo
    var hasVideo: Bool
    var hasAudio: Bool
    var videoTimeBase: TimeBase
    var audioTimeBase: TimeBase
    /// The audio stream's own sample rate (what a trim at a loop's end counts in).
    var audioSampleRate: Int?
    /// What one audio packet decodes to, when the codec's frames have one size (AAC: 1024).
    var audioFrameDuration: MediaTime?
    var frameDuration: MediaTime
    var rotation: Int
    var duration: MediaTime
    /// The video stream's start (its first presentation time, an edit list's start): frames
    /// timed before it are decoded to reach it, never shown. `nil` when the container says none.
    var videoStart: MediaTime?
}

/// A seek for the demux thread: where to go and for which serial.
struct SeekRequest: Sendable {
    var serial: Int
    var target: MediaTime
    var before: MediaTime
    var after: MediaTime
}

/// A run of rendered audio: from ring position `start`, media time `pts` advancing at `rate`.
struct AudioSegment: Sendable, Hashable {
    var serial: Int
    var start: Int
    var pts: MediaTime
    var rate: Double
    var sampleRate: Int

    /// The media time of ring position `position` (at or after `start`).
    func time(at position: Int) -> MediaTime {
        let frames = MediaTime(value: Int64(position - start), timescale: Int32(sampleRate))
        return pts + (rate == 1 ? frames : frames.multiplied(byFloat64: rate))
    }
}

/// A histogram of A/V offsets at presentation, in whole milliseconds (absolute values) up to
/// 200 ms (beyond that in the last bucket); the maximum is kept exactly. Its buckets are made
/// when the first offset arrives (items without audio never need them).
struct OffsetHistogram: Sendable, Hashable {
    static let buckets = 201
    private(set) var counts: [Int] = []
    private(set) var total = 0
    private(set) var maximum: Double = 0

    mutating func add(_ offset: MediaTime) {
        let ms = abs(offset.seconds * 1000)
        guard ms.isFinite else { return }
        if counts.isEmpty { counts = [Int](repeating: 0, count: Self.buckets) }
        counts[min(Self.buckets - 1, Int(ms.rounded()))] += 1
        total += 1
        maximum = max(maximum, ms)
    }

    /// The offset at quantile `q` (0…1), in milliseconds.
    func quantile(_ q: Double) -> Double? {
        guard total > 0 else { return nil }
        let rank = Int((q * Double(total)).rounded(.up))
        var seen = 0
        for (ms, count) in counts.enumerated() {
            seen += count
            if seen >= max(1, rank) { return Double(ms) }
        }
        return maximum
    }
}
