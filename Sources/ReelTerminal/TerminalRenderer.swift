import Foundation
import ReelCore
import ReelMedia
import Synchronization
import ReelThreads

/// A video sink that draws in a terminal: the player presents each frame at its time (from
/// the player's clock); the renderer keeps only the latest, and its own thread scales it
/// (libswscale, aspect-correct for cells about 1:2), encodes it with cell diffing and writes
/// it, together with the chrome, in one `write()`.
///
/// A terminal slower than the video never makes playback lag: frames presented while the
/// previous one is still being written are replaced, not queued, and counted as dropped.
public final class TerminalRenderer: VideoSink, Sendable {
    /// How frames are drawn.
    public struct Configuration: Sendable, Hashable {
        /// Glyphs, colours, synchronized output and diffing for the encoder.
        public var encoder: TerminalEncoder.Configuration
        /// A cell's height over its width.
        public var cellAspectRatio: Double
        /// Also encode every frame without diffing, only to count what a full-redraw
        /// renderer would have written (``Statistics/fullRedrawBytes``). Costs CPU.
        public var measureFullRedraw: Bool
        /// The sixel encoder's palette, dithering and diffing (when ``graphics`` is sixel).
        public var sixel: SixelEncoder.Configuration
        /// The kitty encoder's image id and diffing (when ``graphics`` is kitty).
        public var kitty: KittyEncoder.Configuration

        /// Creates a configuration: half blocks, truecolor, ?2026, diffing; cells 1:2.
        public init(encoder: TerminalEncoder.Configuration = .init(), cellAspectRatio: Double = 2,
                    measureFullRedraw: Bool = false, sixel: SixelEncoder.Configuration = .init(),
                    kitty: KittyEncoder.Configuration = .init()) {
            self.encoder = encoder
            self.cellAspectRatio = cellAspectRatio
            self.measureFullRedraw = measureFullRedraw
            self.sixel = sixel
            self.kitty = kitty
        }
    }

    /// What the renderer has done so far.
    public struct Statistics: Sendable, Hashable {
        /// Frames the player presented to this sink.
        public var presented = 0
        /// Frames drawn.
        public var rendered = 0
        /// Frames replaced by a newer one before they could be drawn (the terminal was slow).
        public var dropped = 0
        /// Frames the player itself dropped as late (from its presentation reports).
        public var playerDropped = 0
        /// Frames drawn in the last second.
        public var framesPerSecond = 0.0
        /// Video bytes of the last drawn frame.
        public var lastFrameBytes = 0
        /// Video bytes of all drawn frames.
        public var videoBytes = 0
        /// Chrome bytes written.
        public var chromeBytes = 0
        /// With ``Configuration/measureFullRedraw``: the bytes a renderer that redraws
        /// every cell would have written for the same frames.
        public var fullRedrawBytes = 0
        /// Frames drawn in full (first frame, after a resize).
        public var fullFrames = 0
        /// The picture's size in cells.
        public var columns = 0
        public var rows = 0

        /// Mean video bytes per drawn frame.
        public var bytesPerFrame: Double { rendered == 0 ? 0 : Double(videoBytes) / Double(rendered) }
    }

    /// Draws the chrome: called on the render thread for every write, with `full` after a
    /// clear; returns the bytes for the chrome rows (empty when nothing changed). Set it
    /// before ``start()``; it may be replaced later (it is kept under the renderer's mutex
    /// and read there before each write, then called with no lock held).
    public var overlay: (@Sendable (_ full: Bool) -> [UInt8])? {
        get { shared.withTrackedLock { $0.overlay } }
        set {
            shared.withTrackedLock { $0.overlay = newValue }
            wakeup.unpark()
        }
    }

    /// The output the terminal gets (cells unless set): set it before ``start()``, from
    /// what ``TerminalGraphicsDetector`` chose; later changes take effect on the next start.
    public var graphics: TerminalGraphics {
        get { shared.withTrackedLock { $0.graphics } }
        set { shared.withTrackedLock { $0.graphics = newValue } }
    }

