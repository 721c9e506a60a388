import Foundation

/// A link whose bandwidth changes while the server runs — a phone walking out of Wi-Fi and back
/// — for scripted-network tests and `reel serve --link`: steps of "from this second on, this
/// many kilobits per second", counted from the server's start. Before the first step the
/// server's fixed `bandwidthKbps` applies (or none). Like the fixed cap, the link is shared by
/// every connection; a transfer that spans a step goes at each step's rate for its part.
public struct LinkSchedule: Sendable, Hashable, CustomStringConvertible {
    public struct Step: Sendable, Hashable {
        /// Seconds from the server's start.
        public var from: Double
        public var kbps: Int

        public init(from: Double, kbps: Int) {
            self.from = from
            self.kbps = kbps
        }

        var bytesPerSecond: Int64 { max(1, Int64(kbps) * 1000 / 8) }
        var fromNanoseconds: Int64 { Int64((from * 1e9).rounded()) }
    }

    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        case malformed(String)

        public var description: String {
            switch self {
            case .malformed(let why): "a link schedule is SECONDS:KBPS[,SECONDS:KBPS…] with times rising and rates above 0 (\(why))"
            }
        }
    }

    /// In time order, each later than the one before.
    public let steps: [Step]

    public init(_ steps: [Step]) throws(Failure) {
        guard !steps.isEmpty, steps.count <= 1000 else { throw .malformed("1 to 1000 steps") }
        for (index, step) in steps.enumerated() {
            guard step.kbps > 0, step.kbps <= 100_000_000 else { throw .malformed("rate \(step.kbps)") }
            guard step.from.isFinite, step.from >= 0, step.from <= 86_400 * 365 else { throw .malformed("time \(step.from)") }
            if index > 0, step.from <= steps[index - 1].from { throw .malformed("\(step.from) s after \(steps[index - 1].from) s") }
        }
        self.steps = steps
    }

    /// `"0:3000,5:500,15:8000"`: 3 Mbit/s, 0.5 Mbit/s from 5 s, 8 Mbit/s from 15 s.
    public init(parsing text: String) throws(Failure) {
        var steps: [Step] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let fields = part.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 2, let from = Double(fields[0].trimmingCharacters(in: .whitespaces)),
                  let kbps = Int(fields[1].trimmingCharacters(in: .whitespaces)) else {
                throw .malformed("'\(part)'")
            }
            steps.append(Step(from: from, kbps: kbps))
        }
        try self.init(steps)
    }

    public var description: String {
        steps.map { step in "\(step.from.formatted(.number.grouping(.never))):\(step.kbps)" }.joined(separator: ",")
    }

    /// Bytes per second `elapsed` nanoseconds after the start; `base` before the first step.
    public func bytesPerSecond(at elapsed: Int64, base: Int64?) -> Int64? {
        steps.last { $0.fromNanoseconds <= elapsed }?.bytesPerSecond ?? base
    }

    /// Nanoseconds from `start` (after the server's start) until `count` bytes are through,
    /// each step's part at its rate; an uncapped stretch (before the first step, with no
    /// `base`) passes bytes at once.
    public func transmissionNanoseconds(_ count: Int64, from start: Int64, base: Int64?) -> Int64 {
        var remaining = Double(max(0, count))
        var time = max(0, start)
        while remaining > 0 {
            let next = steps.first { $0.fromNanoseconds > time }?.fromNanoseconds
            guard let rate = bytesPerSecond(at: time, base: base) else {
                // No cap until the next step (there is one: an uncapped stretch is only before the first).
                return time - start
            }
            let needed = remaining / Double(rate) * 1e9
            guard let next, Double(next - time) < needed else {
                return time + Int64(needed.rounded(.up)) - start
            }
            remaining -= Double(next - time) * Double(rate) / 1e9
            time = next
        }
        return time - start
    }
}
