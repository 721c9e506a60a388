import Foundation
import Logging

/// Sets up swift-log once for the process: quiet by default (warnings only, on stderr),
/// everything with `--verbose`.
enum CommandLogging {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var done = false

    static func bootstrap(verbose: Bool) {
        lock.withLock {
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
