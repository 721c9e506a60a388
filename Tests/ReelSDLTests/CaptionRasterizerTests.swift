import Foundation
import Testing
import ReelCaptions
import ReelCore
import ReelMedia
import ReelTestSupport
@testable import ReelSDL

func captionSeconds(_ value: Double) -> MediaTime { MediaTime(seconds: value, preferredTimescale: 1000) }

func captionCue(_ text: String, from start: Double, to end: Double?, track: CaptionTrackID = .stream(2)) -> CaptionEvent {
    CaptionEvent(track: track, start: captionSeconds(start), end: end.map(captionSeconds) ?? .positiveInfinity, content: .text(ASSDialogue(text: text)))
}

/// libass turning caption frames into layers, without a window (libass needs no display).
/// Each test makes and frees its rasterizer on its own thread, as the window does.
@Suite struct CaptionRasterizerTests {
    let video = UIRect(x: 0, y: 0, width: 540, height: 960)

    @Test func aFrameWithNoEventsGivesNoLayer() throws {
        let rasterizer = try CaptionRasterizer()
        #expect(rasterizer.layer(for: CaptionFrame(time: captionSeconds(1), events: []), video: video, videoWidth: 540, videoHeight: 960) == nil)
        #expect(rasterizer.packedCount == 0)
    }

    @Test(arguments: ["Hello, captions", "你好，字幕"])
    func aCueBecomesWhiteTextWithABlackOutlineNearTheVideosBottom(_ text: String) throws {
        let rasterizer = try CaptionRasterizer()
        let frame = CaptionFrame(time: captionSeconds(1), events: [captionCue(text, from: 0.5, to: 3)])
        let layer = try #require(rasterizer.layer(for: frame, video: video, videoWidth: 540, videoHeight: 960))
        let bounds = try #require(layer.bounds)
        // Reel's style: about 5 % of the video's height, centred, at the bottom.
        #expect(bounds.height > 960 * 0.03 && bounds.height < 960 * 0.12, "\(bounds)")
        #expect(abs(bounds.midX - 270) < 20, "\(bounds)")
        #expect(bounds.maxY > 960 * 0.85 && bounds.maxY <= 960, "\(bounds)")
        let white = layer.quads.filter { $0.color.r > 0.95 && $0.color.g > 0.95 && $0.color.b > 0.95 && $0.color.a > 0.95 }
        let outline = layer.quads.filter { $0.color.r < 0.05 && $0.color.g < 0.05 && $0.color.b < 0.05 && $0.color.a > 0.95 }
        #expect(!white.isEmpty && !outline.isEmpty)
        // The atlas holds real coverage for every quad (rows copied `w` bytes at a time).
        for quad in layer.quads {
            var covered = 0
            for row in 0..<quad.height {
                let start = (quad.atlasY + row) * layer.atlas.width + quad.atlasX
                covered += layer.atlas.bytes[start..<(start + quad.width)].reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
            }
            #expect(covered > 0)
        }
    }

