import ArgumentParser
import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import Synchronization

/// `reel bench scrub`: a 60 Hz pointer dragged across a clip on the engine (headless, real
/// time), scrubbing mode beside a keyframe-only drag in the same run.
struct BenchScrubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scrub",
        abstract: "Scrubbing: exact frames shown per second of dragging and the release's settle time, beside keyframe-only seeks.",
        discussion: """
            Plays the clip (FILE, or a 1080×1920 30 fps H.264 + AAC testsrc2 clip with a 2 s \
            GOP made with the ffmpeg command), then drags a pointer across it at 60 Hz for \
            --drag seconds and lets go, on the engine with no window or sound device. Scrubbing \
            mode (Player.beginScrubbing) is measured beside a keyframe-only drag (one keyframe \
            seek in flight, the newest target chased, an exact seek on release), alternating, \
            --runs of each; the medians are printed. previewsPerSecond: distinct exact frames \
            shown per second of dragging (for the baseline: distinct frames, all keyframes). \
            settleMs: from letting go to the exact frame there on screen, landed for playing. \
            The goals: previewsPerSecond at or over 15, settleMs at or under 100.
            """
    )

    @Argument(help: "The clip to drag across (default: a 1080×1920 testsrc2 clip with a 2 s GOP).")
    var file: String?

    @Option(help: "Seconds the pointer is dragged for.")
    var drag: Double = 4

    @Option(help: "Drags of each kind.")
    var runs: Int = 3

    @Flag(help: "Print the results as JSON (the last line is one object).")
    var json = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard drag >= 0.5, drag <= 60 else { throw ValidationError("--drag must be in [0.5, 60]") }
        guard runs >= 1, runs <= 20 else { throw ValidationError("--runs must be in [1, 20]") }
    }

    /// One drag's figures.
    struct Drag: Sendable {
        var previewsPerSecond: Double
        var settleMs: Double?
        var targets: Int
        /// Distinct exact frames shown while dragging, and frames shown for a target that
        /// were not the frame whose interval holds it (scrubbing mode shows none).
        var exactFrames = 0
        var inexactFrames = 0
    }

    func run() async throws {
        global.apply()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-bench-scrub-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url: URL
        if let file {
            url = URL(fileURLWithPath: file)
            guard FileManager.default.isReadableFile(atPath: url.path) else { throw CommandFailure.media("\(file): no such file") }
        } else {
            if !json { printError("encoding a 1080x1920 30 fps clip with a 2 s GOP…") }
            url = try Self.makeClip(in: directory)
        }
        var reel: [Drag] = []
        var keyframes: [Drag] = []
        for run in 0..<runs {
            if !json { printError("drag \(run + 1)/\(runs)…") }
            for scrubbing in run % 2 == 0 ? [true, false] : [false, true] {
                let result = try await Self.drag(url, seconds: drag, scrubbing: scrubbing)
                if scrubbing { reel.append(result) } else { keyframes.append(result) }
            }
        }
        let r = Self.median(reel), k = Self.median(keyframes)
        print(json ? Self.json(reel: r, keyframes: k) : Self.text(reel: r, keyframes: k, clip: file ?? "1080x1920 testsrc2, 2 s GOP"))
    }

    /// The goal clip: 10 s of 1080×1920 testsrc2 at 30 fps, H.264 with a keyframe every 60
    /// frames (no scene-cut keyframes), a 440 Hz tone in AAC.
    static func makeClip(in directory: URL) throws -> URL {
        guard let ffmpeg = PeakMemory.executable("ffmpeg") else { throw CommandFailure.media("the ffmpeg command is missing (it makes the clip)") }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("scrub-1080x1920.mp4")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.arguments = ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1080x1920:rate=30",
                             "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "10",
                             "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-g", "60", "-keyint_min", "60",
                             "-sc_threshold", "0", "-c:a", "aac", "-b:a", "96k", "-movflags", "+faststart", url.path]
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CommandFailure.media("ffmpeg could not make the clip") }
        return url
    }

    /// Plays the clip, drags across it from 5 % to 95 % at 60 Hz, lets go at 95 %.
    static func drag(_ url: URL, seconds: Double, scrubbing: Bool) async throws -> Drag {
        let player = Player(clock: HostClock.shared, videoSink: HeadlessVideoSink(), audioSink: NullAudioSink())
        defer { player.replaceCurrentItem(with: nil) }
        let shown = Mutex<(dragging: Bool, frames: Set<MediaTime>)>((false, []))
        let failed = Mutex<MediaError?>(nil)
        player.addEventObserver { event in
            if case .framePresented(let pts, _) = event {
                shown.withTrackedLock { if $0.dragging { $0.frames.insert(pts) } }
            } else if case .failed(let error) = event {
                failed.withTrackedLock { $0 = error }
            }
        }
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: FileLoader()))
        player.play()
        let deadline = monotonicMs() + 20_000
        while player.currentTime.seconds < 0.3, failed.withTrackedLock({ $0 }) == nil, monotonicMs() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        if let error = failed.withTrackedLock({ $0 }) { throw CommandFailure.media("\(url.lastPathComponent): \(error)") }
        let duration = player.duration
        guard duration.isNumeric, duration.seconds > 0.5 else { throw CommandFailure.media("\(url.lastPathComponent): no duration to drag across") }
        let baseline = KeyframeDrag(player: player)
        shown.withTrackedLock { $0.dragging = true }
        if scrubbing { player.beginScrubbing() } else { player.pause() }
        let steps = Int(seconds * 60)
        let start = monotonicMs()
        var last = MediaTime.zero
        for i in 0...steps {
            let fraction = 0.05 + 0.9 * Double(i) / Double(steps)
            last = MediaTime(seconds: duration.seconds * fraction, preferredTimescale: 1000)
            if scrubbing { player.scrub(to: last) } else { baseline.move(to: last) }
            let next = start + Double(i + 1) * 1000 / 60
            let wait = next - monotonicMs()
            if wait > 0 { try await Task.sleep(nanoseconds: UInt64(wait * 1_000_000)) }
        }
        let dragged = (monotonicMs() - start) / 1000
        let released = monotonicMs()
        let settled = Mutex<Double?>(nil)
        if scrubbing {
            player.endScrubbing(at: last) { _ in settled.withTrackedLock { $0 = monotonicMs() } }
        } else {
            baseline.release(at: last) { settled.withTrackedLock { $0 = monotonicMs() } }
        }
        while settled.withTrackedLock({ $0 }) == nil, monotonicMs() - released < 10_000 {
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        let settleMs = settled.withTrackedLock { $0 }.map { $0 - released }
        var distinct = shown.withTrackedLock { $0.frames.count }
        var inexact = 0
        if scrubbing {
            // Exact frames only: a keyframe preview is not counted. Each is checked: the frame
            // whose display interval holds its target.
            let interval = player.mediaInfo?.videoStream?.frameRate.map { MediaTime(value: Int64($0.timescale), timescale: Int32($0.value)) }
                ?? MediaTime(value: 1, timescale: 30)
            let exact = player.scrubReport.steps.filter { !$0.isRelease && $0.kind != .keyframe }
            inexact = exact.filter { step in step.frame.map { !($0 <= step.target && step.target < $0 + interval) } ?? false }.count
            distinct = Set(exact.compactMap(\.frame)).count
        }
        return Drag(previewsPerSecond: Double(distinct) / dragged, settleMs: settleMs, targets: steps + 1,
                    exactFrames: scrubbing ? distinct : 0, inexactFrames: inexact)
    }

    static func median(_ drags: [Drag]) -> Drag {
        func mid(_ values: [Double]) -> Double? {
            let sorted = values.sorted()
            return sorted.isEmpty ? nil : sorted[sorted.count / 2]
        }
        return Drag(previewsPerSecond: mid(drags.map(\.previewsPerSecond)) ?? 0, settleMs: mid(drags.compactMap(\.settleMs)),
                    targets: drags.first?.targets ?? 0, exactFrames: drags.map(\.exactFrames).min() ?? 0,
                    inexactFrames: drags.map(\.inexactFrames).max() ?? 0)
    }

    static func text(reel: Drag, keyframes: Drag, clip: String) -> String {
        var out = "scrub: \(clip), a 60 Hz pointer (\(reel.targets) targets a drag)\n"
        out += "                      previews/s   settle ms\n"
        out += "Reel scrubbing mode   " + String(format: "%10.1f", reel.previewsPerSecond) + "  " + formatMs(reel.settleMs, width: 10) + "\n"
        out += "keyframe seeks        " + String(format: "%10.1f", keyframes.previewsPerSecond) + "  " + formatMs(keyframes.settleMs, width: 10)
            + "   (distinct keyframes, none exact)\n"
        out += "exact frames shown: \(reel.exactFrames) distinct (fewest of the drags), \(reel.inexactFrames) not the frame at their target\n"
        out += String(format: "previewsPerSecond %.1f", reel.previewsPerSecond)
            + (reel.previewsPerSecond >= 15 ? "   ✓ goal at or over 15\n" : "   ✗ goal at or over 15\n")
        out += "settleMs " + formatMs(reel.settleMs, width: 0)
            + ((reel.settleMs ?? .infinity) <= 100 ? "   ✓ goal at or under 100\n" : "   ✗ goal at or under 100\n")
        if out.contains("✗"), let note = benchConditions(ownLoad: 1) { out += "\n" + note }
        return out
    }

    static func json(reel: Drag, keyframes: Drag) -> String {
        "{\"previewsPerSecond\":\(jsonNumber(reel.previewsPerSecond)),\"settleMs\":\(jsonNumber(reel.settleMs)),"
            + "\"baseline\":{\"previewsPerSecond\":\(jsonNumber(keyframes.previewsPerSecond)),\"settleMs\":\(jsonNumber(keyframes.settleMs))},"
            + "\"targets\":\(reel.targets),\"exactFrames\":\(reel.exactFrames),\"inexactFrames\":\(reel.inexactFrames)}"
    }
}

