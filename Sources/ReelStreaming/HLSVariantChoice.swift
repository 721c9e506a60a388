import Foundation
import ReelCore

/// The variant an item starts on, and why.
public struct VariantChoice: Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// Nothing is known about the network: the lowest variant.
        case noEstimate
        /// The highest whose bandwidth fits the safety fraction of the estimate.
        case fits
        /// None fits: the lowest.
        case noneFits
        /// Only one variant.
        case only
        /// A local file: no network to spare, the highest.
        case local
    }

    /// The master playlist's (or DASH manifest's) URL.
    public var master: URL
    /// The chosen variant's playlist, absolute (for DASH: the Representation's initialization
    /// segment, or its first segment).
    public var variantURL: URL
    public var bandwidth: Int64
    public var resolution: String?
    /// Its place among the variants by bandwidth (0 is the lowest) and how many there are.
    public var rank: Int
    public var count: Int
    public var reason: Reason
    public var estimate: BandwidthEstimate
    public var safetyFraction: Double
    /// For a DASH manifest: the chosen Representation's `@id` (`nil` for HLS).
    public var representationID: String?

    /// The sentence the trace and logs carry.
    public var why: String {
        let fraction = String(format: "%.2g", safetyFraction)
        switch reason {
        case .noEstimate:
            return "no bandwidth estimate yet: the lowest of \(count)"
        case .fits:
            return "the highest of \(count) whose \(bandwidth) b/s fits \(fraction) × the estimate \(estimate.bitsPerSecond ?? 0) b/s"
        case .noneFits:
            return "none of \(count) fits \(fraction) × the estimate \(estimate.bitsPerSecond ?? 0) b/s: the lowest"
        case .only:
            return "the only variant"
        case .local:
            return "a local file: the highest of \(count)"
        }
    }

    public var description: String {
        "variant \(rank + 1)/\(count) \(resolution ?? "?") \(bandwidth) b/s (\(why))"
    }
}

/// How the starting variant is chosen: ExoPlayer's `AdaptiveTrackSelection` rule at start.
public struct VariantPolicy: Sendable, Hashable {
    /// The part of the estimate a variant's `BANDWIDTH` may use (ExoPlayer: 0.7).
    public var safetyFraction: Double

    public init(safetyFraction: Double = 0.7) {
        self.safetyFraction = safetyFraction
    }

    /// The rule, over bandwidths in document order: the offset of the highest that fits
    /// `safetyFraction × estimate` (the first listed of equal ones); the lowest when nothing is
    /// known or nothing fits; the highest for a local stream. Shared by HLS variants and DASH
    /// Representations. `bandwidths` is not empty.
    public func pick(_ bandwidths: [Int64], isLocal: Bool, estimate: BandwidthEstimate)
        -> (offset: Int, rank: Int, reason: VariantChoice.Reason) {
        precondition(!bandwidths.isEmpty, "nothing to choose from")
        let sorted = bandwidths.enumerated().sorted { ($0.element, $0.offset) < ($1.element, $1.offset) }
        // The first listed of `bandwidth`.
        func first(_ bandwidth: Int64) -> Int { sorted.first { $0.element == bandwidth }!.offset }
        let lowest = sorted[0].offset
        let offset: Int
        let reason: VariantChoice.Reason
        if sorted.count == 1 {
            (offset, reason) = (lowest, .only)
        } else if isLocal {
            (offset, reason) = (first(sorted.last!.element), .local)
        } else if let bits = estimate.bitsPerSecond {
            let budget = Double(bits) * safetyFraction
            if let fit = sorted.last(where: { Double($0.element) <= budget }) {
                (offset, reason) = (first(fit.element), .fits)
            } else {
                (offset, reason) = (lowest, .noneFits)
            }
        } else {
            (offset, reason) = (lowest, .noEstimate)
        }
        let rank = sorted.firstIndex { $0.offset == offset } ?? 0
        return (offset, rank, reason)
    }

    /// The highest variant whose bandwidth fits `safetyFraction × estimate`; the lowest when
    /// nothing is known or nothing fits. Ties in bandwidth go to the first listed.
    /// A local master (`file:`) starts on the highest. Audio-only variants are not chosen when
    /// others carry video (``HLSMasterPlaylist/videoVariants``).
    public func choose(from master: HLSMasterPlaylist, url: URL, base: URL, estimate: BandwidthEstimate) -> (HLSMasterPlaylist.Variant, VariantChoice) {
        let variants = master.videoVariants
        let picked = pick(variants.map(\.bandwidth), isLocal: url.isFileURL, estimate: estimate)
        let chosen = variants[picked.offset]
        let variantURL = URL(string: chosen.uri, relativeTo: base)?.absoluteURL ?? base
        return (chosen, VariantChoice(
            master: url, variantURL: variantURL, bandwidth: chosen.bandwidth, resolution: chosen.resolution,
            rank: picked.rank, count: variants.count, reason: picked.reason, estimate: estimate, safetyFraction: safetyFraction))
    }

    /// The same rule over a DASH manifest's video Representations (`nil` when it has none).
    /// The choice's `variantURL` is the Representation's initialization segment (or its first
    /// segment), and `representationID` its `@id`.
    public func choose(from manifest: DASHManifest, url: URL, estimate: BandwidthEstimate) -> (DASHManifest.Representation, VariantChoice)? {
        let videos = manifest.videos
        guard !videos.isEmpty else { return nil }
        let picked = pick(videos.map(\.bandwidth), isLocal: url.isFileURL, estimate: estimate)
        let chosen = videos[picked.offset]
        var choice = VariantChoice(
            master: url, variantURL: chosen.initialization?.url ?? chosen.segments.first?.url ?? url,
            bandwidth: chosen.bandwidth, resolution: chosen.resolution,
            rank: picked.rank, count: videos.count, reason: picked.reason, estimate: estimate, safetyFraction: safetyFraction)
        choice.representationID = chosen.id
        return (chosen, choice)
    }
}
