import Foundation
import ReelCore
@testable import ReelMedia
import ReelTestSupport
import Testing

/// Loudness levelling: Reel's BS.1770 meter reads what FFmpeg's `ebur128` filter reads, and a
/// levelled item plays at the target from its first sound, its true peak under the ceiling.
@Suite struct LoudnessTests {
    /// FFmpeg's `ebur128` summary of `file`: integrated loudness (LUFS) and true peak (dBTP).
    static func ffmpegLoudness(_ file: URL) throws -> (integrated: Double, truePeak: Double) {
        let output = try commandOutput(["sh", "-c", "ffmpeg -nostdin -hide_banner -i '\(file.path)' -af ebur128=peak=true -f null - 2>&1"])
        guard let summary = output.range(of: "Summary:") else { throw MediaError.encoding("no ebur128 summary") }
        func value(after label: String) -> Double? {
            guard let at = output.range(of: label, range: summary.upperBound..<output.endIndex) else { return nil }
            let rest = output[at.upperBound...].drop { $0 == " " }
            return Double(rest.prefix { "-0123456789.inf".contains($0) })
        }
        guard let integrated = value(after: "I:"), let peak = value(after: "Peak:") else {
            throw MediaError.encoding("unreadable ebur128 summary")
        }
        return (integrated, peak)
    }

