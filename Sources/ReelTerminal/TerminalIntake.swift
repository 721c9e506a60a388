import Dispatch
import Foundation

/// How fast a real terminal takes what it is sent: writes a run of frames to a
/// ``TerminalSession``'s terminal, then DA1; a terminal answers in order, so its answer means
/// it has read and drawn everything before it. The time from the first write to the answer
/// is the terminal's, whatever the pseudo-terminal's buffer held (`reel bench terminal
/// --through-terminal`).
///
/// Threads: ``time(_:timeout:)`` and ``time(running:timeout:)`` wait for the answer, so they
/// run on a thread of the caller's own (never the concurrency pool's); the answer arrives on
/// the session's input thread.
public final class TerminalIntake: Sendable {
    private let session: TerminalSession
    /// Signalled for each DA1 answer.
    private let answered = DispatchSemaphore(value: 0)

    /// Takes over `session`'s event handler; enter the session after this.
    public init(session: TerminalSession) {
        self.session = session
        session.handlers = TerminalSession.Handlers(onEvent: { [answered] event in
            if case .deviceAttributes = event { answered.signal() }
        })
    }

    /// Seconds from writing the first of `frames` until the terminal answered DA1 written
    /// after the last; nil when it did not answer within `timeout` seconds.
    public func time(_ frames: [[UInt8]], timeout: Double) -> Double? {
        time(running: { for frame in frames { session.write(frame) } }, timeout: timeout)
    }

    /// Seconds from the start of `body` (which writes to the terminal, or runs a program that
    /// does) until the terminal answered DA1 written after it; nil without an answer in time.
    public func time(running body: () -> Void, timeout: Double) -> Double? {
        while answered.wait(timeout: .now()) == .success {}  // answers of earlier runs
        let start = DispatchTime.now()
        body()
        session.write(TerminalGraphicsQueries.primaryDeviceAttributes)
        guard answered.wait(timeout: .now() + timeout) == .success else { return nil }
        return Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}
