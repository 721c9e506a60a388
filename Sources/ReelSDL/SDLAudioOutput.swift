import Foundation
import ReelCore
import ReelMedia
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
public final class SDLAudioOutput: @unchecked Sendable {
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
    private let lock = NSLock()
    private var closed = false

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
    public init(format: AudioFormat = .stereo48k, bufferFrames: Int = 1024, driver: String? = nil) throws {
        // Over SDL_AUDIODRIVER too: the caller asked for this driver by name.
        if let driver { SDL_SetHintWithPriority(SDL_HINT_AUDIODRIVER, driver, SDL_HINT_OVERRIDE) }
        defer { if driver != nil { SDL_ResetHint(SDL_HINT_AUDIODRIVER) } }
        guard SDL_InitSubSystem(SDL_INIT_AUDIO) == 0 else {
            throw SDLAudioError.initialization(Self.lastError())
        }
        let mixer = SDLAudioMixer(channels: format.channels)
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

    /// Stops the device and releases SDL's audio subsystem. Waits for a running callback to
    /// return; idempotent.
    public func close() {
        let wasOpen: Bool = lock.withLock {
            defer { closed = true }
            return !closed
        }
        guard wasOpen else { return }
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
final class SDLAudioVoice: AudioSink, @unchecked Sendable {
    let format: AudioFormat
    let latency: MediaTime
    let mode: AudioSinkMode = .pull
    private let mixer: SDLAudioMixer
    private let output: SDLAudioOutput  // keeps the device open while a player holds the sink
    private let id: Int

    init(output: SDLAudioOutput, mixer: SDLAudioMixer) {
        self.output = output
        self.mixer = mixer
        self.format = output.format
        self.latency = output.latency
        self.id = mixer.newVoiceID()
    }

    func start(pulling source: AudioPullSource) { mixer.attach(id, source) }
    func stop() { mixer.detach(id) }
    deinit { mixer.detach(id) }
}

/// The voices and gain the device callback mixes. The callback takes a snapshot of the
/// sources under the lock and renders them outside it, so a player stopping its voice never
/// waits for (or deadlocks with) a render in progress.
final class SDLAudioMixer: @unchecked Sendable {
    let channels: Int
    private let lock = NSLock()
    private var voices: [(id: Int, source: AudioPullSource)] = []
    private var nextID = 0
    private var gain: Float = 1
    private var muted = false
    private var rendered = 0

    init(channels: Int) { self.channels = channels }

    func newVoiceID() -> Int { lock.withLock { nextID += 1; return nextID } }
    func attach(_ id: Int, _ source: AudioPullSource) {
        lock.withLock {
            voices.removeAll { $0.id == id }
            voices.append((id, source))
        }
    }
    func detach(_ id: Int) { lock.withLock { voices.removeAll { $0.id == id } } }

    var volume: Float {
        get { lock.withLock { gain } }
        set { lock.withLock { gain = newValue } }
    }
    var isMuted: Bool {
        get { lock.withLock { muted } }
        set { lock.withLock { muted = newValue } }
    }
    var activeCount: Int { lock.withLock { voices.count } }
    var framesRendered: Int { lock.withLock { rendered } }

    /// Fills `output` (interleaved float32) with the mix of every voice.
    func render(into output: UnsafeMutableBufferPointer<Float>) {
        let (sources, level) = lock.withLock { (voices.map(\.source), muted ? 0 : gain) }
        output.initialize(repeating: 0)
        let frames = output.count / channels
        for source in sources {
            let samples = source.render(frameCount: frames)
            let n = min(samples.count, output.count)
            for i in 0..<n { output[i] += samples[i] }
        }
        for i in 0..<output.count { output[i] = max(-1, min(1, output[i] * level)) }
        lock.withLock { rendered += frames }
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
