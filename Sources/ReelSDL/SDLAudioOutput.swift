import Foundation
import ReelCore
import ReelMedia
import Synchronization
internal import CSDL2

/// One SDL audio device shared by every player of a process: float32, callback-driven, with
/// no window needed (only SDL's audio subsystem is initialised).
///
/// Each player gets its own pull-mode sink from ``makeSink()`` (a *voice*); the device
/// callback mixes all voices that are started. A paused player's source renders silence, so
/// a feed can keep three players attached and only the current one is heard. Volume and mute
/// here apply to the whole output, on top of each player's own.
///
/// ```swift
/// let output = try SDLAudioOutput()          // SDL_AUDIODRIVER picks the driver
/// let player = Player(videoSink: sink, audioSink: output.makeSink())
/// …
/// output.close()
/// ```
///
/// Opening fails with ``SDLAudioError`` when there is no usable device (no sound card, no
/// audio server); callers fall back to `NullAudioSink`. `SDL_AUDIODRIVER=dummy` gives a device
/// that consumes samples in real time and plays nothing; `SDL_AUDIODRIVER=disk` writes them to
/// `SDL_DISKAUDIOFILE`.
///
/// Checked `Sendable`: the device is an SDL id (an integer) fixed at init, closing is an
/// atomic, and what the callback shares lives in the ``SDLAudioMixer``.
public final class SDLAudioOutput: Sendable {
    /// The format every voice renders in (what the device was opened with).
    public let format: AudioFormat
    /// Time from the callback taking samples to hearing them: one device buffer.
    public let latency: MediaTime
    /// Frames the device asks for per callback.
    public let bufferFrames: Int
    /// The SDL audio driver in use ("pulseaudio", "alsa", "dummy", "disk", …).
    public let driverName: String

    private let mixer: SDLAudioMixer
    private let device: SDL_AudioDeviceID
    private let closed = Atomic<Bool>(false)

    /// Opens the default output device.
    ///
    /// - Parameters:
    ///   - format: the sample rate and channel count to ask for; SDL converts to whatever
    ///     the hardware takes, so this is the format voices render in.
    ///   - bufferFrames: frames per device callback (a power of two; smaller is lower
    ///     latency and more wake-ups).
    ///   - driver: an SDL audio driver to use ("dummy", "disk", "pulseaudio", …) instead of
    ///     SDL's choice (or `SDL_AUDIODRIVER`); it applies when the audio subsystem starts.
    /// - Throws: ``SDLAudioError`` with SDL's message when no device opens.
    public init(format: AudioFormat = .stereo48k, bufferFrames: Int = 512, driver: String? = nil) throws {
        // Over SDL_AUDIODRIVER too: the caller asked for this driver by name.
        if let driver { SDL_SetHintWithPriority(SDL_HINT_AUDIODRIVER, driver, SDL_HINT_OVERRIDE) }
        defer { if driver != nil { SDL_ResetHint(SDL_HINT_AUDIODRIVER) } }
        guard SDL_InitSubSystem(SDL_INIT_AUDIO) == 0 else {
            throw SDLAudioError.initialization(Self.lastError())
        }
        // The device thread only copies and mixes (no lock, no allocation), so it may run as a
        // realtime thread where the system allows it (rtkit, RLIMIT_RTPRIO, root): a busy
        // desktop then cannot preempt it in the middle of a buffer. Elsewhere SDL keeps the
        // normal policy.
        SDL_SetHint(SDL_HINT_THREAD_FORCE_REALTIME_TIME_CRITICAL, "1")
        let mixer = SDLAudioMixer(channels: format.channels, maximumFrames: max(8192, bufferFrames * 4))
        var desired = SDL_AudioSpec()
        desired.freq = Int32(format.sampleRate)
        desired.format = SDL_AudioFormat(AUDIO_F32SYS)
        desired.channels = UInt8(clamping: format.channels)
        desired.samples = UInt16(clamping: bufferFrames)
        desired.callback = sdlAudioCallback
        desired.userdata = Unmanaged.passUnretained(mixer).toOpaque()
        var obtained = SDL_AudioSpec()
        // No allowed changes: SDL converts from our format to the device's.
        let id = SDL_OpenAudioDevice(nil, 0, &desired, &obtained, 0)
        guard id != 0 else {
            let message = Self.lastError()
            SDL_QuitSubSystem(SDL_INIT_AUDIO)
            throw SDLAudioError.noDevice(message)
        }
        self.mixer = mixer
        self.device = id
        self.format = format
        let frames = max(1, Int(obtained.samples))
        self.bufferFrames = frames
        self.latency = MediaTime(value: Int64(frames), timescale: Int32(format.sampleRate))
        self.driverName = SDL_GetCurrentAudioDriver().map { String(cString: $0) } ?? "unknown"
        SDL_PauseAudioDevice(id, 0)
    }

