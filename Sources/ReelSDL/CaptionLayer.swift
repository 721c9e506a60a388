import Synchronization

/// Captions ready to composite, as a value: libass's coverage bitmaps packed into one
/// 8-bit alpha atlas with a coloured quad each, and picture cues (PGS, DVB, DVD) as RGBA
/// images. Positions are in drawable pixels. `CaptionRasterizer` makes it on the window's
/// thread; `GLRenderer` draws it with `caption.frag.glsl`, `SoftwareRenderer` blends it on
/// the CPU. Both upload the atlas only when its ``CaptionAtlas/generation`` is new.
public struct CaptionLayer: Sendable {
    public var atlas: CaptionAtlas
    /// One per libass image, in libass's order (shadow, outline, then text: later ones on top).
    public var quads: [CaptionQuad]
    /// Picture cues, drawn before the text quads.
    public var pictures: [CaptionPicture]

    public init(atlas: CaptionAtlas, quads: [CaptionQuad], pictures: [CaptionPicture]) {
        self.atlas = atlas
        self.quads = quads
        self.pictures = pictures
    }

    public var isEmpty: Bool { quads.isEmpty && pictures.isEmpty }

    /// The smallest rect holding every quad and picture (`nil` when empty).
    public var bounds: UIRect? {
        let rects = quads.map(\.rect) + pictures.map(\.rect)
        guard let first = rects.first else { return nil }
        var minX = first.x, minY = first.y, maxX = first.maxX, maxY = first.maxY
        for r in rects.dropFirst() {
            minX = min(minX, r.x); minY = min(minY, r.y); maxX = max(maxX, r.maxX); maxY = max(maxY, r.maxY)
        }
        return UIRect(x: minX, y: minY, width: maxX - minX, height: maxY - minY)
    }

    /// The same layer moved by whole pixels; the atlas (and its generation) is kept, so a
    /// renderer does not upload it again.
    public func offsetBy(dx: Double, dy: Double) -> CaptionLayer {
        var moved = self
        for i in moved.quads.indices { moved.quads[i].rect = moved.quads[i].rect.offsetBy(dx: dx, dy: dy) }
        for i in moved.pictures.indices { moved.pictures[i].rect = moved.pictures[i].rect.offsetBy(dx: dx, dy: dy) }
        return moved
    }

    /// The layer moved up (or down) as little as possible so that it lies inside `area`
    /// vertically: its bottom no lower than `area.maxY`, then its top no higher than `area.y`.
    public func placed(within area: UIRect) -> CaptionLayer {
        guard let bounds else { return self }
        var dy = 0.0
        if bounds.maxY > area.maxY { dy = area.maxY - bounds.maxY }
        if bounds.y + dy < area.y { dy = area.y - bounds.y }
        dy = dy.rounded(.down)
        return dy == 0 ? self : offsetBy(dx: 0, dy: dy)
    }
}

/// Coverage bitmaps packed in shelves: `width × height` bytes, one row after another with
/// no padding (uploaded as one `GL_R8` texture with an unpack alignment of 1).
public struct CaptionAtlas: Sendable {
    public var width: Int
    public var height: Int
    public var bytes: [UInt8]
    /// New for each atlas a rasterizer packs (process-wide): renderers upload on a change.
    public var generation: Int

    private static let counter = Atomic<Int>(0)

    /// A number no atlas had before.
    static func nextGeneration() -> Int { counter.add(1, ordering: .relaxed).newValue }

    public init(width: Int, height: Int, bytes: [UInt8], generation: Int) {
        self.width = width
        self.height = height
        self.bytes = bytes
        self.generation = generation
    }

    public static let empty = CaptionAtlas(width: 0, height: 0, bytes: [], generation: 0)
}

/// One coverage bitmap drawn in one colour: the atlas rows
/// `atlasY ..< atlasY + height`, columns `atlasX ..< atlasX + width`, scaled 1:1 into `rect`.
public struct CaptionQuad: Sendable, Hashable {
    public var atlasX: Int
    public var atlasY: Int
    public var width: Int
    public var height: Int
    public var rect: UIRect
    /// Straight alpha; the drawn alpha is `color.a × coverage`.
    public var color: UIColor

    public init(atlasX: Int, atlasY: Int, width: Int, height: Int, rect: UIRect, color: UIColor) {
        self.atlasX = atlasX
        self.atlasY = atlasY
        self.width = width
        self.height = height
        self.rect = rect
        self.color = color
    }
}

/// A picture cue: straight-alpha RGBA pixels (R, G, B, A), scaled into `rect`.
public struct CaptionPicture: Sendable {
    public var width: Int
    public var height: Int
    public var rgba: [UInt8]
    public var rect: UIRect
    /// Names the pixels for a renderer's texture cache (same key, same pixels).
    public var key: String

    public init(width: Int, height: Int, rgba: [UInt8], rect: UIRect, key: String) {
        self.width = width
        self.height = height
        self.rgba = rgba
        self.rect = rect
        self.key = key
    }
}

/// Packs bitmaps into shelves: left to right, a new shelf below when a row is full.
struct ShelfPacker {
    let width: Int
    private(set) var height = 0
    private var x = 0
    private var shelfY = 0
    private var shelfHeight = 0

    /// A packer `width` pixels wide (at least as wide as the widest bitmap).
    init(width: Int) { self.width = max(1, width) }

    /// Where a `w × h` bitmap goes (1 px apart so linear sampling never bleeds).
    mutating func place(width w: Int, height h: Int) -> (x: Int, y: Int) {
        if x + w > width, x > 0 {
            shelfY += shelfHeight + 1
            x = 0
            shelfHeight = 0
        }
        let spot = (x: x, y: shelfY)
        x += w + 1
        shelfHeight = max(shelfHeight, h)
        height = max(height, shelfY + shelfHeight)
        return spot
    }
}
