import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import ReelMedia
import ReelTestSupport
import Testing

/// `reel bench …` in a tiny configuration: the output is complete and sane (the
/// figures themselves are the benchmark's business, not the tests').
@Suite("reel bench")
struct BenchCommandTests {
    @Test func firstFramePrintsEveryScenarioAsJSONAndDrawsAWellFormedChart() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-bench-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let svg = scratch.appendingPathComponent("chart.svg")
        let child = try Child(reel, ["bench", "first-frame", "--runs", "1", "--rtt-ms", "0", "--kbps", "200000",
                                     "--clip-seconds", "1", "--clip-size", "160x288", "--json", "--plot", svg.path])
        let status = await child.exitStatus()
        if status == nil { child.kill(SIGKILL) }
        #expect(status == 0, "\(child.standardError)")
        let data = Data(child.standardOutput.utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(child.standardOutput)")
        #expect(object.keys.sorted() == ["scenarios"])
        let scenarios = try #require(object["scenarios"] as? [[String: Any]])
        let names = scenarios.compactMap { $0["name"] as? String }
        #expect(Set(names) == ["cold", "warm", "preloaded", "decode-floor", "moov-at-end", "hls", "dash"])
        let keys = ["name", "runs", "p50Ms", "p95Ms", "maxMs", "baselineP50Ms", "ratio", "bytesBeforeFirstFrame", "requestsBeforeFirstFrame"]
        for scenario in scenarios {
            let name = scenario["name"] as? String ?? "?"
            #expect(scenario.keys.sorted() == keys.sorted(), "\(name)")
            #expect(scenario["runs"] as? Int == 1, "\(name)")
            let p50 = try #require(scenario["p50Ms"] as? Double, "\(name)")
            let p95 = try #require(scenario["p95Ms"] as? Double, "\(name)")
            let max = try #require(scenario["maxMs"] as? Double, "\(name)")
            let baseline = try #require(scenario["baselineP50Ms"] as? Double, "\(name)")
            let ratio = try #require(scenario["ratio"] as? Double, "\(name)")
            #expect(p50 >= 0 && p50 <= p95 && p95 <= max, "\(name)")
            #expect(baseline > 0, "\(name)")
            #expect(abs(ratio - p50 / baseline) < 0.01 * Swift.max(1, ratio), "\(name)")
            #expect((scenario["bytesBeforeFirstFrame"] as? Double ?? 0) > 0, "\(name)")
            #expect((scenario["requestsBeforeFirstFrame"] as? Double).map { $0 >= 0 } == true, "\(name)")
        }
        // The chart parses as XML and labels its axis.
        let chart = try Data(contentsOf: svg)
        let parser = XMLParser(data: chart)
        let collector = SVGCollector()
        parser.delegate = collector
        #expect(parser.parse(), "the SVG is well-formed XML")
        #expect(collector.root == "svg")
        #expect(collector.text.contains("time to first frame (ms)"))
        #expect(collector.circles >= 10, "a dot per run, Reel and FFmpeg, per scenario")
    }

