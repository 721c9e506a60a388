import Foundation
import ReelTestSupport
import Testing

/// `reel bench terminal` in a tiny configuration: every output's row, sane figures (the
/// figures themselves are the benchmark's business), and bad input in one line.
@Suite("reel bench terminal")
struct BenchTerminalTests {
    @Test func printsARowPerOutputWithBytesAndPSNR() async throws {
        let reel = try await ReelBinary.locate()
        let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 1, audioCodec: nil,
                                              videoSource: "color=c=0x3060C0:size=160x120:rate=30"))
        let result = try await runSeparately(reel, ["bench", "terminal", clip.path, "--frames", "3", "--columns", "40",
                                                    "--rows", "15", "--mpv", "none"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("first 3 frames, 40×15 cells of 8×16 px (320×240)"), "\(result.stdout)")
        let names = ["cells (half blocks, diffed)", "sixel (changed rows)", "sixel (whole frames)", "kitty (changed rectangle, zlib)",
                     "kitty (whole frames, zlib)", "kitty (changed rectangle, shm)"]
        for name in names {
            let line = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix(name) }, "no row \(name)")
            // picture, B/frame, B/kpx, enc fps, term fps, PSNR: bytes a frame above zero.
            let columns = line.dropFirst(name.count).split(separator: " ")
            #expect((Double(columns[1]) ?? 0) > 0, "\(line)")
        }
        // A flat colour: every frame after the first costs sixel almost nothing, and its picture is close.
        let sixel = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("sixel (changed rows)") })
        let psnr = Double(sixel.split(separator: " ").last.map(String.init) ?? "") ?? 0
        #expect(psnr > 35, "\(sixel)")
        #expect(!result.stdout.contains("mpv"))
    }

    @Test func aMissingClipIsOneLineAndExit3() async throws {
        let reel = try await ReelBinary.locate()
        let result = try await runSeparately(reel, ["bench", "terminal", "/nonexistent/clip.mp4", "--mpv", "none"])
        #expect(result.status == 3)
        #expect(result.stderr == "reel: cannot read /nonexistent/clip.mp4\n", "\(result.stderr)")
    }
}
