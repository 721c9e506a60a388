import Foundation
import ReelStreaming
import ReelCore
import Synchronization

/// The bandwidth of the network as the loaders see it, in the manner of ExoPlayer's
/// `DefaultBandwidthMeter`: overlapping transfers form one sample (their bytes over the
/// time from the first one's start to the end of one of them); each sample's bit rate goes
/// into a ``SlidingPercentile`` weighted by the square root of its bytes, and the estimate
/// is its median — once 2 s of transfers or 512 KiB have been measured. Before that the
/// estimate is the configured initial one, or unknown.
///
/// Fed by `HTTPLoader` (network bytes only: a `CachingLoader` above it asks it only for
/// what the cache lacks, so cache hits never reach the meter). One meter per feed or CLI
/// process, shared by every loader of it. Time comes from the injected clock, so tests drive
/// it with a `ManualClock` and the fake loader's scripted rates.
///
/// Threads: any; all state is behind one `Mutex`.
public final class BandwidthMeter: TransferListener, BandwidthEstimating {
    /// How the meter starts and when its measurements count. The defaults are ExoPlayer's:
    /// no initial estimate, a window of weight 2000, the median, and measurements in use
    /// after 2 s of transfer time or 512 KiB.
    public struct Configuration: Sendable, Hashable {
        /// The estimate before enough is measured; `nil`: nothing is known.
        public var initialBitsPerSecond: Int64?
        /// An earlier process's measurement (``SavedBandwidthEstimate``), already discounted
        /// for its age, used when there is no initial estimate; and that age in seconds.
        public var savedBitsPerSecond: Int64?
        /// How old ``savedBitsPerSecond`` is, in seconds: reported with the estimate
        /// (`BandwidthEstimate.Source.saved(age:)`), not used to discount it again.
        public var savedAge: Double = 0
        /// The sliding window's total weight (ExoPlayer's default: 2000).
        public var slidingWindowMaxWeight: Double
        /// The percentile of the window that is the estimate.
        public var percentile: Double
        /// Measured time or bytes after which measurements replace the initial estimate.
        public var elapsedForEstimate: MediaTime
        /// Measured bytes after which measurements replace the initial estimate (whichever of
        /// this and ``elapsedForEstimate`` comes first).
        public var bytesForEstimate: Int64

        /// A configuration; each parameter sets the property of the same name. A saved
        /// estimate is not a parameter: set ``savedBitsPerSecond`` and ``savedAge`` after, from
        /// ``SavedBandwidthEstimate/startingBitsPerSecond(at:)`` and
        /// ``SavedBandwidthEstimate/age(at:)`` (as `reel` does).
        public init(initialBitsPerSecond: Int64? = nil, slidingWindowMaxWeight: Double = 2000, percentile: Double = 0.5,
                    elapsedForEstimate: MediaTime = MediaTime(value: 2, timescale: 1), bytesForEstimate: Int64 = 512 * 1024) {
            self.initialBitsPerSecond = initialBitsPerSecond
            self.slidingWindowMaxWeight = slidingWindowMaxWeight
            self.percentile = percentile
            self.elapsedForEstimate = elapsedForEstimate
            self.bytesForEstimate = bytesForEstimate
        }
    }

    /// One measured sample, for tests and `reel` diagnostics.
    public struct Sample: Sendable, Hashable {
        /// The bytes the overlapping transfers of the sample carried.
        public var bytes: Int64
        /// From the first of them starting (or the previous sample ending) to one ending.
        public var elapsed: MediaTime
        /// `bytes` × 8 / `elapsed`, in bits per second.
        public var bitsPerSecond: Double
    }

    private struct State {
        var activeTransfers = 0
        var sampleStart: MediaTime = .zero
        var sampleBytes: Int64 = 0
        var totalElapsed: MediaTime = .zero
        var totalBytes: Int64 = 0
        var window: SlidingPercentile
        var measured: Int64?
        var samples: [Sample] = []
        var sampleCount = 0
    }

    /// The configuration given at init.
    public let configuration: Configuration
    private let clock: any EngineClock
    private let state: Mutex<State>

    /// Told each new measured estimate and its sample count, after the meter's lock (a
    /// ``BandwidthEstimateStore`` keeps it for the next process).
    private let measured: (@Sendable (Int64, Int) -> Void)?

    /// A meter with nothing measured. `clock` times the transfers (a `ManualClock` in
    /// tests). `measured`, if given, is called with each new measured estimate (bits per
    /// second) and the number of samples behind it, on the thread that ended the transfer,
    /// after the meter's lock is released.
    public init(configuration: Configuration = Configuration(), clock: any EngineClock = HostClock.shared,
                measured: (@Sendable (Int64, Int) -> Void)? = nil) {
        self.configuration = configuration
        self.clock = clock
        self.measured = measured
        state = Mutex(State(window: SlidingPercentile(maxWeight: configuration.slidingWindowMaxWeight)))
    }

    /// The estimate now, and where it comes from: measured once enough is measured (see
    /// the type's description), else the configuration's initial estimate, else its saved
    /// one, else unknown (`nil` bits per second). Any thread.
    public var bandwidthEstimate: BandwidthEstimate {
        state.withTrackedLock { state in
            if let measured = state.measured {
                return BandwidthEstimate(bitsPerSecond: measured, source: .measured, samples: state.sampleCount)
            }
            if let initial = configuration.initialBitsPerSecond {
                return BandwidthEstimate(bitsPerSecond: initial, source: .initial, samples: state.sampleCount)
            }
            if let saved = configuration.savedBitsPerSecond {
                return BandwidthEstimate(bitsPerSecond: saved, source: .saved(age: configuration.savedAge), samples: state.sampleCount)
            }
            return BandwidthEstimate(bitsPerSecond: nil, source: .unknown, samples: state.sampleCount)
        }
    }

