/// One item's presentation as a value: which frame to show when, when the item is ready,
/// stalled, done seeking, ended or stuck — decided from the clock's now and a snapshot of
/// the queues, with no thread, lock or clock of its own. The engine that owns it (ReelMedia's
/// `PlaybackEngine`) feeds it commands and steps and carries out the actions it returns,
/// as swift-nio's protocol state machines are driven by their channel handlers.
///
/// The phases:
///
/// - ``Phase/opening``: the container is not open yet.
/// - ``Phase/prerolling``: open; waiting for the first frame and the start buffer.
/// - ``Phase/playing``: ready. Time moves while the owner has asked it to run
///   (``Event/runClock(rate:)``); otherwise the item is paused on its current frame.
/// - ``Phase/stalled``: the data ran dry while time ran; waiting for the start buffer again.
/// - ``Phase/seeking(_:)``: waiting for the first frame of a seek.
/// - ``Phase/ended``: every stream drained and the last frame's time passed.
/// - ``Phase/failed``: the item cannot go on (the pipeline failed, or nothing could be decoded).
///
/// Time is the audio clock while audio plays (the owner passes its reading in
/// ``Buffers/audioClock``), else a ``TimelineAnchor`` that takes over from where audio was.
public struct PresentationMachine: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Frames queued behind the one shown before the item counts as ready.
        public var startVideoFrames = 2
        /// The same before time has ever run (an item opened paused, such as a feed's
        /// pre-rendered next page, which decodes no further than its first picture). The
        /// first ``Event/runClock(rate:)`` then waits for ``startVideoFrames`` before time
        /// moves, without counting as a stall.
        public var idleStartVideoFrames = 2
        /// Decoded audio needed before the item counts as ready (or resumes after a stall).
        public var startAudio = MediaTime(value: 1, timescale: 5)
        /// How often a step runs while time moves (time observers, stall checks).
        public var tickInterval = MediaTime(value: 50, timescale: 1000)
        /// A frame counts as due this much before its time.
        public var presentSlack = MediaTime(value: 1, timescale: 1000)
        /// A frame this far from the clock is a timestamp jump, not a late or early frame:
        /// video re-times itself to the clock instead of waiting or dropping (ffplay's
        /// no-sync threshold).
        public var discontinuity = MediaTime(value: 10, timescale: 1)

        public init() {}
    }

    /// A decoded frame waiting in the queue: its time and how long it shows.
    public struct FrameHead: Sendable, Hashable {
        public var pts: MediaTime
        public var duration: MediaTime?

        public init(pts: MediaTime, duration: MediaTime? = nil) {
            self.pts = pts
            self.duration = duration
        }
    }

    /// What the pipeline holds for the current serial, read by the owner at the step.
    public struct Buffers: Sendable, Hashable {
        /// The serial (seek generation) the snapshot belongs to.
        public var serial: Int
        /// Decoded frames queued, in presentation order.
        public var video: [FrameHead] = []
        /// The video decoder drained the end of the input.
        public var videoEnded = false
        /// Decoded audio waiting to be heard (queued and in the device's ring).
        public var audioQueued: MediaTime = .zero
        /// The audio decoder drained the end of the input.
        public var audioEnded = false
        /// The time of the first audio sample of the serial, once decoded.
        public var firstAudioTime: MediaTime?
        /// The media time the audio clock reads now, while audio is heard.
        public var audioClock: MediaTime?
        /// The audio device ran out of samples while time ran.
        public var audioStarved = false
        /// The input ended before a single packet of its streams: a file cut short after its
        /// header (an MP4 ending at its `moov`). It plays what it holds — nothing — and ends,
        /// as FFmpeg does, where an input whose packets decode to nothing fails.
        public var inputHeldNoMedia = false

        public init(serial: Int) { self.serial = serial }
    }

    /// A seek the owner has started: the demuxer moves, and serial `serial` begins.
    public struct Seek: Sendable, Hashable {
        /// The caller's id (negative for seeks the caller does not wait for: loops, a start time).
        public var id: Int
        public var serial: Int
        public var target: MediaTime
        /// Frames and samples up to this time are decoded but not shown (`-∞` for none).
        public var discardUntil: MediaTime

        public init(id: Int, serial: Int, target: MediaTime, discardUntil: MediaTime) {
            self.id = id
            self.serial = serial
            self.target = target
            self.discardUntil = discardUntil
        }
    }

    public enum Phase: Sendable, Hashable {
        case opening
        case prerolling
        case playing
        case stalled
        case seeking(Seek)
        case ended
        case failed
    }

    /// The streams of the item, known once it opened.
    public struct Streams: Sendable, Hashable {
        public var hasVideo: Bool
        public var hasAudio: Bool
        public var duration: MediaTime
        /// The nominal frame duration, for frames that do not carry one.
        public var frameDuration: MediaTime

        public init(hasVideo: Bool, hasAudio: Bool, duration: MediaTime, frameDuration: MediaTime) {
            self.hasVideo = hasVideo
            self.hasAudio = hasAudio
            self.duration = duration
            self.frameDuration = frameDuration
        }
    }

    public enum Event: Sendable, Hashable {
        /// The container opened with these streams.
        case opened(Streams)
        /// The demuxer of a looping item began reading pass `Pass.index` ahead of the end
        /// (ReelCore's ``LoopMachine``): time runs on into it, never restarting.
        case passBegan(Pass)
        /// Let time run at `rate` from where it is.
        case runClock(rate: Double)
        /// Stop time where it is.
        case stopClock
        /// A seek began (the owner has bumped the serial and flushed the queues).
        case seek(Seek)
        /// The pipeline failed (the owner reports why).
        case failed
    }

    /// A pass of a looping item: pass `index` of serial `serial` plays the item again
    /// `index × duration` later on the continuous timeline.
    public struct Pass: Sendable, Hashable {
        public var serial: Int
        public var index: Int
        /// Where the item's timeline starts, and how long one pass lasts.
        public var start: MediaTime
        public var duration: MediaTime

        public init(serial: Int, index: Int, start: MediaTime, duration: MediaTime) {
            self.serial = serial
            self.index = index
            self.start = start
            self.duration = duration
        }
    }

    /// Why an item cannot go on although nothing failed outright.
    public enum NoProgress: Sendable, Hashable {
        /// The input ended and no stream decoded anything.
        case nothingDecoded
    }

    public enum Action: Sendable, Hashable {
        /// Take `dropping` frames off the queue as late, then present the next one.
        /// `avOffset` is how far the frame is from the audio clock, when audio is heard.
        case present(dropping: Int, firstOfSequence: Bool, avOffset: MediaTime?)
        /// Take this many frames off the queue as late, presenting none.
        case drop(Int)
        case reportFirstFrame
        case reportReady
        case reportStall(Bool)
        case reportSeekCompleted(id: Int, landed: MediaTime)
        case reportEnd
        /// Time crossed from one pass of a looping item into the next (it played once more).
        case reportLoop
        case reportNoProgress(NoProgress)
        /// The audio device may consume samples (time runs), or must play silence.
        case runAudio(Bool)
        /// Time moved: the current time, for time observers.
        case tick(MediaTime)
    }

    /// What a step decided.
    public struct Step: Sendable, Hashable {
        public var actions: [Action] = []
        /// When to step again at the latest (`nil`: only when data or a command arrives).
        public var wake: MediaTime?
        /// Whether the step waits for data: producers should wake the owner when some arrives.
        public var wantsData = false
    }

    public let configuration: Configuration
    public internal(set) var phase: Phase = .opening
    public internal(set) var streams: Streams?
    /// The serial the machine presents.
    public internal(set) var serial = 0
    /// Media time at the last step, or where time stopped.
    public internal(set) var currentTime: MediaTime = .zero
    /// Media time against host time while no audio is heard.
    public internal(set) var anchor = TimelineAnchor(media: .zero, host: .zero, rate: 1, isRunning: false)
    /// Whether the owner asked time to run, and at which rate.
    public internal(set) var runRequested = false
    /// Whether time was ever asked to run.
    public internal(set) var hasRun = false
    public internal(set) var rate: Double = 1
    public internal(set) var presentedFrames = 0
    public internal(set) var droppedFrames = 0

    var lastFrame: FrameHead?
    var presentedInSerial = false
    var firstFrameReported = false
    var readyReported = false
    var stallReported = false
    var resumeAfterSeek = false
    /// Video decoded nothing although audio plays: present the item as audio only.
    var videoAbsent = false
    var sawAudio = false
    var audioRunning = false
    /// Added to frame times to compare them with the clock, after a timestamp jump.
    var videoOffset: MediaTime = .zero
    var pendingSeek: Seek?
    /// The latest pass the demuxer began for this serial (`nil` until a loop), and the pass
    /// time has reached: times run on continuously, ``itemTime(of:)`` maps them back.
    public internal(set) var loopPass: Pass?
    public internal(set) var pass = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Whether time moves now.
    public var timeRuns: Bool { runRequested && phase == .playing }

    /// The media time at host instant `now`.
    public func mediaTime(at now: MediaTime) -> MediaTime {
        clamp(anchor.media(at: now))
    }

    var hasVideo: Bool { (streams?.hasVideo ?? false) && !videoAbsent }
    var hasAudio: Bool { streams?.hasAudio ?? false }

    /// Time within what the item can reach: its duration, or the end of the last pass begun.
    func clamp(_ media: MediaTime) -> MediaTime {
        let end = loopPass.map(Self.end(of:)) ?? streams?.duration ?? .indefinite
        return max(.zero, end.isNumeric ? min(media, end) : media)
    }
}