    deinit { close() }

    /// A new pull-mode sink for one player. It is silent until the player starts it and
    /// after it stops; several may play at once (they are summed).
    public func makeSink() -> any AudioSink {
        SDLAudioVoice(output: self, mixer: mixer)
    }

    /// Output gain, 0…1, applied after mixing.
    public var volume: Float {
        get { mixer.volume }
        set { mixer.volume = max(0, min(1, newValue)) }
    }

    /// Silences the whole output (voices keep being pulled, so players keep their clocks).
    public var isMuted: Bool {
        get { mixer.isMuted }
        set { mixer.isMuted = newValue }
    }

    /// Voices started now.
    public var activeVoiceCount: Int { mixer.activeCount }

    /// Frames the device callback has produced so far.
    public var framesRendered: Int { mixer.framesRendered }

    /// How long the device callbacks took (they only copy and mix; see ``SDLAudioMixer``).
    public var callbackStatistics: AudioCallbackStatistics { mixer.timings.statistics }

    /// Forgets the callback durations recorded so far.
    public func resetCallbackStatistics() { mixer.timings.reset() }

    /// Stops the device and releases SDL's audio subsystem. Waits for a running callback to
    /// return; idempotent.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        SDL_CloseAudioDevice(device)
        SDL_QuitSubSystem(SDL_INIT_AUDIO)
        withExtendedLifetime(mixer) {}
    }

    private static func lastError() -> String {
        let text = SDL_GetError().map { String(cString: $0) } ?? ""
        return text.isEmpty ? "unknown SDL error" : text
    }
}

/// Why the SDL audio output did not open.
public enum SDLAudioError: Error, CustomStringConvertible, Sendable, Hashable {
    /// `SDL_InitSubSystem(SDL_INIT_AUDIO)` failed (no driver could start).
    case initialization(String)
    /// No output device opened.
    case noDevice(String)

    public var description: String {
        switch self {
        case .initialization(let message): "no audio driver (\(message))"
        case .noDevice(let message): "no audio device (\(message))"
        }
    }
}

/// A player's view of the shared device: pull mode, the output's format and latency.
final class SDLAudioVoice: AudioSink, Sendable {
    let format: AudioFormat
    let latency: MediaTime
    let mode: AudioSinkMode = .pull
    private let mixer: SDLAudioMixer
    private let output: SDLAudioOutput  // keeps the device open while a player holds the sink
    /// The mixer slot this voice plays through; `nil` when every slot is taken (it is silent).
    private let slot: Int?

    init(output: SDLAudioOutput, mixer: SDLAudioMixer) {
        self.output = output
        self.mixer = mixer
        self.format = output.format
        self.latency = output.latency
        self.slot = mixer.newVoiceSlot()
    }

    func start(pulling source: AudioPullSource) { if let slot { mixer.attach(slot, source) } }
    func stop() { if let slot { mixer.detach(slot) } }
    deinit { if let slot { mixer.releaseVoiceSlot(slot) } }
}

/// The voices and gain the device callback mixes — real-time code: the callback takes no lock,
/// allocates nothing and only copies out of each player's ring (``AudioPullSource``) and adds.
///
/// Voices live in a fixed table of atomic slots. Attaching or detaching a voice swaps its slot
/// and then waits until a callback that may still hold the old source has returned (the
/// callback's epoch counter is odd while it runs), so a source is released only when no
/// callback can touch it. Slot ownership (which voice uses which slot) is kept under a mutex
/// that only non-real-time threads take.
///
/// Checked `Sendable`: every field is an atomic, a `Mutex` or immutable; the callback's scratch
/// is a ``SampleBuffer`` (raw memory) that only the callback thread touches.
final class SDLAudioMixer: Sendable {
    private typealias Slots = InlineArray<16, Atomic<UInt>>
    static let slotCount = Slots.count
    let channels: Int
    let maximumFrames: Int
    let timings = RealTimeTimings()
    /// `Unmanaged<AudioPullSource>` pointers (retained) as bit patterns (0: none), one per
    /// voice slot.
    private let slots = Slots { _ in Atomic(0) }
    /// Odd while a callback runs.
    private let epoch = Atomic<Int>(0)
    private let gainBits = Atomic<UInt32>(Float(1).bitPattern)
    private let mutedFlag = Atomic<Bool>(false)
    private let rendered = Atomic<Int>(0)
    /// The callback's scratch buffer for one voice (callback thread only).
    private let scratchBuffer: SampleBuffer
    private var scratch: UnsafeMutablePointer<Float> { scratchBuffer.base }
    /// Slots handed to voices (non-real-time threads only).
    private let owners = Mutex([Bool](repeating: false, count: SDLAudioMixer.slotCount))