    /// Makes `name` from an FFmpeg source graph, and its samples as 32-bit floats at `rate`.
    static func signal(_ graph: String, rate: Int, in directory: URL) async throws -> (file: URL, samples: [Float]) {
        try await StartTimeTests.ffmpeg(["-f", "lavfi", "-i", graph, "-ac", "2", "-ar", "\(rate)", "-c:a", "pcm_f32le", "s.wav"],
                                        in: directory)
        try await StartTimeTests.ffmpeg(["-i", "s.wav", "-f", "f32le", "s.f32"], in: directory)
        let data = try Data(contentsOf: directory.appendingPathComponent("s.f32"))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return (directory.appendingPathComponent("s.wav"), samples)
    }

    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-loudness-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test(arguments: [
        ("anoisesrc=color=pink:amplitude=0.3:d=4:r=48000:seed=1", 48_000),
        ("sine=f=1000:d=3:r=44100,volume=0.2", 44_100),
        ("aevalsrc=if(lt(mod(t\\,2)\\,1)\\,0.5\\,0.004)*sin(2*PI*997*t):d=6:s=48000", 48_000),
        ("anoisesrc=color=white:amplitude=0.2:d=3:r=48000:seed=1", 48_000),
        ("anoisesrc=color=pink:amplitude=0.1:d=3:r=96000:seed=1", 96_000),
    ])
    func theMeterReadsWhatFFmpegsEbur128Reads(_ graph: String, _ rate: Int) async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (file, samples) = try await Self.signal(graph, rate: rate, in: directory)
        var meter = LoudnessMeter(channels: 2, sampleRate: rate)
        // In uneven pieces, as decoded audio arrives.
        var at = 0
        while at < samples.count {
            let end = min(samples.count, at + 2 * (777 + at % 1000))
            meter.add(samples[at..<end])
            at = end
        }
        let reference = try await offThePool { try Self.ffmpegLoudness(file) }
        let integrated = try #require(meter.integratedLoudness)
        #expect(abs(integrated - reference.integrated) <= 0.2, "\(graph): \(integrated) LUFS, ebur128 \(reference.integrated)")
        #expect(abs(meter.truePeak - reference.truePeak) <= 0.5, "\(graph): \(meter.truePeak) dBTP, ebur128 \(reference.truePeak)")
    }

    @Test func silenceHasNoLoudnessAndGetsNoGain() {
        var meter = LoudnessMeter(channels: 2, sampleRate: 48_000)
        meter.add([Float](repeating: 0, count: 2 * 48_000))
        #expect(meter.integratedLoudness == nil && meter.provisionalLoudness == nil)
        #expect(LoudnessLevelling().gain(loudness: nil, truePeak: nil) == 0)
    }

    @Test func theGainIsCappedByTheTruePeakAndTheBoostLimit() {
        let rule = LoudnessLevelling(target: -14, truePeakCeiling: -1, maximumBoost: 24)
        #expect(rule.gain(loudness: -20, truePeak: -10) == 6)
        #expect(rule.gain(loudness: -20, truePeak: -4) == 3, "held back so the peak lands on -1 dBTP")
        #expect(rule.gain(loudness: -60, truePeak: -50) == 24)
        #expect(rule.gain(loudness: -6, truePeak: -0.5) == -8)
    }

    /// Plays `spec`'s clip levelled on the manual clock; its recording and what was reported.
    static func playLevelled(_ spec: ClipSpec, volume: String, loudness: ItemLoudness? = nil) async throws
        -> (samples: [Float], reports: [LoudnessReport]) {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Fixtures.clip(spec)
        try await StartTimeTests.ffmpeg(["-i", file.path, "-c:v", "copy", "-af", volume, "-c:a", "aac", "-b:a", "192k", "v.mp4"],
                                        in: directory)
        let harness = PlayerHarness(data: try Data(contentsOf: directory.appendingPathComponent("v.mp4")), name: "v.mp4")
        harness.player.loudnessLevelling = LoudnessLevelling(target: -14)
        harness.player.replaceCurrentItem(with: PlayerItem(url: harness.url, loader: harness.loader, loudness: loudness))
        harness.player.play()
        #expect(await harness.run(upTo: seconds(8)) { harness.ended })
        let reports = harness.events.compactMap { if case .loudness(let report) = $0 { report } else { nil } }
        return (harness.audio.written, reports)
    }

    static func measure(_ samples: [Float]) -> (integrated: Double?, truePeak: Double) {
        var meter = LoudnessMeter(channels: 2, sampleRate: 48_000)
        meter.add(samples)
        return (meter.integratedLoudness, meter.truePeak)
    }

    // The fixture's tone is at -21.8 LUFS: these make it -31.8, -17.8 and -6.8.
    @Test(arguments: ["volume=-10dB", "volume=4dB", "volume=15dB"])
    func aClipPlaysAtTheTargetFromItsFirstSound(_ volume: String) async throws {
        let spec = ClipSpec(duration: 3, toneFrequency: 440)
        let (samples, reports) = try await Self.playLevelled(spec, volume: volume)
        let report = try #require(reports.first)
        #expect(report.source == .measured && report.measuredSeconds >= 0.2, "\(report)")
        let whole = Self.measure(samples)
        #expect(abs((whole.integrated ?? 0) + 14) <= 0.5, "\(volume): played at \(String(describing: whole.integrated)) LUFS")
        // The first half second is already at the target: the gain was known before it.
        let first = Self.measure(Array(samples.prefix(2 * 24_000)))
        #expect(abs((first.integrated ?? 0) + 14) <= 0.5, "\(volume): first 0.5 s at \(String(describing: first.integrated)) LUFS")
        #expect(whole.truePeak <= -1)
    }

    @Test func aPeakyClipIsHeldBackSoItsTruePeakStaysUnderTheCeiling() async throws {
        // A quiet tone with loud clicks every half second: well under -14 LUFS, peaks near full scale.
        let spec = ClipSpec(duration: 3, toneFrequency: 440)
        let (samples, reports) = try await Self.playLevelled(
            spec, volume: "volume=-30dB,aeval=val(ch)+if(lt(mod(t\\,0.5)\\,0.002)\\,0.6\\,0):c=same")
        let report = try #require(reports.first)
        let loudness = try #require(report.loudness)
        #expect(report.gain < -14 - loudness - 3, "held back well under the \(-14 - loudness) dB the target asks: \(report)")
        let played = Self.measure(samples)
        #expect(played.truePeak <= -1, "true peak \(played.truePeak) dBTP")
        #expect((played.integrated ?? 0) < -14.5, "less than the target where the cap holds it: \(String(describing: played.integrated))")
    }

    @Test func theItemsOwnFiguresDecideTheGain() async throws {
        let spec = ClipSpec(duration: 2, toneFrequency: 440)
        let (samples, reports) = try await Self.playLevelled(spec, volume: "volume=-10dB",
                                                             loudness: ItemLoudness(integrated: -20, truePeak: -12))
        let report = try #require(reports.first)
        #expect(report.source == .item && report.gain == 6 && report.measuredSeconds == 0, "\(report)")
        #expect(reports.count == 1, "the item's figures are not refined")
        // The clip's real loudness, plus the 6 dB the figures asked for.
        let unlevelled = try await Self.playLevelled(spec, volume: "volume=-10dB", loudness: ItemLoudness(integrated: -14))
        let levelled = try #require(Self.measure(samples).integrated)
        let plain = try #require(Self.measure(unlevelled.samples).integrated)
        #expect(abs(levelled - plain - 6) <= 0.1, "\(levelled) vs \(plain)")
    }
}