    @Test func playbackComparesThroughputWithFFmpegAndCountsDrops() async throws {
        let reel = try await ReelBinary.locate()
        let child = try Child(reel, ["bench", "playback", "--runs", "1", "--clip-seconds", "1", "--clip-size", "160x288", "--busy-loops", "0",
                                     "--seconds", "2", "--memory-runs", "1", "--json"])
        let status = await child.exitStatus()
        if status == nil { child.kill(SIGKILL) }
        #expect(status == 0, "\(child.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(child.standardOutput.utf8)) as? [String: Any],
                                  "\(child.standardOutput)")
        let reelFigures = try #require(object["reel"] as? [String: Any])
        let ffmpeg = try #require(object["ffmpeg"] as? [String: Any])
        #expect((reelFigures["frames"] as? Double ?? 0) >= 25, "a 1 s 30 fps clip presents about 30 frames")
        #expect(reelFigures["frames"] as? Double == ffmpeg["frames"] as? Double, "both see every frame")
        #expect((ffmpeg["framesPerSecond"] as? Double ?? 0) > 0)
        #expect((object["ratio"] as? Double ?? 0) > 0)
        let realtime = try #require(object["realtime"] as? [[String: Any]])
        #expect(realtime.compactMap { $0["rate"] as? Double } == [1, 2])
        #expect(realtime.allSatisfy { ($0["presentedFrames"] as? Int ?? 0) > 0 })
        // Through an audio device when SDL's dummy driver opens: the callback's durations and the
        // A/V offsets are measured.
        if let device = object["audioDevice"] as? String, device.hasPrefix("SDL") {
            #expect(realtime.allSatisfy { ($0["audioCallbackMicroseconds"] as? [String: Any])?["count"] as? Int ?? 0 > 0 })
            // A/V offsets are sampled when a frame is presented against a running audio clock;
            // on one starved core (taskset -c 0 beside the whole suite) one of the two short runs
            // once ended with none, so at least one run has them.
            #expect(realtime.contains { $0["avOffsetMs"] != nil }, "\(realtime)")
            // Both changes are measured on a machine that keeps up; on one starved core a change
            // asked while the 1 s clip loops can stay unmeasured (open: the rate applies, the
            // measurement does not resolve), so at least one, and each a real latency.
            let heard = (object["rateChangeMs"] as? [Double]) ?? []
            #expect((1...2).contains(heard.count), "rate changes heard: \(heard)")
            #expect(heard.allSatisfy { $0 >= 0 })
        }
        #expect(object["busyLoops"] as? Int == 0)
        // Peak memory of `reel play --headless` on the same file, as the kernel counted it.
        let memory = try #require(object["peakMemoryBytes"] as? [String: Any])
        let reelPeak = try #require(memory["Reel play --headless"] as? [String: Any])
        #expect((reelPeak["p50"] as? Double ?? 0) > 10_000_000, "a whole Reel process is more than 10 MB resident")
        #expect(reelPeak["failures"] as? Int == 0)
        // And stopped after the first half of the clip: the caps are full by then, so the whole
        // clip's peak is no higher (within the goal's 10 %).
        let half = try #require(memory.first { $0.key.hasPrefix("Reel, first ") }?.value as? [String: Any], "\(memory.keys)")
        #expect(half["failures"] as? Int == 0)
        let held = try #require(object["peakMemoryWholeOverFirstHalf"] as? Double)
        #expect(held > 0 && held <= 1.10, "whole clip's peak over its first half's: \(held)")
    }

    @Test func adaptiveReportsTheFirstSwitchUpAndStallsBesideAFixedTopVariant() async throws {
        let reel = try await ReelBinary.locate()
        // A short ladder (four segments: the rule steps up once two are buffered) on a link that
        // carries everything: the figures are not the test's.
        let child = try Child(reel, ["bench", "adaptive", "--seconds", "8", "--link", "0:200000", "--json"])
        let status = await child.exitStatus()
        if status == nil { child.kill(SIGKILL) }
        #expect(status == 0, "\(child.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(child.standardOutput.utf8)) as? [String: Any],
                                  "\(child.standardOutput)")
        #expect(object["link"] as? String == "0:200000")
        #expect((object["firstSwitchUpSeconds"] as? Double ?? -1) >= 0, "a fast link steps up: \(object)")
        // The rung it steps to follows the throughput it measures, which a starved processor
        // lowers (rank 1 was seen on one loaded core); above the start is the behaviour.
        #expect((object["firstSwitchUpRank"] as? Int ?? 0) >= 1)
        for name in ["adaptive", "fixedTop"] {
            let run = try #require(object[name] as? [String: Any])
            #expect(run["failure"] is NSNull, "\(name): \(run)")
            #expect((run["presented"] as? Int ?? 0) > 0)
            #expect((run["stalledSeconds"] as? Double ?? -1) >= 0)
        }
        let fixed = try #require(object["fixedTop"] as? [String: Any])
        #expect((fixed["switches"] as? [String])?.first?.hasPrefix("up 0→2 before segment 0") == true, "\(fixed)")
    }

    /// A short live stream with parts: both players show frames behind the edge, and Reel's
    /// scheduler asks for no segment or part twice. The figures are not the test's.
    @Test func liveReportsLatencyBehindTheEdgeBesideFFmpeg() async throws {
        let reel = try await ReelBinary.locate()
        let child = try Child(reel, ["bench", "live", "--seconds", "12", "--join", "4", "--play", "4", "--json"])
        let status = await child.exitStatus()
        if status == nil { child.kill(SIGKILL) }
        #expect(status == 0, "\(child.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(child.standardOutput.utf8)) as? [String: Any],
                                  "\(child.standardOutput)")
        #expect(object["parts"] as? Bool == true)
        for name in ["reel", "ffmpeg"] {
            let run = try #require(object[name] as? [String: Any])
            #expect(run["failure"] is NSNull, "\(name): \(run)")
            #expect((run["frames"] as? Int ?? 0) > 0, "\(name): \(run)")
            // A frame is shown only after its media was published.
            #expect((run["latencyMinSeconds"] as? Double ?? -1) > 0, "\(name): \(run)")
            #expect((run["mediaRequests"] as? Int ?? 0) > 0)
        }
        let scheduled = try #require(object["reel"] as? [String: Any])
        #expect(scheduled["refetched"] as? Int == 0, "\(scheduled)")
    }

    @Test func badOptionsAreUsageErrors() async throws {
        let reel = try await ReelBinary.locate()
        let result = try await run(reel, ["bench", "first-frame", "--runs", "0"])
        #expect(result.status == 2)
        let missing = try await run(reel, ["bench", "first-frame", "/nonexistent-dir-for-reel"])
        #expect(missing.status == 2)
        // A row the run does not have is refused before anything is measured: one MP4 makes
        // no hls row.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-bench-scenario-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.copyItem(at: try Fixtures.clip(ClipSpec(width: 96, height: 160, duration: 0.5)),
                                         to: scratch.appendingPathComponent("clip.mp4"))
        let unknown = try await runSeparately(reel, ["bench", "first-frame", scratch.path, "--runs", "1", "--scenario", "hls"])
        #expect(unknown.status == 2, "\(unknown.stderr)")
        #expect(unknown.stderr.contains("--scenario hls: no such scenario"), "\(unknown.stderr)")
        #expect(unknown.stdout.isEmpty, "nothing measured: \(unknown.stdout)")
    }

    @Test func startPlaysEachVideoInRealTimeBesideFFmpegsDecodeOfTheSameFrames() async throws {
        let reel = try await ReelBinary.locate()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-bench-start-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: try Fixtures.clip(ClipSpec(width: 96, height: 160, duration: 1)),
                                         to: directory.appendingPathComponent("clip.mp4"))
        try FileManager.default.copyItem(at: try Fixtures.clip(ClipSpec(duration: 0.5, videoCodec: nil, container: .mp4)),
                                         to: directory.appendingPathComponent("sound.m4a"))
        try Data("not media".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        let child = try Child(reel, ["bench", "start", directory.path, "--seconds", "2", "--json"])
        let status = await child.exitStatus()
        if status == nil { child.kill(SIGKILL) }
        #expect(status == 0, "\(child.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(child.standardOutput.utf8)) as? [String: Any],
                                  "\(child.standardOutput)")
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(items.count == 1, "only the video is measured: \(items)")
        let item = try #require(items.first)
        #expect((item["file"] as? String)?.hasSuffix("clip.mp4") == true)
        // How many frames 2 s of real time reach depends on the machine; FFmpeg decodes as many.
        let shown = (item["presented"] as? Double ?? 0) + (item["dropped"] as? Double ?? 0)
        #expect(shown >= 1 && shown <= 30, "the 1 s clip's frames presented or dropped: \(item)")
        #expect(item["ffmpegFrames"] as? Double == shown, "FFmpeg decoded the same frames: \(item)")
        #expect((item["ffmpegDecodeMs"] as? Double ?? 0) > 0, "\(item)")
        #expect(item["failure"] is NSNull)
        let none = try await run(reel, ["bench", "start"])
        #expect(none.status == 2)
    }
}

