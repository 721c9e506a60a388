/// Scrubbing mode's decisions, as a value: while the bar is dragged the picture shows the
/// exact frame at the thumb. Events in (the drag began, the thumb moved, a seek completed,
/// the drag ended — each with the clock's now), actions out (pause, seek this way, resume);
/// no thread, lock or clock here. ReelMedia's `Player` drives it (`beginScrubbing()`,
/// `scrub(to:)`, `endScrubbing()`).
///
/// The rules, after AVPlayer's "chase time" (Apple QA1820) and Media3's scrubbing mode:
///
/// - **One seek in flight.** A target that arrives while a seek runs is remembered as the one
///   to chase; when the seek completes, the newest target goes out and the ones in between
///   are dropped.
/// - **Decode on, do not flush.** A target forward of the frame on screen and in the same GOP
///   (no keyframe between them) is reached by decoding on from where the decoder is
///   (``SeekKind/decodeOn``): no flush, no return to the keyframe.
/// - **A target inside the frame on screen** needs no seek at all.
/// - **Keyframe previews only while exact frames cannot keep up**: when the last exact frame
///   decoded from a keyframe took longer than ``Configuration/exactBudget``, a target in
///   another GOP is previewed by its keyframe (``SeekKind/keyframe``); the next target in
///   that GOP (or, if the thumb rests, the previewed target itself) then decodes on from it,
///   and the two together say what an exact frame costs
///   now, so exact frames come back when the decoder is fast again.
/// - **Audio is off while dragging**: the drag pauses playback (the audio ramps out) and the
///   release resumes it if it was playing.
/// - **The release lands on the exact frame** whatever the cost, by the cheapest way there: no
///   seek at all when the frame on screen is already the one at the release point, decoding on
///   when it is forward in the same GOP, else an exact seek. The engine keeps the audio in step
///   through a decode-on (it stays queued from the target on), so playing resumes from the
///   frame on screen with no flushing seek. Then ``Action/settled(_:)``.
public struct ScrubMachine: Sendable, Hashable {
    public struct Configuration: Sendable, Hashable {
        /// The longest an exact frame decoded from a keyframe may take before targets in other
        /// GOPs are previewed by their keyframes.
        public var exactBudget = MediaTime(value: 1, timescale: 10)

        public init() {}
    }

    /// What the machine needs to know of the item.
    public struct Media: Sendable, Hashable {
        /// The video's keyframes (presentation times, sorted): where GOPs start.
        public var keyframes: [MediaTime]
        /// How long a frame shows.
        public var frameDuration: MediaTime
        /// Whether the item has audio.
        public var hasAudio: Bool

        public init(keyframes: [MediaTime], frameDuration: MediaTime, hasAudio: Bool) {
            self.keyframes = keyframes.sorted()
            self.frameDuration = frameDuration
            self.hasAudio = hasAudio
        }
    }

    /// How a seek reaches its target.
    public enum SeekKind: Sendable, Hashable {
        /// Exact, by decoding on from where the decoder is: no flush, no keyframe reset.
        case decodeOn
        /// Exact, from the keyframe before the target (the decoder flushes).
        case exact
        /// The keyframe at or before the target: a fast preview.
        case keyframe
    }

    public enum Action: Sendable, Hashable {
        /// Stop time and the audio (ramped) for the drag.
        case pausePlayback
        /// Seek to the target this way; report its completion with ``completed(frame:now:)``.
        case seek(MediaTime, SeekKind)
        /// The drag ended on its exact frame: play on.
        case resumePlayback
        /// The drag ended and the exact frame at `target` is on screen.
        case settled(MediaTime)
    }

    public enum Phase: Sendable, Hashable {
        case idle
        /// The bar is held.
        case dragging
        /// Let go at the target; its exact frame is on its way.
        case releasing(MediaTime)
    }

    public var configuration: Configuration
    public private(set) var phase: Phase = .idle
    private var media = Media(keyframes: [], frameDuration: .zero, hasAudio: false)
    private var wasPlaying = false
    /// The seek out now: its target, kind and when it went.
    public var inFlight: (target: MediaTime, kind: SeekKind)? { flight.map { ($0.target, $0.kind) } }
    private var flight: Flight?
    /// The newest target not yet sent.
    private var chase: MediaTime?
    /// The presentation time of the frame on screen, and whether the decoder's chain since
    /// the last flush is unbroken (decoding on is possible).
    private var frameOnScreen: MediaTime?
    /// What the last exact frame from a keyframe took (measured, or a preview and the
    /// decode-on after it together).
    public private(set) var exactCost: MediaTime?
    private var previewCost: MediaTime?

