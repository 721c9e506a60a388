import Foundation
import ReelCore

/// Loudness levelling (EBU R128): every item is brought to one target loudness by a gain known
/// before its first sound, capped so its true peak stays at or under a ceiling (no clipping
/// and no limiter to pump).
public struct LoudnessLevelling: Sendable, Hashable {
    /// The loudness every item is brought to, in LUFS (−14: what streaming services level to;
    /// EBU R128 broadcast is −23).
    public var target: Double
    /// The highest true peak the gain may lead to, in dBTP.
    public var truePeakCeiling: Double
    /// The most an item is made louder, in dB (a near-silent item is not turned into noise).
    public var maximumBoost: Double

    /// Levelling to `target` LUFS with true peaks kept at or under `truePeakCeiling` dBTP and
    /// no item made more than `maximumBoost` dB louder.
    public init(target: Double = -14, truePeakCeiling: Double = -1, maximumBoost: Double = 24) {
        self.target = target
        self.truePeakCeiling = truePeakCeiling
        self.maximumBoost = maximumBoost
    }

    /// The gain in dB for an item of integrated `loudness` (LUFS) and `truePeak` (dBTP); 0 for
    /// silence (`nil` loudness). `margin` is kept under the ceiling for a peak that was only
    /// measured on part of the item or by another meter's interpolator.
    public func gain(loudness: Double?, truePeak: Double?, margin: Double = 0) -> Double {
        guard let loudness, loudness.isFinite else { return 0 }
        var gain = min(target - loudness, maximumBoost)
        if let truePeak, truePeak.isFinite { gain = min(gain, truePeakCeiling - margin - truePeak) }
        return gain
    }
}

/// An item's loudness as its feed says it (measured once per upload by the backend): the
/// integrated loudness in LUFS and the true peak in dBTP.
public struct ItemLoudness: Sendable, Hashable, Codable {
    /// The whole item's integrated loudness (EBU R128 / ITU-R BS.1770), in LUFS.
    public var integrated: Double
    /// The item's true peak in dBTP (BS.1770's 4x oversampled peak), when the feed says.
    public var truePeak: Double?

    /// An item of `integrated` LUFS and, if known, a true peak of `truePeak` dBTP.
    public init(integrated: Double, truePeak: Double? = nil) {
        self.integrated = integrated
        self.truePeak = truePeak
    }
}

/// What levelling decided for an item: the loudness it went by, where that came from, and the
/// gain applied. Reported when the gain is first known (before the first sound) and again when
/// playing refined the measurement by more than half a decibel.
public struct LoudnessReport: Sendable, Hashable {
    /// Where the loudness the gain went by came from.
    public enum Source: String, Sendable, Hashable {
        /// The item's own figures (the feed's `loudness` and `truePeak`).
        case item
        /// Reel's BS.1770 meter, on the audio decoded ahead of the first sound and then on
        /// what plays.
        case measured
    }

    /// Integrated loudness in LUFS (`nil`: silence, left as it is).
    public var loudness: Double?
    /// True peak in dBTP, when known.
    public var truePeak: Double?
    /// Whether the figures were the item's own or measured.
    public var source: Source
    /// The gain applied, in dB.
    public var gain: Double
    /// The target loudness the gain aims for, in LUFS (``LoudnessLevelling/target``).
    public var target: Double
    /// Seconds of audio the measurement covers (0 for the item's own figures).
    public var measuredSeconds: Double
}

/// The render thread's levelling of one item, as a value: audio measured in, the gain for each
/// block out. The gain is decided before the first block (from the item's figures, or from the
/// audio decoded ahead) and then follows the meter slowly, never faster than `slewPerSecond`
/// (an inaudible drift, not a pumping limiter), and only down faster than that when a new
/// peak needs it. Not `Sendable`: the render thread's own.
struct LoudnessLeveller {
    let settings: LoudnessLevelling
    let item: ItemLoudness?
    let sampleRate: Int
    private var meter: LoudnessMeter?
    /// The gain the block rendered last ended at, and the one the meter asks for (dB).
    private(set) var applied: Double = 0
    private var wanted: Double = 0
    private(set) var decided = false
    private var lastReported: Double?
    private var framesSinceRefine = 0
    /// Decoded audio measured before the first sound when the item has no figures of its own:
    /// one BS.1770 block (the engine's audio queue holds half a second).
    static let audioAhead = MediaTime(value: 2, timescale: 5)
    /// Whether the gain waits for audio decoded ahead.
    var needsAudioAhead: Bool { !decided && item == nil }
    /// Kept under the ceiling while the peak is known from part of the item only (dB).
    static let measuredMargin = 0.5
    static let slewPerSecond = 1.0

    init(settings: LoudnessLevelling, item: ItemLoudness?, format: AudioFormat) {
        self.settings = settings
        self.item = item
        sampleRate = format.sampleRate
        if item == nil { meter = LoudnessMeter(channels: format.channels, sampleRate: format.sampleRate) }
    }

    /// Measures decoded audio (ahead of rendering it, or as it is rendered).
    mutating func measure(_ samples: [Float]) {
        meter?.add(samples)
        framesSinceRefine += samples.count / max(1, meter?.channels ?? 1)
    }

    /// Decides the first gain from what is known now; a report to publish.
    mutating func decide() -> LoudnessReport {
        decided = true
        let report = currentReport()
        applied = report.gain
        wanted = report.gain
        lastReported = report.gain
        return report
    }

    /// After a second more of audio, what the meter asks for now; a report when it moved by
    /// more than half a decibel since the last one.
    mutating func refine() -> LoudnessReport? {
        guard decided, meter != nil, framesSinceRefine >= sampleRate else { return nil }
        framesSinceRefine = 0
        let report = currentReport()
        wanted = report.gain
        guard let last = lastReported, abs(last - report.gain) > 0.5 else { return nil }
        lastReported = report.gain
        return report
    }

    /// The gain (linear) at the start and end of the next `frames` frames, moving `applied`
    /// toward `wanted` at the slew rate (down at once when the peak needs it).
    mutating func gains(over frames: Int) -> (start: Float, end: Float) {
        let start = applied
        let step = Self.slewPerSecond * Double(frames) / Double(sampleRate)
        if wanted < applied - 3 { applied = wanted } else if wanted > applied { applied = min(wanted, applied + step) } else { applied = max(wanted, applied - step) }
        return (Self.linear(start), Self.linear(applied))
    }

    static func linear(_ dB: Double) -> Float { Float(pow(10, dB / 20)) }

    private func currentReport() -> LoudnessReport {
        if let item {
            return LoudnessReport(loudness: item.integrated, truePeak: item.truePeak, source: .item,
                                  gain: settings.gain(loudness: item.integrated, truePeak: item.truePeak),
                                  target: settings.target, measuredSeconds: 0)
        }
        let loudness = meter?.integratedLoudness ?? meter?.provisionalLoudness
        let peak = meter?.truePeak
        return LoudnessReport(loudness: loudness, truePeak: peak.flatMap { $0.isFinite ? $0 : nil }, source: .measured,
                              gain: settings.gain(loudness: loudness, truePeak: peak, margin: Self.measuredMargin),
                              target: settings.target, measuredSeconds: meter?.seconds ?? 0)
    }
}
