import Foundation

/// A packaged VOD HLS media playlist replayed as a live stream: what `reel serve --live` and
/// the tests' live origins publish. Segment `n` (counted from the server's start, looping
/// over the VOD's segments with a discontinuity at each loop) is published once the time
/// since the start has reached its end, as an encoder writing in real time would; the
/// playlist lists the newest `window` segments. A blocking reload (`_HLS_msn`) waits until
/// the segment asked for is published. Pure values: time is given by the caller.
public struct LiveHLSStream: Sendable, Hashable {
    /// A segment of the VOD being replayed.
    public struct Segment: Sendable, Hashable {
        /// Its URI in the live playlist (absolute, or relative to the live playlist's URL).
        public var uri: String
        public var duration: Double

        public init(uri: String, duration: Double) {
            self.uri = uri
            self.duration = duration
        }
    }

    /// Why a stream cannot be made.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        case noSegments
        case badDuration(uri: String)

        public var description: String {
            switch self {
            case .noSegments: "a live stream needs at least one segment"
            case .badDuration(let uri): "segment \(uri) has no usable duration"
            }
        }
    }

    public let segments: [Segment]
    /// `#EXT-X-MAP`'s URI, if the segments are fMP4.
    public let initSection: String?
    /// How many segments the playlist lists.
    public let window: Int
    /// After this many seconds the playlist stops growing (a stalled encoder), if set.
    public var stallsAfter: Double?
    /// Whether the stream loops over the segments for ever (a discontinuity at each pass);
    /// otherwise it ends after one pass with `#EXT-X-ENDLIST`, as an event that finishes.
    public var loops: Bool
    /// `#EXT-X-TARGETDURATION`: the longest segment, rounded up.
    public let targetDuration: Int
    /// One pass over the segments, seconds.
    public let loopDuration: Double
    /// Where each segment ends within a pass.
    private let ends: [Double]

    public init(segments: [Segment], initSection: String? = nil, window: Int = 6, stallsAfter: Double? = nil,
                loops: Bool = true) throws(Failure) {
        guard !segments.isEmpty else { throw .noSegments }
        if let bad = segments.first(where: { !$0.duration.isFinite || $0.duration <= 0 || $0.duration > 3600 }) {
            throw .badDuration(uri: bad.uri)
        }
        self.segments = segments
        self.initSection = initSection
        self.window = max(1, window)
        self.stallsAfter = stallsAfter
        self.loops = loops
        var total = 0.0
        var ends: [Double] = []
        for segment in segments {
            total += segment.duration
            ends.append(total)
        }
        self.ends = ends
        self.loopDuration = total
        self.targetDuration = Int(segments.map(\.duration).max()!.rounded(.up))
    }

    /// When segment `sequence` is published: seconds from the start.
    public func publishedAt(_ sequence: Int64) -> Double {
        let count = Int64(segments.count)
        return Double(sequence / count) * loopDuration + ends[Int(sequence % count)]
    }

    /// The newest segment published at `elapsed` seconds, or `nil` before the first.
    public func newest(at elapsed: Double) -> Int64? {
        var time = min(elapsed, stallsAfter ?? elapsed)
        if !loops { time = min(time, loopDuration) }
        guard time >= ends[0] else { return nil }
        let loops = Int64(time / loopDuration)
        let within = time - Double(loops) * loopDuration
        // The last segment of this pass that has ended (or the previous pass's last).
        guard let index = ends.lastIndex(where: { $0 <= within + 1e-9 }) else {
            return loops * Int64(segments.count) - 1
        }
        return loops * Int64(segments.count) + Int64(index)
    }

    /// The playlist as published at `elapsed` seconds.
    public func playlist(at elapsed: Double) -> String {
        let count = Int64(segments.count)
        var text = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:\(targetDuration)\n"
        text += "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,HOLD-BACK=\(3 * targetDuration)\n"
        guard let newest = newest(at: elapsed) else {
            return text + "#EXT-X-MEDIA-SEQUENCE:0\n"
        }
        let first = max(0, newest - Int64(window) + 1)
        text += "#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        // Loop starts at or before the first listed segment have slid out.
        text += "#EXT-X-DISCONTINUITY-SEQUENCE:\(first / count)\n"
        if let initSection { text += "#EXT-X-MAP:URI=\"\(initSection)\"\n" }
        for sequence in first...newest {
            let segment = segments[Int(sequence % count)]
            if sequence % count == 0, sequence > first {
                text += "#EXT-X-DISCONTINUITY\n"
                if let initSection { text += "#EXT-X-MAP:URI=\"\(initSection)\"\n" }
            }
            text += "#EXTINF:\(String(format: "%.5f", segment.duration)),\n\(segment.uri)\n"
        }
        if isEnded(at: elapsed) { text += "#EXT-X-ENDLIST\n" }
        return text
    }

    /// Whether the one pass of a stream that does not loop is all published at `elapsed`.
    public func isEnded(at elapsed: Double) -> Bool {
        !loops && min(elapsed, stallsAfter ?? elapsed) >= loopDuration
    }

    /// What a request for the playlist gets at `elapsed` seconds, with its query: either the
    /// playlist now, a wait until `blockUntil` seconds and then the playlist, or a refusal.
    public enum Answer: Sendable, Hashable {
        case now
        case waitUntil(Double)
        case badRequest(String)
    }

    /// How to answer a reload asking `_HLS_msn=msn` (nil: a plain reload) at `elapsed`. A
    /// blocking reload waits for that segment, at most three target durations (RFC 8216bis
    /// §6.2.5.2: a server answers within that or not at all); one more than two segments
    /// ahead of the newest is refused.
    public func answer(msn: Int64?, at elapsed: Double) -> Answer {
        guard let msn else { return .now }
        guard msn >= 0 else { return .badRequest("_HLS_msn must not be negative") }
        let newest = newest(at: elapsed) ?? -1
        if msn <= newest || isEnded(at: elapsed) { return .now }
        if msn > newest + 2 { return .badRequest("_HLS_msn=\(msn) is more than two segments ahead of \(newest)") }
        let ready = publishedAt(msn)
        if let stallsAfter, ready > stallsAfter { return .waitUntil(elapsed + 3 * Double(targetDuration)) }
        return .waitUntil(min(ready, elapsed + 3 * Double(targetDuration)))
    }
}

