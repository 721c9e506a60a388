import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// What the command line says and takes about colour: `reel probe`'s colour lines, the
/// trace's `color` line, `--target-peak`'s bounds.
@Suite(.enabled(if: HDRBars.isAvailable, "ffmpeg with zscale is needed to make the HDR bars"))
struct ColorCommandTests {
    @Test func probeSaysTheTagsAndWhatIsApplied() async throws {
        let reel = try await ReelBinary.locate()
        let pq = try HDRBars.clip(.pq)
        let text = try await runSeparately(reel, ["probe", pq.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("colour: PQ (SMPTE 2084), BT.2020 primaries, BT.2020 matrix, limited range"), "\(text.stdout)")
        #expect(text.stdout.contains("shown: PQ (SMPTE 2084) BT.2020 to BT.709 BT.1886, auto tone mapping"), "\(text.stdout)")
        let sdr = try await runSeparately(reel, ["probe", HDRBars.clip(.sdr).path, "--json"])
        let json = try JSONSerialization.jsonObject(with: Data(sdr.stdout.utf8)) as! [String: Any]
        let video = try #require((json["streams"] as? [[String: Any]])?.first)
        let color = try #require(video["color"] as? [String: Any])
        #expect(color["transfer"] as? String == "bt709" && color["primaries"] as? String == "bt709")
        #expect(color["applied"] as? String == "as is (SDR)")
    }

    @Test func theTraceSaysTheColour() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-color")
        defer { scratch.remove() }
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", HDRBars.clip(.hlg).path, "--headless", "--clock", "fast",
                                                    "--tone-mapping", "clip", "--trace", trace])
        #expect(result.status == 0, "\(result.stderr)")
        let colors = try traceObjects(trace).filter { $0["type"] as? String == "color" }
        #expect(colors.count == 1)
        #expect(colors.first?["transfer"] as? String == "hlg")
        #expect((colors.first?["applied"] as? String)?.contains("clip tone mapping") == true)
    }

    @Test func aTargetPeakOutOfBoundsIsAUsageError() async throws {
        let reel = try await ReelBinary.locate()
        let result = try await runSeparately(reel, ["play", HDRBars.clip(.pq).path, "--headless", "--target-peak", "5"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--target-peak must be between 80 and 10000 nits"))
    }
}
