import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelOrigin
import ReelStreaming
import ReelTestSupport
import Testing

/// `reel play` of a live stream holds its target offset behind the edge: joined at the target
/// (decoded from the independent part before it, shown from the target on) and held there with
/// a playback speed of 0.97–1.03×. Over the project's NIO origin publishing in real time, in
/// this process, so the test knows when every frame's media came out: a frame of time `t` was
/// published `t` seconds after the origin started, and the `liveOffset` lines of the trace say
/// (with the wall clock) where the playhead was. The offset measured is the test's, not the
/// player's estimate.
///
/// The offset's median is a performance figure (`reel bench live` reports it beside FFmpeg's);
/// here only what a slow machine cannot change is asserted: the target chosen, the speeds, the
/// parts, the frames, and that the player never runs ahead of its target. The stream is 90 s
/// and `reel play` stops after 300 frames, so a child that starts late on a loaded machine
/// still joins a stream that is live (with a 30 s stream it once joined after the end), and
/// the stream's clock starts at its first request (`joinAfter` seconds in), not before the child.
@Suite("reel play: live latency at its target")
struct LiveLatencyTests {
    /// 90 s with a keyframe every 2 s: only each segment's first part is independent.
    func packaged(_ scratch: Scratch) async throws -> (segments: [LiveHLSStream.Segment], initSection: String?, whole: URL) {
        try await packagedLiveCMAF(scratch, seconds: 90, keyframeInterval: 60)
    }

    /// What one run showed: the offsets behind the true edge at each `liveOffset` line, the
    /// targets and speeds those lines gave, the frames' md5s, and the fetches.
    struct Run {
        var offsets: [Double]
        var targets: Set<Double>
        var speeds: [Double]
        var shown: [String]
        var shownTimes: [Double]
        var fetches: [String]

        var median: Double? {
            guard !offsets.isEmpty else { return nil }
            return offsets.sorted()[offsets.count / 2]
        }
    }

    /// Publishes `segments` live from an origin in this process, `joinAfter` seconds in when
    /// `reel play` first asks, and plays 300 frames (10 s) of it.
    func play(_ scratch: Scratch, segments: [LiveHLSStream.Segment], initSection: String?, joinAfter: Double,
              firstTime: Double, extra: [String] = []) async throws -> Run {
        let reel = try await ReelBinary.locate()
        let stream = try LiveHLSStream(segments: segments, initSection: initSection, window: 6, loops: false)
        // The stream starts at reel's first request, `joinAfter` seconds in: however late the
        // child starts on a loaded core, it joins where the test means it to.
        let clock = LiveHLSFirstRequestClock(headStart: joinAfter)
        let server = OriginServer(configuration: .init(root: scratch.url, routes: [
            .liveHLS("/live.m3u8", stream: stream, time: .realTimeFromFirstRequest(clock)),
        ]))
        _ = try await server.start()
        let trace = scratch.file("trace-\(UUID().uuidString).jsonl")
        let result = try await runSeparately(reel, ["play", server.url(for: "live.m3u8").absoluteString, "--headless",
                                                    "--trace", trace, "--no-cache", "--frames", "300"] + extra)
        await server.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let startWall = try #require(clock.startDate, "reel asked for the playlist").timeIntervalSince1970
        let objects = try traceObjects(trace)
        let lines = objects.filter { $0["type"] as? String == "liveOffset" }
        // Media of time t came out t − firstTime seconds after the origin started.
        let offsets = lines.compactMap { line -> Double? in
            guard let wall = line["wallClock"] as? Double, let position = line["positionSeconds"] as? Double else { return nil }
            return (wall - startWall) - (position - firstTime)
        }
        let fetches = objects.filter { $0["type"] as? String == "liveFetch" }.compactMap { object in
            (object["url"] as? String).map { $0 + " " + (object["range"] as? String ?? "whole") }
        }
        return Run(offsets: offsets, targets: Set(lines.compactMap { $0["targetSeconds"] as? Double }),
                   speeds: lines.compactMap { $0["speed"] as? Double },
                   shown: frames(objects).compactMap { $0["md5"] as? String },
                   shownTimes: frames(objects).compactMap { $0["seconds"] as? Double }, fetches: fetches)
    }

