import Foundation
import ReelCaptions
import ReelCore
import ReelMedia
import Synchronization

/// `reel play --window`: one player in an SDL window. The player presents frames to a
/// ``FrameStore`` at their time; this loop draws the latest one at the next vsync together
/// with the overlay from ``PlaybackViewModel`` and turns SDL input into player commands.
///
/// Confined to the thread that created it (SDL and GL are bound to it): every member but
/// ``stop()`` and ``isOnOwnerThread`` checks that and stops the process when called from
/// another thread. The player and the ``FrameStore`` are thread-safe; the player presents
/// frames on its clock context and the store wakes this loop.
public final class PlaybackWindow {
    public struct Options: Sendable {
        public var renderer: RendererKind
        /// Fall back to the software renderer when OpenGL does not start.
        public var allowFallback: Bool
        public var width: Int
        public var height: Int
        public var title: String
        public var showsHUD: Bool
        public var fullscreen: Bool

        public init(renderer: RendererKind = .gl, allowFallback: Bool = true, width: Int = 540, height: Int = 960,
                    title: String = "", showsHUD: Bool = false, fullscreen: Bool = false) {
            self.renderer = renderer
            self.allowFallback = allowFallback
            self.width = width
            self.height = height
            self.title = title
            self.showsHUD = showsHUD
            self.fullscreen = fullscreen
        }
    }

    // Immutable after init.
    public let player: Player
    public let frames: FrameStore
    /// What the captions show; the player's caption sink.
    public let captions: CaptionOverlay
    /// Times the UI (hold delay, auto-hide, double click); the host clock unless a test injects one.
    public let uiClock: any EngineClock
    private let host: SDLWindowHost

    /// Guarded by `stopRequested`: set by ``stop()`` from any thread.
    private let stopRequested = Mutex(false)
    /// Wakes the loop (any thread).
    private let wake: @Sendable () -> Void

    // Owner thread only.
    private var modelValue: PlaybackViewModel
    private var running = true
    private var drawnSequence = -1
    private var drawnFrames = 0
    private var fpsWindow: [MediaTime] = []
    private var lastDrawAt: MediaTime?
    private let windowCaptions: WindowCaptions
    private var drawnCaptionSequence = -1

    /// The captions drawn are those the player hands its caption sink: `captions` when given,
    /// else the player's own `captionSink` when it is a ``CaptionOverlay`` (make the player
    /// with `captionSink: CaptionOverlay()`); with neither, the window draws none.
    public init(player: Player, frames: FrameStore, captions: CaptionOverlay? = nil, options: Options = Options(),
                uiClock: any EngineClock = HostClock.shared) throws {
        self.player = player
        self.frames = frames
        self.captions = captions ?? (player.captionSink as? CaptionOverlay) ?? CaptionOverlay()
        self.uiClock = uiClock
        host = try SDLWindowHost(title: options.title.isEmpty ? "reel" : options.title, width: options.width, height: options.height,
                                 renderer: options.renderer, allowFallback: options.allowFallback)
        let size = host.renderer.drawableSize
        modelValue = PlaybackViewModel(drawableWidth: size.width, drawableHeight: size.height, scale: host.pixelScale.y, title: options.title)
        modelValue.hudShown(options.showsHUD)
        modelValue.mutedChanged(player.isMuted)
        modelValue.captionsShownChanged(player.captionSelection.isEnabled)
        windowCaptions = WindowCaptions(fontPath: host.text.fontPath)
        wake = host.makeWaker()
        frames.setWake(wake)
        self.captions.setWake(wake)
        if options.fullscreen { perform(modelValue.handle(.keyDown(.f, isRepeat: false), now: uiClock.now)) }
    }

    deinit {
        frames.setWake(nil)
        captions.setWake(nil)
        // The host's deinit checks the thread before closing the window.
    }

    /// Whether the calling thread owns the window (the one that created it).
    public var isOnOwnerThread: Bool { host.isOnOwnerThread }

