import ReelCaptions
import ReelCore
import ReelFeed
import ReelMedia

/// The playback window's state and layout as a value, with no SDL in it: input events
/// (in drawable pixels) and times come in, player commands come out, and
/// ``drawList(frame:)`` says what to draw. The SDL backend feeds it; tests drive it
/// directly.
public struct PlaybackViewModel: Sendable {
    /// Keys the window reacts to.
    public enum Key: Sendable, Hashable {
        case space, f, m, h, c, escape, q, left, right, up, down, other
    }

    /// User input, positions in drawable pixels.
    public enum Input: Sendable, Hashable {
        case pointerDown(x: Double, y: Double)
        case pointerMove(x: Double, y: Double)
        case pointerUp(x: Double, y: Double)
        /// The pointer left the window (or the gesture was lost).
        case pointerCancel
        case keyDown(Key, isRepeat: Bool)
        case keyUp(Key)
    }

    /// What the window asks the player (and itself) to do.
    public enum Command: Sendable, Hashable {
        case togglePause
        case seek(MediaTime, exact: Bool)
        /// The bar was grabbed: the player's scrubbing mode (exact frames under the thumb).
        case beginScrubbing
        case scrub(MediaTime)
        case endScrubbing(MediaTime)
        case setRate(Double)
        case setMuted(Bool)
        /// Captions were turned on or off (the `c` key); the window keeps drawing them or stops.
        case setCaptionsShown(Bool)
        /// The caption picker chose a track (nil: off).
        case selectCaptionTrack(CaptionTrackID?)
        case setFullscreen(Bool)
        case quit
    }

    /// Where things are, in drawable pixels.
    public struct Layout: Sendable, Hashable {
        public var bounds: UIRect
        public var video: UIRect
        /// The visible progress track.
        public var bar: UIRect
        /// Where a press grabs the bar (taller than the track).
        public var barHitArea: UIRect
        public var knobCenter: (x: Double, y: Double)
        public var fullscreenButton: UIRect
        /// The "CC" button left of the fullscreen button (only when the item has caption tracks).
        public var captionsButton: UIRect?
        public var titlePoint: (x: Double, y: Double)
        public var timeLabelPoint: (x: Double, y: Double)
        public var badge: UIRect
        /// Where captions may be drawn: the video's columns, below the top chrome (the tab
        /// bar) and above the progress bar — and above the title block and the time row
        /// while the controls show, so the captions move up with them. Not clipped to the
        /// video's rows: a letterboxed video's captions may sit below the picture.
        public var captionArea: UIRect
        public var scale: Double

        public static func == (a: Layout, b: Layout) -> Bool {
            a.bounds == b.bounds && a.video == b.video && a.bar == b.bar && a.fullscreenButton == b.fullscreenButton
            && a.captionsButton == b.captionsButton
            && a.captionArea == b.captionArea
        }
        public func hash(into hasher: inout Hasher) { hasher.combine(video); hasher.combine(bar) }
    }

    private enum Press: Sendable, Hashable {
        case video, bar, fullscreenButton, captionsButton, captionRow(Int), dismissedPicker
    }

    /// Drawable size in pixels and pixels per point (2 on HiDPI).
    public private(set) var drawableWidth: Int
    public private(set) var drawableHeight: Int
    public private(set) var scale: Double
    /// The video's size as displayed (rotation applied), once known.
    public private(set) var videoWidth: Int = 0
    public private(set) var videoHeight: Int = 0
    public private(set) var title: String
    /// A second line above the title (the uploader in a feed).
    public private(set) var subtitle: String = ""
    /// Whether the progress bar, time label and play state show (not for image posts).
    public private(set) var showsTransport = true
    /// Extra space kept free at the top (the feed's tab bar), in pixels.
    public private(set) var topInset: Double = 0
    public private(set) var isMuted = false
    /// Whether captions are drawn (when the item has any); `c` toggles it.
    public private(set) var showsCaptions = true
    /// A caption track as the picker lists it.
    public struct CaptionChoice: Sendable, Hashable {
        public var id: CaptionTrackID
        public var name: String
        public init(id: CaptionTrackID, name: String) { self.id = id; self.name = name }
    }
    /// The current item's caption tracks, as the window reported them.
    public private(set) var captionChoices: [CaptionChoice] = []
    /// The track shown (nil: off), as the window reported it.
    public private(set) var selectedCaptionTrack: CaptionTrackID?
    /// Whether the caption picker panel is open.
    public private(set) var isCaptionPickerOpen = false
    public private(set) var showsHUD = false
    public private(set) var hudLines: [String] = []
    public private(set) var slider = ProgressSlider()
    public private(set) var hold = HoldToSpeedUp()
    /// Seconds a second click must follow the first to count as a double click.
    public let doubleClickInterval = MediaTime(value: 300, timescale: 1000)

