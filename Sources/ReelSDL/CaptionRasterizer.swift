import Foundation
import ReelCaptions
import ReelCore
internal import CLibass

/// Turns a ``CaptionFrame`` into a ``CaptionLayer`` with libass, at the video rect's size in
/// drawable pixels (HiDPI for free): one `ASS_Library`, one `ASS_Renderer` (fonts through
/// fontconfig, with a CJK-capable file as the default), one `ASS_Track` per caption track.
///
/// Each cue is fed to its track once (`ass_process_chunk`), with a ReadOrder Reel counts
/// itself: decoders restart theirs (a flush, a new decoder after a seek) and libass drops a
/// chunk whose ReadOrder it has seen. Text tracks in ASS keep their authored header and
/// styles; every other text format (SubRip, WebVTT, mov_text, 608, TTML) gets Reel's style:
/// white, a black outline and a soft shadow, about 5 % of the video's height.
///
/// Belongs to its window's thread, like ``TextRasterizer``: libass objects are not
/// thread-safe, and every entry checks the thread.
final class CaptionRasterizer {
    private struct Track {
        let track: UnsafeMutablePointer<ASS_Track>
        /// The header the track was made with (a changed header makes a new track).
        let header: String
        /// Cues fed to libass and the ReadOrder each got.
        var fed: [CaptionEvent: Int] = [:]
        var nextReadOrder = 0
    }

    /// How the last layer was made, to reuse it when libass reports no change.
    private struct Rendered {
        var track: CaptionTrackID
        var time: MediaTime
        var frameSize: (Int, Int)
        var layer: CaptionLayer
    }

    // Immutable after init.
    private let confinement = ThreadConfinement("the caption rasterizer")
    private let library: OpaquePointer
    private let renderer: OpaquePointer
    /// The font file the renderer falls back to (fontconfig's Chinese sans face).
    let fontPath: String?

    // Owner thread only.
    private var tracks: [CaptionTrackID: Track] = [:]
    private var descriptions: [CaptionTrackID: CaptionTrack] = [:]
    private var frameSize = (0, 0)
    private var storageSize = (0, 0)
    private var last: Rendered?
    /// How many layers were packed anew, and how many were the last one again (tests read these).
    private(set) var packedCount = 0
    private(set) var reusedCount = 0

    /// Scans fonts once (fontconfig's cache makes it fast after the first run on a machine).
    init(fontPath: String? = TextRasterizer.locateFont()) throws {
        guard let library = ass_library_init() else { throw WindowError.font("libass: ass_library_init failed") }
        reel_ass_set_quiet(library)
        guard let renderer = ass_renderer_init(library) else {
            ass_library_done(library)
            throw WindowError.font("libass: ass_renderer_init failed")
        }
        self.library = library
        self.renderer = renderer
        self.fontPath = fontPath
        ass_set_fonts(renderer, fontPath, "sans-serif", Int32(ASS_FONTPROVIDER_FONTCONFIG.rawValue), nil, 1)
    }

    deinit {
        confinement.check("free libass")
        for entry in tracks.values { ass_free_track(entry.track) }
        ass_renderer_done(renderer)
        ass_library_done(library)
    }

    /// The item's caption tracks (their formats and ASS headers). Tracks that went away are
    /// freed; a track whose header changed starts again.
    func setTracks(_ list: [CaptionTrack]) {
        confinement.check("setTracks")
        let byID = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        guard byID != descriptions else { return }
        descriptions = byID
        for (id, entry) in tracks where byID[id] == nil || header(for: id) != entry.header {
            ass_free_track(entry.track)
            tracks[id] = nil
        }
        last = nil
    }

    /// The layer for `frame`: its text cues rendered at `video`'s size (in drawable pixels)
    /// and placed at `video`'s origin, its picture cues scaled from their canvas to `video`;
    /// `nil` when nothing shows. `videoWidth × videoHeight` is the picture's own size. The text
    /// is rendered as it is at `time` (the video's), so ASS animation (`\fad`, `\move`,
    /// karaoke) moves with the video while the cues stay the same — when `time` is at or after
    /// the caption frame's and one of its cues is on then; else at the caption frame's own time.
    /// libass says when the picture did not change, and the layer is reused.
    func layer(for frame: CaptionFrame, at time: MediaTime? = nil, video: UIRect, videoWidth: Int, videoHeight: Int) -> CaptionLayer? {
        confinement.check("layer")
        guard !frame.events.isEmpty, video.width >= 1, video.height >= 1 else { return nil }
        var pictures: [CaptionPicture] = []
        var textTracks: [CaptionTrackID: [CaptionEvent]] = [:]
        var order: [CaptionTrackID] = []
        for event in frame.events {
            switch event.content {
            case .bitmap(let bitmap):
                if let picture = Self.picture(bitmap, event: event, video: video) { pictures.append(picture) }
            case .text:
                if textTracks[event.track] == nil { order.append(event.track) }
                textTracks[event.track, default: []].append(event)
            }
        }
        var text: CaptionLayer?
        if !order.isEmpty {
            setFrameSize(width: Int(video.width.rounded()), height: Int(video.height.rounded()),
                         storageWidth: videoWidth, storageHeight: videoHeight)
            // The video's time when it has moved on from the frame's and the frame's cues are
            // still on (the owner sends a new frame when they change); else the frame's own.
            var renderAt = frame.time
            if let time, time.isNumeric, time >= frame.time, frame.events.contains(where: { $0.isActive(at: time) }) {
                renderAt = time
            }
            text = renderText(order.map { ($0, textTracks[$0]!) }, at: renderAt)
        }
        var layer = text?.offsetBy(dx: video.x.rounded(), dy: video.y.rounded())
            ?? CaptionLayer(atlas: .empty, quads: [], pictures: [])
        layer.pictures = pictures
        return layer.isEmpty ? nil : layer
    }