    /// The last samples taken (at most 64), oldest first.
    public var recentSamples: [Sample] { state.withTrackedLock { $0.samples } }

    /// Bytes measured so far.
    public var totalBytes: Int64 { state.withTrackedLock { $0.totalBytes + $0.sampleBytes } }

    // MARK: TransferListener

    /// A transfer of `url` began now: the first of a group of overlapping transfers starts
    /// a sample's clock. Called by the loader on its own thread.
    public func transferStarted(_ url: URL) {
        let now = clock.now
        state.withTrackedLock { state in
            if state.activeTransfers == 0 { state.sampleStart = now }
            state.activeTransfers += 1
        }
    }

    /// `count` bytes of `url` arrived; counted into the sample under way (zero or fewer is
    /// ignored).
    public func bytesTransferred(_ count: Int, url: URL) {
        guard count > 0 else { return }
        state.withTrackedLock { $0.sampleBytes += Int64(count) }
    }

    /// A transfer of `url` ended (complete, failed or cancelled): the sample under way
    /// closes (its bit rate goes into the window) and the next starts now. A sample of no
    /// measurable time carries its bytes into the next. When enough has been measured the
    /// estimate is updated and the `measured` callback told. An end with no transfer
    /// started is ignored.
    public func transferEnded(_ url: URL) {
        let now = clock.now
        let configuration = self.configuration
        let newMeasurement = state.withTrackedLock { state -> (Int64, Int)? in
            guard state.activeTransfers > 0 else { return nil }
            var newMeasurement: (Int64, Int)?
            defer { state.activeTransfers -= 1 }
            let elapsed = now - state.sampleStart
            state.totalElapsed = state.totalElapsed + elapsed
            let seconds = elapsed.seconds
            if seconds > 0 {
                state.totalBytes += state.sampleBytes
                let bitsPerSecond = Double(state.sampleBytes) * 8 / seconds
                state.window.add(weight: Double(state.sampleBytes).squareRoot(), value: bitsPerSecond)
                state.sampleCount += 1
                state.samples.append(Sample(bytes: state.sampleBytes, elapsed: elapsed, bitsPerSecond: bitsPerSecond))
                if state.samples.count > 64 { state.samples.removeFirst() }
                if state.totalElapsed >= configuration.elapsedForEstimate || state.totalBytes >= configuration.bytesForEstimate,
                   let value = state.window.percentile(configuration.percentile) {
                    state.measured = Int64(value.rounded())
                    newMeasurement = (Int64(value.rounded()), state.sampleCount)
                }
                state.sampleStart = now
                state.sampleBytes = 0
            }
            // A sample of no time carries its bytes into the next one (ExoPlayer does the same).
            return newMeasurement
        }
        if let newMeasurement { measured?(newMeasurement.0, newMeasurement.1) }
    }
}

/// A weighted percentile over the most recent samples, whose weights sum to at most
/// `maxWeight` (the oldest sample loses weight, then leaves): ExoPlayer's `SlidingPercentile`.
public struct SlidingPercentile: Sendable, Hashable {
    private struct Entry: Sendable, Hashable {
        var index: Int
        var weight: Double
        var value: Double
    }

    /// The most weight the window holds; samples beyond it push the oldest out.
    public let maxWeight: Double
    private var entries: [Entry] = []
    private var nextIndex = 0
    /// The weight of the samples in the window now (at most ``maxWeight``).
    public private(set) var totalWeight: Double = 0

    /// An empty window holding at most `maxWeight` of weight.
    public init(maxWeight: Double) {
        self.maxWeight = maxWeight
    }

    /// Whether the window holds no sample (``percentile(_:)`` is then `nil`).
    public var isEmpty: Bool { entries.isEmpty }

    /// Adds `value` with `weight`, then takes weight off the oldest samples (dropping
    /// those that reach zero) until the total is at most ``maxWeight``. A weight of zero or
    /// less, or a value that is not finite, is ignored.
    public mutating func add(weight: Double, value: Double) {
        guard weight > 0, value.isFinite else { return }
        entries.append(Entry(index: nextIndex, weight: weight, value: value))
        nextIndex += 1
        totalWeight += weight
        // Oldest first: `entries` is kept in arrival order.
        while totalWeight > maxWeight, !entries.isEmpty {
            let excess = totalWeight - maxWeight
            if entries[0].weight <= excess {
                totalWeight -= entries[0].weight
                entries.removeFirst()
            } else {
                entries[0].weight -= excess
                totalWeight -= excess
            }
        }
    }

    /// The smallest value at which the cumulative weight (values in ascending order) reaches
    /// `fraction` of the total; `nil` when empty.
    public func percentile(_ fraction: Double) -> Double? {
        guard !entries.isEmpty else { return nil }
        let sorted = entries.sorted { $0.value < $1.value }
        let desired = fraction * totalWeight
        var accumulated = 0.0
        for entry in sorted {
            accumulated += entry.weight
            if accumulated >= desired { return entry.value }
        }
        return sorted.last?.value
    }
}