    private var press: Press?
    private var lastTapAt: MediaTime?

    public init(drawableWidth: Int, drawableHeight: Int, scale: Double = 1, title: String = "") {
        self.drawableWidth = drawableWidth
        self.drawableHeight = drawableHeight
        self.scale = scale
        self.title = title
    }

    // MARK: Events from the window

    /// The drawable size changed (resize, fullscreen, HiDPI).
    public mutating func resized(width: Int, height: Int, scale: Double) {
        drawableWidth = width
        drawableHeight = height
        self.scale = scale
    }

    /// A frame of `width`×`height` (as displayed) was shown.
    public mutating func videoSizeKnown(width: Int, height: Int) {
        videoWidth = width
        videoHeight = height
    }

    /// Another item shows: its title, the line above it, and whether it has a transport
    /// (image posts and failed pages have none).
    public mutating func itemShown(title: String, subtitle: String, showsTransport: Bool) {
        self.title = title
        self.subtitle = subtitle
        self.showsTransport = showsTransport
    }

    /// Space the page keeps free at the top (a tab bar over it).
    public mutating func topInsetChanged(_ inset: Double) { topInset = inset }

    /// The player's mute state as the window found it (the M key toggles it from here on).
    public mutating func mutedChanged(_ muted: Bool) { isMuted = muted }

    /// Captions were turned on or off elsewhere (a preference, the feed's choice); the `c` key
    /// toggles them from here on.
    public mutating func captionsShownChanged(_ shown: Bool) { showsCaptions = shown }

    /// The current item's caption tracks (in the player's order); none hides the CC button
    /// and closes the picker.
    public mutating func captionTracksChanged(_ tracks: [CaptionChoice]) {
        captionChoices = tracks
        if tracks.isEmpty { isCaptionPickerOpen = false }
    }

    /// The track the player shows now (nil: off).
    public mutating func captionSelectionChanged(_ track: CaptionTrackID?) { selectedCaptionTrack = track }

    /// The picker's rows, "Off" first and then each track, with where each is drawn; empty
    /// while the panel is closed.
    public func captionPickerRows(_ l: Layout) -> [(rect: UIRect, track: CaptionTrackID?, name: String)] {
        guard isCaptionPickerOpen, let button = l.captionsButton else { return [] }
        let s = l.scale
        let rowHeight = 34 * s
        let names: [(CaptionTrackID?, String)] = [(nil, "Off")] + captionChoices.map { ($0.id, $0.name) }
        let width = min(220 * s, l.bounds.width - 16 * s)
        let x = max(8 * s, min(button.maxX - width, l.bounds.maxX - 8 * s - width))
        let bottom = button.y - 8 * s
        let top = max(topInset + 8 * s, bottom - rowHeight * Double(names.count) - 8 * s)
        return names.enumerated().map { i, entry in
            (UIRect(x: x, y: top + 4 * s + rowHeight * Double(i), width: width, height: rowHeight), entry.0, entry.1)
        }
    }

    /// The HUD switched on or off (the H key toggles it too).
    public mutating func hudShown(_ shown: Bool) { showsHUD = shown }

    /// The HUD's lines for this frame.
    public mutating func hudLinesChanged(_ lines: [String]) { hudLines = lines }

    // MARK: State from the player

    /// The player's time, duration, buffered ranges and play state, sampled each frame.
    public mutating func sync(currentTime: MediaTime, duration: MediaTime, loaded: [TimeRange], isPlaying: Bool,
                              isLive: Bool = false, liveWindow: TimeRange? = nil) {
        slider.currentTime = currentTime
        slider.duration = duration
        slider.isLive = isLive
        slider.liveWindow = isLive ? liveWindow : nil
        slider.loadedTimeRanges = loaded
        slider.isPlaying = isPlaying
        hold.isPaused = !isPlaying
    }