    // MARK: libass

    private func setFrameSize(width: Int, height: Int, storageWidth: Int, storageHeight: Int) {
        if frameSize != (width, height) {
            frameSize = (width, height)
            ass_set_frame_size(renderer, Int32(width), Int32(height))
            last = nil
        }
        let storage = (storageWidth > 0 ? storageWidth : width, storageHeight > 0 ? storageHeight : height)
        if storageSize != storage {
            storageSize = storage
            ass_set_storage_size(renderer, Int32(storage.0), Int32(storage.1))
            last = nil
        }
    }

    /// Renders each track's cues at `time` and packs every image into one atlas.
    private func renderText(_ groups: [(CaptionTrackID, [CaptionEvent])], at time: MediaTime) -> CaptionLayer? {
        let now = Int64((time.seconds * 1000).rounded(.down))
        var images: [ASS_Image] = []
        var changed = false
        for (id, events) in groups {
            let fedAnew = feed(events, to: id, at: time)
            guard let entry = tracks[id] else { continue }
            var change: Int32 = 0
            var image = ass_render_frame(renderer, entry.track, now, &change)
            if change != 0 || fedAnew { changed = true }
            while let current = image {
                if current.pointee.w > 0, current.pointee.h > 0 { images.append(current.pointee) }
                image = current.pointee.next
            }
        }
        // libass compares with its previous render: "no change" means the same images, but
        // only when that render was this track at this size.
        if !changed, groups.count == 1, let last, last.track == groups[0].0, last.frameSize == frameSize {
            reusedCount += 1
            self.last?.time = time
            return last.layer
        }
        let layer = Self.pack(images)
        packedCount += 1
        if groups.count == 1 {
            last = Rendered(track: groups[0].0, time: time, frameSize: frameSize, layer: layer)
        } else {
            last = nil
        }
        return layer
    }

    /// Feeds the cues libass has not had yet; when libass would still show a cue the frame
    /// no longer has (an open cue closed, a cue removed), the track starts over with the
    /// frame's cues. Returns whether anything was fed.
    private func feed(_ events: [CaptionEvent], to id: CaptionTrackID, at time: MediaTime) -> Bool {
        if tracks[id] == nil {
            guard let made = makeTrack(id) else { return false }
            tracks[id] = made
        }
        var entry = tracks[id]!
        let wanted = Set(events)
        let stale = entry.fed.keys.contains { $0.isActive(at: time) && !wanted.contains($0) }
        if stale {
            ass_flush_events(entry.track)
            entry.fed.removeAll()
        }
        var fedAny = stale
        for event in events where entry.fed[event] == nil {
            guard case .text(let dialogue) = event.content else { continue }
            let readOrder = entry.nextReadOrder
            entry.nextReadOrder += 1
            entry.fed[event] = readOrder
            let start = Int64((event.start.seconds * 1000).rounded(.down))
            // Open cues last until the timeline closes them (then the frame drops them: stale).
            let end = event.isOpen ? start + 86_400_000 : Int64((event.end.seconds * 1000).rounded(.up))
            var chunk = Array(dialogue.chunk(readOrder: readOrder).utf8CString)
            chunk.withUnsafeMutableBufferPointer {
                ass_process_chunk(entry.track, $0.baseAddress, Int32($0.count - 1), start, max(1, end - start))
            }
            fedAny = true
        }
        tracks[id] = entry
        return fedAny
    }

    private func header(for id: CaptionTrackID) -> String {
        let description = descriptions[id]
        if let description, description.format == .ass, let authored = description.assHeader, !authored.isEmpty {
            return authored
        }
        return Self.reelHeader(format: description?.format ?? .other, storageWidth: storageSize.0, storageHeight: storageSize.1)
    }

    private func makeTrack(_ id: CaptionTrackID) -> Track? {
        guard let track = ass_new_track(library) else { return nil }
        let text = header(for: id)
        var bytes = Array(text.utf8CString)
        bytes.withUnsafeMutableBufferPointer { ass_process_codec_private(track, $0.baseAddress, Int32($0.count - 1)) }
        _ = reel_ass_wrap_unicode(track)
        return Track(track: track, header: text)
    }

