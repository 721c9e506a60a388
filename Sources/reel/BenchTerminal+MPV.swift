import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelTerminal
import ReelThreads

/// mpv's terminal outputs on the same clip and grid, for `reel bench terminal`: its standard
/// output through a pipe (the bytes a terminal would get), frames as fast as it decodes.
enum MPVTerminalBench {
    static func rows(mpv: String, url: URL, grid: TerminalBenchGrid, frames: Int) async -> [TerminalBenchRow] {
        guard let executable = find(mpv) else {
            return [TerminalBenchRow(name: "mpv", note: "\(mpv) not found: no mpv comparison")]
        }
        let sixelArguments = arguments(.sixel, url: url, grid: grid, frames: frames)
        let tctArguments = arguments(.cells, url: url, grid: grid, frames: frames)
        return await onOwnThread(named: "reel.bench.mpv") {
            var sixel = TerminalBenchRow(name: "mpv --vo=sixel (whole frames)")
            var tct = TerminalBenchRow(name: "mpv --vo=tct (whole frames)")
            if let (bytes, seconds) = run(executable, sixelArguments) {
                sixel.bytes = bytes.count
                sixel.seconds = seconds
                let images = split(bytes)
                sixel.frames = images.count
                if let first = images.first { measureFirst(first, url: url, grid: grid, into: &sixel) }
            } else {
                sixel.note = "mpv failed"
            }
            if let (bytes, seconds) = run(executable, tctArguments) {
                tct.bytes = bytes.count
                tct.seconds = seconds
                tct.frames = frames
                tct.note = "frames counted as asked for"
            }
            return [sixel, tct]
        }
    }

    /// mpv's arguments for its sixel output (`.sixel`) or its cells (`.cells`, `--vo=tct`) on
    /// `url`, in `grid`, for `frames` frames as fast as it decodes.
    static func arguments(_ output: TerminalGraphics.Output, url: URL, grid: TerminalBenchGrid, frames: Int) -> [String] {
        let common = ["--no-config", "--really-quiet", "--no-audio", "--untimed", "--frames=\(frames)"]
        guard output == .sixel else {
            return common + ["--vo=tct", "--vo-tct-width=\(grid.columns)", "--vo-tct-height=\(grid.rows)", url.path]
        }
        return common + [
            "--vo=sixel", "--vo-sixel-cols=\(grid.columns)", "--vo-sixel-rows=\(grid.rows)",
            "--vo-sixel-width=\(grid.columns * grid.cellWidth)", "--vo-sixel-height=\(grid.rows * grid.cellHeight)",
            "--vo-sixel-exit-clear=no", url.path,
        ]
    }

    static func find(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The first image's PSNR against the first frame scaled to its raster size.
    private static func measureFirst(_ image: [UInt8], url: URL, grid: TerminalBenchGrid, into row: inout TerminalBenchRow) {
        var screen = SixelScreen(columns: grid.columns + 8, rows: grid.rows + 8, cellWidth: grid.cellWidth, cellHeight: grid.cellHeight)
        screen.feed(image)
        guard let raster = screen.images.first, raster.width > 0, raster.height > 0 else { return }
        row.pixels = (raster.width, raster.height)
        let scaler = FrameScaler()
        var reference: RGBImage?
        _ = try? SequentialDecoder.decodeVideo(url, loader: FileLoader(), threads: 1) { frame in
            reference = try? scaler.rgb(frame, width: raster.width, height: raster.height)
            return false
        }
        guard let reference else { return }
        let shown = screen.crop(column: 0, row: 0, width: raster.width, height: raster.height)
        row.psnr = [psnr(shown, reference)]
        row.note = "PSNR of its first image"
    }

    /// Each DCS image (`ESC P … ESC \`) in `bytes`, on its own.
    private static func split(_ bytes: [UInt8]) -> [[UInt8]] {
        var images: [[UInt8]] = []
        var i = 0
        while i + 1 < bytes.count {
            if bytes[i] == 0x1B && bytes[i + 1] == UInt8(ascii: "P") {
                var j = i + 2
                while j + 1 < bytes.count && !(bytes[j] == 0x1B && bytes[j + 1] == UInt8(ascii: "\\")) { j += 1 }
                images.append(Array(bytes[i..<min(bytes.count, j + 2)]))
                i = j + 2
            } else {
                i += 1
            }
        }
        return images
    }

    /// Runs `executable` with `arguments`; its standard output and the seconds it took.
    private static func run(_ executable: String, _ arguments: [String]) -> ([UInt8], Double)? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let start = monotonicMs()
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return ([UInt8](data), (monotonicMs() - start) / 1000)
    }
}
