import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelMediaTools
import ReelOrigin

// Preparing `reel bench first-frame`: the inputs, the clips made when none are given, the
// origin that serves them, the scenarios (rows) and the warm caches.
extension FirstFrameBench {
    func prepare(inputs: [String], clipSeconds: Double, clipSize: (Int, Int), only: [String] = []) async throws {
        var (directories, urls) = try Self.classify(inputs)
        if inputs.isEmpty {
            directories.append(try await encodeDefaultClips(clipSeconds: clipSeconds, clipSize: clipSize))
        }
        guard directories.count <= 1 else { throw CommandFailure.usage("give at most one directory") }
        if let root = directories.first {
            try await serve(root)
        } else {
            originDescription = "the given URLs as they are"
        }
        for url in urls {
            targets.append(BenchTarget(label: url.lastPathComponent, url: url, localFile: nil, moovAtEnd: false))
        }
        // moov-first items first: cold, warm, preloaded, floor, then moov-at-end, then HLS and DASH.
        targets = targets.filter { !$0.moovAtEnd && !$0.isStream } + targets.filter(\.moovAtEnd) + targets.filter(\.isStream)
        makeScenarios()
        if !only.isEmpty { try keepScenarios(named: only) }
        try await fillWarmCaches()
    }

    /// Directories to serve and URLs to measure where they are.
    private static func classify(_ inputs: [String]) throws -> (directories: [URL], urls: [URL]) {
        var directories: [URL] = []
        var urls: [URL] = []
        for input in inputs {
            if let url = URL(string: input), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme) {
                urls.append(url)
            } else {
                let path = (input as NSString).expandingTildeInPath
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                    throw CommandFailure.usage("\(input): not a directory or an http(s) URL")
                }
                directories.append(URL(fileURLWithPath: path, isDirectory: true))
            }
        }
        return (directories, urls)
    }

    /// Two H.264 clips (moov first, moov at the end) and the first as HLS and DASH, in a
    /// temporary directory that is returned.
    private func encodeDefaultClips(clipSeconds: Double, clipSize: (Int, Int)) async throws -> URL {
        let scratch = try TemporaryDirectory("bench-clips")
        temporary.append(scratch)
        status("encoding two \(clipSize.0)x\(clipSize.1) \(clipSeconds) s H.264 clips…")
        for (name, container) in [("moov-first.mp4", ClipSpec.Container.mp4), ("moov-at-end.mp4", .mp4MoovAtEnd)] {
            let spec = ClipSpec(width: clipSize.0, height: clipSize.1, frameRate: 30, duration: clipSeconds,
                                keyframeInterval: 60, container: container, preset: "veryfast", bitRateKbps: 2500)
            try await onOwnThread(named: "reel.encode") { try ClipEncoder.encode(spec, to: scratch.url.appendingPathComponent(name)) }
        }
        // The moov-first clip as HLS with fMP4 segments, in its own directory.
        let clip = scratch.url.appendingPathComponent("moov-first.mp4")
        let hls = scratch.url.appendingPathComponent("hls", isDirectory: true)
        try await onOwnThread(named: "reel.encode") {
            try StreamPackager.package(clip, loader: FileLoader(), format: .hlsFMP4, into: hls, segmentSeconds: 2)
        }
        // And as DASH (fMP4 segments), in its own directory.
        let dash = scratch.url.appendingPathComponent("dash", isDirectory: true)
        try await onOwnThread(named: "reel.encode") {
            try StreamPackager.package(clip, loader: FileLoader(), format: .dash, into: dash, segmentSeconds: 2)
        }
        return scratch.url
    }

    /// Serves `root` from an in-process origin shaped by --rtt-ms and --kbps; its media files,
    /// HLS and DASH directories become targets.
    private func serve(_ root: URL) async throws {
        let server = OriginServer(configuration: .init(
            root: root, latency: .milliseconds(rttMilliseconds), bandwidthKbps: kbps
        ))
        do { _ = try await server.start() } catch { throw CommandFailure.media("origin: \(error)") }
        origin = server
        originDescription = "origin \(server.baseURL!.absoluteString) (rtt \(rttMilliseconds) ms, \(kbps) kbit/s)"
        let files = ((try? FileManager.default.contentsOfDirectory(at: root, includingPropertiesForKeys: nil)) ?? [])
            .filter { ["mp4", "m4v", "mov", "mkv", "webm"].contains($0.pathExtension.lowercased()) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        guard !files.isEmpty else { throw CommandFailure.usage("\(root.path): no media files") }
        for file in files {
            let name = file.lastPathComponent
            targets.append(BenchTarget(label: name, url: server.url(for: "/" + name), localFile: file,
                                       moovAtEnd: MP4Boxes.moovIsAtEnd(file) ?? false))
        }
        // HLS: every sub-directory with an index.m3u8; DASH: with a manifest.mpd.
        let subdirectories = ((try? FileManager.default.contentsOfDirectory(at: root, includingPropertiesForKeys: nil)) ?? [])
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        for (kind, manifest) in [("hls", "index.m3u8"), ("dash", "manifest.mpd")] {
            for directory in subdirectories where FileManager.default.fileExists(atPath: directory.appendingPathComponent(manifest).path) {
                let name = directory.lastPathComponent
                targets.append(BenchTarget(label: name, url: server.url(for: "/\(name)/\(manifest)"), localFile: nil,
                                           moovAtEnd: false, isStream: true, streamKind: kind))
            }
        }
    }

    /// Scenarios, named plainly when there is one target of a kind.
    private func makeScenarios() {
        let firstCount = targets.filter { !$0.moovAtEnd && !$0.isStream }.count
        let endCount = targets.filter(\.moovAtEnd).count
        for (index, target) in targets.enumerated() {
            if target.isStream {
                let kindCount = targets.filter { $0.isStream && $0.streamKind == target.streamKind }.count
                let name = kindCount > 1 ? "\(target.streamKind) \(target.label)" : target.streamKind
                scenarios.append(ScenarioRecord(name: name, kind: .cold, targetIndex: index))
                continue
            }
            if target.moovAtEnd {
                scenarios.append(ScenarioRecord(name: endCount > 1 ? "moov-at-end \(target.label)" : "moov-at-end", kind: .moovAtEnd, targetIndex: index))
                continue
            }
            let suffix = firstCount > 1 ? " \(target.label)" : ""
            scenarios.append(ScenarioRecord(name: "cold" + suffix, kind: .cold, targetIndex: index))
            scenarios.append(ScenarioRecord(name: "warm" + suffix, kind: .warm, targetIndex: index))
            scenarios.append(ScenarioRecord(name: "preloaded" + suffix, kind: .preloaded, targetIndex: index))
            if target.localFile != nil {
                scenarios.append(ScenarioRecord(name: "decode-floor" + suffix, kind: .decodeFloor, targetIndex: index))
            }
        }
    }

    /// --scenario: the rows named (by kind, stream kind or full name), nothing else.
    private func keepScenarios(named only: [String]) throws {
        let wanted = Set(only.map { $0.lowercased() })
        // What a row answers to, for the check and the filter alike: its full name, and
        // its stream kind (hls, dash) or else its kind (cold, warm, …).
        let targets = targets
        let names = { (scenario: ScenarioRecord) -> Set<String> in
            let target = targets[scenario.targetIndex]
            return [scenario.name.lowercased(), target.isStream ? target.streamKind : scenario.kind.rawValue]
        }
        let known = scenarios.reduce(into: Set<String>()) { $0.formUnion(names($1)) }
        if let unknown = wanted.subtracting(known).sorted().first {
            throw CommandFailure.usage("--scenario \(unknown): no such scenario (this run has \(scenarios.map(\.name).joined(separator: ", ")))")
        }
        scenarios = scenarios.filter { !names($0).isDisjoint(with: wanted) }
    }

    /// Warm caches: every byte of each URL fetched once through the same stack.
    private func fillWarmCaches() async throws {
        for index in targets.indices where scenarios.contains(where: { $0.targetIndex == index && $0.kind == .warm }) {
            let directory = try TemporaryDirectory("bench-warm")
            temporary.append(directory)
            let cache = try RangeCache(configuration: .init(directory: directory.url))
            let http = HTTPLoader()
            let caching = CachingLoader(upstream: http, cache: cache)
            status("filling the warm cache with \(targets[index].label)…")
            do {
                _ = try await caching.data(targets[index].url)
            } catch {
                await http.shutdown()
                throw CommandFailure.media("\(targets[index].url.absoluteString): \(describe(error))")
            }
            await http.shutdown()
            targets[index].warmCache = (directory, cache)
        }
    }
}
