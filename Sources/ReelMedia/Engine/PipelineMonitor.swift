import Foundation
import Logging
import ReelCore
import ReelThreads
import Synchronization

/// One pipeline's shared state behind one mutex, and the threads that wait on it.
///
/// Every queue and flag the pipeline's threads share lives in `State` and is reached only
/// through ``update(_:)`` and ``read(_:)``. A worker thread that cannot go on parks in
/// ``wait(_:until:then:)``: its condition is kept beside the state, and every update wakes
/// exactly the parked workers whose condition now holds — each parks on a `Parker` of its
/// own, unparked after the mutex is released — so a change never wakes the whole player,
/// and a wake-up is never lost (the condition is registered under the mutex the waker takes).
///
/// The monitor also knows what each worker waits for, so a driver of a manual clock can wait
/// until the pipeline has done all it can before time moves on: the pipeline is *settled*
/// when every worker is parked on a condition that does not hold, blocked reading a loader
/// stream that has nothing and whose producer is idle, or gone.
///
/// Only worker threads of the pipeline block here. The concurrency pool never does:
/// ``settled()`` waits on a queue of the monitor's own.
final class PipelineMonitor<State: Sendable>: Sendable {
    /// A thread of the pipeline (demux, decode, audio render).
    final class Worker: Sendable {
        let name: String
        fileprivate let id: Int
        fileprivate let parker = Parker()
        fileprivate init(name: String, id: Int) {
            self.name = name
            self.id = id
        }
    }

    /// What a worker is doing, as far as settling is concerned (guarded by the mutex).
    private struct WorkerState: Sendable {
        let name: String
        let parker: Parker
        /// While parked: the condition it waits for.
        var condition: (@Sendable (State) -> Bool)?
        /// While blocked reading the loader: the stream and its progress count at the start.
        var io: (stream: ByteStream?, mark: Int)?
        var exited = false
        /// Woken by an update (its condition held) and not yet back in the monitor: for the
        /// log, which tells a worker the scheduler has not run yet from one that runs.
        var woken = false
    }

    private struct Storage: Sendable {
        var state: State
        var workers: [WorkerState] = []
        /// Threads in ``waitUntilSettled(timeout:)``: workers signal only when someone listens.
        var settleWaiters = 0
    }

    private let storage: Mutex<Storage>
    /// Where settle waiters park; signalled when a worker may have just settled.
    private let settleParker = Parker()
    private let settleQueue = DispatchQueue(label: "reel.pipeline.settle")
    static var logger: Logger { Logger(label: "reel.pipeline") }
    /// What the pipeline plays (its item's URL), for diagnostics.
    private let label: String

    init(_ state: State, label: String = "") {
        storage = Mutex(Storage(state: state))
        self.label = label
    }

    func register(_ name: String) -> Worker {
        storage.withTrackedLock { storage in
            let worker = Worker(name: name, id: storage.workers.count)
            storage.workers.append(WorkerState(name: name, parker: worker.parker))
            return worker
        }
    }

    // MARK: The state

    /// Changes the state, then wakes every parked worker whose condition now holds.
    @discardableResult
    func update<R>(_ body: (inout State) throws -> R) rethrows -> R {
        var wake: [Parker] = []
        let result = try storage.withTrackedLock { storage -> R in
            let result = try body(&storage.state)
            wake = Self.takeReady(&storage)
            return result
        }
        for parker in wake { parker.unpark() }
        return result
    }

    /// Reads the state.
    func read<R>(_ body: (State) throws -> R) rethrows -> R {
        try storage.withTrackedLock { try body($0.state) }
    }

    private static func takeReady(_ storage: inout Storage) -> [Parker] {
        var wake: [Parker] = []
        for index in storage.workers.indices {
            guard let condition = storage.workers[index].condition, condition(storage.state) else { continue }
            storage.workers[index].condition = nil
            storage.workers[index].woken = true
            wake.append(storage.workers[index].parker)
        }
        return wake
    }

    // MARK: Waiting

