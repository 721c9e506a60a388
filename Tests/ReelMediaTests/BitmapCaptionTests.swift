import Foundation
import ReelCaptions
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// Bitmap subtitles: a Blu-ray PGS stream (written here segment by segment, since FFmpeg has no
/// PGS encoder) muxed beside a video by `ffmpeg`, decoded by Reel through libavcodec's
/// `pgssub`, and compared with FFmpeg's own decode of it (`ffprobe -show_entries subtitle`) and
/// with the pictures that were written.
@Suite struct BitmapCaptionTests {
    /// A PGS display set: where and what (`rows` of palette indices), or a clearing one.
    struct DisplaySet {
        var pts: Double
        var picture: (x: Int, y: Int, rows: [[UInt8]])?
    }

    /// PGS canvas (a composition's video size), deliberately not the video's 160×120.
    static let canvas = (width: 320, height: 240)

    static let sets: [DisplaySet] = [
        DisplaySet(pts: 1.0, picture: (100, 200, Array(repeating: [UInt8](repeating: 1, count: 40), count: 4)
                                        + Array(repeating: [UInt8](repeating: 0, count: 10) + [UInt8](repeating: 2, count: 30), count: 4))),
        DisplaySet(pts: 2.5, picture: nil),
        DisplaySet(pts: 3.0, picture: (20, 20, Array(repeating: [1, 1, 2, 2, 1, 1, 0, 0, 1, 2, 1, 2, 1, 1, 1, 1], count: 4))),
        DisplaySet(pts: 4.0, picture: nil),
    ]

    /// The `.sup` bytes of `sets` (HDMV Presentation Graphic Stream segments).
    static func sup(_ sets: [DisplaySet]) -> Data {
        var out = Data()
        func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func segment(_ type: UInt8, pts: Double, _ body: [UInt8]) {
            let ticks = UInt32(pts * 90_000)
            let time: [UInt8] = [UInt8(ticks >> 24), UInt8(ticks >> 16 & 0xFF), UInt8(ticks >> 8 & 0xFF), UInt8(ticks & 0xFF)]
            var bytes: [UInt8] = [0x50, 0x47]
            bytes += time
            bytes += [0, 0, 0, 0, type]
            bytes += be16(body.count)
            out += bytes + body
        }
        for (number, set) in sets.enumerated() {
            let header = be16(canvas.width) + be16(canvas.height) + [0x10] + be16(number)
            guard let picture = set.picture else {
                segment(0x16, pts: set.pts, header + [0x00, 0, 0, 0])
                segment(0x17, pts: set.pts, [1, 0] + be16(0) + be16(0) + be16(canvas.width) + be16(canvas.height))
                segment(0x80, pts: set.pts, [])
                continue
            }
            let width = picture.rows[0].count, height = picture.rows.count
            segment(0x16, pts: set.pts, header + [0x80, 0, 0, 1] + be16(0) + [0, 0] + be16(picture.x) + be16(picture.y))
            segment(0x17, pts: set.pts, [1, 0] + be16(picture.x) + be16(picture.y) + be16(width) + be16(height))
            // Index 1: opaque white; 2: half-transparent red (Y, Cr, Cb, alpha).
            segment(0x14, pts: set.pts, [0, 0, 1, 235, 128, 128, 255, 2, 81, 240, 90, 128])
            var rle: [UInt8] = []
            for row in picture.rows {
                var i = 0
                while i < row.count {
                    var run = 1
                    while i + run < row.count, row[i + run] == row[i], run < 63 { run += 1 }
                    switch (row[i], run) {
                    case (0, _): rle += [0, UInt8(run)]
                    case (let colour, 1...2): rle += Array(repeating: colour, count: run)
                    case (let colour, _): rle += [0, 0x80 | UInt8(run), colour]
                    }
                    i += run
                }
                rle += [0, 0]
            }
            let length = rle.count + 4
            segment(0x15, pts: set.pts, be16(0) + [0, 0xC0] + [UInt8(length >> 16), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
                    + be16(width) + be16(height) + rle)
            segment(0x80, pts: set.pts, [])
        }
        return out
    }

    @Test func pgsPicturesAreTheWrittenOnesTimedAsFFmpegTimesThem() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-pgs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.sup(Self.sets).write(to: directory.appendingPathComponent("subs.sup"))
        try await StartTimeTests.ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=5", "-f", "sup", "-i", "subs.sup",
            "-map", "0", "-map", "1", "-c:v", "libx264", "-g", "25", "-c:s", "copy", "pgs.mkv",
        ], in: directory)
        let file = directory.appendingPathComponent("pgs.mkv")
        let probe = try await offThePool {
            try commandOutput(["ffprobe", "-v", "error", "-select_streams", "s:0", "-show_entries",
                               "subtitle=pts,start_display_time,num_rects", "-of", "csv=p=0", file.path])
        }
        // FFmpeg: a picture at each showing set's time, an empty one at each clearing set's.
        let reference = probe.split(whereSeparator: \.isNewline).map { line in
            line.split(separator: ",").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        }
        #expect(reference.map { $0[2] } == [1, 0, 1, 0])
        let shownAt = reference.map { MediaTime(value: $0[0], timescale: 1_000_000) + MediaTime(value: $0[1], timescale: 1000) }

        let harness = CaptionTests.Harness(data: try Data(contentsOf: file), name: "pgs.mkv")
        harness.player.captionSelection = CaptionSelection(track: .stream(1))
        await harness.play()
        #expect(harness.ended)
        let track = try #require(harness.player.captionTracks.first)
        #expect(track.format == .pgs)
        let cues = harness.player.captionEvents(of: track.id)
        #expect(cues.map(\.start) == [shownAt[0], shownAt[2]])
        #expect(cues.map(\.end) == [shownAt[1], shownAt[3]])
        let written = Self.sets.compactMap(\.picture)
        #expect(cues.count == written.count)
        for (cue, picture) in zip(cues, written) {
            guard case .bitmap(let bitmap) = cue.content else {
                Issue.record("not a picture: \(cue)")
                continue
            }
            #expect((bitmap.x, bitmap.y, bitmap.width, bitmap.height) == (picture.x, picture.y, picture.rows[0].count, picture.rows.count))
            #expect((bitmap.canvasWidth, bitmap.canvasHeight) == (Self.canvas.width, Self.canvas.height), "the composition's size")
            // The palette as FFmpeg converts it (ARGB words): white opaque, red at half alpha.
            let argb = bitmap.indices.map { bitmap.palette.indices.contains(Int($0)) ? bitmap.palette[Int($0)] : 0 }
            let expected: [UInt32] = picture.rows.flatMap { $0 }.map { index -> UInt32 in
                switch index {
                case 1: 0xFFFF_FFFF
                case 2: 0x80FF_0000
                default: 0
                }
            }
            #expect(zip(argb, expected).allSatisfy { Self.close($0, $1) }, "\(argb.prefix(12).map { String($0, radix: 16) })")
        }
        // The first picture was on screen: the sink was handed it with the frames at 1–2.5 s.
        #expect(harness.captions.frames.contains { frame in frame.events.contains { if case .bitmap = $0.content { true } else { false } } })
    }

    /// ARGB words equal within a few steps per channel (studio-range YCbCr to RGB rounds).
    static func close(_ a: UInt32, _ b: UInt32) -> Bool {
        (0..<4).allSatisfy { (shift: Int) -> Bool in
            let x = Int((a >> UInt32(shift * 8)) & 0xFF)
            let y = Int((b >> UInt32(shift * 8)) & 0xFF)
            return abs(x - y) <= 6
        }
    }
}