    public var isFullscreen: Bool { slider.isFullscreen }
    public var controlsVisible: Bool { slider.controlsVisible }
    public var isScrubbing: Bool { slider.isScrubbing }
    public var badge: String? { hold.badge }
    /// Whether the pointer went down on the video (not the bar or a button): a feed routes
    /// such a press to its swipe controller too.
    public var isPressingVideo: Bool { press == .video }
    /// The label under the bar: `0:12 / 0:45` (follows the thumb while scrubbing).
    public var timeText: String { "\(slider.timeLabel) / \(slider.durationLabel)" }
    /// When ``tick(now:)`` must run next (a hold firing, the controls hiding).
    public var nextDeadline: MediaTime? {
        // The controls stay while the caption picker is open: no hiding to schedule.
        [hold.nextDeadline, isCaptionPickerOpen ? nil : slider.autoHideDeadline].compactMap { $0 }.min()
    }

    // MARK: Layout

    public var layout: Layout {
        let s = scale
        let bounds = UIRect(x: 0, y: 0, width: Double(drawableWidth), height: Double(drawableHeight))
        let video = bounds.aspectFit(contentWidth: videoWidth, contentHeight: videoHeight)
        let margin = 16 * s
        let barHeight = (slider.isScrubbing ? 6 : slider.controlsVisible ? 4 : 2) * s
        let barY = bounds.maxY - 28 * s
        let bar = UIRect(x: margin, y: barY - barHeight / 2, width: bounds.width - 2 * margin, height: barHeight)
        let hit = UIRect(x: 0, y: barY - 18 * s, width: bounds.width, height: 36 * s)
        let knob = (x: bar.x + bar.width * slider.value, y: barY)
        let buttonSize = 36 * s
        let button = UIRect(x: bounds.maxX - margin - buttonSize, y: barY - 18 * s - 8 * s - buttonSize,
                            width: buttonSize, height: buttonSize)
        let badge = UIRect(x: bounds.midX - 36 * s, y: topInset + 56 * s, width: 72 * s, height: 32 * s)
        let titlePoint = (x: margin, y: button.minYForTitle(scale: s))
        let captionTop = topInset + 8 * s
        let captionBottom: Double
        if showsTransport && !slider.controlsVisible && !slider.isScrubbing {
            captionBottom = bar.y - 12 * s
        } else {
            // The title block (title 18 pt, the line above it 15 pt, 28 pt apart), else the time row.
            let blockTop = !subtitle.isEmpty ? titlePoint.y - 48 * s : !title.isEmpty ? titlePoint.y - 24 * s : button.y
            captionBottom = blockTop - 8 * s
        }
        let captionArea = UIRect(x: video.x, y: captionTop, width: video.width, height: max(0, captionBottom - captionTop))
        return Layout(bounds: bounds, video: video, bar: bar, barHitArea: hit, knobCenter: knob,
                      fullscreenButton: button,
                      captionsButton: captionChoices.isEmpty || !showsTransport ? nil
                          : UIRect(x: button.x - 8 * s - buttonSize, y: button.y, width: buttonSize, height: buttonSize),
                      titlePoint: titlePoint,
                      timeLabelPoint: (margin, button.midY), badge: badge, captionArea: captionArea, scale: s)
    }

    // MARK: Input