/// The baseline: keyframe seeks while dragging, one in flight with the newest target chased
/// (the best a keyframe-only drag does), an exact seek on release.
final class KeyframeDrag: Sendable {
    let player: Player
    private let state = Mutex<(inFlight: Bool, chase: MediaTime?, release: (@Sendable () -> Void)?)>((false, nil, nil))

    init(player: Player) { self.player = player }

    func move(to target: MediaTime) {
        let send = state.withTrackedLock { state -> Bool in
            if state.inFlight { state.chase = target; return false }
            state.inFlight = true
            return true
        }
        if send { seek(target) }
    }

    private func seek(_ target: MediaTime) {
        player.seek(to: target, toleranceBefore: .positiveInfinity, toleranceAfter: .zero) { [self] _ in
            let next = state.withTrackedLock { state -> MediaTime? in
                defer { state.chase = nil }
                if state.chase == nil { state.inFlight = false }
                return state.chase
            }
            if let next { seek(next) } else { releaseIfAsked() }
        }
    }

    func release(at target: MediaTime, then done: @escaping @Sendable () -> Void) {
        state.withTrackedLock { $0.chase = nil; $0.release = { [player] in
            player.seek(to: target, toleranceBefore: .zero, toleranceAfter: .zero) { _ in done() }
        } }
        let idle = state.withTrackedLock { !$0.inFlight }
        if idle { releaseIfAsked() }
    }

    private func releaseIfAsked() {
        let release = state.withTrackedLock { state -> (@Sendable () -> Void)? in
            defer { state.release = nil }
            return state.release
        }
        release?()
    }
}
