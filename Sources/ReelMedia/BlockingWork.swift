import Foundation

/// Runs blocking work (FFmpeg calls that read through a loader) on a thread of its
/// own, never on the concurrency runtime's small pool, which it would starve.
func runOnDedicatedThread<T: Sendable>(name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
    }
}
