import Foundation
import ReelThreads
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// POSIX shared-memory objects that carry kitty graphics frames to a local terminal
/// (`t=s`): the pixels go into an object of their own (`shm_open`, `ftruncate`, `mmap`) and
/// only its name goes down the pseudo-terminal; the terminal maps it, reads it and unlinks it.
///
/// Each frame gets a new name (`/reel-kitty-<pid>-<store>-<n>`, created exclusively), so an
/// object is never rewritten while the terminal may be reading it. The names made and not
/// yet unlinked by the terminal are tracked: ``store(_:)`` waits (on the caller's thread,
/// the renderer's own) while ``maxUnread`` of them are still there, so a slow terminal makes
/// the renderer drop frames instead of filling `/dev/shm`; a terminal that reads none within
/// ``patience`` seconds is taken as not reading them at all, and ``store(_:)`` says nil from
/// then on (the encoder sends the pixels in the escape codes instead). ``removeAll()`` (the
/// renderer's stop) and, for anything left, the process's exit (`atexit`) unlink every name
/// made and still present, so a terminal that dies mid-frame leaves nothing behind.
public final class KittySharedMemory: Sendable {
    /// The names of this store's objects the terminal has not unlinked yet, oldest first.
    private struct State {
        var unread: [String] = []
        var serial = 0
        var gaveUp = false
    }

    /// At most this many objects the terminal has not read yet before ``store(_:)`` waits.
    public let maxUnread: Int
    /// How long ``store(_:)`` waits for the terminal to read one, in seconds.
    public let patience: Double
    private let prefix: String
    /// Guarded: this store's names and counter.
    private let state = Mutex(State())

    /// Every name this process made and has not seen gone, for the exit's clean-up.
    private static let made = Mutex<Set<String>>([])
    private static let stores = Atomic<Int>(0)
    private static let cleanupAtExit: Void = { atexit { KittySharedMemory.removeLeftovers() } }()

    /// - Parameters:
    ///   - maxUnread: objects the terminal may have pending before a new frame waits.
    ///   - patience: seconds to wait for it before giving up on shared memory.
    public init(maxUnread: Int = 2, patience: Double = 1) {
        self.maxUnread = max(1, maxUnread)
        self.patience = patience
        let number = Self.stores.wrappingAdd(1, ordering: .relaxed).oldValue
        prefix = "/reel-kitty-\(getpid())-\(number)-"
        _ = Self.cleanupAtExit
    }

    /// Whether ``store(_:)`` has stopped making objects (the terminal read none in time).
    public var gaveUp: Bool { state.withTrackedLock { $0.gaveUp } }

    /// The names made and not yet unlinked (by the terminal or ``removeAll()``).
    public var unread: [String] {
        sweep()
        return state.withTrackedLock { $0.unread }
    }

    /// `bytes` in a new object; its name, or nil when shared memory failed (no space, or the
    /// terminal stopped reading): then the caller sends the bytes some other way.
    public func store(_ bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty, waitForRoom() else { return nil }
        let name = state.withTrackedLock { state -> String in
            state.serial += 1
            return prefix + String(state.serial)
        }
        guard Self.create(name, bytes) else { return nil }
        Self.made.withTrackedLock { _ = $0.insert(name) }
        state.withTrackedLock { $0.unread.append(name) }
        return name
    }

    /// Unlinks every object of this store the terminal has not (after the renderer stops).
    public func removeAll() {
        let names = state.withTrackedLock { state -> [String] in
            defer { state.unread.removeAll() }
            return state.unread
        }
        for name in names { Self.remove(name) }
    }

    /// Unlinks every object this process made and still present (at exit; the bench after
    /// its run through a terminal).
    public static func removeLeftovers() {
        let names = made.withTrackedLock { made -> Set<String> in
            defer { made.removeAll() }
            return made
        }
        for name in names { shm_unlink(name) }
    }

    /// Unlinks `name` (nothing when it is gone already).
    public static func remove(_ name: String) {
        shm_unlink(name)
        made.withTrackedLock { _ = $0.remove(name) }
    }

    /// Whether an object of this name exists.
    public static func exists(_ name: String) -> Bool {
        let fd = shm_open(name, O_RDONLY, 0)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }

    /// What object `name` holds (tests, the bench), without unlinking it.
    public static func contents(of name: String) -> [UInt8]? {
        let fd = shm_open(name, O_RDONLY, 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let size = Int(info.st_size)
        guard size > 0 else { return [] }
        guard let map = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), map != UnsafeMutableRawPointer(bitPattern: -1) else {
            return nil
        }
        defer { munmap(map, size) }
        return [UInt8](UnsafeRawBufferPointer(start: map, count: size))
    }

    /// A one-pixel object for the detection's `t=s` query: its name, or nil when none could
    /// be made. The terminal that reads it unlinks it; the detection unlinks it if not.
    static func probe() -> String? {
        _ = cleanupAtExit
        let name = "/reel-kitty-\(getpid())-probe-\(stores.wrappingAdd(1, ordering: .relaxed).oldValue)"
        guard create(name, [0, 0, 0]) else { return nil }
        made.withTrackedLock { _ = $0.insert(name) }
        return name
    }

    /// Creates `name` (exclusively: never someone else's object) holding `bytes`.
    private static func create(_ name: String, _ bytes: [UInt8]) -> Bool {
        let fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        // A full /dev/shm would show as SIGBUS on the first write to the mapping, since
        // ftruncate reserves nothing on tmpfs; posix_fallocate reserves, and fails cleanly.
        guard ftruncate(fd, off_t(bytes.count)) == 0, posix_fallocate(fd, 0, off_t(bytes.count)) == 0,
              let map = mmap(nil, bytes.count, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
              map != UnsafeMutableRawPointer(bitPattern: -1) else {
            shm_unlink(name)
            return false
        }
        bytes.withUnsafeBytes { map.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        munmap(map, bytes.count)
        return true
    }

    /// Drops the names the terminal has unlinked.
    private func sweep() {
        let names = state.withTrackedLock { $0.unread }
        guard !names.isEmpty else { return }
        let gone = Set(names.filter { !Self.exists($0) })
        guard !gone.isEmpty else { return }
        state.withTrackedLock { $0.unread.removeAll { gone.contains($0) } }
        Self.made.withTrackedLock { $0.subtract(gone) }
    }

    /// Waits (polling every millisecond, at most ``patience`` seconds) until fewer than
    /// ``maxUnread`` objects are pending; false when the store has given up.
    private func waitForRoom() -> Bool {
        guard !gaveUp else { return false }
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        while true {
            sweep()
            if state.withTrackedLock({ $0.unread.count }) < maxUnread { return true }
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            if Double(now.tv_sec - start.tv_sec) + Double(now.tv_nsec - start.tv_nsec) / 1e9 >= patience {
                state.withTrackedLock { $0.gaveUp = true }
                return false
            }
            usleep(1000)
        }
    }
}
