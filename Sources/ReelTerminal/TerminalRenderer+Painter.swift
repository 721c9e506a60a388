import ReelCore
import ReelMedia

extension TerminalRenderer {
    /// The render thread's own state (a local of `loop`, never shared): the encoders, the
    /// scaler and the last picture scaled. Turns content into the bytes of one write, in the
    /// output chosen for the terminal — character cells, sixel or kitty graphics — like
    /// mpv's `vo_tct`, `vo_sixel` and `vo_kitty` side by side.
    struct Painter {
        struct Painted {
            var bytes: [UInt8] = []
            /// Whether the screen was cleared (the chrome is drawn whole then).
            var full: Bool
            var drewFrame = false
            var videoBytes = 0
            var fullFrame = false
            var fullRedrawBytes = 0
            var cells: (columns: Int, rows: Int)?
        }

        let configuration: Configuration
        let graphics: TerminalGraphics
        var encoder: TerminalEncoder
        var baseline: TerminalEncoder
        var sixel: SixelEncoder?
        var sixelBaseline: SixelEncoder?
        var kitty: KittyEncoder?
        var kittyBaseline: KittyEncoder?
        let scaler = FrameScaler()
        var image: RGBImage?
        var imageSource: ObjectIdentifier?
        var lastGeometry: [Int]?

        init(configuration: Configuration, graphics: TerminalGraphics) {
            self.configuration = configuration
            self.graphics = graphics
            // The whole write (video and chrome) is wrapped in one synchronized update, so
            // the encoders add no markers of their own; both count only the picture's bytes.
            var unwrapped = configuration.encoder
            unwrapped.synchronizedOutput = false
            encoder = TerminalEncoder(configuration: unwrapped)
            // The baseline is a renderer like mpv's vo_tct: every cell, exact colours.
            unwrapped.diffing = false
            unwrapped.tolerance = 0
            baseline = TerminalEncoder(configuration: unwrapped)
            switch graphics.output {
            case .cells:
                break
            case .sixel:
                var sixelConfiguration = configuration.sixel
                // No more colours than the terminal has registers (a VT340 has 16).
                if let registers = graphics.sixelColors { sixelConfiguration.colors = min(sixelConfiguration.colors, registers) }
                sixel = SixelEncoder(configuration: sixelConfiguration, cellHeight: graphics.cellHeight)
                var whole = sixelConfiguration
                whole.diffing = false
                sixelBaseline = SixelEncoder(configuration: whole, cellHeight: graphics.cellHeight)
            case .kitty:
                // Frames through shared memory when the terminal read the detection's object
                // (it is on this machine); the baseline only counts, so it never makes one.
                let store = graphics.transfer == .sharedMemory ? KittySharedMemory() : nil
                kitty = KittyEncoder(configuration: configuration.kitty, sharedMemory: store)
                var whole = configuration.kitty
                whole.diffing = false
                kittyBaseline = KittyEncoder(configuration: whole)
            }
        }

        /// What to write when the renderer stops: the kitty image deleted.
        var farewell: [UInt8] { kitty?.delete ?? [] }

        /// After the farewell: the shared-memory objects the terminal has not read unlinked.
        func release() { kitty?.sharedMemory?.removeAll() }

        mutating func paint(_ content: Content?, area: Area, screenRows: Int, full requestedFull: Bool) -> Painted {
            var painted = Painted(full: requestedFull)
            var area = area
            var maxHeight: Int?
            // A terminal moves the cursor below a sixel image, and scrolls the screen when
            // that row is past the last: the picture keeps off the last row, in whole bands.
            if sixel != nil {
                let fits = TerminalLayout.sixelArea(row: area.row, rows: area.rows, screenRows: screenRows,
                                                    cellHeight: graphics.cellHeight)
                area.rows = fits.rows
                maxHeight = fits.maxHeight
            }
            let placement = place(content, area: area, maxHeight: maxHeight, full: requestedFull)
            // A picture of another size or place (a portrait video after a landscape one)
            // leaves the old one's cells around it: clear the screen and draw it all.
            let geometry = image.map { [placement.column, placement.row, $0.width, $0.height] }
            if content != nil, let geometry, geometry != lastGeometry {
                painted.full = true
                lastGeometry = geometry
            }
            if painted.full {
                encoder.invalidate()
                sixel?.invalidate()
                kitty?.invalidate()
                painted.bytes += TerminalControl.resetAttributes
                painted.bytes += TerminalControl.clearScreen
            }
            if content != nil, let image {
                let encoded = encode(image, column: placement.column, row: placement.row)
                painted.videoBytes = encoded.count
                painted.bytes += encoded
                painted.drewFrame = true
                if configuration.measureFullRedraw { measureBaseline(image, column: placement.column, row: placement.row) }
            }
            painted.fullFrame = sixel?.lastFrame.fullRedraw ?? kitty?.lastFrame.fullRedraw ?? encoder.lastFrame.fullRedraw
            painted.fullRedrawBytes = sixelBaseline?.totalByteCount ?? kittyBaseline?.totalByteCount ?? baseline.totalByteCount
            painted.cells = image.map { cells(of: $0) }
            return painted
        }

