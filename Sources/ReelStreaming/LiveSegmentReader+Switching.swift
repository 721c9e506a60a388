import Foundation
import ReelCore

/// Switching variants before a segment: the rule (or the plan) asked, the new variant's
/// playlist loaded and its tracker moved to the same sequence number.
extension LiveSegmentReader {
    /// Asks the switching rule before segment `sequence`; on a switch, loads the new variant's
    /// playlist and moves to it there. `true` when it switched (the caller asks again what to fetch).
    func switchIfWanted(before sequence: Int64, state: inout Run, sections: StreamSections) async throws -> Bool {
        let target: Int
        var why: String
        var estimate: Int64?
        var source = "meter"
        let buffered = self.buffered(state.playhead)
        switch switching {
        case .fixed:
            return false
        case .plan(let plan):
            guard let planned = plan[state.segmentsFetched] else { return false }
            target = min(max(planned, 0), variants.count - 1)
            why = "planned before segment \(state.segmentsFetched)"
        case .adaptive(let rule, let meter):
            guard state.segmentsFetched > 0 else { return false }
            // The meter's estimate; before it has one (it waits for 2 s of transfers or
            // 512 KiB), the harmonic mean of the last segments' own throughputs, as hls.js does.
            estimate = meter.bandwidthEstimate.bitsPerSecond ?? Self.harmonicMean(state.throughputs)
            if meter.bandwidthEstimate.bitsPerSecond == nil, estimate != nil { source = "segments" }
            let decision = rule.decide(bandwidths: variants.map(\.bandwidth), current: state.rank, estimate: estimate,
                                       buffered: buffered, lastThroughput: state.lastThroughput)
            target = decision.rank
            why = decision.description
            // Not back up right after an abandonment (the segment again, or the next two).
            if target > state.rank, sequence < state.noStepUpBefore { return false }
        }
        guard target != state.rank else { return false }
        if source == "segments" { why += " (estimated from the last segments' throughput)" }
        return try await switchTo(target, before: sequence, why: why, estimate: estimate, buffered: buffered,
                                  state: &state, sections: sections)
    }

    /// Moves to variant `target` before segment `sequence` (its playlist loaded, its tracker
    /// there) and tells the observer; `false` when its sequence numbers do not line up.
    func switchTo(_ target: Int, before sequence: Int64, why: String, estimate: Int64?, buffered: Double,
                          state: inout Run, sections: StreamSections) async throws -> Bool {
        var tracker = LivePlaylistTracker(staleAfter: self.tracker.staleAfter, prefersParts: self.tracker.prefersParts)
        _ = try await load(variants[target].playlist, into: &tracker, stored: true)
        // Playlists whose sequence numbers do not line up: stay (and ask again next segment).
        guard tracker.move(to: sequence) else { return false }
        // Beside a separate audio rendition, only a variant of fragmented MP4 can be joined.
        if state.audio != nil, tracker.segments.contains(where: { $0.initSection == nil }) { return false }
        let from = state.rank
        state.rank = target
        state.tracker = tracker
        state.seamPending = true
        sections.rank = target
        observer?(.switched(Switch(from: from, to: target, sequence: sequence, playlist: variants[target].playlist,
                                   bandwidth: variants[target].bandwidth, why: why, estimate: estimate,
                                   buffered: buffered, section: state.sectionStarted ? state.section + 1 : state.section,
                                   representation: variants[target].representation)))
        return true
    }

    /// The harmonic mean of at least two samples (a slow one weighs most), else `nil`.
    static func harmonicMean(_ samples: [Int64]) -> Int64? {
        let positive = samples.filter { $0 > 0 }
        guard positive.count >= 2 else { return nil }
        return Int64(Double(positive.count) / positive.reduce(0) { $0 + 1 / Double($1) })
    }
}