    /// The overlay's model.
    public var model: PlaybackViewModel {
        host.confinement.check("model")
        return modelValue
    }
    /// `gl` or `software`: the renderer actually drawing.
    public var rendererName: String { host.renderer.name }
    public var isFullscreen: Bool { host.isFullscreen }
    /// The window size in points and the drawable size in pixels.
    public var windowSize: (width: Int, height: Int) { host.windowSize }
    public var drawableSize: (width: Int, height: Int) { host.renderer.drawableSize }
    /// How many caption atlases the GL renderer uploaded (nil for the software renderer).
    var captionAtlasUploads: Int? {
        host.confinement.check("captionAtlasUploads")
        return (host.renderer as? GLRenderer)?.captionAtlasUploads
    }
    /// Distinct frames drawn, and frames that arrived but were replaced before a draw.
    public var framesDrawn: Int {
        host.confinement.check("framesDrawn")
        return drawnFrames
    }
    public var framesSkipped: Int {
        host.confinement.check("framesSkipped")
        return max(0, frames.current.sequence - drawnFrames)
    }

    /// Runs until the window closes, `q`/Escape, ``stop()`` or `condition` turns false.
    public func run(while condition: () -> Bool = { true }) {
        host.confinement.check("run")
        while isRunning && condition() {
            let now = uiClock.now
            var wait = 250
            if let deadline = modelValue.nextDeadline {
                wait = max(1, min(wait, Int(((deadline - now).seconds * 1000).rounded(.up))))
            }
            if modelValue.isScrubbing || frames.current.sequence != drawnSequence || captions.current.sequence != drawnCaptionSequence {
                wait = 0
            }
            pump(waitMs: wait)
        }
    }

    /// Stops ``run()`` after the current iteration. Any thread: it wakes the loop.
    public func stop() {
        stopRequested.withTrackedLock { $0 = true }
        wake()
    }

    /// Whether the loop goes on: not closed, quit or stopped.
    public var isRunning: Bool {
        host.confinement.check("isRunning")
        return running && !stopRequested.withTrackedLock { $0 }
    }

    /// Handles queued input (waiting up to `waitMs` for some), then draws once.
    public func pump(waitMs: Int = 0) {
        host.confinement.check("pump")
        for input in host.events(waitMs: waitMs) { handle(input) }
        perform(modelValue.tick(now: uiClock.now))
        render(capture: false)
    }

    /// Draws the current state and reads it back (the pixels the window shows).
    public func snapshot() -> RGBImage {
        host.confinement.check("snapshot")
        return render(capture: true) ?? RGBImage(width: 0, height: 0)
    }

    @discardableResult
    private func render(capture: Bool) -> RGBImage? {
        let size = host.renderer.drawableSize
        modelValue.resized(width: size.width, height: size.height, scale: host.pixelScale.y)
        let (frame, sequence) = frames.current
        if let frame {
            modelValue.videoSizeKnown(width: frame.displayWidth, height: frame.displayHeight)
        }
        modelValue.sync(currentTime: player.currentTime, duration: player.duration, loaded: player.loadedTimeRanges, isPlaying: player.rate != 0,
                        isLive: player.isLive, liveWindow: player.seekableRange)
        let now = uiClock.now
        if sequence != drawnSequence {
            drawnSequence = sequence
            if frame != nil {
                drawnFrames += 1
                fpsWindow.append(now)
            }
        }
        fpsWindow.removeAll { now - $0 > MediaTime(value: 1, timescale: 1) }
        if modelValue.showsHUD { modelValue.hudLinesChanged(hudLines()) }
        syncCaptionTracks()
        host.renderer.draw(modelValue.drawList(frame: frame, captions: captionLayer()))
        let image = capture ? host.renderer.readPixels() : nil
        host.renderer.present()
        lastDrawAt = now
        return image
    }

