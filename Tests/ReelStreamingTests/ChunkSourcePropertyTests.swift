import Foundation
import ReelStreaming
import Testing

/// The chunk source against a simulated live origin, its events in seeded random orders: late
/// and early answers, playlists that bring nothing new, blocking reloads left unanswered or
/// answered at once with nothing new, long
/// waits for room, an origin that stalls, one that ends. Values only: the clock is a number.
@Suite("ChunkSource properties")
struct ChunkSourcePropertyTests {
    /// A small seeded generator (SplitMix64), so a failing seed can be replayed.
    struct Random: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A live origin publishing a 2 s segment every 2 s in a window of `window`, until it
    /// stalls (publishes nothing more) or ends (`EXT-X-ENDLIST`).
    struct Origin {
        var blocking: Bool
        var window: Int
        var stallsAt: Double?
        var endsAt: Double?

        /// Segments published by `time` (the first four were there at 0).
        func published(at time: Double) -> Int {
            let until = min(time, stallsAt ?? .infinity, endsAt ?? .infinity)
            return 4 + Int(until / 2)
        }

        func isFinal(at time: Double) -> Bool { endsAt.map { time >= $0 } ?? false }

        func playlist(at time: Double) -> HLSMediaPlaylist {
            let count = published(at: time)
            let first = Int64(max(0, count - window))
            return LivePlaylistTrackerTests.playlist(first: first, count: count - Int(first),
                                                     control: blocking ? "CAN-BLOCK-RELOAD=YES" : "",
                                                     final: isFinal(at: time))
        }

        /// When a blocking reload for segment `sequence` is answered, if within `limit`.
        func answer(blockingFor sequence: Int64, from time: Double, limit: Double) -> Double? {
            if isFinal(at: time) || published(at: time) > Int(sequence) { return time }
            let due = Double(Int(sequence) + 1 - 4) * 2
            guard due <= time + limit, stallsAt.map({ due <= $0 }) ?? true, published(at: due) > Int(sequence) else { return nil }
            return due
        }
    }

    /// What one run did.
    struct Run {
        var ending: ChunkSource.Ending?
        var fetched: [Int64] = []
        var violations: [String] = []
        var loadedFinal = false
        var steps = 0
    }

    static func run(seed: UInt64) -> (Run, Origin) {
        var random = Random(state: seed)
        // Every origin ends or stalls (one that does neither is followed for ever).
        let stalls = Int.random(in: 0..<4, using: &random) == 0
        let origin = Origin(blocking: Bool.random(using: &random), window: Int.random(in: 3...8, using: &random),
                            stallsAt: stalls ? Double.random(in: 0...40, using: &random) : nil,
                            endsAt: !stalls || Bool.random(using: &random) ? Double.random(in: 0...60, using: &random) : nil)
        var source = ChunkSource(tracker: LivePlaylistTracker(prefersParts: false),
                                 configuration: .init(maximumBlockingWait: 15), at: 0)
        var run = Run()
        var now = 0.0
        var lastLoad: (at: Double, changed: Bool)?
        // The source is fetching (a playlist arrived, a chunk was fetched): its next reload
        // comes from its reload rule.
        var fetching = false
        while run.ending == nil, run.steps < 3000 {
            run.steps += 1
            let allowed = source.tracker.nextReload()
            let action = source.nextAction(at: now)
            switch action {
            case .end(let ending):
                run.ending = ending
                if source.nextAction(at: now + 100) != action { run.violations.append("an ending did not stay") }
            case .reload(let reload, _):
                if fetching {
                    // Never earlier than the tracker allows, never in a spin after nothing new.
                    if reload.at < allowed.at { run.violations.append("reload at \(reload.at) before \(allowed.at)") }
                    if let lastLoad, !lastLoad.changed, reload.at < lastLoad.at + 1 {
                        run.violations.append("reload at \(reload.at) within half a target duration of \(lastLoad.at)")
                    }
                }
                fetching = false
                now = max(now, reload.at) + Double.random(in: 0...0.3, using: &random)
                if let sequence = reload.blockingSequence, Int.random(in: 0..<5, using: &random) > 0 {
                    // (One in five is answered at once with what is there, as a server that
                    // ignores the blocking query would.)
                    let limit = 3 * 2 + 1.0
                    guard Int.random(in: 0..<10, using: &random) > 0,
                          let answered = origin.answer(blockingFor: sequence, from: now, limit: limit) else {
                        now += limit
                        source.reloadUnanswered(at: now)
                        continue
                    }
                    now = answered
                }
                let playlist = origin.playlist(at: now)
                guard let loaded = source.playlistLoaded(playlist, at: now) else { continue }
                run.loadedFinal = run.loadedFinal || playlist.isFinal
                lastLoad = (now, loaded.changed)
                fetching = true
            case .fetch(let chunk):
                guard case .segment(let segment, _) = chunk.fetch else {
                    run.violations.append("a part from a playlist without parts")
                    continue
                }
                if Int.random(in: 0..<8, using: &random) == 0 {
                    // A wait for room, sometimes long enough to fall behind the window.
                    let since = now
                    now += Double.random(in: 0...14, using: &random)
                    if !source.waitedForRoom(since: since, at: now) {
                        fetching = false
                        continue
                    }
                }
                // Every section begins with its init section; a chunk that may be abandoned is
                // inside one under way; timestamps that start again start a section.
                if (chunk.startsSection || !source.isSectionStarted), chunk.sendsInit == nil {
                    run.violations.append("segment \(segment.sequence) begins a section without its init section")
                }
                if chunk.abandonable, chunk.startsSection || chunk.sendsInit != nil || chunk.restartsTimeline {
                    run.violations.append("segment \(segment.sequence) may be abandoned at a seam")
                }
                if chunk.restartsTimeline, source.isSectionStarted, !chunk.startsSection {
                    run.violations.append("segment \(segment.sequence) restarts the timeline inside a section")
                }
                source.chunkStarted(chunk)
                if let sent = chunk.sendsInit { source.initSectionSent(sent) }
                source.mediaSent()
                now += Double.random(in: 0...1.5, using: &random)
                if run.fetched.contains(segment.sequence) { run.violations.append("segment \(segment.sequence) fetched twice") }
                if let last = run.fetched.last, segment.sequence <= last {
                    run.violations.append("segment \(segment.sequence) after \(last)")
                }
                run.fetched.append(segment.sequence)
                source.chunkLoaded(chunk.fetch)
            }
        }
        return (run, origin)
    }

    @Test(arguments: 0..<4)
    func neverFetchesTwiceNorReloadsEarlyAndAlwaysEnds(batch: Int) {
        for seed in UInt64(batch * 200)..<UInt64(batch * 200 + 200) {
            let (run, origin) = Self.run(seed: seed)
            #expect(run.violations.isEmpty, "seed \(seed): \(run.violations.prefix(3))")
            #expect(run.ending != nil, "seed \(seed): no ending in \(run.steps) steps")
            switch run.ending {
            case .endList:
                #expect(run.loadedFinal, "seed \(seed): ended without an end list")
                let last = Int64(origin.published(at: .infinity) - 1)
                #expect(run.fetched.last == last, "seed \(seed): ended at \(run.fetched.last ?? -1), the list at \(last)")
            case .failed(.stale):
                #expect(origin.stallsAt != nil, "seed \(seed): stale though the origin kept publishing")
            case .failed(let failure):
                Issue.record("seed \(seed): failed: \(failure)")
            case nil:
                break
            }
            if origin.endsAt != nil, origin.stallsAt == nil {
                #expect(run.ending == .endList, "seed \(seed): an origin that ends ends the stream")
            }
        }
    }
}
