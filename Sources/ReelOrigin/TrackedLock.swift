import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// The same as ReelCore's `Mutex.withTrackedLock` (ReelOrigin does not depend on ReelCore):
// `withLock`, with the acquisition and release told to ThreadSanitizer, which on Linux
// cannot see `Mutex`'s futex and would report every access to a mutex's value as a race.
extension Mutex {
    borrowing func withTrackedLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let address = withUnsafePointer(to: self) { UnsafeRawPointer($0) }
        return try withLock { (value: inout sending Value) throws(E) -> sending Result in
            OriginSanitizerHooks.acquire?(address)
            defer { OriginSanitizerHooks.release?(address) }
            return try body(&value)
        }
    }
}

enum OriginSanitizerHooks {
    typealias Hook = @convention(c) (UnsafeRawPointer?) -> Void
    static let acquire: Hook? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_acquire").map { unsafeBitCast($0, to: Hook.self) }
    static let release: Hook? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_release").map { unsafeBitCast($0, to: Hook.self) }
}
