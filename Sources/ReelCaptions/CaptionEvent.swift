import ReelCore

/// A picture cue (PGS, DVB, DVD subtitles): palette-indexed pixels placed on a canvas.
public struct CaptionBitmap: Hashable, Sendable {
    /// The picture's left edge on the canvas, in canvas pixels from the left.
    public var x: Int
    /// The picture's top edge on the canvas, in canvas pixels from the top.
    public var y: Int
    /// The picture's width in pixels (the length of each row of ``indices``).
    public var width: Int
    /// The picture's height in pixels (the number of rows of ``indices``).
    public var height: Int
    /// The width, in pixels, of the canvas the positions refer to (the video's width when the
    /// stream does not say); a renderer scales the picture by its output width over this.
    public var canvasWidth: Int
    /// The height, in pixels, of the canvas the positions refer to (the video's height when the
    /// stream does not say); a renderer scales the picture by its output height over this.
    public var canvasHeight: Int
    /// `width × height` palette indices, row by row.
    public var indices: [UInt8]
    /// The palette as straight-alpha RGBA, one `UInt32` per entry (`0xAARRGGBB`).
    public var palette: [UInt32]

    /// A picture of `width × height` palette indices placed at (`x`, `y`) on a canvas of
    /// `canvasWidth × canvasHeight`; every index is expected to name an entry of `palette`
    /// (ReelSDL draws an index past the palette as transparent).
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
    /// What a cue shows: words or a picture.
    public enum Content: Hashable, Sendable {
        /// Words, as one ASS dialogue line (every text format is read into this form).
        case text(ASSDialogue)
        /// A picture (PGS, DVB and DVD subtitles).
        case bitmap(CaptionBitmap)
    }

    /// The track the cue belongs to.
    public var track: CaptionTrackID
    /// When the cue appears, on the item's media timeline.
    public var start: MediaTime
    /// When the cue goes; `MediaTime.positiveInfinity` (ReelCore) while it is open (a CEA-608 or bitmap
    /// cue that lasts until the next one clears it).
    public var end: MediaTime
    /// What the cue shows.
    public var content: Content
    /// The track's language, if it has one.
    public var language: String?
    /// What the screen shows now, before the decoder has said what the cue is (CEA-608, whose
    /// decoder gives a caption once it ended): shown from its start, then replaced by the cue
    /// the decoder gives (``CaptionTimeline`` drops a track's provisional cues that start before
    /// the end of a settled one).
    public var isProvisional: Bool

    /// A cue of `track` shown from `start` up to, not including, `end` (pass
    /// `MediaTime.positiveInfinity` for a cue that lasts until its track's next one).
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

    /// What is on screen at `time`: `events`, oldest first.
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
    /// Shows `frame` in place of what was shown: an empty ``CaptionFrame/events`` clears the
    /// captions. Called on the engine's clock context each time the screen changes, never twice
    /// at once; must not block (hand the frame to a render loop and return).
    func show(_ frame: CaptionFrame)
}
