import Foundation
import ReelCore
import Synchronization

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
        /// Its partial segments, as byte ranges of its file (low-latency HLS); empty for none.
        public var parts: [Part]

        public init(uri: String, duration: Double, parts: [Part] = []) {
            self.uri = uri
            self.duration = duration
            self.parts = parts
        }
    }

    /// A partial segment: a byte range of its segment's file, published as it is written.
    public struct Part: Sendable, Hashable {
        public var offset: Int64
        public var length: Int64
        public var duration: Double
        /// Whether it starts with a frame that decodes on its own (`INDEPENDENT=YES`).
        public var independent: Bool

        public init(offset: Int64, length: Int64, duration: Double, independent: Bool) {
            self.offset = offset
            self.length = length
            self.duration = duration
            self.independent = independent
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
    /// `PART-TARGET`: the longest part, when there are parts.
    public let partTarget: Double?
    /// `CAN-SKIP-UNTIL`: delta updates (`_HLS_skip=YES`) leave out the segments that start
    /// more than this many seconds before the end of the playlist; `nil`: none offered. At
    /// least six target durations (RFC 8216bis §4.4.3.8), so a window shorter than that skips
    /// nothing.
    public var canSkipUntil: Double?
    /// One pass over the segments, seconds.
    public let loopDuration: Double
    /// Where each segment ends within a pass.
    private let ends: [Double]

    public init(segments: [Segment], initSection: String? = nil, window: Int = 6, stallsAfter: Double? = nil,
                loops: Bool = true) throws(Failure) {
        guard !segments.isEmpty else { throw .noSegments }
        if let bad = segments.first(where: { segment in
            !segment.duration.isFinite || segment.duration <= 0 || segment.duration > 3600
                || segment.parts.contains { !$0.duration.isFinite || $0.duration <= 0 || $0.offset < 0 || $0.length <= 0 }
        }) {
            throw .badDuration(uri: bad.uri)
        }
        self.partTarget = segments.flatMap(\.parts).map(\.duration).max()
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

    /// The playlist as published at `elapsed` seconds; with `skip` (a client's `_HLS_skip=YES`
    /// when ``canSkipUntil`` is set) a delta update: `#EXT-X-SKIP` in place of the segments that
    /// start more than `canSkipUntil` seconds before its end.
    public func playlist(at elapsed: Double, skip: Bool = false) -> String {
        let count = Int64(segments.count)
        var text = "#EXTM3U\n#EXT-X-VERSION:\(partTarget == nil ? 7 : 9)\n#EXT-X-TARGETDURATION:\(targetDuration)\n"
        var control = "CAN-BLOCK-RELOAD=YES,HOLD-BACK=\(3 * targetDuration)"
        let skipUntil = canSkipUntil.map { max($0, 6 * Double(targetDuration)) }
        if let skipUntil { control += String(format: ",CAN-SKIP-UNTIL=%.5f", skipUntil) }
        if let partTarget {
            control += String(format: ",PART-HOLD-BACK=%.5f", 3 * partTarget)
            text += String(format: "#EXT-X-PART-INF:PART-TARGET=%.5f\n", partTarget)
        }
        text += "#EXT-X-SERVER-CONTROL:\(control)\n"
        let newest = newest(at: elapsed) ?? -1
        let ended = isEnded(at: elapsed)
        let trailing = ended ? 0 : partsPublished(newest + 1, at: elapsed)
        guard newest >= 0 || trailing > 0 else {
            return text + "#EXT-X-MEDIA-SEQUENCE:0\n"
        }
        let first = max(0, newest - Int64(window) + 1)
        text += "#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        // Loop starts at or before the first listed segment have slid out.
        text += "#EXT-X-DISCONTINUITY-SEQUENCE:\(first / count)\n"
        if let initSection { text += "#EXT-X-MAP:URI=\"\(initSection)\"\n" }
        func partLines(_ sequence: Int64, _ upTo: Int) -> String {
            let segment = segments[Int(sequence % count)]
            return segment.parts.prefix(upTo).map { part in
                String(format: "#EXT-X-PART:DURATION=%.5f", part.duration)
                    + ",URI=\"\(segment.uri)\",BYTERANGE=\"\(part.length)@\(part.offset)\""
                    + (part.independent ? ",INDEPENDENT=YES" : "") + "\n"
            }.joined()
        }
        // A delta update leaves out what starts more than `skipUntil` before the end.
        var listedFrom = first
        if skip, let skipUntil, newest >= first {
            var fromEnd = 0.0
            var keep = newest + 1
            for sequence in stride(from: newest, through: first, by: -1) {
                fromEnd += segments[Int(sequence % count)].duration
                if fromEnd > skipUntil { break }
                keep = sequence
            }
            // Keep the segment a discontinuity (or a loop's init section) starts with listed.
            listedFrom = keep
            if listedFrom > first { text += "#EXT-X-SKIP:SKIPPED-SEGMENTS=\(listedFrom - first)\n" }
        }
        if newest >= listedFrom {
            for sequence in listedFrom...newest {
                let segment = segments[Int(sequence % count)]
                if sequence % count == 0, sequence > first {
                    text += "#EXT-X-DISCONTINUITY\n"
                    if let initSection { text += "#EXT-X-MAP:URI=\"\(initSection)\"\n" }
                }
                // Parts are listed for the last three segments, as low-latency servers do.
                if sequence > newest - 3 { text += partLines(sequence, segment.parts.count) }
                text += "#EXTINF:\(String(format: "%.5f", segment.duration)),\n\(segment.uri)\n"
            }
        }
        if !ended, partTarget != nil {
            let next = newest + 1
            if trailing > 0 {
                if next % count == 0, next > first { text += "#EXT-X-DISCONTINUITY\n" }
                text += partLines(next, trailing)
            }
            let segment = segments[Int(next % count)]
            if trailing < segment.parts.count {
                let part = segment.parts[trailing]
                text += "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"\(segment.uri)\",BYTERANGE-START=\(part.offset),BYTERANGE-LENGTH=\(part.length)\n"
            }
        }
        if ended { text += "#EXT-X-ENDLIST\n" }
        return text
    }

    /// How many parts of segment `sequence` are published at `elapsed`.
    public func partsPublished(_ sequence: Int64, at elapsed: Double) -> Int {
        guard sequence >= 0 else { return 0 }
        let time = min(elapsed, stallsAfter ?? elapsed)
        let segment = segments[Int(sequence % Int64(segments.count))]
        if !loops, sequence >= Int64(segments.count) { return 0 }
        var end = publishedAt(sequence) - segment.duration
        var published = 0
        for part in segment.parts {
            end += part.duration
            if end <= time + 1e-9 { published += 1 } else { break }
        }
        return published
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
    public func answer(msn: Int64?, part: Int? = nil, at elapsed: Double) -> Answer {
        guard let msn else { return part == nil ? .now : .badRequest("_HLS_part without _HLS_msn") }
        guard msn >= 0, (part ?? 0) >= 0 else { return .badRequest("_HLS_msn and _HLS_part must not be negative") }
        let newest = newest(at: elapsed) ?? -1
        if msn <= newest || isEnded(at: elapsed) { return .now }
        if msn > newest + 2 { return .badRequest("_HLS_msn=\(msn) is more than two segments ahead of \(newest)") }
        var ready = publishedAt(msn)
        let segment = segments[Int(msn % Int64(segments.count))]
        if let part, part < segment.parts.count {
            ready = publishedAt(msn) - segment.duration + segment.parts.prefix(part + 1).reduce(0) { $0 + $1.duration }
            if ready <= elapsed + 1e-9, partsPublished(msn, at: elapsed) > part { return .now }
        }
        if let stallsAfter, ready > stallsAfter { return .waitUntil(elapsed + 3 * Double(targetDuration)) }
        return .waitUntil(min(ready, elapsed + 3 * Double(targetDuration)))
    }
}

/// The time a live route publishes by.
public enum LiveHLSTime: Sendable {
    /// Real time, from an instant: what `reel serve --live` uses.
    case realTime(from: ContinuousClock.Instant)
    /// Time that moves only with the requests, for tests whatever the machine's load: it starts
    /// at `start` seconds, each plain reload moves it on by `step`, and a blocking reload moves
    /// it to when what it asks for is out (no wait) — a stall moves it by three target
    /// durations and answers the same playlist.
    case perRequest(start: Double, step: Double)
    /// Real time from the route's first request, as if the stream had then been publishing for
    /// the clock's head start: a client that starts late on a loaded machine still joins the
    /// stream where the test meant it to.
    case realTimeFromFirstRequest(LiveHLSFirstRequestClock)
}

/// The clock of ``LiveHLSTime/realTimeFromFirstRequest(_:)``: it starts at the first request
/// it is read for, `headStart` seconds in.
public final class LiveHLSFirstRequestClock: Sendable {
    private let started = Mutex<(instant: ContinuousClock.Instant, date: Date)?>(nil)
    /// Seconds the stream has been publishing when its first request comes.
    public let headStart: Double

    public init(headStart: Double) { self.headStart = headStart }

    /// Seconds since the stream's start, starting the clock if no request has yet.
    func elapsed() -> Double {
        let instant = started.withTrackedLock { started -> ContinuousClock.Instant in
            if let started { return started.instant }
            started = (.now, Date())
            return started!.instant
        }
        return headStart + (ContinuousClock.now - instant).inSeconds
    }

    /// The wall-clock moment the stream (as published) started: the first request's date less
    /// the head start; `nil` before any request.
    public var startDate: Date? {
        started.withTrackedLock { $0.map { $0.date.addingTimeInterval(-headStart) } }
    }
}

extension OriginRoute {
    /// A route publishing `stream` as a live media playlist at `path`, its time counted from
    /// `start` (the route's making by default). Plain reloads get the playlist as it is;
    /// blocking reloads (`_HLS_msn`, `_HLS_part`) wait on the route's executor (a sleep, no
    /// thread held) until the segment or part is published or three target durations pass;
    /// `_HLS_skip=YES` gets a delta update when the stream offers them (``LiveHLSStream/canSkipUntil``),
    /// the whole playlist otherwise (which a client must accept).
    public static func liveHLS(_ path: String, stream: LiveHLSStream,
                               start: ContinuousClock.Instant = .now) -> OriginRoute {
        liveHLS(path, stream: stream, time: .realTime(from: start))
    }

    /// The same, on `time` (see ``LiveHLSTime``).
    public static func liveHLS(_ path: String, stream: LiveHLSStream, time: LiveHLSTime) -> OriginRoute {
        let virtual = Mutex<Double>(0)
        if case .perRequest(let start, _) = time { virtual.withTrackedLock { $0 = start } }
        return OriginRoute(pathPrefix: path, methods: ["GET", "HEAD"]) { request in
            guard request.path == path else { return .text("not found\n", status: 404) }
            let msnText = request.queryItems["_HLS_msn"]
            let msn = msnText.flatMap { Int64($0) }
            if msnText != nil, msn == nil { return .text("_HLS_msn is not a number\n", status: 400) }
            let partText = request.queryItems["_HLS_part"]
            let part = partText.flatMap { Int($0) }
            if partText != nil, part == nil { return .text("_HLS_part is not a number\n", status: 400) }
            let at: Double
            switch time {
            case .realTime, .realTimeFromFirstRequest:
                func elapsed() -> Double {
                    switch time {
                    case .realTime(let start): (ContinuousClock.now - start).inSeconds
                    case .realTimeFromFirstRequest(let clock): clock.elapsed()
                    case .perRequest: 0
                    }
                }
                switch stream.answer(msn: msn, part: part, at: elapsed()) {
                case .now:
                    break
                case .badRequest(let why):
                    return .text(why + "\n", status: 400)
                case .waitUntil(let time):
                    let wait = time - elapsed()
                    if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
                }
                at = elapsed()
            case .perRequest(_, let step):
                let answered = virtual.withTrackedLock { now -> Result<Double, OriginRouteRefusal> in
                    switch stream.answer(msn: msn, part: part, at: now) {
                    case .now:
                        if msn == nil { now += step }
                    case .badRequest(let why):
                        return .failure(OriginRouteRefusal(why: why))
                    case .waitUntil(let time):
                        now = max(now, time)
                    }
                    return .success(now)
                }
                switch answered {
                case .success(let time): at = time
                case .failure(let refusal): return .text(refusal.why + "\n", status: 400)
                }
            }
            let skip = request.queryItems["_HLS_skip"].map { ["YES", "v2"].contains($0) } ?? false
            var response = OriginResponse(body: Data(stream.playlist(at: at, skip: skip && stream.canSkipUntil != nil).utf8))
            response.headers = [("Content-Type", "application/vnd.apple.mpegurl"), ("Cache-Control", "no-cache")]
            return response
        }
    }
}

/// A live route's refusal of a request (a `400`).
struct OriginRouteRefusal: Error {
    var why: String
}

extension LiveHLSStream {
    /// The parts of a fragmented MP4 segment: one per `moof`+`mdat` (with the boxes before
    /// it: `styp`, `sidx`), the segment's duration shared equally among them (a packager's
    /// fragments are of one duration); `INDEPENDENT` when the fragment's first sample is a
    /// sync sample by its `trun` or `tfhd` flags. Empty when the segment has fewer than two
    /// fragments or is not fragmented MP4.
    public static func fragmentParts(_ bytes: [UInt8], duration: Double) -> [Part] {
        guard let boxes = ISOBox.children(bytes, in: 0..<bytes.count) else { return [] }
        var ranges: [(start: Int, end: Int, independent: Bool)] = []
        var start = 0
        var independent = false
        for box in boxes {
            if box.type == "moof" { independent = Self.startsWithSyncSample(bytes, moof: box) }
            if box.type == "mdat", let end = box.end {
                ranges.append((start, end, independent))
                start = end
                independent = false
            }
        }
        guard ranges.count >= 2, start == bytes.count else { return [] }
        return ranges.map {
            Part(offset: Int64($0.start), length: Int64($0.end - $0.start),
                               duration: duration / Double(ranges.count), independent: $0.independent)
        }
    }

    /// Whether the first sample of a `moof`'s first track fragment is a sync sample
    /// (`sample_is_non_sync_sample`, bit 16 of the sample flags, clear).
    private static func startsWithSyncSample(_ bytes: [UInt8], moof: ISOBox) -> Bool {
        guard let traf = ISOBox.children(bytes, of: moof)?.first(where: { $0.type == "traf" }),
              let children = ISOBox.children(bytes, of: traf) else { return false }
        func flags(_ box: ISOBox) -> UInt32? {
            guard let end = box.end, end - box.payloadStart >= 4 else { return nil }
            return ISOBox.uint32(bytes, at: box.payloadStart) & 0xFF_FFFF
        }
        if let trun = children.first(where: { $0.type == "trun" }), let trunFlags = flags(trun), let end = trun.end {
            // version+flags, sample count, then the optional data offset; first-sample flags.
            var position = trun.payloadStart + 8
            if trunFlags & 0x1 != 0 { position += 4 }
            if trunFlags & 0x4 != 0, position + 4 <= end {
                return ISOBox.uint32(bytes, at: position) & 0x1_0000 == 0
            }
            if trunFlags & 0x400 != 0 {
                if trunFlags & 0x100 != 0 { position += 4 }
                if trunFlags & 0x200 != 0 { position += 4 }
                if position + 4 <= end { return ISOBox.uint32(bytes, at: position) & 0x1_0000 == 0 }
            }
        }
        if let tfhd = children.first(where: { $0.type == "tfhd" }), let tfhdFlags = flags(tfhd), let end = tfhd.end {
            var position = tfhd.payloadStart + 8 // version+flags, track ID
            for (bit, size) in [(0x1, 8), (0x2, 4), (0x8, 4), (0x10, 4)] where tfhdFlags & UInt32(bit) != 0 { position += size }
            if tfhdFlags & 0x20 != 0, position + 4 <= end {
                return ISOBox.uint32(bytes, at: position) & 0x1_0000 == 0
            }
        }
        return false
    }
}
