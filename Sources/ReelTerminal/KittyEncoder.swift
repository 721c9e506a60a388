import Foundation
import ReelCore

/// Turns already-scaled `RGBImage`s into kitty graphics protocol commands: one image,
/// placed once at its cell and replaced in place.
///
/// The first frame (and any after ``invalidate()``, or a picture of another size or place)
/// is transmitted and displayed (`a=T`) at the cursor, which does not move (`C=1`: no
/// scrolling). Each later frame sends only the rectangle of pixels that changed, composed
/// onto the image's one frame (`a=f,r=1,x,y,s,v`), and makes that frame current again
/// (`a=a,c=1`) so the terminal redraws it. Pixels go as zlib-compressed RGB (`f=24,o=z`),
/// base64 in chunks of 4096; replies are off (`q=2`). ``delete`` removes the image (on exit).
///
/// Given a ``KittySharedMemory`` (a local terminal that answered the `t=s` query), the
/// pixels of a frame or rectangle go, uncompressed, into a shared-memory object of their
/// own and the command carries only its name (`t=s,S=<size>`, the name base64'd): a hundred
/// bytes down the terminal instead of the picture. When the store makes no object (no space,
/// or the terminal stopped reading them), that frame goes compressed as above.
public struct KittyEncoder: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// The image id (one image per renderer).
        public var imageID: Int
        /// Send only the changed rectangle (false: every frame transmitted whole, as mpv does).
        public var diffing: Bool
        /// How far (per channel) a pixel may move before it counts as changed.
        public var tolerance: Int
        /// zlib's level (1 fastest … 9 smallest).
        public var compressionLevel: Int

        public init(imageID: Int = 0x5245, diffing: Bool = true, tolerance: Int = 2, compressionLevel: Int = 1) {
            self.imageID = imageID
            self.diffing = diffing
            self.tolerance = tolerance
            self.compressionLevel = compressionLevel
        }
    }

    /// What the last ``encode(_:column:row:)`` sent.
    public struct FrameInfo: Sendable, Hashable {
        public var bytes = 0
        /// The rectangle sent, in the image's pixels (nil: nothing changed).
        public var x = 0, y = 0, width = 0, height = 0
        public var fullRedraw = false
        /// Whether the pixels went through a shared-memory object (`t=s`).
        public var sharedMemory = false
    }

    public let configuration: Configuration
    /// Where frames go when the terminal reads shared memory (nil: in the escape codes).
    public let sharedMemory: KittySharedMemory?
    private var shown: (image: RGBImage, column: Int, row: Int)?
    public private(set) var lastFrame = FrameInfo()
    public private(set) var totalByteCount = 0

    public init(configuration: Configuration = .init(), sharedMemory: KittySharedMemory? = nil) {
        self.configuration = configuration
        self.sharedMemory = sharedMemory
    }

    /// Forget what the terminal holds: the next frame is transmitted and placed again.
    public mutating func invalidate() { shown = nil }

    /// The command that deletes the image and its placements (`a=d,d=I`), and frees its data.
    public var delete: [UInt8] {
        Array("\u{1B}_Ga=d,d=I,i=\(configuration.imageID),q=2\u{1B}\\".utf8)
    }

    /// The bytes that show `image` with its top-left corner at 0-based cell `column`, `row`
    /// (empty when nothing changed).
    public mutating func encode(_ image: RGBImage, column: Int = 0, row: Int = 0) -> [UInt8] {
        let id = configuration.imageID
        var out: [UInt8] = []
        var info = FrameInfo()
        if configuration.diffing, let shown, shown.column == column, shown.row == row,
           shown.image.width == image.width, shown.image.height == image.height {
            guard let rect = Self.changedRectangle(shown.image, image, tolerance: configuration.tolerance) else {
                self.shown = (image, column, row)
                lastFrame = FrameInfo()
                return []
            }
            let pixels = Self.crop(image, rect)
            let (command, shared) = transmit(keys: "a=f,r=1,i=\(id),x=\(rect.x),y=\(rect.y),s=\(rect.width),v=\(rect.height),f=24",
                                             then: "q=2", pixels: pixels)
            out += command
            out += Array("\u{1B}_Ga=a,c=1,i=\(id),q=2\u{1B}\\".utf8)
            info = FrameInfo(bytes: 0, x: rect.x, y: rect.y, width: rect.width, height: rect.height, sharedMemory: shared)
        } else {
            // A new size or place: the old image goes first (no stale placement left behind).
            if shown != nil, shown?.column != column || shown?.row != row || shown?.image.width != image.width
                || shown?.image.height != image.height { out += delete }
            out += TerminalControl.moveCursor(column: column, row: row)
            let (command, shared) = transmit(keys: "a=T,i=\(id),f=24,s=\(image.width),v=\(image.height)", then: "q=2,C=1",
                                             pixels: image.bytes)
            out += command
            info = FrameInfo(bytes: 0, x: 0, y: 0, width: image.width, height: image.height, fullRedraw: true, sharedMemory: shared)
        }
        shown = (image, column, row)
        info.bytes = out.count
        lastFrame = info
        totalByteCount += out.count
        return out
    }

    /// The command(s) carrying `pixels` with `keys` and `then`: through a shared-memory
    /// object when there is a store and it made one (true: `…,then,t=s,S=<size>`), else
    /// compressed in the escape codes (`…,o=z,then`).
    private func transmit(keys: String, then tail: String, pixels: [UInt8]) -> (bytes: [UInt8], sharedMemory: Bool) {
        if let sharedMemory, let name = sharedMemory.store(pixels) {
            let name64 = Data(name.utf8).base64EncodedString()
            return (Array("\u{1B}_G\(keys),\(tail),t=s,S=\(pixels.count);\(name64)\u{1B}\\".utf8), true)
        }
        return (chunks(keys: keys, then: tail, payload: pixels), false)
    }

    /// `payload` compressed (`o=z`) and base64'd, in commands of at most 4096 characters: the
    /// first with `keys`, every one but the last with `m=1`.
    private func chunks(keys: String, then tail: String, payload: [UInt8]) -> [UInt8] {
        // zlib fails only without memory; then the pixels go as they are.
        let compressed = Zlib.compress(payload, level: Int32(configuration.compressionLevel))
        let keys = compressed == nil ? "\(keys),\(tail)" : "\(keys),o=z,\(tail)"
        let text = Array(Data(compressed ?? payload).base64EncodedString().utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.count + text.count / 4096 * 16 + keys.utf8.count + 16)
        var start = 0
        repeat {
            let end = min(text.count, start + 4096)
            let more = end < text.count ? 1 : 0
            out += Array((start == 0 ? "\u{1B}_G\(keys),m=\(more);" : "\u{1B}_Gm=\(more);").utf8)
            out += text[start..<end]
            out += [0x1B, UInt8(ascii: "\\")]
            start = end
        } while start < text.count
        return out
    }

    /// The smallest rectangle holding every pixel that moved by more than `tolerance`.
    static func changedRectangle(_ a: RGBImage, _ b: RGBImage, tolerance: Int) -> (x: Int, y: Int, width: Int, height: Int)? {
        var minX = Int.max, minY = Int.max, maxX = -1, maxY = -1
        let width = a.width
        a.bytes.withUnsafeBufferPointer { p in
            b.bytes.withUnsafeBufferPointer { q in
                for y in 0..<a.height {
                    let row = y * width * 3
                    var first = -1, last = -1
                    var i = 0
                    while i < width * 3 {
                        if abs(Int(p[row + i]) - Int(q[row + i])) > tolerance {
                            if first < 0 { first = i / 3 }
                            last = i / 3
                        }
                        i += 1
                    }
                    if first >= 0 {
                        minX = min(minX, first); maxX = max(maxX, last)
                        minY = min(minY, y); maxY = y
                    }
                }
            }
        }
        guard maxX >= 0 else { return nil }
        return (minX, minY, maxX - minX + 1, maxY - minY + 1)
    }

    static func crop(_ image: RGBImage, _ rect: (x: Int, y: Int, width: Int, height: Int)) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rect.width * rect.height * 3)
        for y in rect.y..<(rect.y + rect.height) {
            let start = (y * image.width + rect.x) * 3
            out += image.bytes[start..<(start + rect.width * 3)]
        }
        return out
    }
}