extension OriginRoute {
    /// A route publishing `stream` as a live media playlist at `path`, its time counted from
    /// `start` (the route's making by default). Plain reloads get the playlist as it is;
    /// blocking reloads (`_HLS_msn`) wait on the route's executor (a sleep, no thread held)
    /// until the segment is published or three target durations pass; `_HLS_skip` is
    /// ignored (the whole playlist is sent, which a client must accept).
    public static func liveHLS(_ path: String, stream: LiveHLSStream,
                               start: ContinuousClock.Instant = .now) -> OriginRoute {
        OriginRoute(pathPrefix: path, methods: ["GET", "HEAD"]) { request in
            guard request.path == path else { return .text("not found\n", status: 404) }
            func elapsed() -> Double {
                let since = ContinuousClock.now - start
                return Double(since.components.seconds) + Double(since.components.attoseconds) / 1e18
            }
            let msnText = request.queryItems["_HLS_msn"]
            let msn = msnText.flatMap { Int64($0) }
            if msnText != nil, msn == nil { return .text("_HLS_msn is not a number\n", status: 400) }
            switch stream.answer(msn: msn, at: elapsed()) {
            case .now:
                break
            case .badRequest(let why):
                return .text(why + "\n", status: 400)
            case .waitUntil(let time):
                let wait = time - elapsed()
                if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
            }
            var response = OriginResponse(body: Data(stream.playlist(at: elapsed()).utf8))
            response.headers = [("Content-Type", "application/vnd.apple.mpegurl"), ("Cache-Control", "no-cache")]
            return response
        }
    }
}
