import ReelCore

/// A picture cue (PGS, DVB, DVD subtitles): palette-indexed pixels placed on a canvas.
public struct CaptionBitmap: Hashable, Sendable {
    /// Where the picture goes on the canvas, in canvas pixels.
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    /// The size the positions refer to (the video's size when the stream does not say).
    public var canvasWidth: Int
    public var canvasHeight: Int
    /// `width × height` palette indices, row by row.
    public var indices: [UInt8]
    /// The palette as straight-alpha RGBA, one `UInt32` per entry (`0xAARRGGBB`).
    public var palette: [UInt32]

    public init(x: Int, y: Int, width: Int, height: Int, canvasWidth: Int, canvasHeight: Int,
                indices: [UInt8], palette: [UInt32]) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        self.indices = indices
        self.palette = palette
    }
}

/// One cue: what a track shows from `start` until `end`, on the item's media timeline (the
/// same times as its video frames' presentation timestamps).
public struct CaptionEvent: Hashable, Sendable {
    public enum Content: Hashable, Sendable {
        case text(ASSDialogue)
        case bitmap(CaptionBitmap)
    }

    public var track: CaptionTrackID
    public var start: MediaTime
    /// When the cue goes; `MediaTime.positiveInfinity` (ReelCore) while it is open (a CEA-608 or bitmap
    /// cue that lasts until the next one clears it).
    public var end: MediaTime
    public var content: Content
    /// The track's language, if it has one.
    public var language: String?
    /// What the screen shows now, before the decoder has said what the cue is (CEA-608, whose
    /// decoder gives a caption once it ended): shown from its start, then replaced by the cue
    /// the decoder gives (``CaptionTimeline`` drops a track's provisional cues that start before
    /// the end of a settled one).
    public var isProvisional: Bool

    public init(track: CaptionTrackID, start: MediaTime, end: MediaTime, content: Content, language: String? = nil,
                isProvisional: Bool = false) {
        self.track = track
        self.start = start
        self.end = end
        self.content = content
        self.language = language
        self.isProvisional = isProvisional
    }

    /// The cue's words (lines separated by `\n`); empty for a picture.
    public var plainText: String {
        switch content {
        case .text(let dialogue): dialogue.plainText
        case .bitmap: ""
        }
    }

    /// Whether the cue is on screen at `time`: `start ≤ time < end`.
    public func isActive(at time: MediaTime) -> Bool {
        start <= time && time < end
    }

    /// Whether the cue has no end yet.
    public var isOpen: Bool { !end.isNumeric }

    /// The bytes a picture cue holds (its indices and palette); 0 for text.
    public var bitmapBytes: Int {
        if case .bitmap(let bitmap) = content { return bitmap.indices.count + bitmap.palette.count * 4 }
        return 0
    }
}

/// What the captions show when a frame is presented: the active cues of the selected track.
public struct CaptionFrame: Hashable, Sendable {
    /// The media time the cues were looked up at (the presented frame's timestamp).
    public var time: MediaTime
    /// The cues on screen, oldest first; empty when captions are off or nothing is said.
    public var events: [CaptionEvent]

    public init(time: MediaTime, events: [CaptionEvent]) {
        self.time = time
        self.events = events
    }

    /// The lines of every cue, as a terminal shows them.
    public var plainText: String {
        events.map(\.plainText).filter { !$0.isEmpty }.joined(separator: "\n")
    }
}

/// Where captions go: a window, a terminal, a test recorder. The player calls ``show(_:)`` when
/// what is on screen changes (a cue starts or ends, a track is chosen, a seek); implementations
/// keep it short (store the frame, wake a render loop) — it runs on the engine's clock context.
public protocol CaptionSink: AnyObject, Sendable {
    func show(_ frame: CaptionFrame)
}