    /// What every run must show: every frame one of FFmpeg's, in order, none twice; nothing
    /// fetched twice; speeds within 0.97–1.03×.
    func checkPlayback(_ run: Run, reference: [String]) {
        #expect(run.shown.count >= 150, "it played: \(run.shown.count) frames")
        var index = reference.startIndex
        var broken: String?
        for (position, md5) in run.shown.enumerated() {
            guard let found = reference[index...].firstIndex(of: md5) else {
                let time = position < run.shownTimes.count ? run.shownTimes[position] : -1
                let before = position > 0 && position - 1 < run.shownTimes.count ? run.shownTimes[position - 1] : -1
                broken = "shown frame \(position) of \(run.shown.count) at \(time) s (the one before at \(before) s) is "
                    + (reference.firstIndex(of: md5).map { "reference frame \($0), before the next expected \(index)" } ?? "none of FFmpeg's")
                break
            }
            index = found + 1
        }
        #expect(broken == nil, "every frame shown is FFmpeg's decode of the stream, in order, none twice: \(broken ?? "")")
        #expect(Set(run.fetches).count == run.fetches.count, "nothing fetched twice: \(run.fetches)")
        #expect(!run.speeds.isEmpty && run.speeds.allSatisfy { $0 >= 0.97 && $0 <= 1.03 }, "speeds: \(Set(run.speeds))")
    }

    /// The target starts at the ideal; a stall (a loaded machine makes them) moves it back by
    /// half a second, at most 3 s, never ahead.
    func checkTargets(_ run: Run, ideal: Double, _ what: String) {
        #expect(run.targets.min() == ideal, "\(what): \(run.targets)")
        #expect(run.targets.allSatisfy { $0 >= ideal && $0 <= ideal + 3 }, "\(what): \(run.targets)")
    }

    @Test func aLowLatencyStreamIsHeldAtPartHoldBack() async throws {
        let scratch = try Scratch("reel-live-latency-parts")
        defer { scratch.remove() }
        let (segments, initSection, whole) = try await packaged(scratch)
        #expect(segments.allSatisfy { $0.parts.count == 4 && $0.parts.map(\.independent) == [true, false, false, false] },
                "a 2 s GOP: one independent part a segment")
        let times = try referenceTimes(whole)
        let run = try await play(scratch, segments: segments, initSection: initSection, joinAfter: 5, firstTime: times.first ?? 0)
        checkPlayback(run, reference: try referenceMD5s(whole))
        #expect(run.fetches.contains { !$0.hasSuffix("whole") }, "it played by parts")
        checkTargets(run, ideal: 1.5, "the target is PART-HOLD-BACK")
        let median = try #require(run.median, "no liveOffset line")
        #expect(median >= 1.5 - 0.5, "median offset behind the edge \(median) s, PART-HOLD-BACK 1.5 s: \(run.offsets)")
    }

    @Test func aStreamWithoutPartsIsHeldAtHoldBack() async throws {
        let scratch = try Scratch("reel-live-latency-segments")
        defer { scratch.remove() }
        let (parted, initSection, whole) = try await packaged(scratch)
        let segments = parted.map { LiveHLSStream.Segment(uri: $0.uri, duration: $0.duration) }
        let times = try referenceTimes(whole)
        // HOLD-BACK is three target durations, 6 s: join once four segments are out, shortly
        // after the fourth. Without parts a playlist lists media a whole segment at a time, so
        // the joining playlist is behind the true edge by however long ago its newest segment
        // came out (up to a target duration, which 3 % faster makes up in about a minute):
        // here 0.3 s.
        let run = try await play(scratch, segments: segments, initSection: initSection, joinAfter: 8.3, firstTime: times.first ?? 0)
        checkPlayback(run, reference: try referenceMD5s(whole))
        #expect(run.fetches.allSatisfy { $0.hasSuffix("whole") }, "whole segments")
        checkTargets(run, ideal: 6, "the target is HOLD-BACK")
        let median = try #require(run.median, "no liveOffset line")
        #expect(median >= 6 - 0.5, "median offset behind the edge \(median) s, HOLD-BACK 6 s: \(run.offsets)")
    }

    @Test func theUsersOffsetIsHeldInstead() async throws {
        let scratch = try Scratch("reel-live-latency-offset")
        defer { scratch.remove() }
        let (segments, initSection, whole) = try await packaged(scratch)
        let times = try referenceTimes(whole)
        let run = try await play(scratch, segments: segments, initSection: initSection, joinAfter: 6, firstTime: times.first ?? 0,
                                 extra: ["--live-offset", "3"])
        checkPlayback(run, reference: try referenceMD5s(whole))
        checkTargets(run, ideal: 3, "the target is --live-offset's")
        let median = try #require(run.median, "no liveOffset line")
        #expect(median >= 3 - 0.5, "median offset behind the edge \(median) s, --live-offset 3: \(run.offsets)")
    }
}