        private mutating func encode(_ image: RGBImage, column: Int, row: Int) -> [UInt8] {
            if sixel != nil { return sixel!.encode(image, column: column, row: row) }
            if kitty != nil { return kitty!.encode(image, column: column, row: row) }
            return encoder.encode(image, column: column, row: row)
        }

        private mutating func measureBaseline(_ image: RGBImage, column: Int, row: Int) {
            if sixelBaseline != nil {
                _ = sixelBaseline!.encode(image, column: column, row: row)
            } else if kittyBaseline != nil {
                _ = kittyBaseline!.encode(image, column: column, row: row)
            } else {
                _ = baseline.encode(image, column: column, row: row)
            }
        }

        /// The cells a picture of these pixels covers.
        private func cells(of image: RGBImage) -> (columns: Int, rows: Int) {
            let (across, down) = graphics.output == .cells
                ? (configuration.encoder.glyphs.pixelsPerCellHorizontally, configuration.encoder.glyphs.pixelsPerCellVertically)
                : (graphics.cellWidth, graphics.cellHeight)
            return ((image.width + across - 1) / across, (image.height + down - 1) / down)
        }

        /// Where and how large a `width × height` picture turned by `rotation` goes in `area`,
        /// at most `maxHeight` pixels high.
        private func layout(width: Int, height: Int, rotation: Int, area: Area, maxHeight: Int?) -> TerminalLayout? {
            if graphics.output == .cells {
                return TerminalLayout.fit(
                    frameWidth: width, frameHeight: height, rotation: rotation,
                    columns: area.columns, rows: area.rows, cellAspectRatio: configuration.cellAspectRatio,
                    glyphs: configuration.encoder.glyphs)
            }
            var limit = graphics.sixelLimit ?? (area.columns * graphics.cellWidth, area.rows * graphics.cellHeight)
            if let maxHeight { limit.height = min(limit.height, maxHeight) }
            return TerminalLayout.fitPixels(
                frameWidth: width, frameHeight: height, rotation: rotation, columns: area.columns, rows: area.rows,
                cellWidth: graphics.cellWidth, cellHeight: graphics.cellHeight, limit: limit)
        }

        /// Scales `content` to fit `area` (into `image`, unless the same frame is there
        /// already) and says where it goes on the screen.
        private mutating func place(_ content: Content?, area: Area, maxHeight: Int?, full: Bool) -> (column: Int, row: Int) {
            var placement = (column: 0, row: 0)
            switch content {
            case .frame(let frame):
                if let layout = layout(width: frame.width, height: frame.height, rotation: frame.rotation, area: area, maxHeight: maxHeight) {
                    let turned = (frame.rotation / 90) % 2 != 0
                    let id = ObjectIdentifier(frame)
                    if imageSource != id || full {
                        image = try? scaler.rgb(
                            frame, width: turned ? layout.pixelHeight : layout.pixelWidth,
                            height: turned ? layout.pixelWidth : layout.pixelHeight)
                        if let scaled = image, frame.rotation % 360 != 0 { image = scaled.rotated(clockwise: frame.rotation) }
                        imageSource = id
                    }
                    placement = (area.column + layout.column, area.row + layout.row)
                } else {
                    image = nil
                }
            case .picture(let picture):
                if let layout = layout(width: picture.width, height: picture.height, rotation: 0, area: area, maxHeight: maxHeight) {
                    image = TerminalRenderer.scaled(picture, width: layout.pixelWidth, height: layout.pixelHeight)
                    imageSource = nil
                    placement = (area.column + layout.column, area.row + layout.row)
                } else {
                    image = nil
                }
            case nil:
                break
            }
            return placement
        }
    }
}
