import Dispatch
import Foundation
import ReelThreads
import Synchronization

/// Runs a ``TerminalGraphicsDetector`` against a terminal: writes its queries, takes the
/// replies the session's input thread parses (``receive(_:)``), and gives up at the deadline
/// on a timer queue. Awaiting the choice suspends; no thread waits for the terminal.
///
/// For the shared-memory query it makes a one-pixel object (``KittySharedMemory``) first, and
/// unlinks it once the choice is made: a terminal that read it has unlinked it already.
final class GraphicsDetection: Sendable {
    /// Guarded: the machine (its decision is final once made).
    private let machine: Mutex<TerminalGraphicsDetector>
    private let result = OneShot<TerminalGraphics>()

    init(_ detector: TerminalGraphicsDetector) {
        machine = Mutex(detector)
    }

    /// The choice: at once when the machine needs no answers, else after DA1's reply or
    /// `timeout` seconds, whichever comes first.
    func run(write: ([UInt8]) -> Void, timeout: Double, queue: DispatchQueue) async -> TerminalGraphics {
        let probe = KittySharedMemory.probe()
        defer { probe.map(KittySharedMemory.remove) }
        let action = machine.withTrackedLock { machine in
            machine.sharedMemoryProbe = probe
            return machine.start()
        }
        switch action {
        case .decided(let graphics):
            return graphics
        case .query(let bytes):
            queue.asyncAfter(deadline: .now() + timeout) { [self] in
                result.fulfil(machine.withTrackedLock { $0.timedOut() })
            }
            write(bytes)
            return await result.wait()
        }
    }

    /// A reply from the terminal (on the input thread).
    func receive(_ event: TerminalInputEvent) {
        switch event {
        case .kittyGraphicsReply, .deviceAttributes, .graphicsAttribute, .pixelSize:
            if let graphics = machine.withTrackedLock({ $0.receive(event) }) { result.fulfil(graphics) }
        default:
            break
        }
    }
}
