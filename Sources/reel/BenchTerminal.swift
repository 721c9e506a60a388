import ArgumentParser
import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelTerminal
import ReelThreads

/// `reel bench terminal`: every terminal output on the same clip and grid — bytes per frame,
/// frames per second the encoder manages, PSNR of what the terminal would show against the
/// frame scaled to the same pixels — beside mpv's `--vo=sixel` and `--vo=tct` when mpv is
/// installed.
struct BenchTerminalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "terminal",
        abstract: "Bytes per frame, encoder speed and PSNR of the terminal's outputs (cells, sixel, kitty), beside mpv's.",
        discussion: """
            Decodes the first --frames frames of the input, scales each to the picture the terminal app \
            would draw in a --columns × --rows grid of --cell pixels (the chrome's rows left out), and \
            encodes them in sequence with each output, as a terminal that keeps up would receive them. \
            PSNR: sixel decoded by Reel's own sixel reader, kitty composed from the rectangles sent, \
            against the scaled frame; cells are exact at their 1×2 pixels a cell (no PSNR). mpv is run \
            on the same clip, grid and pixels (its output through a pipe); its PSNR is its first image's \
            against the first frame scaled to its size. With --through-terminal (standard output a \
            terminal, such as xterm -ti vt340 or kitty), each output's frames, and mpv's, are also \
            written to the terminal it runs in (/dev/tty) as fast as it takes them: "term fps" is frames over the time \
            from the first write to the terminal's answer to DA1 sent after the last (it answers in \
            order, having drawn them all).
            """
    )

    @Argument(help: "A video file.")
    var input: String

    @Option(help: "Grid columns.")
    var columns = 120
    @Option(help: "Grid rows.")
    var rows = 45
    @Option(help: "A cell's size in pixels, WxH.")
    var cell = "8x16"
    @Option(help: "Frames to encode.")
    var frames = 60
    @Option(help: "The mpv to compare with ('none' skips it).")
    var mpv = "mpv"
    @Option(name: .customLong("sixel-colors"), help: "Sixel palette entries a frame (2-256).")
    var sixelColors = SixelEncoder.Configuration().colors
    @Option(name: .customLong("sixel-dither"), help: "Sixel ordered dithering's amplitude (0: none).")
    var sixelDither = SixelEncoder.Configuration().dither
    @Option(help: "How far a pixel may move (per channel) before sixel sends its row again.")
    var tolerance = SixelEncoder.Configuration().tolerance
    @Flag(help: "Also write every output's frames (and mpv's) to the terminal it runs in and time how fast it takes them.")
    var throughTerminal = false

    func validate() throws {
        guard columns >= 10, rows >= 8, frames >= 1 else { throw ValidationError("--columns ≥ 10, --rows ≥ 8 and --frames ≥ 1") }
        guard (2...256).contains(sixelColors), (0...128).contains(sixelDither), (0...255).contains(tolerance) else {
            throw ValidationError("--sixel-colors is 2-256, --sixel-dither 0-128, --tolerance 0-255")
        }
        guard parsedCell != nil else { throw ValidationError("--cell is WxH in pixels, such as 8x16") }
        guard !throughTerminal || TerminalBench.hasControllingTerminal else {
            throw ValidationError("--through-terminal needs a terminal (/dev/tty) to write to")
        }
    }

    private var parsedCell: (width: Int, height: Int)? {
        let parts = cell.lowercased().split(separator: "x").compactMap { Int($0) }
        return parts.count == 2 && parts.allSatisfy({ (2...64).contains($0) }) ? (parts[0], parts[1]) : nil
    }

    func run() async throws {
        let url = URL(fileURLWithPath: input)
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw CommandFailure.media("cannot read \(input)")
        }
        let cell = parsedCell!
        let grid = TerminalBenchGrid(columns: columns, rows: rows, cellWidth: cell.width, cellHeight: cell.height,
                                     sixel: .init(colors: sixelColors, dither: sixelDither, tolerance: tolerance))
        let limit = frames
        let keep = throughTerminal
        let measured: (rows: [TerminalBenchRow], sent: [[[UInt8]]])
        do {
            measured = try await onOwnThread(named: "reel.bench.term") {
                try TerminalBench.measure(url, grid: grid, frames: limit, keep: keep)
            }
        } catch {
            throw CommandFailure.media("\(input): \(error)")
        }
        var rows = measured.rows
        if mpv != "none" { rows += await MPVTerminalBench.rows(mpv: mpv, url: url, grid: grid, frames: limit) }
        if throughTerminal {
            let timed = rows, sent = measured.sent, mpv = self.mpv
            rows = try await onOwnThread(named: "reel.bench.intake") {
                try TerminalBench.throughTerminal(timed, sent: sent, mpv: mpv, url: url, grid: grid, frames: limit)
            }
        }
        print(TerminalBench.table(rows, grid: grid, input: (input as NSString).lastPathComponent, frames: limit))
    }
}