    init(channels: Int, maximumFrames: Int) {
        self.channels = channels
        self.maximumFrames = maximumFrames
        scratchBuffer = SampleBuffer(count: maximumFrames * channels)
    }

    deinit {
        for i in 0..<Self.slotCount {
            if let old = UnsafeMutableRawPointer(bitPattern: slots[i].exchange(0, ordering: .sequentiallyConsistent)) {
                Unmanaged<AudioPullSource>.fromOpaque(old).release()
            }
        }
    }

    /// A free slot for a new voice, or `nil` when all are taken.
    func newVoiceSlot() -> Int? {
        owners.withTrackedLock { owners in
            guard let slot = owners.firstIndex(of: false) else { return nil }
            owners[slot] = true
            return slot
        }
    }

    func releaseVoiceSlot(_ slot: Int) {
        detach(slot)
        owners.withTrackedLock { $0[slot] = false }
    }

    func attach(_ slot: Int, _ source: AudioPullSource) {
        replace(slot, with: Unmanaged.passRetained(source).toOpaque())
    }

    func detach(_ slot: Int) { replace(slot, with: nil) }

    /// Swaps a slot, then releases the old source once no callback can be using it.
    private func replace(_ slot: Int, with pointer: UnsafeMutableRawPointer?) {
        let old = UnsafeMutableRawPointer(bitPattern: slots[slot].exchange(UInt(bitPattern: pointer), ordering: .sequentiallyConsistent))
        guard let old else { return }
        let running = epoch.load(ordering: .sequentiallyConsistent)
        if running & 1 == 1 {
            while epoch.load(ordering: .sequentiallyConsistent) == running { usleep(200) }
        }
        Unmanaged<AudioPullSource>.fromOpaque(old).release()
    }

    var volume: Float {
        get { Float(bitPattern: gainBits.load(ordering: .relaxed)) }
        set { gainBits.store(newValue.bitPattern, ordering: .relaxed) }
    }
    var isMuted: Bool {
        get { mutedFlag.load(ordering: .relaxed) }
        set { mutedFlag.store(newValue, ordering: .relaxed) }
    }
    var activeCount: Int {
        (0..<Self.slotCount).filter { slots[$0].load(ordering: .relaxed) != 0 }.count
    }
    var framesRendered: Int { rendered.load(ordering: .relaxed) }

    /// Fills `output` (interleaved float32) with the mix of every voice. Real-time safe.
    func render(into output: UnsafeMutableBufferPointer<Float>) {
        guard let base = output.baseAddress else { return }
        let started = RealTimeTimings.now()
        epoch.add(1, ordering: .sequentiallyConsistent)
        base.update(repeating: 0, count: output.count)
        let frames = output.count / channels
        for slot in 0..<Self.slotCount {
            guard let pointer = UnsafeMutableRawPointer(bitPattern: slots[slot].load(ordering: .sequentiallyConsistent)) else { continue }
            let source = Unmanaged<AudioPullSource>.fromOpaque(pointer).takeUnretainedValue()
            var done = 0
            while done < frames {
                let n = min(maximumFrames, frames - done)
                source.render(into: scratch, frameCount: n)
                let offset = done * channels
                for i in 0..<(n * channels) { base[offset + i] += scratch[i] }
                done += n
            }
        }
        let level = mutedFlag.load(ordering: .relaxed) ? 0 : Float(bitPattern: gainBits.load(ordering: .relaxed))
        for i in 0..<output.count { base[i] = max(-1, min(1, base[i] * level)) }
        rendered.store(rendered.load(ordering: .relaxed) + frames, ordering: .relaxed)
        epoch.add(1, ordering: .sequentiallyConsistent)
        timings.record(nanoseconds: RealTimeTimings.now() - started)
    }
}

/// SDL's device thread calls this for every buffer.
private func sdlAudioCallback(_ userdata: UnsafeMutableRawPointer?, _ stream: UnsafeMutablePointer<UInt8>?, _ length: Int32) {
    guard let userdata, let stream, length > 0 else { return }
    let mixer = Unmanaged<SDLAudioMixer>.fromOpaque(userdata).takeUnretainedValue()
    let count = Int(length) / MemoryLayout<Float>.size
    stream.withMemoryRebound(to: Float.self, capacity: count) { floats in
        mixer.render(into: UnsafeMutableBufferPointer(start: floats, count: count))
    }
}
