import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The thread an SDL window and its GL context (or SDL_Renderer) belong to: the thread
/// that created them. SDL's video functions and GL calls are only valid there, so every
/// path into them checks it with ``check(_:file:line:)``, which stops the process (a
/// `precondition`, in debug and release builds alike) when called from anywhere else — a
/// call from the wrong thread is a bug to find at once, not a rare corruption to chase later.
///
/// The owner is one thread, not a queue and not a task: Swift concurrency may resume a task
/// on any thread of its pool, so a window lives on a thread of its own (the CLI's
/// `reel.window` thread, the tests' window thread).
struct ThreadConfinement: Sendable {
    /// The owning thread (``ThreadIdentity``).
    private let owner: UInt64
    /// What is confined, for the failure message ("the SDL window").
    let subject: String

    /// Confined to the calling thread.
    init(_ subject: String) {
        owner = ThreadIdentity.current
        self.subject = subject
    }

    /// Whether the calling thread is the owner.
    var isOnOwnerThread: Bool { ThreadIdentity.current == owner }

    /// Stops the process unless called on the owner thread.
    func check(_ operation: @autoclosure () -> String = "", file: StaticString = #fileID, line: UInt = #line) {
        precondition(isOnOwnerThread, "\(subject) used off its thread\(operation().isEmpty ? "" : " (\(operation()))"): "
                     + "SDL and GL calls must come from the thread that created the window", file: file, line: line)
    }
}

/// A number for the calling thread, never given to another thread of the process: unlike
/// `pthread_t` (glibc hands a finished thread's `pthread_t` to the next thread it creates)
/// or a kernel thread id, it cannot make a new thread look like a window's old owner.
/// Kept in thread-local storage, assigned on a thread's first call.
enum ThreadIdentity {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    /// Guarded: the next number to hand out.
    private static let next = Mutex<UInt64>(1)

    static var current: UInt64 {
        if let stored = pthread_getspecific(key) { return UInt64(UInt(bitPattern: stored)) }
        let id = next.withTrackedLock { next in
            defer { next += 1 }
            return next
        }
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: UInt(id)))
        return id
    }
}
