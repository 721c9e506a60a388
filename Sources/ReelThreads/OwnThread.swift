import Foundation

/// Runs `body` on a new thread of its own and suspends the caller until it returns.
///
/// For work that blocks — an FFmpeg call that reads through a loader, a whole-file decode, a
/// wait for a child process, closing a player — and so must never run on the Swift concurrency
/// pool: the pool has as many threads as the machine has cores (one under `taskset -c 0`), and
/// one held by a blocking call starves every task behind it. The caller awaits; no pool thread
/// waits meanwhile.
///
/// ```swift
/// let frames = try await onOwnThread(named: "reel.probe") { try decodeWholeFile(url) }
/// ```
///
/// The thread is named `name` in the kernel (what `gdb`'s `thread apply all bt` and `top -H`
/// show; the first 15 bytes) and ends when `body` returns. `stackSize` is the thread's stack: FFmpeg's decoders and demuxers need
/// more than a default secondary thread's 512 kB on some platforms.
public func onOwnThread<T: Sendable>(named name: String, stackSize: Int = defaultOwnThreadStackSize,
                                     _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        startOwnThread(named: name, stackSize: stackSize) { continuation.resume(returning: body()) }
    }
}

/// ``onOwnThread(named:stackSize:_:)`` for work that throws: the error reaches the caller.
public func onOwnThread<T: Sendable>(named name: String, stackSize: Int = defaultOwnThreadStackSize,
                                     _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        startOwnThread(named: name, stackSize: stackSize) { continuation.resume(with: Result { try body() }) }
    }
}

/// The stack of a thread started by ``onOwnThread(named:stackSize:_:)`` unless it asks for
/// another: 8 MB, a main thread's.
public let defaultOwnThreadStackSize = 8 << 20

/// Gives the calling thread `name` in the kernel, where `top -H`, `gdb` and `/proc` read it
/// (Foundation's `Thread.name` names only its own object on Linux). Linux keeps the first 15
/// bytes.
public func nameCurrentThread(_ name: String) {
    guard let handle = FileHandle(forWritingAtPath: "/proc/thread-self/comm") else { return }
    handle.write(Data(name.utf8.prefix(15)))
    try? handle.close()
}

private func startOwnThread(named name: String, stackSize: Int, _ work: @escaping @Sendable () -> Void) {
    let thread = Thread {
        nameCurrentThread(name)
        work()
    }
    thread.name = name
    thread.stackSize = stackSize
    thread.start()
}
