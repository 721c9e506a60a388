import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelMediaTools
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
        let server = try Child(reel, ["serve", root.path, "--port", "0", "--live", "s/index.m3u8", "--live-window", "3"])
        defer { server.kill(SIGKILL) }
        var base: URL?
        for _ in 0..<3000 where base == nil {
            if let line = server.standardOutput.split(separator: "\n").first, let url = URL(string: String(line)) { base = url }
            try await Task.sleep(for: .milliseconds(10))
        }
        let origin = try #require(base, "reel serve printed no URL: \(server.output)")
        let http = HTTPLoader()
        do {
            let live = origin.appendingPathComponent("live/s/index.m3u8")
            var playlist = try HLSMediaPlaylist.parse(try await http.data(live))
            #expect(!playlist.isFinal)
            #expect(playlist.serverControl.canBlockReload)
            #expect(playlist.initSection?.uri == "/s/init.mp4")
            // A blocking reload for the segment after the newest (or the first, before any).
            let wanted = playlist.nextSequence
            var components = URLComponents(url: live, resolvingAgainstBaseURL: false)!
            components.queryItems = [URLQueryItem(name: "_HLS_msn", value: String(wanted))]
            playlist = try HLSMediaPlaylist.parse(try await http.data(components.url!))
            #expect(playlist.segments.last.map(\.sequence) ?? -1 >= wanted)
            #expect(playlist.segments.count <= 3)
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