struct TerminalBenchGrid: Sendable {
    var columns: Int, rows: Int, cellWidth: Int, cellHeight: Int
    var sixel: SixelEncoder.Configuration
}

/// One output's figures.
struct TerminalBenchRow: Sendable {
    var name: String
    var frames = 0
    var bytes = 0
    var seconds = 0.0
    var psnr: [Double] = []
    var pixels = (width: 0, height: 0)
    var note = ""
    /// With --through-terminal: seconds the terminal took for `frames` frames.
    var terminalSeconds: Double?

    var bytesPerFrame: Double { frames == 0 ? .nan : Double(bytes) / Double(frames) }
    var framesPerSecond: Double { seconds == 0 ? .nan : Double(frames) / seconds }
    var meanPSNR: Double? { psnr.isEmpty ? nil : psnr.reduce(0, +) / Double(psnr.count) }
    var terminalFramesPerSecond: Double? { terminalSeconds.flatMap { $0 > 0 && frames > 0 ? Double(frames) / $0 : nil } }
}

enum TerminalBench {
    /// Every output over the first `frames` frames of `url`.
    static func measure(_ url: URL, grid: TerminalBenchGrid, frames: Int, keep: Bool = false) throws
        -> (rows: [TerminalBenchRow], sent: [[[UInt8]]]) {
        let area = TerminalChrome.videoArea(columns: grid.columns, rows: grid.rows, chromeVisible: true)
        var outputs = TerminalBenchOutputs(grid: grid, area: area)
        outputs.keep = keep
        let scaler = FrameScaler()
        try SequentialDecoder.decodeVideo(url, loader: FileLoader(), threads: 1) { frame in
            outputs.add(frame, scaler: scaler)
            return outputs.count < frames
        }
        return (outputs.rows, outputs.sent)
    }

    static func table(_ rows: [TerminalBenchRow], grid: TerminalBenchGrid, input: String, frames: Int) -> String {
        var out = "reel bench terminal: \(input), first \(frames) frames, \(grid.columns)×\(grid.rows) cells of "
            + "\(grid.cellWidth)×\(grid.cellHeight) px (\(grid.columns * grid.cellWidth)×\(grid.rows * grid.cellHeight))\n\n"
        out += "output".rightPadded(to: 34) + "picture".leftPadded(to: 10) + "B/frame".leftPadded(to: 11)
            + "B/kpx".leftPadded(to: 8) + "enc fps".leftPadded(to: 9) + "term fps".leftPadded(to: 10)
            + "PSNR dB".leftPadded(to: 9) + "\n"
        for row in rows {
            let picture = row.pixels.width > 0 ? "\(row.pixels.width)×\(row.pixels.height)" : "–"
            let perKilopixel = row.pixels.width > 0 ? row.bytesPerFrame * 1000 / Double(row.pixels.width * row.pixels.height) : .nan
            out += row.name.rightPadded(to: 34) + picture.leftPadded(to: 10)
                + (row.bytesPerFrame.isFinite ? String(format: "%.0f", row.bytesPerFrame) : "–").leftPadded(to: 11)
                + (perKilopixel.isFinite ? String(format: "%.0f", perKilopixel) : "–").leftPadded(to: 8)
                + (row.framesPerSecond.isFinite ? String(format: "%.1f", row.framesPerSecond) : "–").leftPadded(to: 9)
                + (row.terminalFramesPerSecond.map { String(format: "%.1f", $0) } ?? "–").leftPadded(to: 10)
                + (row.meanPSNR.map { String(format: "%.2f", $0) } ?? "–").leftPadded(to: 9)
                + (row.note.isEmpty ? "" : "  \(row.note)") + "\n"
        }
        return out
    }
}

/// The encoders, each fed every frame in turn, with what each has cost so far.
struct TerminalBenchOutputs {
    let grid: TerminalBenchGrid
    let area: (column: Int, row: Int, columns: Int, rows: Int)
    var count = 0
    var cells = TerminalEncoder(configuration: .init(glyphs: .halfBlock, colors: .trueColor, synchronizedOutput: false, tolerance: 2))
    var sixel: SixelEncoder
    var sixelWhole: SixelEncoder
    var kitty = KittyEncoder()
    var kittyWhole = KittyEncoder(configuration: .init(diffing: false))
    /// Kitty's changed rectangle through shared memory: the bench reads each object back
    /// (as the terminal would) and unlinks it, unless the frames are kept for a terminal.
    var kittyShared = KittyEncoder(sharedMemory: KittySharedMemory(maxUnread: .max, patience: 0))
    var screen: SixelScreen
    var kittyCanvas: RGBImage?
    var sharedCanvas: RGBImage?
    /// Whether to keep what each output sent, frame by frame (`sent`, by row).
    var keep = false
    var sent: [[[UInt8]]] = Array(repeating: [], count: 6)
    var rows: [TerminalBenchRow] = ["cells (half blocks, diffed)", "sixel (changed rows)", "sixel (whole frames)",
                                    "kitty (changed rectangle, zlib)", "kitty (whole frames, zlib)",
                                    "kitty (changed rectangle, shm)"].map { TerminalBenchRow(name: $0) }

