import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension Mutex {
    /// `withLock`, with the acquisition and release also told to ThreadSanitizer.
    ///
    /// On Linux `Mutex` locks with a futex inside the (uninstrumented) standard library,
    /// so ThreadSanitizer sees no order between two critical sections of one mutex and
    /// reports every access to its value as a race. This tells it, on the mutex's
    /// address, right after the lock is taken and right before it is released, which is
    /// exactly a mutex's ordering. Without the sanitizer the hooks are absent and this is
    /// `withLock` plus two checks of `nil`. Reel's code locks every `Mutex` through it.
    @inlinable
    public borrowing func withTrackedLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let address = withUnsafePointer(to: self) { UnsafeRawPointer($0) }
        return try withLock { (value: inout sending Value) throws(E) -> sending Result in
            ThreadSanitizerHooks.acquire?(address)
            defer { ThreadSanitizerHooks.release?(address) }
            return try body(&value)
        }
    }
}

/// ThreadSanitizer's annotation entry points, when the process runs under it.
public enum ThreadSanitizerHooks {
    public typealias Hook = @convention(c) (UnsafeRawPointer?) -> Void
    /// `__tsan_acquire`: what follows happens after the last `release` on the address.
    public static let acquire: Hook? = lookUp("__tsan_acquire")
    /// `__tsan_release`: what came before happens before the next `acquire` on the address.
    public static let release: Hook? = lookUp("__tsan_release")

    private static func lookUp(_ name: String) -> Hook? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: Hook.self) }
    }
}
