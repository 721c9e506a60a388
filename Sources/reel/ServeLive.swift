import Foundation
import ReelOrigin
import ReelStreaming

/// `reel serve --live PLAYLIST`: a packaged VOD HLS stream under the served directory,
/// published again under `/live/` as a live stream that grows in real time.
enum ServeLive {
    /// Why a playlist cannot be published live.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The routes publishing `paths` (relative to `root`) live, all on one clock from `start`.
    /// A media playlist becomes a live one at `/live/PATH` whose segments are the VOD's files
    /// (by absolute path); a master is served as written at `/live/PATH`, and each of its
    /// variants' and renditions' media playlists is published live beside it (the master's
    /// relative URIs then name the live ones).
    static func routes(root: URL, paths: [String], window: Int, stallsAfter: Double?, loops: Bool,
                       start: ContinuousClock.Instant = .now) throws -> [OriginRoute] {
        var routes: [OriginRoute] = []
        var published: Set<String> = []
        func publishMedia(_ relative: String, data: Data) throws {
            guard published.insert(relative).inserted else { return }
            let playlist: HLSMediaPlaylist
            do { playlist = try HLSMediaPlaylist.parse(data) } catch {
                throw Failure(description: "\(relative): \(error)")
            }
            let base = URL(string: "/" + relative, relativeTo: URL(string: "http://origin.invalid/"))!
            func absolutePath(_ uri: String) throws -> String {
                guard let url = URL(string: uri, relativeTo: base)?.absoluteURL, url.host == "origin.invalid" else {
                    throw Failure(description: "\(relative): \(uri) is not a file beside the playlist")
                }
                return url.path
            }
            if playlist.segments.contains(where: { $0.range != nil }) {
                throw Failure(description: "\(relative): byte-range segments are not published live")
            }
            var stream: LiveHLSStream
            do {
                stream = try LiveHLSStream(
                    segments: try playlist.segments.map { segment in
                        let path = try absolutePath(segment.uri)
                        let bytes = FileManager.default.contents(atPath: root.appendingPathComponent(String(path.dropFirst())).path)
                        return .init(uri: path, duration: segment.duration,
                                     parts: bytes.map { LiveHLSStream.fragmentParts(Array($0), duration: segment.duration) } ?? [])
                    },
                    initSection: try playlist.initSection.map { try absolutePath($0.uri) },
                    window: window, stallsAfter: stallsAfter, loops: loops)
            } catch let failure as LiveHLSStream.Failure {
                throw Failure(description: "\(relative): \(failure)")
            }
            // Delta updates, for windows longer than six target durations (shorter ones skip nothing).
            stream.canSkipUntil = 6 * Double(stream.targetDuration)
            routes.append(.liveHLS("/live/" + relative, stream: stream, start: start))
        }
        for path in paths {
            let relative = path.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
            guard !relative.split(separator: "/").contains("..") else {
                throw Failure(description: "\(path): not under the served directory")
            }
            let file = root.appendingPathComponent(relative)
            guard let data = FileManager.default.contents(atPath: file.path) else {
                throw Failure(description: "\(path): no such file under the served directory")
            }
            if let master = HLSMasterPlaylist(data) {
                let base = URL(string: "http://origin.invalid/" + relative)
                for uri in master.variants.map(\.uri) + master.audioVideoRenditions {
                    guard !uri.contains("://"), !uri.hasPrefix("/"),
                          let resolved = URL(string: uri, relativeTo: base)?.absoluteURL, resolved.host == "origin.invalid" else {
                        throw Failure(description: "\(path): \(uri) is not a playlist beside the master")
                    }
                    let child = String(resolved.path.drop { $0 == "/" })
                    guard let childData = FileManager.default.contents(atPath: root.appendingPathComponent(child).path) else {
                        throw Failure(description: "\(path): \(uri) is not a file under the served directory")
                    }
                    try publishMedia(child, data: childData)
                }
                let bytes = data
                routes.append(OriginRoute(pathPrefix: "/live/" + relative, methods: ["GET", "HEAD"]) { _ in
                    OriginResponse(headers: [("Content-Type", "application/vnd.apple.mpegurl")], body: bytes)
                })
            } else {
                try publishMedia(relative, data: data)
            }
        }
        return routes
    }
}

