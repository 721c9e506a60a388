import Foundation
import ReelCore
import Synchronization

/// Abandoning a segment in flight that would arrive after the buffer runs dry
/// (``LiveSegmentReader/abandonsSlowSegments``): the watch and the read it watches.
extension LiveSegmentReader {
    /// What watching a segment in flight for abandonment needs.
    struct AbandonWatch: Sendable {
        /// Seconds buffered ahead of the playhead now (it falls as the player plays).
        var bufferLeft: @Sendable () -> Double
        var started: Double
        /// The segment's expected bytes when its length is not told: BANDWIDTH × duration.
        var expectedBytes: Double
        /// Each lower variant's expected bytes for the segment, highest variant first.
        var lower: [(rank: Int, bytes: Double)]
    }

    /// A segment given up in flight: the variant to fetch it from instead, and what was seen.
    struct Abandoned: Error {
        var target: Int
        var throughput: Int64
        var elapsed: Double
        var bufferLeft: Double
    }

    /// The watch for the next segment, when it may be abandoned: the adaptive rule, and a
    /// lower variant to go to.
    func abandonWatch(_ state: Run, duration: Double) -> AbandonWatch? {
        guard abandonsSlowSegments, case .adaptive = switching, state.rank > 0, duration > 0 else { return nil }
        let virtual = state.playhead
        return AbandonWatch(
            bufferLeft: { [self] in buffered(virtual) },
            started: now(), expectedBytes: Double(variants[state.rank].bandwidth) * duration / 8,
            lower: (0..<state.rank).reversed().map { (rank: $0, bytes: Double(variants[$0].bandwidth) * duration / 8) })
    }

    /// Reads a segment while a watchdog checks, every 0.1 s from 0.5 s on, whether at the rate
    /// so far it would arrive before the buffer runs dry; when it would not and a lower
    /// variant's segment would, the read is cancelled and ``Abandoned`` thrown.
    func readWatched(_ url: URL, range: ByteRange, watch: AbandonWatch) async throws -> Data {
        let stream = loader.read(url, range: range)
        defer { stream.cancel() }
        let progress = Mutex<(received: Int, length: Int64?, verdict: Abandoned?)>((0, range.length, nil))
        let (sleep, now) = (self.sleep, self.now)
        let watchdog = Task {
            while !Task.isCancelled {
                do { try await sleep(0.1) } catch { return }
                let elapsed = now() - watch.started
                let (received, length) = progress.withTrackedLock { ($0.received, $0.length) }
                guard elapsed >= 0.5, received > 0 else { continue }
                let rate = Double(received) / elapsed
                let total = length.map(Double.init) ?? watch.expectedBytes
                let left = watch.bufferLeft()
                guard max(0, total - Double(received)) / rate > left,
                      let target = watch.lower.first(where: { $0.bytes / rate < left }) else { continue }
                progress.withTrackedLock {
                    $0.verdict = Abandoned(target: target.rank, throughput: Int64(rate * 8), elapsed: elapsed, bufferLeft: left)
                }
                stream.cancel()
                return
            }
        }
        defer { watchdog.cancel() }
        do {
            let information = try await stream.contentInformation()
            if range == .all, let length = information.length { progress.withTrackedLock { $0.length = length } }
            var data = Data()
            for try await chunk in stream {
                data.append(chunk)
                if data.count > maximumSegmentBytes { throw Failure.tooLarge(what: "the segment", url: url, limit: maximumSegmentBytes) }
                progress.withTrackedLock { $0.received = data.count }
            }
            // A cancelled read may end quietly: what came is not the segment.
            if let abandoned = progress.withTrackedLock({ $0.verdict }) { throw abandoned }
            return data
        } catch {
            if let abandoned = progress.withTrackedLock({ $0.verdict }) { throw abandoned }
            throw error
        }
    }
}
