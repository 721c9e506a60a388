import Foundation
import Logging
import Synchronization

/// Sets up swift-log once for the process: quiet by default (warnings only, on stderr),
/// everything with `--verbose`.
enum CommandLogging {
    /// Guarded: whether the logging system was bootstrapped (swift-log allows it once).
    private static let done = Mutex(false)

    static func bootstrap(verbose: Bool) {
        done.withTrackedLock { done in
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = verbose ? .debug : .warning
                return handler
            }
        }
    }
}
