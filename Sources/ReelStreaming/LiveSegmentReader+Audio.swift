import Foundation
import ReelCore

/// The separate audio rendition read beside the variants (``LiveSegmentReader/audio``): its
/// playlist, its init section joined with each video init section, and the audio segments that
/// go before each video segment (by time with an end, by sequence number live).
extension LiveSegmentReader {
    /// Where reading a separate audio rendition is (see ``audio``).
    struct AudioRun {
        var playlist: URL
        /// A stream with an end: every audio segment and where it starts.
        var segments: [(resource: HLSMediaPlaylist.Part, start: Double)]
        var initSection: HLSMediaPlaylist.Part
        var initBytes: Data?
        /// The join of the current section's video init section with the audio's.
        var merge: FragmentedMP4Merge?
        /// The next audio segment to send (a stream with an end).
        var next = 0
        /// Where each video segment starts on the stream's timeline, by sequence number (a
        /// stream with an end).
        var videoStarts: [Int64: Double]
        /// A live stream: the audio segments its playlist lists now, by sequence number (the
        /// video's segment N goes with the audio's N, as a packager's renditions line up).
        var listed: [Int64: HLSMediaPlaylist.Part]?
        var targetDuration: Double = 1
    }

    /// An audio segment read, to be sent.
    struct FetchedAudio: Sendable {
        var url: URL
        var range: ByteRange?
        var bytes: Data
    }

    /// Reads the audio rendition's playlist beside the video's first (`video`, read already).
    func loadAudio(_ playlist: URL, video: LivePlaylistTracker) async throws -> AudioRun {
        try Self.checkScheme(playlist)
        let parsed = try await readAudioPlaylist(playlist, stored: video.isFinal)
        guard parsed.isFinal == video.isFinal else {
            throw Failure.unsupportedAudio(video.isFinal ? "its playlist has no end" : "its playlist ended while the video is live")
        }
        guard let initSection = parsed.segments.first?.initSection,
              parsed.segments.allSatisfy({ $0.initSection == initSection && !$0.discontinuity }) else {
            throw Failure.unsupportedAudio("it is not fragmented MP4 with one init section")
        }
        if !video.isFinal {
            var run = AudioRun(playlist: playlist, segments: [], initSection: initSection, videoStarts: [:])
            run.listed = Self.bySequence(parsed)
            run.targetDuration = max(0.1, parsed.targetDuration ?? video.targetDuration)
            return run
        }
        let segments = Array(zip(parsed.segments.map(\.resource), Self.starts(parsed.segments.map(\.duration))))
        let videoStarts = Dictionary(zip(video.segments.map(\.sequence), Self.starts(video.segments.map(\.duration))),
                                     uniquingKeysWith: { $1 })
        var run = AudioRun(playlist: playlist, segments: segments, initSection: initSection, videoStarts: videoStarts)
        if let startTime, let held = Self.segment(holding: startTime, durations: parsed.segments.map(\.duration)) {
            run.next = held.index
        }
        return run
    }

    /// Where each of consecutive segments of `durations` starts, the first at 0.
    static func starts(_ durations: [Double]) -> [Double] {
        var start = 0.0
        return durations.map { duration in
            defer { start += duration }
            return start
        }
    }

    /// A playlist's segments by media sequence number.
    static func bySequence(_ playlist: HLSMediaPlaylist) -> [Int64: HLSMediaPlaylist.Part] {
        Dictionary(playlist.segments.map { ($0.sequence, $0.resource) }, uniquingKeysWith: { $1 })
    }

    /// The audio rendition's playlist: through the cache when it has an end (it never
    /// changes), from the origin when it is live.
    func readAudioPlaylist(_ playlist: URL, stored: Bool) async throws -> HLSMediaPlaylist {
        let document = try await Self.read(playlist, range: .all, limit: maximumPlaylistBytes, what: "the playlist",
                                            loader: stored ? loader : loader.unstoredLoader)
        do { return try HLSMediaPlaylist.parse(document) } catch { throw Failure.notAMediaPlaylist(error.description) }
    }