    /// Tells the model the player's caption tracks and the one shown, when they changed (the
    /// tracks become known while the item plays).
    private func syncCaptionTracks() {
        let tracks = player.captionTracks
        let choices = PlaybackViewModel.CaptionChoice.list(tracks)
        if choices != modelValue.captionChoices { modelValue.captionTracksChanged(choices) }
        let shown = player.captionSelection.shown(among: tracks)
        if shown != modelValue.selectedCaptionTrack { modelValue.captionSelectionChanged(shown) }
    }

    /// The captions for this draw, rasterized for the current layout (nil when off or silent).
    private func captionLayer() -> CaptionLayer? {
        drawnCaptionSequence = captions.current.sequence
        guard modelValue.showsCaptions else { return nil }
        let player = player
        return windowCaptions.layer(captions, at: player.currentTime, tracks: { player.captionTracks }, video: modelValue.layout.video,
                                    videoWidth: modelValue.videoWidth, videoHeight: modelValue.videoHeight)
    }

    private func hudLines() -> [String] {
        let stats = player.statistics
        var lines = [
            "\(host.renderer.name)  \(modelValue.drawableWidth)×\(modelValue.drawableHeight)  \(fpsWindow.count) fps",
            "drops: player \(stats.droppedFrames), render \(framesSkipped)",
            "rate \(player.rate)  read \(stats.bytesRead / 1024) KiB in \(stats.requests) req",
        ]
        if let ff = stats.firstFrame {
            func ms(_ v: Double?) -> String { v.map { String(format: "%.0f", $0) } ?? "–" }
            lines.append("first frame \(ms(ff.firstFramePresentedMs)) ms")
            lines.append("hdr \(ms(ff.headerParsedMs)) pkt \(ms(ff.firstPacketMs)) dec \(ms(ff.firstFrameDecodedMs))")
        }
        return lines
    }

    private func handle(_ input: HostInput) {
        let now = uiClock.now
        switch input {
        case .quit: running = false
        case .wake, .resized, .textInput, .textEditing, .wheel, .drop: break
        case .pointerDown(let x, let y, _): perform(modelValue.handle(.pointerDown(x: x, y: y), now: now))
        case .pointerMove(let x, let y, _): perform(modelValue.handle(.pointerMove(x: x, y: y), now: now))
        case .pointerUp(let x, let y): perform(modelValue.handle(.pointerUp(x: x, y: y), now: now))
        case .pointerLeave: break
        case .keyDown(let code, let isRepeat): perform(modelValue.handle(.keyDown(SDLWindowHost.key(code), isRepeat: isRepeat), now: now))
        case .keyUp(let code): perform(modelValue.handle(.keyUp(SDLWindowHost.key(code)), now: now))
        }
    }

    private func perform(_ commands: [PlaybackViewModel.Command]) {
        for command in commands {
            switch command {
            case .togglePause:
                if player.rate == 0 { player.play() } else { player.pause() }
            case .seek(let time, let exact):
                let tolerance: MediaTime = exact ? .zero : .positiveInfinity
                player.seek(to: time, toleranceBefore: tolerance, toleranceAfter: tolerance) { _ in }
            case .beginScrubbing:
                player.beginScrubbing()
            case .scrub(let time):
                player.scrub(to: time)
            case .endScrubbing(let time):
                player.endScrubbing(at: time)
            case .setRate(let rate):
                player.rate = rate
            case .setMuted(let muted):
                player.isMuted = muted
            case .setCaptionsShown:
                // c cycles: off → the item's first track → its next … → off (the choice holds
                // for the player's next item). The model draws them while a track shows.
                let next = player.captionSelection.cycled(through: player.captionTracks)
                player.captionSelection = next
                modelValue.captionsShownChanged(next.isEnabled)
            case .selectCaptionTrack(let track):
                let tracks = player.captionTracks
                let next = player.captionSelection.picking(track, among: tracks)
                player.captionSelection = next
                modelValue.captionsShownChanged(next.isEnabled)
                modelValue.captionSelectionChanged(next.shown(among: tracks))
            case .setFullscreen(let on):
                host.setFullscreen(on)
            case .quit:
                running = false
            }
        }
    }
}
