import Foundation

/// The peak light the tone mapping assumes, frame by frame: the content's metadata when it has
/// some (MaxCLL, else the mastering display's peak), else an estimate from the frames
/// themselves. A value machine: each frame's measured peak in, the peak to use out.
///
/// The estimate follows the scene: it moves a quarter of the way (in PQ, a perceptual scale)
/// toward each frame's peak, jumps at once on a cut (a change of more than ``cut`` in PQ), and
/// is kept to the nearest 1/128 of PQ (about 3 % of light near 200 nits) so the lookup table is
/// rebuilt only when the picture would change. It never goes below SDR reference white:
/// content no brighter than that is not tone-mapped at all.
public struct ScenePeak: Sendable, Hashable {
    /// A jump in PQ between frames taken as a scene cut.
    public static let cut = 0.08
    /// The quantum of the published peak, in PQ.
    public static let step = 1.0 / 128

    /// The metadata's peak in nits, when the stream has one (it wins over any estimate).
    public var metadataPeak: Double?
    /// The smoothed estimate, in PQ.
    private var estimate: Double?

    public init(metadataPeak: Double? = nil) {
        self.metadataPeak = metadataPeak.flatMap { $0 > 0 ? $0 : nil }
    }

    /// The peak in nits to tone-map this frame with, given the frame's own measured peak
    /// (`nil` when not measured).
    public mutating func observe(framePeak: Double?) -> Double {
        if let metadataPeak { return metadataPeak }
        guard let framePeak else { return published }
        let target = PQ.inverseEOTF(max(framePeak, ColorMapping.referenceWhite))
        if let estimate, abs(target - estimate) <= Self.cut {
            self.estimate = estimate + (target - estimate) / 4
        } else {
            estimate = target
        }
        return published
    }

    /// The current peak in nits, in whole steps of PQ (reference white before any frame).
    public var published: Double {
        if let metadataPeak { return metadataPeak }
        guard let estimate else { return ColorMapping.referenceWhite }
        let stepped = (estimate / Self.step).rounded() * Self.step
        return max(PQ.eotf(stepped), ColorMapping.referenceWhite)
    }
}