    @Test func theLayerIsReusedWhileLibassReportsNoChange() throws {
        let rasterizer = try CaptionRasterizer()
        let first = captionCue("Same line", from: 0, to: 4)
        let a = try #require(rasterizer.layer(for: CaptionFrame(time: captionSeconds(1), events: [first]), video: video, videoWidth: 540, videoHeight: 960))
        let b = try #require(rasterizer.layer(for: CaptionFrame(time: captionSeconds(2), events: [first]), video: video, videoWidth: 540, videoHeight: 960))
        #expect(a.atlas.generation == b.atlas.generation)
        #expect(rasterizer.packedCount == 1 && rasterizer.reusedCount == 1)
        // Another cue: libass reports a change, a new atlas.
        let c = try #require(rasterizer.layer(for: CaptionFrame(time: captionSeconds(5), events: [captionCue("Another line", from: 4.5, to: 6)]),
                                              video: video, videoWidth: 540, videoHeight: 960))
        #expect(c.atlas.generation != a.atlas.generation)
        // Another size (a resize, fullscreen): packed again even though the cue is the same.
        let small = UIRect(x: 0, y: 0, width: 270, height: 480)
        let d = try #require(rasterizer.layer(for: CaptionFrame(time: captionSeconds(5.1), events: [captionCue("Another line", from: 4.5, to: 6)]),
                                              video: small, videoWidth: 540, videoHeight: 960))
        #expect(d.atlas.generation != c.atlas.generation)
        #expect(rasterizer.packedCount == 3)
    }

    @Test func anAnimatedCueMovesWithTheVideosTime() throws {
        let rasterizer = try CaptionRasterizer()
        // \move over the cue's first two seconds, from the top left to the bottom right (within
        // Reel's PlayRes of 162×288 for a 540×960 picture).
        let moving = captionCue(#"{\move(20,40,140,270,0,2000)}Moving"#, from: 1, to: 4)
        let frame = CaptionFrame(time: captionSeconds(1), events: [moving])
        let start = try #require(rasterizer.layer(for: frame, at: captionSeconds(1), video: video, videoWidth: 540, videoHeight: 960)?.bounds)
        let middle = try #require(rasterizer.layer(for: frame, at: captionSeconds(2), video: video, videoWidth: 540, videoHeight: 960)?.bounds)
        let end = try #require(rasterizer.layer(for: frame, at: captionSeconds(3.5), video: video, videoWidth: 540, videoHeight: 960)?.bounds)
        #expect(start.y < middle.y && middle.y < end.y, "\(start) \(middle) \(end)")
        #expect(start.x < end.x)
        // Without a time, or one before the frame's or past its cues, the caption frame's own time.
        for time in [nil, captionSeconds(0.5), captionSeconds(5)] as [MediaTime?] {
            let same = try #require(rasterizer.layer(for: frame, at: time, video: video, videoWidth: 540, videoHeight: 960)?.bounds)
            #expect(same == start)
        }
    }

    @Test func anOpenCueClosedByTheTimelineIsNotDrawnTwice() throws {
        let rasterizer = try CaptionRasterizer()
        // A 608-style cue arrives open, later the timeline closes it: a different event value.
        let open = captionCue("Roll-up line", from: 1, to: nil)
        let closed = captionCue("Roll-up line", from: 1, to: 5)
        let one = try #require(rasterizer.layer(for: CaptionFrame(time: captionSeconds(2), events: [open]), video: video, videoWidth: 540, videoHeight: 960)?.bounds)
        let two = try #require(rasterizer.layer(for: CaptionFrame(time: captionSeconds(3), events: [closed]), video: video, videoWidth: 540, videoHeight: 960)?.bounds)
        // Two events on screen would stack (libass's collision handling): twice the height.
        #expect(abs(two.height - one.height) < 2, "\(one) then \(two)")
    }

    @Test func aPictureCueIsScaledFromItsCanvasToTheVideo() throws {
        let rasterizer = try CaptionRasterizer()
        let bitmap = CaptionBitmap(x: 100, y: 600, width: 4, height: 2, canvasWidth: 720, canvasHeight: 576,
                                   indices: [0, 1, 1, 0, 1, 1, 1, 1], palette: [0x0000_0000, 0xFFFF_FF00])
        let event = CaptionEvent(track: .stream(3), start: captionSeconds(0), end: captionSeconds(2), content: .bitmap(bitmap))
        let target = UIRect(x: 10, y: 20, width: 360, height: 288)
        let layer = try #require(rasterizer.layer(for: CaptionFrame(time: captionSeconds(1), events: [event]), video: target, videoWidth: 720, videoHeight: 576))
        let picture = try #require(layer.pictures.first)
        #expect(layer.quads.isEmpty)
        #expect(picture.rect == UIRect(x: 60, y: 320, width: 2, height: 1))
        // Index 1 is opaque yellow, index 0 transparent.
        #expect(Array(picture.rgba[4..<8]) == [255, 255, 0, 255])
        #expect(picture.rgba[3] == 0)
    }
}