    /// Parks the calling worker until `ready` holds, then runs `body` with the state (in the
    /// same critical section) and returns its result.
    func wait<R>(_ worker: Worker, until ready: @escaping @Sendable (State) -> Bool, then body: (inout State) -> R) -> R {
        while true {
            if let result = attempt(worker, ready: ready, body: body) { return result }
            worker.parker.park()
        }
    }

    /// Like ``wait(_:until:then:)`` but looks again after `seconds` of wall time even if
    /// nothing changed the state (for conditions that also depend on something outside it,
    /// such as a ring an audio device drains); returns `nil` when `ready` still does not hold.
    func wait<R>(_ worker: Worker, until ready: @escaping @Sendable (State) -> Bool, orAfter seconds: Double,
                 then body: (inout State) -> R) -> R? {
        if let result = attempt(worker, ready: ready, body: body) { return result }
        worker.parker.park(seconds: seconds)
        // Woken or timed out: no longer parked; look once more.
        var wake: [Parker] = []
        let result = storage.withTrackedLock { storage -> R? in
            storage.workers[worker.id].condition = nil
            storage.workers[worker.id].woken = false
            guard ready(storage.state) else { return nil }
            let result = body(&storage.state)
            wake = Self.takeReady(&storage)
            return result
        }
        for parker in wake { parker.unpark() }
        return result
    }

    private func attempt<R>(_ worker: Worker, ready: @escaping @Sendable (State) -> Bool, body: (inout State) -> R) -> R? {
        var wake: [Parker] = []
        var signalSettler = false
        let result = storage.withTrackedLock { storage -> R? in
            storage.workers[worker.id].woken = false
            if ready(storage.state) {
                storage.workers[worker.id].condition = nil
                let result = body(&storage.state)
                wake = Self.takeReady(&storage)
                return result
            }
            storage.workers[worker.id].condition = ready
            signalSettler = storage.settleWaiters > 0
            return nil
        }
        for parker in wake { parker.unpark() }
        if signalSettler { settleParker.unpark() }
        return result
    }

    /// The worker is about to block in a loader read (without the mutex).
    func beginIO(_ worker: Worker, stream: ByteStream?) {
        let mark = stream?.consumerProgressCount ?? 0
        let signal = storage.withTrackedLock { storage -> Bool in
            storage.workers[worker.id].io = (stream, mark)
            return storage.settleWaiters > 0
        }
        if signal { settleParker.unpark() }
    }

    /// The worker is back from the loader read.
    func endIO(_ worker: Worker) {
        storage.withTrackedLock { $0.workers[worker.id].io = nil }
    }

    /// The worker is finished for good.
    func exit(_ worker: Worker) {
        let signal = storage.withTrackedLock { storage -> Bool in
            storage.workers[worker.id].exited = true
            storage.workers[worker.id].condition = nil
            storage.workers[worker.id].io = nil
            return storage.settleWaiters > 0
        }
        if signal { settleParker.unpark() }
    }

    // MARK: Settling

    /// What a worker is doing, as far as settling is concerned.
    private enum Activity {
        /// Parked on a condition that does not hold, blocked on an idle loader read, or gone.
        case settled
        case running
        /// Woken by an update and not yet back in the monitor.
        case woken
        /// Parked on a condition that holds (one that also depends on something outside the
        /// state, until its timed wait looks again).
        case parkedOnReady
        /// Blocked reading a stream that is not idle, or busy with what the read handed over.
        case reading(ByteStream?)
    }

    private static func activity(of worker: WorkerState, in state: State) -> Activity {
        if worker.exited { return .settled }
        if let io = worker.io {
            // Blocked on the loader only if the stream has nothing and handed nothing
            // over since the read began (else the worker is busy with what it got).
            guard let stream = io.stream, stream.isIdle, stream.consumerProgressCount == io.mark else { return .reading(io.stream) }
            return .settled
        }
        guard let condition = worker.condition else { return worker.woken ? .woken : .running }
        return condition(state) ? .parkedOnReady : .settled
    }

