import Foundation
import ReelStreaming
import Synchronization

/// The bandwidth a previous process measured, kept in the cache directory
/// (``SavedBandwidthEstimate/fileName``) so the next `reel play` or `reel feed` starts from it
/// instead of from nothing — short-video apps keep theirs between videos for the same reason.
///
/// It is trusted less as it ages: ``startingBitsPerSecond(at:)`` is the measurement times a
/// factor that falls from 1 (just measured) toward ½ with a half-life of
/// ``halfLife``, and an estimate older than ``maximumAge`` (or from the future, the wall clock
/// having moved back) is not used at all. A real measurement of the new process replaces it as
/// soon as the meter has one (2 s of transfers or 512 KiB), as it replaces `--initial-bandwidth`.
public struct SavedBandwidthEstimate: Sendable, Hashable, Codable {
    /// The measured estimate, bits per second.
    public var bitsPerSecond: Int64
    /// Samples it came from.
    public var samples: Int
    /// When it was measured: seconds since 1970 (wall-clock time, which outlives the process).
    public var measuredAt: Double

    /// The file's name in the cache directory: a small JSON object of the three properties.
    public static let fileName = "bandwidth.json"
    /// The oldest estimate used, in seconds (a week); older ones start nothing.
    public static let maximumAge: Double = 7 * 86_400
    /// In seconds (six hours): the age at which an estimate's weight has fallen halfway
    /// from 1 to ½.
    public static let halfLife: Double = 6 * 3_600
    /// The largest file read (anything bigger is not an estimate Reel wrote).
    static let maximumFileSize = 4096

    /// An estimate of `bitsPerSecond` from `samples` samples, measured at `measuredAt`
    /// (seconds since 1970).
    public init(bitsPerSecond: Int64, samples: Int, measuredAt: Double) {
        self.bitsPerSecond = bitsPerSecond
        self.samples = samples
        self.measuredAt = measuredAt
    }

    /// Seconds since it was measured, at `now` (seconds since 1970).
    public func age(at now: Double) -> Double { now - measuredAt }

    /// What to start from at `now`, or nil when it is too old, from the future, or not sane.
    public func startingBitsPerSecond(at now: Double) -> Int64? {
        let age = age(at: now)
        guard bitsPerSecond > 0, age >= 0, age <= Self.maximumAge else { return nil }
        let factor = 0.5 + 0.5 * pow(2, -age / Self.halfLife)
        return Int64((Double(bitsPerSecond) * factor).rounded())
    }

    /// The estimate saved in `directory`, or nil when there is none or the file is not one
    /// (any damage reads as nothing: the next measurement writes a good one).
    public static func load(from directory: URL) -> SavedBandwidthEstimate? {
        let url = directory.appendingPathComponent(fileName)
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
              let size = attributes[.size] as? NSNumber, size.intValue <= maximumFileSize,
              let data = try? Data(contentsOf: url),
              let saved = try? JSONDecoder().decode(SavedBandwidthEstimate.self, from: data),
              saved.bitsPerSecond > 0, saved.samples >= 0, saved.measuredAt.isFinite else { return nil }
        return saved
    }

    /// Writes it to `directory` atomically (a temporary file renamed over the old one), so a
    /// reader never sees half a file and two processes leave one whole estimate.
    ///
    /// The temporary file is named for the process writing it
    /// (`CacheLayout/estimateTemporaryName(pid:)`): a process killed between the write and the
    /// rename leaves a file the cache knows as an unfinished write, which the next open of the
    /// cache removes once that process is gone, and which `verify` counts but does not call damage.
    public func save(to directory: URL) throws {
        let data = try JSONEncoder().encode(self)
        let root = directory.standardizedFileURL.path
        let final = root + "/" + Self.fileName
        let temporary = root + "/" + CacheLayout.estimateTemporaryName(pid: getpid())
        do {
            let fd = try POSIXFile.createExclusive(temporary)
            defer { POSIXFile.close(fd) }
            try POSIXFile.writeAll(fd, data, path: temporary)
        } catch {
            POSIXFile.unlinkIfPresent(temporary)
            throw error
        }
        do {
            try POSIXFile.rename(temporary, final)
        } catch {
            POSIXFile.unlinkIfPresent(temporary)
            throw error
        }
    }
}

/// Keeps a ``BandwidthMeter``'s measurements in the cache directory as they come: each new
/// measured estimate is written (atomically, at most once per ``interval`` of wall time) on a
/// serial queue of its own, so no transfer callback waits for the disk; ``flush()`` writes the
/// latest one before the process ends.
///
/// Threads: `record` from any thread (the meter's listener); writes on `reel.bandwidth-store`.
public final class BandwidthEstimateStore: Sendable {
    /// The cache directory the estimate is written to, as ``SavedBandwidthEstimate/fileName``.
    public let directory: URL
    /// The least wall time between two writes, in seconds.
    public let interval: Double
    private let queue = DispatchQueue(label: "reel.bandwidth-store")
    private let pending = Mutex<(latest: SavedBandwidthEstimate?, lastWrite: Double, scheduled: Bool)>((nil, 0, false))

    /// A store writing to `directory` (which must exist: the cache's) at most once every
    /// `interval` seconds. Nothing is written until ``record(bitsPerSecond:samples:)``.
    public init(directory: URL, interval: Double = 2) {
        self.directory = directory
        self.interval = interval
    }

    /// A new measured estimate (`bitsPerSecond` from `samples` samples).
    public func record(bitsPerSecond: Int64, samples: Int) {
        let now = Date().timeIntervalSince1970
        let estimate = SavedBandwidthEstimate(bitsPerSecond: bitsPerSecond, samples: samples, measuredAt: now)
        let delay: Double? = pending.withTrackedLock { state in
            state.latest = estimate
            guard !state.scheduled else { return nil }
            state.scheduled = true
            return max(0, state.lastWrite + interval - now)
        }
        guard let delay else { return }
        queue.asyncAfter(deadline: .now() + delay) { [self] in write() }
    }

    /// Writes the latest estimate now, if one is not written yet (awaits the store's queue).
    public func flush() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                write()
                done.resume()
            }
        }
    }

    private func write() {
        let latest = pending.withTrackedLock { state -> SavedBandwidthEstimate? in
            defer {
                state.latest = nil
                state.scheduled = false
            }
            if state.latest != nil { state.lastWrite = Date().timeIntervalSince1970 }
            return state.latest
        }
        // A cache directory that cannot be written is the cache's to report; the estimate is a hint.
        try? latest?.save(to: directory)
    }
}
