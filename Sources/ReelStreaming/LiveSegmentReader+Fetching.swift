import Foundation
import ReelCore

/// Fetching what the tracker says, one segment or part at a time: the forward buffer's wait,
/// the switch asked before a whole segment, a new section at every seam, the init section
/// and the audio that go before, the read (watched for abandonment, or against a live
/// deadline) and the delivery.
extension LiveSegmentReader {
    /// What ``fetchNext(_:state:sections:)`` did.
    enum Step {
        /// Fetched (or switched): ask the tracker again.
        case fetched
        /// Waited so long for room that the live playlist must be read again first.
        case reloadFirst
        /// The stream ended.
        case finished
    }

    /// One fetch, as the tracker sees it, and what it needs.
    struct Target {
        var resource: HLSMediaPlaylist.Part
        /// The init section it needs (each section starts with its own).
        var initSection: HLSMediaPlaylist.Part?
        var duration: Double
        /// Its timestamps start again: a discontinuity, or a jump ahead in the window.
        var discontinuity: Bool

        init?(_ fetch: LivePlaylistTracker.Fetch, state: Run) {
            switch fetch {
            case .segment(let segment, _):
                (resource, initSection, duration) = (segment.resource, segment.initSection, segment.duration)
                discontinuity = segment.discontinuity || state.skippedAhead
            case .part(let sequence, _, let part, _):
                let segment = state.tracker.segments.first { $0.sequence == sequence } ?? state.tracker.segments.last
                (resource, initSection, duration) = (part.resource, segment?.initSection, part.duration)
                discontinuity = false
            case .waitForReload, .ended:
                return nil
            }
        }
    }

    /// Fetches `fetch` (what the tracker's `next()` said) and sends it.
    func fetchNext(_ fetch: LivePlaylistTracker.Fetch, state: inout Run, sections: StreamSections) async throws -> Step {
        if case .ended = fetch {
            // The audio that outlasts the video.
            if let audio = state.audio { try await sendAudio(try fetchAudio(before: .infinity, audio), state: &state) }
            return .finished
        }
        if case .segment = fetch {
            let waited = now()
            try await waitForRoomIdle(state)
            // A live playlist not seen for three target durations (a player paused behind the
            // edge): read it again before fetching from what it listed then.
            if !state.tracker.isFinal, now() - waited >= 3 * state.tracker.targetDuration { return .reloadFirst }
        }
        if case .segment(let segment, _) = fetch, variants.count > 1,
           try await switchIfWanted(before: segment.sequence, state: &state, sections: sections) {
            return .fetched
        }
        guard let target = Target(fetch, state: state) else { return .finished }
        let abandonable = startSectionAtSeam(target, state: &state, sections: sections)
        try await fetchAndSend(fetch, target, abandonable: abandonable, state: &state, sections: sections)
        return .fetched
    }

    /// Starts a new section when `target` comes after a seam — a switch, an init section that
    /// changes, timestamps that start again — (the demuxer reopens on it). Whether `target`
    /// may be abandoned: only within a section already under way (its init sent before), so a
    /// section is never left holding an init section alone.
    private func startSectionAtSeam(_ target: Target, state: inout Run, sections: StreamSections) -> Bool {
        let needed = target.initSection
        let initChanges = needed != nil && state.initSent != nil && needed != state.initSent
        let abandonable = state.sectionStarted && !state.seamPending && !target.discontinuity && !initChanges
        if state.sectionStarted, state.seamPending || target.discontinuity || initChanges {
            let next = sections.announce(restartsTimeline: target.discontinuity)
            state.output.finish()
            state.output = next.continuation
            state.section = next.index
            state.initSent = nil
            state.sectionStarted = false
        }
        state.seamPending = false
        state.skippedAhead = false
        return abandonable
    }

    /// Reads `target` (with its init section and audio when they go first) and sends it.
    private func fetchAndSend(_ fetch: LivePlaylistTracker.Fetch, _ target: Target, abandonable: Bool,
                              state: inout Run, sections: StreamSections) async throws {
        let started = now()
        let url = try resolve(target.resource.uri, rank: state.rank)
        let range = target.resource.range ?? .all
        // The audio segments this video segment needs arrive beside it and go before it.
        var audioFetch: Task<[FetchedAudio], any Error>?
        if case .segment(let segment, _) = fetch, let audio = state.audio {
            if audio.listed != nil {
                audioFetch = try await fetchLiveAudio(segment.sequence, state: &state)
            } else if let start = audio.videoStarts[segment.sequence] {
                audioFetch = try fetchAudio(before: start + target.duration, audio)
            }
        }
        defer { audioFetch?.cancel() }
        // A section's first segment arrives beside its init section (as FFmpeg's HLS demuxer
        // has the head start read them); it is never one that may be abandoned.
        let initToSend = target.initSection.flatMap { $0 != state.initSent ? $0 : nil }
        let prefetched: Task<Data, any Error>? = initToSend == nil ? nil : Task { [self] in
            try await Self.read(url, range: range, limit: maximumSegmentBytes, what: "the segment", loader: loader)
        }
        defer { prefetched?.cancel() }
        if let needed = initToSend {
            try await sendInit(needed, state: &state)
        } else if target.initSection == nil, state.audio != nil {
            throw Failure.unsupportedAudio("the video segments are not fragmented MP4 (no EXT-X-MAP)")
        }
        guard let bytes = try await readSegment(fetch, url: url, range: range, duration: target.duration, abandonable: abandonable,
                                                prefetched: prefetched, audioFetch: audioFetch, state: &state, sections: sections)
        else { return }
        let took = now() - started
        try await sendAudio(audioFetch, state: &state)
        try await deliver(fetch, bytes, url: url, target: target, took: took, state: &state, sections: sections)
    }

