/// A fixed heap allocation of float samples, zeroed when made and freed with the object.
///
/// `@unchecked Sendable`: it wraps raw memory (an `UnsafeMutablePointer<Float>`) and does no
/// synchronisation of its own — the only such wrapper in Reel that holds no C object. Each
/// owner orders the accesses: ``AudioRing`` (the producer writes only the free region, the
/// consumer reads only the written one, and the ring's atomics publish the boundary), and
/// ReelSDL's mixer scratch (touched by the device callback thread alone).
package final class SampleBuffer: @unchecked Sendable {
    /// The first sample; `count` of them, valid while the buffer lives.
    package let base: UnsafeMutablePointer<Float>
    package let count: Int

    package init(count: Int) {
        self.count = count
        base = .allocate(capacity: count)
        base.initialize(repeating: 0, count: count)
    }

    deinit {
        base.deallocate()
    }
}