    /// A live stream's audio segment `sequence`, started reading (`nil` when the audio's window
    /// has moved past it: the video goes on without it). The audio playlist is read again
    /// while it does not list it yet, every half target duration for three target durations,
    /// then the stream fails as stale.
    func fetchLiveAudio(_ sequence: Int64, state: inout Run) async throws -> Task<[FetchedAudio], any Error>? {
        guard var audio = state.audio, var listed = audio.listed else { return nil }
        let deadline = now() + 3 * audio.targetDuration
        while listed[sequence] == nil {
            if let newest = listed.keys.max(), newest > sequence { return nil }
            guard now() < deadline else {
                throw Failure.unsupportedAudio("its playlist has not listed segment \(sequence) for \(Int(3 * audio.targetDuration)) s")
            }
            state.output.setIdle(true)
            try await sleep(audio.targetDuration / 2)
            state.output.setIdle(false)
            listed = Self.bySequence(try await readAudioPlaylist(audio.playlist, stored: false))
            observer?(.playlist(url: audio.playlist, changed: listed[sequence] != nil, at: now()))
        }
        audio.listed = listed
        state.audio = audio
        let resource = listed[sequence]!
        let url = try resolve(resource.uri, against: audio.playlist)
        return Task { [self] in
            [FetchedAudio(url: url, range: resource.range,
                          bytes: try await Self.read(url, range: resource.range ?? .all, limit: maximumSegmentBytes, what: "the segment",
                                                     loader: loader))]
        }
    }

    /// Starts reading the audio rendition's init section.
    func readAudioInit(_ audio: AudioRun) -> Task<Data, any Error> {
        Task { [self] in
            try await Self.read(try resolve(audio.initSection.uri, against: audio.playlist), range: audio.initSection.range ?? .all,
                                limit: maximumSegmentBytes, what: "the init section", loader: loader)
        }
    }

    /// A video init section joined with the audio rendition's (read once: `fetched`, the read
    /// started beside the video's, when it had not been read yet).
    func joinAudio(to video: Data, fetched: Task<Data, any Error>?, state: inout Run) async throws -> Data {
        guard var audio = state.audio else { return video }
        let audioInit: Data
        if let bytes = audio.initBytes {
            audioInit = bytes
        } else if let fetched {
            audioInit = try await fetched.value
        } else {
            audioInit = try await readAudioInit(audio).value
        }
        audio.initBytes = audioInit
        let merge: FragmentedMP4Merge
        do { merge = try FragmentedMP4Merge(video: video, audio: audioInit) } catch let failure as FragmentedMP4Merge.Failure {
            throw Failure.unsupportedAudio(failure.description)
        }
        audio.merge = merge
        state.audio = audio
        return merge.initSection
    }

    /// Starts reading the audio segments not sent yet that start before `end` seconds, side by
    /// side (`nil`: none); ``sendAudio(_:state:)`` sends them in order.
    func fetchAudio(before end: Double, _ audio: AudioRun) throws -> Task<[FetchedAudio], any Error>? {
        var wanted: [(url: URL, range: ByteRange?)] = []
        var index = audio.next
        while index < audio.segments.count, audio.segments[index].start < end - 0.001 {
            let resource = audio.segments[index].resource
            wanted.append((try resolve(resource.uri, against: audio.playlist), resource.range))
            index += 1
        }
        guard !wanted.isEmpty else { return nil }
        return Task { [self] in
            try await withThrowingTaskGroup(of: (Int, FetchedAudio).self) { group in
                for (index, (url, range)) in wanted.enumerated() {
                    group.addTask {
                        (index, FetchedAudio(url: url, range: range, bytes: try await Self.read(
                            url, range: range ?? .all, limit: maximumSegmentBytes, what: "the segment", loader: loader)))
                    }
                }
                var fetched: [FetchedAudio?] = Array(repeating: nil, count: wanted.count)
                for try await (index, audio) in group { fetched[index] = audio }
                return fetched.compactMap { $0 }
            }
        }
    }

    /// Sends what `fetch` read, each segment renumbered to the joined init section, in order.
    func sendAudio(_ fetch: Task<[FetchedAudio], any Error>?, state: inout Run) async throws {
        guard let fetch, var audio = state.audio, let merge = audio.merge else { return }
        defer { state.audio = audio }
        for fetched in try await fetch.value {
            let joined: Data
            do { joined = try merge.audioSegment(fetched.bytes) } catch let failure as FragmentedMP4Merge.Failure {
                throw Failure.unsupportedAudio(failure.description)
            }
            observer?(.fetched(url: fetched.url, range: fetched.range, bytes: fetched.bytes.count, behindEdge: 0))
            try await state.output.send(joined)
            state.sectionStarted = true
            audio.next += 1
        }
    }
}