    /// Reads the init section `needed` (live: in time), joins the audio's (read once, beside
    /// it) and sends it.
    private func sendInit(_ needed: HLSMediaPlaylist.Part, state: inout Run) async throws {
        let audioInit = state.audio.flatMap { $0.initBytes == nil ? readAudioInit($0) : nil }
        defer { audioInit?.cancel() }
        let initURL = try resolve(needed.uri, rank: state.rank)
        var initBytes = try await arrival(of: initURL, what: "the init section", live: !state.tracker.isFinal,
                                          targetDuration: state.tracker.targetDuration) { [self] in
            try await Self.read(initURL, range: needed.range ?? .all, limit: maximumSegmentBytes,
                                what: "the init section", loader: loader)
        }
        if state.audio != nil { initBytes = try await joinAudio(to: initBytes, fetched: audioInit, state: &state) }
        try await state.output.send(initBytes)
        state.initSent = needed
        state.sectionStarted = true
    }

    /// The segment's bytes: watched for abandonment when it may be abandoned, else read plainly
    /// (live: while it may still arrive in time). `nil` when it was abandoned for a lower
    /// variant (switched to, the audio it went with sent).
    private func readSegment(_ fetch: LivePlaylistTracker.Fetch, url: URL, range: ByteRange, duration: Double, abandonable: Bool,
                             prefetched: Task<Data, any Error>?, audioFetch: Task<[FetchedAudio], any Error>?,
                             state: inout Run, sections: StreamSections) async throws -> Data? {
        let (live, targetDuration) = (!state.tracker.isFinal, state.tracker.targetDuration)
        if case .segment(let segment, _) = fetch, abandonable, let watch = abandonWatch(state, duration: duration) {
            do {
                return try await arrival(of: url, what: "the segment", live: live, targetDuration: targetDuration) {
                    try await readWatched(url, range: range, watch: watch)
                }
            } catch let abandoned as Abandoned {
                // Too slow to arrive before the buffer runs dry: the same segment from the
                // highest lower variant that can.
                state.lastThroughput = abandoned.throughput
                state.throughputs = Array((state.throughputs + [abandoned.throughput]).suffix(3))
                let why = String(format: "down: abandoned %@ after %.1f s at %lld b/s, %.1f s from running dry",
                                 url.lastPathComponent, abandoned.elapsed, abandoned.throughput, abandoned.bufferLeft)
                if try await switchTo(abandoned.target, before: segment.sequence, why: why, estimate: abandoned.throughput,
                                      buffered: abandoned.bufferLeft, state: &state, sections: sections) {
                    state.noStepUpBefore = segment.sequence + 3
                    // The audio goes on in the section the abandoned segment was for.
                    try await sendAudio(audioFetch, state: &state)
                    return nil
                }
            }
        }
        // Not watched, or abandoned with nowhere to go: read plainly.
        return try await arrival(of: url, what: "the segment", live: live, targetDuration: targetDuration) { [self] in
            if let prefetched { try await prefetched.value } else {
                try await Self.read(url, range: range, limit: maximumSegmentBytes, what: "the segment", loader: loader)
            }
        }
    }

    /// Sends `bytes` of `fetch`, after noting its throughput, where it starts and that it was
    /// fetched.
    private func deliver(_ fetch: LivePlaylistTracker.Fetch, _ bytes: Data, url: URL, target: Target, took: Double,
                         state: inout Run, sections: StreamSections) async throws {
        if took > 0.001 {
            let throughput = Int64(Double(bytes.count * 8) / took)
            state.lastThroughput = throughput
            // Small transfers measure the round trip more than the link.
            if bytes.count >= 16 << 10 { state.throughputs = Array((state.throughputs + [throughput]).suffix(3)) }
        }
        switch fetch {
        case .segment(let segment, _): sections.started(at: segment.sequence, offset: 0)
        case .part(let sequence, let index, _, _):
            sections.started(at: sequence, offset: state.tracker.offset(ofPart: index, in: sequence))
        case .waitForReload, .ended: break
        }
        state.tracker.fetched(fetch)
        if case .segment = fetch { state.segmentsFetched += 1 }
        observer?(.fetched(url: url, range: target.resource.range, bytes: bytes.count, behindEdge: state.tracker.behindEdge))
        try await state.output.send(bytes)
        state.sectionStarted = true
        state.playhead.deliver(target.duration, at: now())
    }
}
