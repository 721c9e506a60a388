import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelOrigin
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real `reel` killed at each of its commit points in turn (every rename, fsync and unlink of
/// the cache and of the bandwidth estimate: ``CrashPoints``, asked for through the environment),
/// each time in a fresh cache directory: after every kill the cache verifies clean, and a
/// replay from what the kill left shows exactly the frames of the original. The last run asks
/// for a point past the end and must finish normally, so every point a play reaches is tried.
@Suite("killed at every commit point", .serialized)
struct CrashPointTests {
    /// What one round of kills found.
    struct Sweep {
        /// `kind path` of the point each killed run ended at, in order (the first run's first).
        var killed: [String] = []
        /// How the run past the last point ended.
        var finished: Int32?
    }

    /// Kills `arguments(cache)` at point 1, 2, … until a run ends on its own. After each kill
    /// the cache must verify clean; `replay(cache, k)` then checks what playing from it shows.
    static func killAtEveryPoint(_ reel: URL, in scratch: Scratch, label: String, limit: Int = 400,
                                 arguments: (String) -> [String],
                                 replay: (String, Int) async throws -> Void) async throws -> Sweep {
        var sweep = Sweep()
        for point in 1...limit {
            let cache = scratch.file("\(label)-\(point)")
            let log = scratch.file("\(label)-\(point).points")
            var environment = ProcessInfo.processInfo.environment
            environment["REEL_CRASH_AT"] = String(point)
            environment["REEL_CRASH_LOG"] = log
            let child = try Child(reel, arguments(cache), environment: environment)
            guard let status = await child.exitStatus() else {
                child.kill(SIGKILL)
                Issue.record("\(label): the run asked to stop at point \(point) hung: \(child.output)")
                return sweep
            }
            // The point is logged just before the kill: its line says whether this run reached it
            // (more surely than how the end is reported, which a loaded machine can race).
            let reached = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            guard let line = reached.split(separator: "\n").first(where: { $0.hasPrefix("\(point) ") }) else {
                #expect(status == 0, "\(label): the run past the last point (\(point)) failed: \(child.standardError)")
                sweep.finished = status
                print("\(label): \(sweep.killed.count) points: \(Self.kinds(sweep).sorted())")
                return sweep
            }
            #expect(status == SIGKILL, "\(label): point \(point) reached, then exit \(status): \(child.standardError)")
            sweep.killed.append(String(line.drop { $0 != " " }.dropFirst()))
            let report = RangeCache.inspect(directory: URL(fileURLWithPath: cache), verifyContents: true)
            #expect(report.isClean, "\(label): killed at \(sweep.killed.last!): \(report.problems)")
            try await replay(cache, point)
            try? FileManager.default.removeItem(atPath: cache)
        }
        Issue.record("\(label): still killed at point \(limit): the runs never ended on their own")
        return sweep
    }

    /// Plays `url` from `cache` and expects exactly `reference`'s frames; for a master, those
    /// of the variant the trace says it played (`references` by rank: the estimate a killed run
    /// saved, or the master's own transfer on a starved core, may start it on another).
    static func expectReplay(_ reel: URL, _ url: String, cache: String, reference: [String], references: [[String]] = [],
                             arguments: [String] = [], _ what: String) async throws {
        let trace = cache + ".jsonl"
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let replay = try await runSeparately(reel, ["play", url, "--headless", "--clock", "fast", "--cache-dir", cache, "--trace", trace] + arguments)
        #expect(replay.status == 0, "\(what): \(replay.stderr)")
        let objects = (try? traceObjects(trace)) ?? []
        let rank = objects.first { $0["type"] as? String == "variant" }.flatMap { ($0["rank"] as? NSNumber)?.intValue }
        let expected = rank.flatMap { references.indices.contains($0) ? references[$0] : nil } ?? reference
        let shown = frames(objects).compactMap { $0["md5"] as? String }
        #expect(shown == expected, "\(what): the replay from the cache a kill left shows other frames (variant \(rank.map(String.init) ?? "-"))")
    }

    static func kinds(_ sweep: Sweep) -> Set<String> {
        Set(sweep.killed.map { String($0.prefix { $0 != " " }) })
    }

    @Test func anMP4PlayKilledAtEachPointLeavesACacheThatVerifiesAndReplays() async throws {
        let reel = try await ReelBinary.locate()
        // Big enough (about 750 KB) for the meter to measure and the estimate to be saved.
        let local = try await offThePool {
            try Fixtures.clip(ClipSpec(width: 320, height: 180, frameRate: 30, duration: 3, keyframeInterval: 30, bitRateKbps: 2_000))
        }
        let reference = try referenceMD5s(local)
        let scratch = try Scratch("reel-crash-points-mp4")
        defer { scratch.remove() }
        try FileManager.default.copyItem(at: local, to: scratch.url.appendingPathComponent("clip.mp4"))
        let origin = OriginServer(configuration: .init(root: scratch.url))
        _ = try await origin.start()
        let url = origin.url(for: "clip.mp4").absoluteString
        let sweep: Sweep
        do {
            sweep = try await Self.killAtEveryPoint(reel, in: scratch, label: "mp4", arguments: { cache in
                ["play", url, "--headless", "--clock", "fast", "--cache-dir", cache]
            }, replay: { cache, point in
                try await Self.expectReplay(reel, url, cache: cache, reference: reference, "mp4, point \(point)")
            })
            // The threads order the points differently from run to run, so the sweep may step over
            // one; the estimate's commit is killed at by name too (a kill there leaves its temporary file).
            let cache = scratch.file("estimate")
            var environment = ProcessInfo.processInfo.environment
            environment["REEL_CRASH_AT"] = "1"
            environment["REEL_CRASH_MATCH"] = "rename " + cache + "/" + SavedBandwidthEstimate.fileName
            let killed = try await runSeparately(reel, ["play", url, "--headless", "--clock", "fast", "--cache-dir", cache], environment: environment)
            #expect(killed.status == SIGKILL, "the run was to be killed at the estimate's rename: \(killed.stderr)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []
            #expect(left.contains { $0.hasPrefix("." + SavedBandwidthEstimate.fileName + ".") }, "its temporary file: \(left)")
            let report = RangeCache.inspect(directory: URL(fileURLWithPath: cache), verifyContents: true)
            #expect(report.isClean, "killed at the estimate's rename: \(report.problems)")
            try await Self.expectReplay(reel, url, cache: cache, reference: reference, "mp4, at the estimate's rename")
            let swept = (try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []
            #expect(!swept.contains { $0.hasPrefix("." + SavedBandwidthEstimate.fileName + ".") }, "the next open removed it: \(swept)")
        } catch {
            await origin.stop()
            throw error
        }
        await origin.stop()
        #expect(sweep.finished == 0)
        #expect(Self.kinds(sweep).isSuperset(of: ["rename", "fsync", "unlink"]), "\(sweep.killed)")
    }

    @Test func anHLSMasterPlayKilledAtEachPointLeavesACacheThatVerifiesAndReplays() async throws {
        let reel = try await ReelBinary.locate()
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader()) }
        defer { ladder.remove() }
        let references = try ladder.clips.map { try referenceMD5s($0) }
        let scratch = try Scratch("reel-crash-points-hls")
        defer { scratch.remove() }
        let origin = OriginServer(configuration: .init(root: ladder.directory))
        _ = try await origin.start()
        let url = origin.url(for: "master.m3u8").absoluteString
        // Held on the lowest variant (a fresh cache knows no estimate), so every run reads the same segments.
        let play = ["play", url, "--headless", "--clock", "fast", "--no-adaptive"]
        let sweep: Sweep
        do {
            sweep = try await Self.killAtEveryPoint(reel, in: scratch, label: "hls", arguments: { cache in
                play + ["--cache-dir", cache]
            }, replay: { cache, point in
                try await Self.expectReplay(reel, url, cache: cache, reference: references[0], references: references,
                                            arguments: ["--no-adaptive"], "hls, point \(point)")
            })
        } catch {
            await origin.stop()
            throw error
        }
        await origin.stop()
        #expect(sweep.finished == 0)
        #expect(sweep.killed.count >= 10, "a master, its variant's playlist, init and segments: \(sweep.killed)")
        #expect(Self.kinds(sweep).isSuperset(of: ["rename", "fsync"]), "\(sweep.killed)")
    }

    /// A feed of three items over a manifest, with preloading: the current page's item and the
    /// next ones are fetched at once. Each kill verifies; the first and every third after it
    /// also replays every item from the cache it left (three plays each, so not at every point).
    @Test func aFeedWithPreloadingKilledAtEachPointLeavesACacheThatVerifiesAndReplays() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-crash-points-feed")
        defer { scratch.remove() }
        var references: [String: [String]] = [:]
        var items: [String] = []
        for (index, duration) in [1.0, 1.2, 1.4].enumerated() {
            let clip = try await offThePool { try Fixtures.clip(ClipSpec(width: 96, height: 160, duration: duration, audioCodec: .aac)) }
            let name = "clip\(index).mp4"
            try FileManager.default.copyItem(at: clip, to: scratch.url.appendingPathComponent(name))
            references[name] = try referenceMD5s(clip)
            items.append(#"{"id": "\#(index)", "title": "clip \#(index)", "video": "\#(name)"}"#)
        }
        try Data(#"{"items": [\#(items.joined(separator: ", "))]}"#.utf8).write(to: scratch.url.appendingPathComponent("feed.json"))
        let origin = OriginServer(configuration: .init(root: scratch.url))
        _ = try await origin.start()
        let feed = origin.url(for: "feed.json").absoluteString
        let sweep: Sweep
        do {
            sweep = try await Self.killAtEveryPoint(reel, in: scratch, label: "feed", arguments: { cache in
                ["feed", feed, "--headless", "--swipes", "2", "--dwell", "0.3", "--settle", "--cache-dir", cache]
            }, replay: { cache, point in
                guard point % 3 == 1 else { return }
                for (name, reference) in references.sorted(by: { $0.key < $1.key }) {
                    try await Self.expectReplay(reel, origin.url(for: name).absoluteString, cache: cache, reference: reference, "feed, point \(point), \(name)")
                }
            })
        } catch {
            await origin.stop()
            throw error
        }
        await origin.stop()
        #expect(sweep.finished == 0)
        #expect(sweep.killed.count >= 10, "\(sweep.killed)")
        #expect(Self.kinds(sweep).isSuperset(of: ["rename", "fsync"]), "\(sweep.killed)")
    }
}