    /// Reel's header for text that is not authored ASS: PlayResY 288 (FFmpeg's), PlayResX
    /// from the video's aspect so glyphs are not stretched; white text 5 % of the height
    /// with a black outline and shadow, or a dark box for CEA-608 (as television shows it).
    static func reelHeader(format: CaptionTrack.Format, storageWidth: Int, storageHeight: Int) -> String {
        let playResY = 288
        let aspect = storageWidth > 0 && storageHeight > 0 ? Double(storageWidth) / Double(storageHeight) : 16.0 / 9.0
        let playResX = max(1, Int((Double(playResY) * aspect).rounded()))
        let box = format == .eia608
        // ASS colours are &HAABBGGRR, with AA the transparency.
        let style = box
            ? "Default,sans-serif,15,&H00FFFFFF,&H00FFFFFF,&H40000000,&H40000000,0,0,0,0,100,100,0,0,3,1.5,0,2,16,16,12,1"
            : "Default,sans-serif,15,&H00FFFFFF,&H00FFFFFF,&H00000000,&H80000000,0,0,0,0,100,100,0,0,1,1.4,0.75,2,16,16,12,1"
        return """
        [Script Info]
        ScriptType: v4.00+
        PlayResX: \(playResX)
        PlayResY: \(playResY)
        ScaledBorderAndShadow: yes
        WrapStyle: 0

        [V4+ Styles]
        Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
        Style: \(style)

        [Events]
        Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text

        """
    }

    // MARK: Packing

    /// Copies each image's rows into a shelf-packed atlas. Rows are `stride` bytes apart in
    /// libass's bitmap, and the last row holds only `w` bytes (ass.h: it is not padded), so
    /// exactly `w` bytes are read from each row.
    static func pack(_ images: [ASS_Image]) -> CaptionLayer {
        guard !images.isEmpty else { return CaptionLayer(atlas: .empty, quads: [], pictures: []) }
        let widest = images.map { Int($0.w) }.max() ?? 1
        var packer = ShelfPacker(width: max(widest, 512))
        let spots = images.map { packer.place(width: Int($0.w), height: Int($0.h)) }
        let width = packer.width, height = packer.height
        var bytes = [UInt8](repeating: 0, count: width * height)
        var quads: [CaptionQuad] = []
        quads.reserveCapacity(images.count)
        bytes.withUnsafeMutableBufferPointer { out in
            for (image, spot) in zip(images, spots) {
                let w = Int(image.w), h = Int(image.h), stride = Int(image.stride)
                for row in 0..<h {
                    (out.baseAddress! + (spot.y + row) * width + spot.x).update(from: image.bitmap + row * stride, count: w)
                }
                let c = image.color
                let color = UIColor(r: Double((c >> 24) & 0xFF) / 255, g: Double((c >> 16) & 0xFF) / 255,
                                    b: Double((c >> 8) & 0xFF) / 255, a: Double(255 - (c & 0xFF)) / 255)
                quads.append(CaptionQuad(atlasX: spot.x, atlasY: spot.y, width: w, height: h,
                                         rect: UIRect(x: Double(image.dst_x), y: Double(image.dst_y), width: Double(w), height: Double(h)),
                                         color: color))
            }
        }
        let atlas = CaptionAtlas(width: width, height: height, bytes: bytes, generation: CaptionAtlas.nextGeneration())
        return CaptionLayer(atlas: atlas, quads: quads, pictures: [])
    }

    /// A palette-indexed picture as straight RGBA, placed by scaling its canvas to `video`.
    static func picture(_ bitmap: CaptionBitmap, event: CaptionEvent, video: UIRect) -> CaptionPicture? {
        let w = bitmap.width, h = bitmap.height
        guard w > 0, h > 0, bitmap.indices.count >= w * h, bitmap.canvasWidth > 0, bitmap.canvasHeight > 0 else { return nil }
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        for i in 0..<(w * h) {
            let index = Int(bitmap.indices[i])
            let argb = index < bitmap.palette.count ? bitmap.palette[index] : 0
            rgba[i * 4] = UInt8((argb >> 16) & 0xFF)
            rgba[i * 4 + 1] = UInt8((argb >> 8) & 0xFF)
            rgba[i * 4 + 2] = UInt8(argb & 0xFF)
            rgba[i * 4 + 3] = UInt8(argb >> 24)
        }
        let sx = video.width / Double(bitmap.canvasWidth), sy = video.height / Double(bitmap.canvasHeight)
        let rect = UIRect(x: (video.x + Double(bitmap.x) * sx).rounded(), y: (video.y + Double(bitmap.y) * sy).rounded(),
                          width: (Double(w) * sx).rounded(), height: (Double(h) * sy).rounded())
        let key = "caption:\(event.track):\(event.start):\(bitmap.hashValue)"
        return CaptionPicture(width: w, height: h, rgba: rgba, rect: rect, key: key)
    }
}
