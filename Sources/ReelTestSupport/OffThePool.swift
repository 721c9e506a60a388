import Foundation

/// Runs synchronous work that blocks, reads or decodes (a whole-file decode through a loader,
/// a reference decode, closing a player) on a thread of its own and awaits it: on the
/// concurrency pool it would hold one of its few threads for the whole time and starve every
/// other test's tasks.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        startThread { continuation.resume(returning: body()) }
    }
}

/// The same for work that throws.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        startThread { continuation.resume(with: Result { try body() }) }
    }
}

private func startThread(_ work: @escaping @Sendable () -> Void) {
    let thread = Thread(block: work)
    thread.name = "reel.tests.off-pool"
    thread.stackSize = 4 << 20
    thread.start()
}
