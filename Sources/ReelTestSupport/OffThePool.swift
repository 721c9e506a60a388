import Foundation

/// Runs synchronous work that reads or decodes (a whole-file decode through a loader, a
/// reference decode) on a thread of its own and awaits it: on the concurrency pool it would
/// hold one of its few threads for the whole decode and starve every other test's tasks.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = "reel.tests.off-pool"
        thread.stackSize = 4 << 20
        thread.start()
    }
}