    private static func isSettled(_ storage: Storage) -> Bool {
        storage.workers.allSatisfy { worker in
            if case .settled = activity(of: worker, in: storage.state) { true } else { false }
        }
    }

    /// Whether every worker waits for something that has not happened.
    var isSettled: Bool { storage.withTrackedLock { Self.isSettled($0) } }

    /// Blocks until the pipeline is settled — for the pipeline's own threads and drivers that
    /// run on threads of their own (`--clock fast`). Meaningful when what the pipeline waits
    /// for is a manual clock; with real time it returns when the pipeline happens to be idle.
    /// Gives up after `timeout` seconds of wall time (a worker busy that long is a bug, and
    /// hanging forever is worse) and returns `false`. The bound is a watchdog, not a pace: on
    /// one core shared with a whole test suite and other builds, a scheduler's task waiting
    /// for the pool's only thread was seen to miss 60 s, and the manual clock then moved on
    /// before the work it waited for was done.
    @discardableResult
    func waitUntilSettled(timeout: Double = 300) -> Bool {
        let giveUp = DispatchTime.now() + timeout
        var warned = false
        while true {
            let settled = storage.withTrackedLock { storage -> Bool in
                if Self.isSettled(storage) { return true }
                storage.settleWaiters += 1
                return false
            }
            if settled { return true }
            // Workers signal when they begin to wait, read or exit; the short timeout covers
            // loader streams, whose state changes do not go through this mutex.
            settleParker.park(seconds: 0.0005)
            storage.withTrackedLock { $0.settleWaiters -= 1 }
            if DispatchTime.now() > giveUp {
                Self.logger.error("pipeline of \(label) did not settle in \(Int(timeout)) s: \(busyDescription())")
                return false
            }
            if !warned, DispatchTime.now() > giveUp - (timeout - 2) {
                warned = true
                Self.logger.debug("pipeline of \(label) settling slowly: \(busyDescription())")
            }
        }
    }

    /// Suspends until the pipeline is settled, waiting on the monitor's own queue (never on
    /// the concurrency pool).
    func settled(timeout: Double = 300) async -> Bool {
        await withCheckedContinuation { continuation in
            settleQueue.async {
                continuation.resume(returning: self.waitUntilSettled(timeout: timeout))
            }
        }
    }

    /// What each worker that is not settled is doing, for the log: running, woken and not yet
    /// back, or reading a stream that is not idle (and that stream's state).
    func busyDescription() -> String {
        storage.withTrackedLock { storage in
            storage.workers.compactMap { worker -> String? in
                switch Self.activity(of: worker, in: storage.state) {
                case .settled: nil
                case .running: "\(worker.name): running"
                case .woken: "\(worker.name): woken, not yet back"
                case .parkedOnReady: "\(worker.name): parked on a condition that holds"
                case .reading(nil): "\(worker.name): reading, no stream yet"
                case .reading(let stream?): "\(worker.name): reading (\(stream.diagnosticDescription))"
                }
            }.joined(separator: "; ")
        }
    }

    /// Names of workers not settled, for diagnostics.
    func busyWorkers() -> [String] {
        storage.withTrackedLock { storage in
            storage.workers.filter { worker in
                if case .settled = Self.activity(of: worker, in: storage.state) { false } else { true }
            }.map(\.name)
        }
    }
}

/// What a blocking reader (the AVIO bridge) tells its pipeline around each loader read, so a
/// settle waiter knows the reader waits for the loader rather than works.
struct IOActivity: Sendable {
    let begin: @Sendable (ByteStream?) -> Void
    let end: @Sendable () -> Void

    /// Holds the monitor weakly: the bridge that reports lives in the monitor's state.
    init<State: Sendable>(monitor: PipelineMonitor<State>, worker: PipelineMonitor<State>.Worker) {
        begin = { [weak monitor] stream in monitor?.beginIO(worker, stream: stream) }
        end = { [weak monitor] in monitor?.endIO(worker) }
    }
}