final class SVGCollector: NSObject, XMLParserDelegate, @unchecked Sendable {
    var root: String?
    var text = ""
    var circles = 0
    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if root == nil { root = elementName }
        if elementName == "circle" { circles += 1 }
    }
    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
}

/// `reel bench swipe` over a small directory feed.
@Suite("reel bench swipe")
struct BenchSwipeTests {
    @Test func swipingReportsStagesDecodersAndMemory() async throws {
        let reel = try await ReelBinary.locate()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-bench-swipe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let clip = try Data(contentsOf: Fixtures.clip(ClipSpec(duration: 1)))
        for name in ["a.mp4", "b.mp4", "c.mp4", "d.mp4"] { try clip.write(to: directory.appendingPathComponent(name)) }
        let child = try Child(reel, ["bench", "swipe", directory.path, "--swipes", "6", "--dwell", "0.05", "--rtt-ms", "0", "--json"])
        let status = await child.exitStatus()
        if status == nil { child.kill(SIGKILL) }
        #expect(status == 0, "\(child.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(child.standardOutput.utf8)) as? [String: Any],
                                  "\(child.standardOutput)")
        #expect(object["swipes"] as? Int == 6)
        #expect(object["items"] as? Int == 4)
        let stages = try #require(object["stages"] as? [String: Int])
        #expect(stages.values.reduce(0, +) == 6)
        #expect((object["maxLiveDecoders"] as? Int ?? 99) <= 3, "a pool of three players at most")
        #expect((object["rssStartBytes"] as? Int ?? 0) > 0 && (object["rssEndBytes"] as? Int ?? 0) > 0)
        #expect((object["p95Ms"] as? Double).map { $0 >= 0 } == true)
    }
}
