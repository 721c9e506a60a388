import Foundation
import Logging
import ReelCore

/// The lock every stage of one player's pipeline shares, and the knowledge of
/// which stage is waiting for what — so a deterministic test (or `--clock fast`)
/// can wait until the pipeline has done all it can before time moves on.
///
/// A pipeline is *settled* when every worker thread is waiting and nothing it
/// waits for has happened yet: a queue it pops is empty, a queue it pushes is full,
/// or the loader stream it reads has nothing and its producer is idle (waiting
/// for a manual clock or a scripted stall). With a ``ManualClock`` that state is
/// reached after every advance, so the same script gives the same result every run.
final class PipelineActivity: @unchecked Sendable {
    /// The pipeline lock. Every queue and every piece of shared player state is
    /// guarded by it; every change that could wake a waiter broadcasts it, which
    /// wakes exactly the waiters that can now go on (each has its own condition).
    let condition = PipelineLock()

    final class Worker: @unchecked Sendable {
        let name: String
        /// While waiting on the pipeline lock: returns `true` once the worker can go on.
        fileprivate var readiness: (() -> Bool)?
        /// While blocked reading the loader.
        fileprivate var stream: ByteStream?
        fileprivate var readingIO = false
        /// The stream's progress count when the read began.
        fileprivate var ioMark = 0
        fileprivate var exited = false
        fileprivate let wakeup: PipelineLock.Condition
        init(name: String, lock: PipelineLock) {
            self.name = name
            wakeup = PipelineLock.Condition(lock)
        }
    }

    private var workers: [Worker] = []
    static let logger = Logger(label: "reel.pipeline")

    /// Where ``waitUntilSettled(timeout:)`` waits: signalled when a worker may have
    /// just settled (it began to wait, read or exited), so settling is noticed at
    /// once instead of at the next poll.
    private let settleWakeup: PipelineLock.Condition
    /// Threads in ``waitUntilSettled(timeout:)``: workers signal only when someone listens.
    private var settleWaiters = 0

    /// How settling went, for `--verbose` diagnostics (guarded by the pipeline lock).
    struct SettleCounters: Sendable, CustomStringConvertible {
        /// Calls of ``waitUntilSettled(timeout:)``.
        var calls = 0
        /// Calls that found the pipeline busy and waited.
        var waited = 0
        /// Wake-ups by a worker's signal, and by the poll interval running out.
        var signalled = 0
        var polled = 0
        /// Wall time spent waiting, in seconds.
        var seconds = 0.0
        var description: String {
            String(format: "settle: %d calls, %d waited (%d signalled, %d polled), %.3f s waiting", calls, waited, signalled, polled, seconds)
        }
    }
    private var settleCounters = SettleCounters()
    /// The settle counters so far.
    var settleStatistics: SettleCounters { condition.withLock { settleCounters } }

    init() {
        settleWakeup = PipelineLock.Condition(condition)
        condition.onBroadcast = { [unowned self] in wakeReadyLocked() }
    }

    /// Tells a settle waiter that a worker changed to a state that may be settled.
    /// Call with the pipeline lock held.
    private func notifySettlerLocked() {
        if settleWaiters > 0 { settleWakeup.signal() }
    }

    /// Wakes each waiting worker that can go on now. Call with the lock held.
    private func wakeReadyLocked() {
        for worker in workers where !worker.exited {
            if let readiness = worker.readiness, readiness() { worker.wakeup.signal() }
        }
    }

    func register(_ name: String) -> Worker {
        let worker = Worker(name: name, lock: condition)
        condition.withLock { workers.append(worker) }
        return worker
    }

    /// Marks `worker` finished for good. Call without the lock held.
    func exit(_ worker: Worker) {
        condition.withLock {
            worker.exited = true
            wakeReadyLocked()
            notifySettlerLocked()
        }
    }

    /// Waits (with the lock held) until `ready()` is true.
    func wait(_ worker: Worker, until ready: @escaping () -> Bool) {
        while !ready() {
            worker.readiness = ready
            notifySettlerLocked()
            worker.wakeup.wait()
        }
        worker.readiness = nil
    }