    init(grid: TerminalBenchGrid, area: (column: Int, row: Int, columns: Int, rows: Int)) {
        self.grid = grid
        self.area = area
        sixel = SixelEncoder(configuration: grid.sixel, cellHeight: grid.cellHeight)
        var whole = grid.sixel
        whole.diffing = false
        sixelWhole = SixelEncoder(configuration: whole, cellHeight: grid.cellHeight)
        screen = SixelScreen(columns: grid.columns, rows: grid.rows, cellWidth: grid.cellWidth, cellHeight: grid.cellHeight)
    }

    mutating func add(_ frame: VideoFrame, scaler: FrameScaler) {
        count += 1
        if let layout = TerminalLayout.fit(frameWidth: frame.width, frameHeight: frame.height, rotation: frame.rotation,
                                           columns: area.columns, rows: area.rows),
           let image = try? scaler.rgb(frame, width: layout.pixelWidth, height: layout.pixelHeight) {
            let (column, row) = (area.column + layout.column, area.row + layout.row)
            let start = monotonicMs()
            record(0, image, cells.encode(image, column: column, row: row), since: start)
        }
        guard let layout = TerminalLayout.fitPixels(
                frameWidth: frame.width, frameHeight: frame.height, rotation: frame.rotation, columns: area.columns,
                rows: area.rows, cellWidth: grid.cellWidth, cellHeight: grid.cellHeight),
              let image = try? scaler.rgb(frame, width: layout.pixelWidth, height: layout.pixelHeight) else { return }
        let (column, row) = (area.column + layout.column, area.row + layout.row)
        var start = monotonicMs()
        let sent = sixel.encode(image, column: column, row: row)
        record(1, image, sent, since: start)
        screen.feed(sent)
        rows[1].psnr.append(psnr(screen.crop(column: column, row: row, width: image.width, height: image.height), image))
        start = monotonicMs()
        record(2, image, sixelWhole.encode(image, column: column, row: row), since: start)
        start = monotonicMs()
        record(3, image, kitty.encode(image, column: column, row: row), since: start)
        compose(image)
        start = monotonicMs()
        record(4, image, kittyWhole.encode(image, column: column, row: row), since: start)
        start = monotonicMs()
        record(5, image, kittyShared.encode(image, column: column, row: row), since: start)
        composeShared(image)
    }

    /// What kitty shows through shared memory: the rectangle read from the frame's object.
    private mutating func composeShared(_ image: RGBImage) {
        let sent = kittyShared.lastFrame
        guard let store = kittyShared.sharedMemory, sent.width > 0 else { return }
        rows[5].note = "bytes written to the terminal; pixels through /dev/shm"
        if !sent.sharedMemory { rows[5].note = "no shared memory here: sent direct" }
        guard sent.sharedMemory, let name = store.unread.last, let pixels = KittySharedMemory.contents(of: name),
              pixels.count == sent.width * sent.height * 3 else { return }
        if !keep { KittySharedMemory.remove(name) }
        var canvas = sent.fullRedraw || sharedCanvas == nil ? image : sharedCanvas!
        for y in 0..<sent.height {
            for x in 0..<sent.width {
                let i = (y * sent.width + x) * 3
                canvas[sent.x + x, sent.y + y] = (pixels[i], pixels[i + 1], pixels[i + 2])
            }
        }
        sharedCanvas = canvas
        rows[5].psnr.append(psnr(canvas, image))
    }

    /// What kitty shows after the last frame: the rectangle sent copied onto the one before.
    private mutating func compose(_ image: RGBImage) {
        let sent = kitty.lastFrame
        if sent.fullRedraw || kittyCanvas == nil {
            kittyCanvas = image
        } else if sent.width > 0, var canvas = kittyCanvas {
            for y in sent.y..<(sent.y + sent.height) {
                for x in sent.x..<(sent.x + sent.width) { canvas[x, y] = image[x, y] }
            }
            kittyCanvas = canvas
        }
        if let kittyCanvas { rows[3].psnr.append(psnr(kittyCanvas, image)) }
    }

    /// Output `index` wrote `bytes` for `image`, encoding since `start` (ms).
    private mutating func record(_ index: Int, _ image: RGBImage, _ bytes: [UInt8], since start: Double) {
        rows[index].seconds += (monotonicMs() - start) / 1000
        rows[index].bytes += bytes.count
        rows[index].frames += 1
        rows[index].pixels = (image.width, image.height)
        if keep { sent[index].append(bytes) }
    }
}
