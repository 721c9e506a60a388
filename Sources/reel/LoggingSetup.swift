import Foundation
import Logging

enum LogSetup {
    nonisolated(unsafe) private static var done = false

    /// Quiet by default (errors reach the user as one line, not as logs);
    /// `--verbose` shows debug logs on stderr. Runs once per process.
    static func bootstrap(verbose: Bool) {
        guard !done else { return }
        done = true
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = verbose ? .debug : .critical
            return handler
        }
    }
}