    public mutating func handle(_ input: Input, now: MediaTime) -> [Command] {
        var commands: [Command] = []
        switch input {
        case .pointerDown(let x, let y):
            let l = layout
            if isCaptionPickerOpen {
                // A row picks its track; a press anywhere else only closes the panel.
                if let i = captionPickerRows(l).firstIndex(where: { $0.rect.contains(x: x, y: y) }) {
                    press = .captionRow(i)
                } else {
                    isCaptionPickerOpen = false
                    press = .dismissedPicker
                }
            } else if slider.controlsVisible, let cc = l.captionsButton, cc.contains(x: x, y: y) {
                press = .captionsButton
            } else if slider.controlsVisible, l.fullscreenButton.contains(x: x, y: y) {
                press = .fullscreenButton
            } else if showsTransport, l.barHitArea.contains(x: x, y: y) {
                press = .bar
                commands += sliderCommands(slider.beginScrub(at: barValue(x, l), now: now))
            } else {
                press = .video
                commands += holdCommands(hold.pointerDown(x: x, y: y, now: now), now: now)
            }
        case .pointerMove(let x, let y):
            switch press {
            case .bar: commands += sliderCommands(slider.moveScrub(to: barValue(x, layout), now: now))
            case .video: commands += holdCommands(hold.pointerMove(x: x, y: y, now: now), now: now)
            default: commands += sliderCommands(slider.userActivity(now: now))
            }
        case .pointerUp(let x, let y):
            let pressed = press
            press = nil
            switch pressed {
            case .bar: commands += sliderCommands(slider.endScrub(at: barValue(x, layout), now: now))
            case .video: commands += holdCommands(hold.pointerUp(now: now), now: now)
            case .fullscreenButton:
                if layout.fullscreenButton.contains(x: x, y: y) { commands += toggleFullscreen(now: now) }
            case .captionsButton:
                if layout.captionsButton?.contains(x: x, y: y) == true { isCaptionPickerOpen = true }
            case .captionRow(let i):
                let rows = captionPickerRows(layout)
                if rows.indices.contains(i), rows[i].rect.contains(x: x, y: y) {
                    isCaptionPickerOpen = false
                    commands.append(.selectCaptionTrack(rows[i].track))
                }
            case .dismissedPicker, nil: break
            }
        case .pointerCancel:
            let pressed = press
            press = nil
            if pressed == .bar { commands += sliderCommands(slider.cancelScrub(now: now)) }
            if pressed == .video { commands += holdCommands(hold.pointerCancel(now: now), now: now) }
        case .keyDown(let key, let isRepeat):
            commands += sliderCommands(slider.userActivity(now: now))
            guard !isRepeat else { break }
            switch key {
            case .space: commands += holdCommands(hold.keyDown(now: now), now: now)
            case .f: commands += toggleFullscreen(now: now)
            case .escape:
                if isCaptionPickerOpen { isCaptionPickerOpen = false } else if slider.isFullscreen { commands += toggleFullscreen(now: now) } else { commands.append(.quit) }
            case .q: commands.append(.quit)
            case .m:
                isMuted.toggle()
                commands.append(.setMuted(isMuted))
            case .h: showsHUD.toggle()
            case .c:
                showsCaptions.toggle()
                commands.append(.setCaptionsShown(showsCaptions))
            case .left: commands.append(.seek(max(.zero, slider.currentTime - MediaTime(value: 5, timescale: 1)), exact: false))
            case .right: commands.append(.seek(slider.currentTime + MediaTime(value: 5, timescale: 1), exact: false))
            default: break
            }
        case .keyUp(let key):
            if key == .space { commands += holdCommands(hold.keyUp(now: now), now: now) }
        }
        return commands
    }

    /// Time passed: a press becomes a hold (2x), the controls hide.
    public mutating func tick(now: MediaTime) -> [Command] {
        // An open caption picker counts as input: the controls it belongs to stay, and hide
        // only the auto-hide delay after it closes.
        holdCommands(hold.tick(now: now), now: now)
            + sliderCommands(isCaptionPickerOpen ? slider.userActivity(now: now) : slider.tick(now: now))
    }

    private func barValue(_ x: Double, _ l: Layout) -> Double {
        l.bar.width > 0 ? min(1, max(0, (x - l.bar.x) / l.bar.width)) : 0
    }

    private mutating func toggleFullscreen(now: MediaTime) -> [Command] {
        _ = slider.toggleFullscreen(now: now)
        return [.setFullscreen(slider.isFullscreen)]
    }

    private mutating func holdCommands(_ actions: [HoldToSpeedUp.Action], now: MediaTime) -> [Command] {
        var out: [Command] = []
        for action in actions {
            switch action {
            case .setRate(let rate): out.append(.setRate(rate))
            case .showBadge, .hideBadge: break
            case .togglePause, .keyTapped:
                out.append(.togglePause)
                out += sliderCommands(slider.userActivity(now: now))
                if case .togglePause = action {
                    if let last = lastTapAt, now - last <= doubleClickInterval {
                        lastTapAt = nil
                        out += toggleFullscreen(now: now)
                    } else {
                        lastTapAt = now
                    }
                }
            }
        }
        return out
    }

    private func sliderCommands(_ actions: [ProgressSlider.Action]) -> [Command] {
        actions.compactMap { action in
            switch action {
            case .beginScrubbing: .beginScrubbing
            case .scrub(let time): .scrub(time)
            case .endScrubbing(let time): .endScrubbing(time)
            case .showControls, .hideControls: nil
            }
        }
    }
}