    private struct Flight: Sendable, Hashable {
        var target: MediaTime
        var kind: SeekKind
        var sentAt: MediaTime
    }

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    public var isActive: Bool { phase != .idle }

    // MARK: Events

    /// The bar was grabbed. `frameOnScreen` is the presentation time of the picture showing
    /// now (the decoder is there or just past it), if known.
    public mutating func begin(media: Media, isPlaying: Bool, frameOnScreen: MediaTime?, now: MediaTime) -> [Action] {
        guard phase == .idle else { return [] }
        phase = .dragging
        self.media = media
        wasPlaying = isPlaying
        self.frameOnScreen = frameOnScreen
        chase = nil
        flight = nil
        return isPlaying ? [.pausePlayback] : []
    }

    /// The thumb moved to `target`.
    public mutating func move(to target: MediaTime, now: MediaTime) -> [Action] {
        guard phase == .dragging else { return [] }
        if flight != nil {
            chase = target
            return []
        }
        return dispatch(target, final: false, now: now)
    }

    /// The seek out completed: the frame at `frame` (its presentation time) is on screen, or
    /// `nil` when the seek was replaced or found nothing (the decoder's place is unknown).
    public mutating func completed(frame: MediaTime?, now: MediaTime) -> [Action] {
        guard let done = flight else { return [] }
        flight = nil
        frameOnScreen = frame
        let took = now - done.sentAt
        switch done.kind {
        case .exact:
            exactCost = took
            previewCost = nil
        case .keyframe:
            previewCost = took
        case .decodeOn:
            if let preview = previewCost { exactCost = preview + took }
            previewCost = nil
        }
        switch phase {
        case .idle:
            return []
        case .dragging:
            // A preview is a step on the way: with nothing newer, its own target's exact frame
            // follows (decoding on from the keyframe).
            guard let next = chase ?? (done.kind == .keyframe ? done.target : nil) else { return [] }
            chase = nil
            return dispatch(next, final: false, now: now)
        case .releasing(let target):
            let landedExact = done.kind != .keyframe && done.target == target && frame != nil
            // An exact seek to the release that found nothing (the item failed, or another
            // seek replaced it) is not retried: the drag is over.
            let gaveUp = done.kind == .exact && done.target == target && frame == nil
            if gaveUp || landedExact { return settle(target) }
            return dispatch(target, final: true, now: now)
        }
    }

    /// The bar was let go at `target`.
    public mutating func end(at target: MediaTime, now: MediaTime) -> [Action] {
        guard phase == .dragging else { return [] }
        phase = .releasing(target)
        chase = nil
        if flight != nil { return [] }
        return dispatch(target, final: true, now: now)
    }

    // MARK: Deciding

    private mutating func dispatch(_ target: MediaTime, final: Bool, now: MediaTime) -> [Action] {
        let kind = kind(for: target, final: final)
        if final, kind == nil { return settle(target) }
        guard let kind = kind ?? (final ? .exact : nil) else { return [] }
        flight = Flight(target: target, kind: kind, sentAt: now)
        return [.seek(target, kind)]
    }

    /// How to reach `target`; `nil` when the frame on screen already shows it.
    private func kind(for target: MediaTime, final: Bool) -> SeekKind? {
        if let shown = frameOnScreen, shows(shown, target) { return nil }
        if let shown = frameOnScreen, target > shown, gop(of: target) == gop(of: shown) {
            return .decodeOn
        }
        if final { return .exact }
        if let cost = exactCost, cost > configuration.exactBudget {
            // A preview that would show the keyframe already on screen changes nothing.
            let keyframe = gop(of: target).map { media.keyframes[$0] }
            if let keyframe, let shown = frameOnScreen, shows(shown, keyframe) { return .exact }
            return .keyframe
        }
        return .exact
    }

    private func shows(_ frame: MediaTime, _ time: MediaTime) -> Bool {
        frame <= time && time < frame + max(media.frameDuration, MediaTime(value: 1, timescale: 1000))
    }

    /// The index of the last keyframe at or before `time` (`nil` before the first).
    func gop(of time: MediaTime) -> Int? {
        var low = 0, high = media.keyframes.count
        while low < high {
            let mid = (low + high) / 2
            if media.keyframes[mid] <= time { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? nil : low - 1
    }

    private mutating func settle(_ target: MediaTime) -> [Action] {
        phase = .idle
        chase = nil
        return [.settled(target)] + (wasPlaying ? [.resumePlayback] : [])
    }
}