    // Threads: the player's (present, clear), the caller's (layout, chrome, statistics,
    // start, stop) and the render thread (`loop`, which alone scales, encodes and writes).

    // Immutable after init.
    private let configuration: Configuration
    private let output: @Sendable ([UInt8]) -> Void
    /// Wakes the render thread after a change to `shared` (signalled with the mutex released).
    private let wakeup = Parker()
    /// Resumed when the render thread has exited (``finished()``).
    private let exit = ExitSignal()

    enum Content: Sendable {
        case frame(VideoFrame)
        case picture(RGBImage)
    }

    /// Everything more than one thread touches.
    private struct Shared {
        var overlay: (@Sendable (_ full: Bool) -> [UInt8])?
        var graphics = TerminalGraphics.cells("not detected")
        var pending: Content?
        var last: Content?
        var needsFullRedraw = true
        var chromeDirty = true
        var area = (column: 0, row: 0, columns: 80, rows: 24)
        var screen = (columns: 80, rows: 24)
        var started = false
        var stopped = false
        var stats = Statistics()
        var renderTimes: [Double] = []
        /// Whether the render thread has work (or must exit).
        var hasWork: Bool { stopped || pending != nil || needsFullRedraw || chromeDirty }
    }

    /// Guarded by `shared`: the one lock of the renderer. Never held while scaling,
    /// encoding, calling ``overlay`` or writing.
    private let shared = Mutex(Shared())

    // Render thread only: the encoders, the scaler and the last scaled picture are locals
    // of `loop()`.

    /// A renderer that writes through `output` (one call per drawn frame, on the render thread).
    public init(configuration: Configuration = .init(), output: @escaping @Sendable ([UInt8]) -> Void) {
        self.configuration = configuration
        self.output = output
    }

    /// Changes `shared` under the mutex, then wakes the render thread (lock released).
    private func update(_ body: (inout Shared) -> Void) {
        shared.withTrackedLock { body(&$0) }
        wakeup.unpark()
    }

    // MARK: VideoSink

    public func present(_ frame: VideoFrame, presentation: Presentation) {
        update { shared in
            if case .frame = shared.pending { shared.stats.dropped += 1 }
            shared.pending = .frame(frame)
            shared.stats.presented += 1
            shared.stats.playerDropped = presentation.droppedFrames
        }
    }

    /// Shows a still picture (an image post, a cover) until the next frame.
    public func presentPicture(_ image: RGBImage) {
        update { $0.pending = .picture(image) }
    }

    public func clear() {
        update { shared in
            shared.pending = nil
            shared.last = nil
            shared.needsFullRedraw = true
        }
    }

    // MARK: Control

    /// Starts the render thread (once).
    public func start() {
        let first = shared.withTrackedLock { shared in
            defer { shared.started = true }
            return !shared.started
        }
        guard first else { return }
        let thread = Thread { [self] in
            loop()
            exit.fire()
        }
        thread.name = "reel.terminal.render"
        thread.start()
    }

    /// Stops the render thread after the write in progress, if any; returns at once.
    /// ``finished()`` waits for the thread to be gone.
    public func stop() {
        update { $0.stopped = true }
    }

    /// Returns once the render thread has exited after ``stop()`` (at once when it never
    /// started): nothing is written after it returns.
    public func finished() async {
        let started = shared.withTrackedLock { $0.started }
        guard started else { return }
        await exit.wait()
    }

    /// The screen is `columns × rows` and the video goes in `area`: redraws everything.
    public func layout(screenColumns: Int, screenRows: Int, area: (column: Int, row: Int, columns: Int, rows: Int)) {
        update { shared in
            shared.screen = (screenColumns, screenRows)
            shared.area = area
            shared.needsFullRedraw = true
        }
    }

    /// Clears the screen and draws everything again (after a resize, a resume).
    public func redrawAll() {
        update { $0.needsFullRedraw = true }
    }

    /// The chrome changed: write it (with or without a new frame).
    public func setNeedsChrome() {
        update { $0.chromeDirty = true }
    }

