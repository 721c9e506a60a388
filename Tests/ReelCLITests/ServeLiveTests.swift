import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelMediaTools
import ReelOrigin
import ReelStreaming
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `reel serve --live`: a packaged stream published again as a live one.
@Suite("reel serve: live HLS")
struct ServeLiveTests {
    @Test func aPackagedStreamIsPublishedLiveAndABlockingReloadWaitsForItsSegment() async throws {
        let reel = try await ReelBinary.locate()
        let root = try Scratch("reel-serve-live")
        defer { root.remove() }
        let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 3, keyframeInterval: 15))
        try StreamPackager.package(clip, loader: FileLoader(), format: .hlsFMP4,
                                   into: root.url.appendingPathComponent("s"), segmentSeconds: 1)
        // Looping, so it is still live whenever this test gets to ask (on a loaded core, late).
        let server = try Child(reel, ["serve", root.path, "--port", "0", "--live", "s/index.m3u8", "--live-window", "3", "--live-loop"])
        defer { server.kill(SIGKILL) }
        let base = try await servedURL(server, attempts: 3000)
        let origin = try #require(base, "reel serve printed no URL: \(server.output)")
        let http = HTTPLoader()
        do {
            let live = origin.appendingPathComponent("live/s/index.m3u8")
            var playlist = try HLSMediaPlaylist.parse(try await http.data(live))
            #expect(!playlist.isFinal)
            #expect(playlist.serverControl.canBlockReload)
            // A blocking reload for the segment after the newest (or the first, before any).
            let wanted = playlist.nextSequence
            var components = URLComponents(url: live, resolvingAgainstBaseURL: false)!
            components.queryItems = [URLQueryItem(name: "_HLS_msn", value: String(wanted))]
            playlist = try HLSMediaPlaylist.parse(try await http.data(components.url!))
            #expect(playlist.segments.last.map(\.sequence) ?? -1 >= wanted)
            #expect(playlist.segments.count <= 3)
            #expect(playlist.initSection?.uri == "/s/init.mp4")
            // Its segments are the packaged files.
            let segment = try #require(playlist.segments.last)
            let served = try await http.data(URL(string: segment.uri, relativeTo: live)!.absoluteURL)
            let file = try Data(contentsOf: root.url.appendingPathComponent(String(segment.uri.dropFirst())))
            #expect(served == file)
        } catch {
            await http.shutdown()
            throw error
        }
        await http.shutdown()
        server.kill(SIGTERM)
        #expect(await server.exitStatus() == 0)
    }

    /// A live stream over a packaged 10 s clip in 0.5 s segments, one pass, from an origin in
    /// this process whose time moves with the requests (from `start` seconds, 0.5 s a plain
    /// reload): what the player sees does not depend on the machine's load. Returns the
    /// server, the playlist's URL and the clip.
    func liveOrigin(_ scratch: Scratch, start: Double, stallsAfter: Double? = nil) async throws -> (OriginServer, URL, URL) {
        let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 10, keyframeInterval: 15))
        let playlistFile = try StreamPackager.package(clip, loader: FileLoader(), format: .hlsFMP4,
                                                      into: scratch.url.appendingPathComponent("s"), segmentSeconds: 0.5)
        let vod = try HLSMediaPlaylist.parse(try Data(contentsOf: playlistFile))
        let stream = try LiveHLSStream(segments: vod.segments.map { .init(uri: "/s/" + $0.uri, duration: $0.duration) },
                                       initSection: vod.initSection.map { "/s/" + $0.uri }, window: 4,
                                       stallsAfter: stallsAfter, loops: false)
        let server = OriginServer(configuration: .init(root: scratch.url, routes: [
            .liveHLS("/live.m3u8", stream: stream, time: .perRequest(start: start, step: 0.5)),
        ]))
        _ = try await server.start()
        return (server, server.url(for: "live.m3u8"), clip)
    }

    @Test func reelPlaysALiveStreamAtTheEdgeBitExactFetchingEachSegmentOnce() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-play-live")
        defer { scratch.remove() }
        // Join once most segments are out, as a viewer arriving mid-stream does: 3 s (three
        // target durations) back from an edge past 4 s is past the start.
        let (server, url, clip) = try await liveOrigin(scratch, start: 4.1)
        let trace = scratch.url.appendingPathComponent("trace.jsonl").path
        let result = try await runSeparately(reel, ["play", url.absoluteString, "--headless", "--clock", "fast", "--trace", trace, "--no-cache"])
        let requests = server.statistics.requests
        await server.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try traceObjects(trace)
        let shown = frames(objects).compactMap { $0["md5"] as? String }
        let reference = try referenceMD5s(clip)
        #expect(shown.count >= 30, "it played from its join to the end: \(shown.count) frames")
        #expect(Array(reference.suffix(shown.count)) == shown, "every frame from the join to the end equals FFmpeg's decode")
        #expect(reference.count > shown.count, "it joined at the edge, not at the start")
        let fetches = objects.filter { $0["type"] as? String == "liveFetch" }.compactMap { object in
            (object["url"] as? String).map { $0 + " " + (object["range"] as? String ?? "whole") }
        }
        #expect(!fetches.isEmpty)
        #expect(Set(fetches).count == fetches.count, "no segment fetched twice: \(fetches)")
        let segmentRequests = requests.filter { $0.path.hasSuffix(".m4s") }.map(\.path)
        #expect(Set(segmentRequests).count == segmentRequests.count, "the origin saw each segment once: \(segmentRequests)")
        #expect(objects.contains { ($0["url"] as? String)?.contains("_HLS_msn=") == true && $0["type"] as? String == "livePlaylist" },
                "it used blocking reloads")
    }

    @Test func aLoopsDiscontinuityPlaysOnWithTimestampsThatKeepRising() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-play-live-loop")
        defer { scratch.remove() }
        // A 3 s clip published live in a loop: a discontinuity each pass, where its timestamps
        // start again. The demuxer reopens there and the timeline follows on.
        let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 3, keyframeInterval: 15))
        let playlistFile = try StreamPackager.package(clip, loader: FileLoader(), format: .hlsFMP4,
                                                      into: scratch.url.appendingPathComponent("s"), segmentSeconds: 0.5)
        let vod = try HLSMediaPlaylist.parse(try Data(contentsOf: playlistFile))
        let stream = try LiveHLSStream(segments: vod.segments.map { .init(uri: "/s/" + $0.uri, duration: $0.duration) },
                                       initSection: vod.initSection.map { "/s/" + $0.uri }, window: 4, loops: true)
        let server = OriginServer(configuration: .init(root: scratch.url, routes: [
            .liveHLS("/loop.m3u8", stream: stream, time: .perRequest(start: 2.1, step: 0.5)),
        ]))
        _ = try await server.start()
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", server.url(for: "loop.m3u8").absoluteString, "--headless", "--clock", "fast",
                                                    "--frames", "200", "--trace", trace, "--no-cache"])
        await server.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let shown = frames(try traceObjects(trace))
        let md5s = shown.compactMap { $0["md5"] as? String }
        let reference = try referenceMD5s(clip)
        #expect(md5s.count == 200)
        let first = try #require(reference.firstIndex(of: md5s.first ?? ""), "the first frame is one of the clip's")
        let expected = (0..<md5s.count).map { reference[(first + $0) % reference.count] }
        #expect(md5s == expected, "every frame in order across the loops: none repeated, none skipped")
        let seconds = shown.compactMap { $0["seconds"] as? Double }
        #expect(zip(seconds, seconds.dropFirst()).allSatisfy { $0 < $1 }, "presentation times keep rising across the discontinuity")
    }

    @Test func aLowLatencyStreamIsPlayedByPartsCloseToTheEdge() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-play-ll")
        defer { scratch.remove() }
        // CMAF chunks: 2 s segments of four 0.5 s fragments, a keyframe at each.
        let (segments, initSection, wholeFile) = try await packagedLiveCMAF(scratch, seconds: 12, keyframeInterval: 15)
        #expect(segments.allSatisfy { $0.parts.count == 4 && $0.parts.allSatisfy(\.independent) })
        let stream = try LiveHLSStream(segments: segments, initSection: initSection, window: 4, loops: false)
        // Join 4.2 s in (the origin's time moves with the requests, whatever the machine's
        // load): the edge is at 4 s; 1.5 s back (PART-HOLD-BACK) is a part of the second
        // segment, where three target durations back (FFmpeg's and Reel's join without parts)
        // would be the stream's start.
        let server = OriginServer(configuration: .init(root: scratch.url, routes: [
            .liveHLS("/ll.m3u8", stream: stream, time: .perRequest(start: 3.7, step: 0.5)),
        ]))
        _ = try await server.start()
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", server.url(for: "ll.m3u8").absoluteString, "--headless", "--clock", "fast",
                                                    "--trace", trace, "--no-cache"])
        await server.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try traceObjects(trace)
        let shown = frames(objects).compactMap { $0["md5"] as? String }
        let reference = try referenceMD5s(wholeFile)
        #expect(Array(reference.suffix(shown.count)) == shown, "every frame from the join to the end equals FFmpeg's decode")
        #expect(shown.count <= reference.count - 60, "it joined by parts, at least 2 s into the stream: \(shown.count) of \(reference.count)")
        let fetches = objects.filter { $0["type"] as? String == "liveFetch" }.compactMap { object in
            (object["url"] as? String).map { $0 + " " + (object["range"] as? String ?? "whole") }
        }
        #expect(fetches.contains { !$0.hasSuffix("whole") }, "it fetched parts: \(fetches)")
        #expect(Set(fetches).count == fetches.count, "nothing fetched twice: \(fetches)")
    }

    @Test func aStaleLiveStreamEndsWithExitThree() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-play-live-stale")
        defer { scratch.remove() }
        let (server, url, _) = try await liveOrigin(scratch, start: 0, stallsAfter: 1.2)
        let result = try await runSeparately(reel, ["play", url.absoluteString, "--headless", "--no-cache"])
        await server.stop()
        #expect(result.status == 3, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.contains("has not changed for"), "\(result.stderr)")
    }

    @Test(arguments: [["--live", "missing.m3u8"], ["--live", "../x.m3u8"], ["--live", "a.txt"]])
    func aPlaylistThatCannotBePublishedIsAUsageError(_ arguments: [String]) async throws {
        let reel = try await ReelBinary.locate()
        let root = try Scratch("reel-serve-live-bad")
        defer { root.remove() }
        try Data("not a playlist\n".utf8).write(to: root.url.appendingPathComponent("a.txt"))
        let result = try await runSeparately(reel, ["serve", root.path, "--port", "0"] + arguments)
        #expect(result.status == 2, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(result.stderr)")
    }
}
