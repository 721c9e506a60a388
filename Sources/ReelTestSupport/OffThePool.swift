import ReelThreads

/// Runs synchronous work that blocks, reads or decodes (a whole-file decode through a loader,
/// a reference decode, closing a player) on a thread of its own and awaits it: on the
/// concurrency pool it would hold one of its few threads for the whole time and starve every
/// other test's tasks. The tests' name for ReelThreads' ``onOwnThread(named:stackSize:_:)``.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await onOwnThread(named: "reel.tests.off-pool", body)
}

/// The same for work that throws.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await onOwnThread(named: "reel.tests.off-pool", body)
}
