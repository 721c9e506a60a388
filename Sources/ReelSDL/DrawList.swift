import ReelCore
import ReelMedia

/// A rectangle in drawable pixels, top-left origin.
public struct UIRect: Sendable, Hashable {
    public var x: Double, y: Double, width: Double, height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var midX: Double { x + width / 2 }
    public var midY: Double { y + height / 2 }
    public func contains(x px: Double, y py: Double) -> Bool {
        px >= x && px < maxX && py >= y && py < maxY
    }
    public func insetBy(dx: Double, dy: Double) -> UIRect {
        UIRect(x: x + dx, y: y + dy, width: width - 2 * dx, height: height - 2 * dy)
    }
    public func offsetBy(dx: Double, dy: Double) -> UIRect {
        UIRect(x: x + dx, y: y + dy, width: width, height: height)
    }

    /// The largest rect of aspect `contentWidth:contentHeight` centred in `self`.
    public func aspectFit(contentWidth: Int, contentHeight: Int) -> UIRect {
        guard contentWidth > 0, contentHeight > 0, width > 0, height > 0 else { return self }
        let scale = min(width / Double(contentWidth), height / Double(contentHeight))
        let w = (Double(contentWidth) * scale).rounded(), h = (Double(contentHeight) * scale).rounded()
        return UIRect(x: (x + (width - w) / 2).rounded(), y: (y + (height - h) / 2).rounded(), width: w, height: h)
    }

    /// The smallest rect of that aspect covering `self` (centred, cropped by the caller).
    public func aspectFill(contentWidth: Int, contentHeight: Int) -> UIRect {
        guard contentWidth > 0, contentHeight > 0, width > 0, height > 0 else { return self }
        let scale = max(width / Double(contentWidth), height / Double(contentHeight))
        let w = Double(contentWidth) * scale, h = Double(contentHeight) * scale
        return UIRect(x: x + (width - w) / 2, y: y + (height - h) / 2, width: w, height: h)
    }
}

/// A straight-alpha colour, 0…1 per component.
public struct UIColor: Sendable, Hashable {
    public var r: Double, g: Double, b: Double, a: Double
    public init(r: Double, g: Double, b: Double, a: Double = 1) {
        self.r = r; self.g = g; self.b = b; self.a = a
    }
    public static let white = UIColor(r: 1, g: 1, b: 1)
    public static let black = UIColor(r: 0, g: 0, b: 0)
    public func withAlpha(_ alpha: Double) -> UIColor { UIColor(r: r, g: g, b: b, a: alpha) }
}

/// Where a text's anchor point sits on the text's box.
public enum TextAnchor: Sendable, Hashable {
    case topLeft, topCenter, topRight, centerLeft, center, centerRight, bottomLeft, bottomCenter, bottomRight
}

/// What the renderers draw, in order: the same list for OpenGL and SDL_Renderer.
public enum DrawCommand: Sendable {
    /// The blurred, darkened video (or image) filling `rect` (aspect fill, cropped).
    case backdrop(source: DrawSource, rect: UIRect, dim: Double)
    /// A video frame or image drawn into `rect` (already aspect-fitted, rotation applied).
    case picture(source: DrawSource, rect: UIRect)
    /// A filled rect with rounded corners (radius 0 for a plain rect).
    case fill(UIRect, UIColor, radius: Double)
    /// One line of text of `size` pixels at `point`, placed by `anchor`; clipped to `maxWidth`.
    case text(String, point: (x: Double, y: Double), size: Double, color: UIColor, anchor: TextAnchor, maxWidth: Double?)
    /// Captions as libass drew them (coverage quads in their colours, picture cues), placed.
    case captions(CaptionLayer)
}

/// A picture to draw: a decoded frame, or an RGB image (a cover, a thumbnail) with a key
/// the renderer caches its texture under.
public enum DrawSource: Sendable {
    case frame(VideoFrame)
    case image(key: String, RGBImage)
}

