import Foundation
import Synchronization
internal import CFFmpeg

/// Process-wide counts of what the media pipelines hold open, for the feed's
/// "never more than three decoders" guarantee, the HUD and the swipe benchmark.
public enum MediaResources {
    private static let videoDecoders = Atomic<Int>(0)

    /// Video decoders open now, in every player of the process (one per player
    /// whose item is open; the throwaway first-frame decoder is not counted apart,
    /// it lives inside its player's decode thread).
    public static var liveVideoDecoders: Int { videoDecoders.load(ordering: .relaxed) }

    /// Gives memory freed by closed pipelines back to the system (glibc keeps it
    /// otherwise), so a long feed session stays at the size of its three players.
    public static func returnFreedMemory() {
        _ = malloc_trim(0)
    }

    /// Limits glibc to `count` malloc arenas (unless `MALLOC_ARENA_MAX` is set). The
    /// players' many short-lived threads (demux, decode, FFmpeg's frame threads)
    /// would each get an arena, and memory freed in one is not reused by another:
    /// resident memory then creeps up swipe after swipe. Call it first thing in
    /// `main`, before threads start.
    public static func limitAllocatorArenas(_ count: Int = 2) {
        guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil else { return }
        _ = mallopt(M_ARENA_MAX, Int32(count))
    }

    private static let engines = Atomic<Int>(0)
    /// Pipelines (one per item a player holds) alive now, for leak checks in stress runs.
    package static var liveEngines: Int { engines.load(ordering: .relaxed) }
    static func engineCreated() { engines.add(1, ordering: .relaxed) }
    static func engineFreed() { engines.subtract(1, ordering: .relaxed) }

    static func videoDecoderOpened() { videoDecoders.add(1, ordering: .relaxed) }
    static func videoDecoderClosed() { videoDecoders.subtract(1, ordering: .relaxed) }
}