    /// Like ``wait(_:until:)`` but gives up at `deadline` (wall time); returns `ready()`.
    func wait(_ worker: Worker, until ready: @escaping () -> Bool, deadline: Date) -> Bool {
        while !ready() {
            worker.readiness = ready
            notifySettlerLocked()
            if !worker.wakeup.wait(seconds: deadline.timeIntervalSinceNow) {
                worker.readiness = nil
                return ready()
            }
        }
        worker.readiness = nil
        return true
    }

    /// Wakes every waiter that can go on (call with the lock held, after changing shared state).
    func broadcast() { wakeReadyLocked() }

    /// For debugging determinism: a snapshot of who waits on what.
    func debugState() -> String {
        condition.withLock {
            workers.map { w in "\(w.name): exited=\(w.exited) io=\(w.readingIO) idle=\(w.stream?.isIdle ?? false) waiting=\(w.readiness != nil) ready=\(w.readiness?() ?? false)" }.joined(separator: "; ")
        }
    }

    /// The worker is about to block in a loader read (without the pipeline lock).
    func enterIO(_ worker: Worker, stream: ByteStream?) {
        let mark = stream?.consumerProgressCount ?? 0
        condition.withLock {
            worker.ioMark = mark
            worker.readingIO = true
            worker.stream = stream
            notifySettlerLocked()
        }
    }

    /// The worker is back from the loader read.
    func leaveIO(_ worker: Worker) {
        condition.withLock {
            worker.readingIO = false
            worker.stream = nil
            wakeReadyLocked()
        }
    }

    /// Whether every worker is waiting for something that has not happened.
    /// Call with the lock held.
    func isSettledLocked() -> Bool {
        for worker in workers where !worker.exited {
            if worker.readingIO {
                // Blocked on the loader only if the stream has nothing and handed
                // nothing over since the read began (else the worker is busy with it).
                guard let stream = worker.stream, stream.isIdle,
                      stream.consumerProgressCount == worker.ioMark else { return false }
                continue
            }
            guard let readiness = worker.readiness, !readiness() else { return false }
        }
        return true
    }

    /// Blocks until the pipeline is settled. Only meaningful when the time the
    /// pipeline waits on is a manual clock; with real time it returns when the
    /// pipeline happens to be idle. Gives up after `timeout` seconds of wall time
    /// (a stage busy that long is a bug, and hanging a test forever is worse).
    @discardableResult
    func waitUntilSettled(timeout: TimeInterval = 60) -> Bool {
        let giveUp = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        settleCounters.calls += 1
        guard !isSettledLocked() else { return true }
        settleCounters.waited += 1
        let waitStart = DispatchTime.now().uptimeNanoseconds
        defer { settleCounters.seconds += Double(DispatchTime.now().uptimeNanoseconds - waitStart) / 1e9 }
        var warned = false
        while !isSettledLocked() {
            if Date() > giveUp { return false }
            if !warned, Date() > giveUp.addingTimeInterval(-timeout + 2) {
                warned = true
                let states = workers.map { w in "\(w.name): exited=\(w.exited) io=\(w.readingIO) idle=\(w.stream?.isIdle ?? false) waiting=\(w.readiness != nil) ready=\(w.readiness?() ?? false)" }
                Self.logger.debug("settling slowly: \(states)")
            }
            // Workers signal when they begin to wait, read or exit; the short poll
            // covers loader streams, whose state changes do not go through this lock.
            // A worker that can go on but was not woken is woken at each poll.
            settleWaiters += 1
            let signalled = settleWakeup.wait(seconds: 0.0005)
            settleWaiters -= 1
            if signalled {
                settleCounters.signalled += 1
            } else {
                settleCounters.polled += 1
                wakeReadyLocked()
            }
        }
        return true
    }

    /// Names of workers not settled, for diagnostics.
    func busyWorkers() -> [String] {
        condition.withLock {
            workers.filter { worker in
                if worker.exited { return false }
                if worker.readingIO { return !(worker.stream?.isIdle ?? false) }
                guard let readiness = worker.readiness else { return true }
                return readiness()
            }.map(\.name)
        }
    }
}