    /// What has been drawn so far.
    public var statistics: Statistics {
        let now = Self.now()
        return shared.withTrackedLock { shared in
            var s = shared.stats
            s.framesPerSecond = Double(shared.renderTimes.filter { now - $0 <= 1 }.count)
            return s
        }
    }

    // MARK: Render loop

    typealias Area = (column: Int, row: Int, columns: Int, rows: Int)
    private typealias Work = (content: Content?, full: Bool, area: Area, screenRows: Int, overlay: (@Sendable (Bool) -> [UInt8])?)

    private func loop() {
        var painter = Painter(configuration: configuration, graphics: graphics)
        while true {
            guard let work = takeWork() else {
                let (stopped, hasOverlay) = shared.withTrackedLock { ($0.stopped, $0.overlay != nil) }
                if stopped {
                    // Images the terminal keeps (kitty's) go with the renderer.
                    if !painter.farewell.isEmpty { output(painter.farewell) }
                    painter.release()
                    return
                }
                // Wake now and then so the progress bar moves while paused or stalled.
                if !wakeup.park(seconds: 0.25), hasOverlay {
                    shared.withTrackedLock { $0.chromeDirty = true }
                }
                continue
            }
            var frame = painter.paint(work.content, area: work.area, screenRows: work.screenRows, full: work.full)
            let chrome = work.overlay?(frame.full) ?? []
            frame.bytes += chrome
            // Counted before the write: a slow terminal blocks in it.
            record(frame, chromeBytes: chrome.count)
            if !frame.bytes.isEmpty {
                var bytes = frame.bytes
                // Cells only: a terminal holds a synchronized update's bytes, and a kitty or
                // sixel frame can be more than it holds (kitty ends pending mode and then
                // reads the rest of the frame from its middle).
                if configuration.encoder.synchronizedOutput && painter.graphics.output == .cells {
                    bytes = TerminalControl.beginSynchronizedUpdate + bytes + TerminalControl.endSynchronizedUpdate
                }
                output(bytes)
            }
        }
    }

    /// What the render thread has to draw, taken under the mutex (nil: nothing now).
    private func takeWork() -> Work? {
        shared.withTrackedLock { shared -> Work? in
            guard shared.hasWork, !shared.stopped else { return nil }
            let content = shared.pending ?? (shared.needsFullRedraw ? shared.last : nil)
            if let pending = shared.pending { shared.last = pending }
            shared.pending = nil
            defer {
                shared.needsFullRedraw = false
                shared.chromeDirty = false
            }
            return (content, shared.needsFullRedraw, shared.area, shared.screen.rows, shared.overlay)
        }
    }

    private func record(_ frame: Painter.Painted, chromeBytes: Int) {
        let now = Self.now()
        shared.withTrackedLock { shared in
            shared.stats.chromeBytes += chromeBytes
            guard frame.drewFrame else { return }
            shared.stats.rendered += 1
            shared.stats.lastFrameBytes = frame.videoBytes
            shared.stats.videoBytes += frame.videoBytes
            if frame.fullFrame { shared.stats.fullFrames += 1 }
            shared.stats.fullRedrawBytes = frame.fullRedrawBytes
            if let cells = frame.cells {
                shared.stats.columns = cells.columns
                shared.stats.rows = cells.rows
            }
            shared.renderTimes.append(now)
            shared.renderTimes.removeAll { now - $0 > 1 }
        }
    }

    /// Nearest-neighbour scaling for still pictures (already downsampled by the feed).
    static func scaled(_ image: RGBImage, width: Int, height: Int) -> RGBImage {
        guard width > 0, height > 0, image.width > 0, image.height > 0 else { return RGBImage(width: max(1, width), height: max(1, height)) }
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            let sy = min(image.height - 1, y * image.height / height)
            for x in 0..<width {
                let sx = min(image.width - 1, x * image.width / width)
                let s = (sy * image.width + sx) * 3, d = (y * width + x) * 3
                bytes[d] = image.bytes[s]
                bytes[d + 1] = image.bytes[s + 1]
                bytes[d + 2] = image.bytes[s + 2]
            }
        }
        return RGBImage(width: width, height: height, bytes: bytes)
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
