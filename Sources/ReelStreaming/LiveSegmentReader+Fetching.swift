import Foundation
import ReelCore

/// Fetching what the tracker says, one segment or part at a time: the forward buffer's wait,
/// the switch asked before a whole segment, a new section at every seam, the init section
/// and the audio that go before, the read (watched for abandonment, or against a live
/// deadline) and the delivery.
extension LiveSegmentReader {
    /// Fetches `chunk` (what the source's ``ChunkSource/nextAction(at:)`` said) and sends it:
    /// after waiting for room (a whole segment) and asking the switching rule; a switch, or a
    /// wait so long that the playlist is read first, leaves it to the source's next action.
    func fetchNext(_ chunk: ChunkSource.Chunk, state: inout Run, sections: StreamSections) async throws {
        let fetch = chunk.fetch
        if case .segment = fetch {
            let waited = now()
            try await waitForRoomIdle(state)
            guard state.source.waitedForRoom(since: waited, at: now()) else { return }
        }
        if case .segment(let segment, _) = fetch, variants.count > 1,
           try await switchIfWanted(before: segment.sequence, state: &state, sections: sections) {
            return
        }
        if chunk.startsSection {
            // A seam: the demuxer reopens on the new section.
            let next = sections.announce(restartsTimeline: chunk.restartsTimeline)
            state.output.finish()
            state.output = next.continuation
            state.section = next.index
        }
        state.source.chunkStarted(chunk)
        try await fetchAndSend(chunk, state: &state, sections: sections)
    }

    /// Reads `chunk` (with its init section and audio when they go first) and sends it.
    private func fetchAndSend(_ chunk: ChunkSource.Chunk, state: inout Run, sections: StreamSections) async throws {
        let fetch = chunk.fetch
        let started = now()
        let url = try resolve(chunk.resource.uri, rank: state.rank)
        let range = chunk.resource.range ?? .all
        // The audio segments this video segment needs arrive beside it and go before it.
        var audioFetch: Task<[FetchedAudio], any Error>?
        if case .segment(let segment, _) = fetch, let audio = state.audio {
            if audio.listed != nil {
                audioFetch = try await fetchLiveAudio(segment.sequence, state: &state)
            } else if let start = audio.videoStarts[segment.sequence] {
                audioFetch = try fetchAudio(before: start + chunk.duration, audio)
            }
        }
        defer { audioFetch?.cancel() }
        // A section's first segment arrives beside its init section (as FFmpeg's HLS demuxer
        // has the head start read them); it is never one that may be abandoned.
        let initToSend = chunk.sendsInit
        let prefetched: Task<Data, any Error>? = initToSend == nil ? nil : Task { [self] in
            try await Self.read(url, range: range, limit: maximumSegmentBytes, what: "the segment", loader: loader)
        }
        defer { prefetched?.cancel() }
        if let needed = initToSend {
            try await sendInit(needed, state: &state)
        } else if chunk.initSection == nil, state.audio != nil {
            throw Failure.unsupportedAudio("the video segments are not fragmented MP4 (no EXT-X-MAP)")
        }
        guard let bytes = try await readSegment(fetch, url: url, range: range, duration: chunk.duration, abandonable: chunk.abandonable,
                                                prefetched: prefetched, audioFetch: audioFetch, state: &state, sections: sections)
        else { return }
        let took = now() - started
        try await sendAudio(audioFetch, state: &state)
        try await deliver(chunk, bytes, url: url, took: took, state: &state, sections: sections)
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
        state.source.initSectionSent(needed)
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
                state.throughput.abandoned(at: abandoned.throughput)
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

    /// Sends `bytes` of `chunk`, after noting its throughput, where it starts and that it was
    /// fetched.
    private func deliver(_ chunk: ChunkSource.Chunk, _ bytes: Data, url: URL, took: Double,
                         state: inout Run, sections: StreamSections) async throws {
        let fetch = chunk.fetch
        state.throughput.transferred(bytes: bytes.count, seconds: took)
        switch fetch {
        case .segment(let segment, _): sections.started(at: segment.sequence, offset: 0)
        case .part(let sequence, let index, _, _):
            sections.started(at: sequence, offset: state.tracker.offset(ofPart: index, in: sequence))
        case .waitForReload, .ended: break
        }
        state.source.chunkLoaded(fetch)
        if case .segment = fetch { state.segmentsFetched += 1 }
        observer?(.fetched(url: url, range: chunk.resource.range, bytes: bytes.count, behindEdge: state.tracker.behindEdge))
        try await state.output.send(bytes)
        state.source.mediaSent()
        state.playhead.deliver(chunk.duration, at: now())
    }
}
