import ArgumentParser
import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelMediaTools
import ReelThreads

/// `reel bench start`: frames dropped in the first seconds of each item, played in real time,
/// beside the time FFmpeg takes to decode the same frames in the same run. The start of an
/// item is where real media differs most (audio that starts after video, edit lists, first
/// timestamps other than zero), and where a dropped frame is most visible.
struct BenchStartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Frames dropped in the first seconds of each item in real time, beside FFmpeg's decode time.",
        discussion: """
            Each video file given (directories are searched, files without a video stream are \
            skipped) is played headless in real time (the host clock, a null audio device) for \
            --seconds, and the frames presented and dropped in that time are counted. Beside it, \
            FFmpeg decodes the same number of frames of the same file as fast as it can (its own \
            file I/O, default threads): the share of real time that decoding needs, so a drop can \
            be told from a machine too slow to decode. The goal is no dropped frame.
            """
    )

    @Argument(help: "Media files or directories of them.")
    var paths: [String] = []

    @Option(help: "Seconds of each item to play.")
    var seconds: Double = 2

    @Flag(help: "Print the results as JSON.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard !paths.isEmpty else { throw ValidationError("give at least one media file or directory") }
        guard seconds > 0, seconds <= 60 else { throw ValidationError("--seconds must be in (0, 60]") }
    }

    struct Row {
        var name: String
        var presented = 0
        var dropped = 0
        var failure: String?
        var ffmpegMs: Double?
        var ffmpegFrames = 0
    }

    func run() async throws {
        global.apply()
        let files = try Self.files(paths)
        var rows: [Row] = []
        var skipped = 0
        for file in files {
            let name = file.path
            guard let info = try? await MediaProbe.probe(file, loader: FileLoader()),
                  info.streams.contains(where: { $0.kind == .video && $0.isSelected }) else {
                skipped += 1
                continue
            }
            if !json { printError("\(name)…") }
            var row = Row(name: name)
            do {
                (row.presented, row.dropped) = try await Self.play(file, seconds: seconds)
            } catch {
                row.failure = describe(error)
            }
            let frames = row.presented + row.dropped
            if frames > 0, let decoded = try? await onOwnThread(named: "reel.baseline", {
                try FFmpegBaseline.decodeThroughput(file: file, maxFrames: frames)
            }) {
                row.ffmpegMs = decoded.wallSeconds * 1000
                row.ffmpegFrames = decoded.frames
            }
            rows.append(row)
        }
        print(json ? Self.json(rows, seconds: seconds) : Self.text(rows, skipped: skipped, seconds: seconds),
              terminator: json ? "\n" : "")
    }

    /// The files named, directories searched (sorted, hidden files left out).
    static func files(_ paths: [String]) throws -> [URL] {
        var result: [URL] = []
        for path in paths {
            let url = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
                throw CommandFailure.media("\(path): no such file")
            }
            guard isDirectory.boolValue else {
                result.append(url)
                continue
            }
            let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey],
                                                        options: [.skipsHiddenFiles])
            var found: [URL] = []
            while let next = walker?.nextObject() as? URL {
                if (try? next.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { found.append(next) }
            }
            result += found.sorted { $0.path < $1.path }
        }
        return result
    }

    /// Plays `file` in real time for `seconds` (or to its end): frames presented and dropped.
    static func play(_ file: URL, seconds: Double) async throws -> (presented: Int, dropped: Int) {
        let player = Player(clock: HostClock.shared, videoSink: HeadlessVideoSink(), audioSink: NullAudioSink())
        let done = BenchPlaybackCommand.endOrFailure(of: player)
        player.replaceCurrentItem(with: PlayerItem(url: file, loader: FileLoader()))
        player.play()
        let outcome = await done.wait(timeout: seconds)
        let stats = player.statistics
        await onOwnThread(named: "reel.bench-close") { player.replaceCurrentItem(with: nil) }
        if let message = outcome?.0 { throw CommandFailure.media(message) }
        return (stats.presentedFrames, stats.droppedFrames)
    }

    static func text(_ rows: [Row], skipped: Int, seconds: Double) -> String {
        let width = min(48, max(4, rows.map(\.name.count).max() ?? 4))
        var out = "Reel's first \(formatSeconds(seconds)) s of each item in real time, beside FFmpeg decoding the same frames\n\n"
        out += "item".rightPadded(to: width) + "   shown  dropped │ FFmpeg decode ms  share of real time\n"
        out += String(repeating: "─", count: width + 56) + "\n"
        for row in rows {
            let name = row.name.count > width ? "…" + row.name.suffix(width - 1) : row.name
            out += name.rightPadded(to: width)
            if let failure = row.failure {
                out += "   failed: \(failure)\n"
                continue
            }
            let share = row.ffmpegMs.map { String(format: "%.2f×", $0 / (seconds * 1000)) } ?? "–"
            out += String(row.presented).leftPadded(to: 8) + String(row.dropped).leftPadded(to: 9) + " │ "
                + formatMs(row.ffmpegMs, width: 16) + share.leftPadded(to: 20) + "\n"
        }
        let played = rows.filter { $0.failure == nil }
        let dropped = played.reduce(0) { $0 + $1.dropped }
        let withDrops = played.filter { $0.dropped > 0 }.count
        out += "\n\(played.count) items played (\(rows.count - played.count) failed, \(skipped) without video skipped): "
        out += "\(dropped) frames dropped in \(withDrops) items   \(dropped == 0 ? "✓" : "✗") goal 0\n"
        if dropped > 0, let note = benchConditions(ownLoad: 1) { out += note }
        return out
    }

    static func json(_ rows: [Row], seconds: Double) -> String {
        let items = rows.map { row in
            "{\"file\":\(jsonString(row.name)),\"presented\":\(row.presented),\"dropped\":\(row.dropped),"
                + "\"ffmpegDecodeMs\":\(jsonNumber(row.ffmpegMs)),\"ffmpegFrames\":\(row.ffmpegFrames),\"failure\":\(row.failure.map(jsonString) ?? "null")}"
        }
        return "{\"seconds\":\(jsonNumber(seconds)),\"items\":[\(items.joined(separator: ","))]}"
    }

    private static func formatSeconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
