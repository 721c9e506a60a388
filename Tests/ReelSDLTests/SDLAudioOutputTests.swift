import Foundation
import Testing
import ReelCore
@testable import ReelMedia
import ReelSDL

/// SDL's audio subsystem is process-wide, so these tests run one at a time. The disk
/// driver takes its file from SDL_DISKAUDIOFILE only.
@Suite(.serialized) struct SDLAudioOutputTests {
    private static func disk<T>(_ file: String, _ body: () throws -> T) rethrows -> T {
        setenv("SDL_DISKAUDIOFILE", file, 1)
        defer { unsetenv("SDL_DISKAUDIOFILE") }
        return try body()
    }

    /// Waits (a generous watchdog, never a performance bound) until `condition` holds.
    private static func wait(timeout: Double = 30, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// A player's ring holding `frames` stereo frames of `value`, running: what the device
    /// pulls is exactly that, then silence.
    private static func ring(of value: Float, frames: Int) -> AudioRing {
        let ring = AudioRing(channels: 2, capacity: frames)
        let samples = [Float](repeating: value, count: ring.capacity * 2)
        _ = samples.withUnsafeBufferPointer { ring.write($0) }
        ring.setRunning(true)
        return ring
    }

    @Test func opensWithoutAWindowOnTheDummyDriver() async throws {
        let output = try SDLAudioOutput(driver: "dummy")
        defer { output.close() }
        #expect(output.driverName == "dummy")
        #expect(output.format == .stereo48k)
        #expect(output.bufferFrames > 0)
        #expect(output.latency == MediaTime(value: Int64(output.bufferFrames), timescale: 48_000))
        let sink = output.makeSink()
        #expect(sink.mode == .pull)
        #expect(sink.format == .stereo48k)
        #expect(sink.latency == output.latency)
        // The device pulls even with no voice (silence), so players' clocks can rely on it.
        #expect(await Self.wait { output.framesRendered > 0 })
    }

    @Test func mixesVoicesAndTheSamplesReachTheDevice() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reel-sdl-disk-\(getpid()).raw").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let output = try Self.disk(path) { try SDLAudioOutput(bufferFrames: 512, driver: "disk") }
        #expect(output.driverName == "disk")
        let a = output.makeSink(), b = output.makeSink()
        let ringA = Self.ring(of: 0.25, frames: 16_384), ringB = Self.ring(of: 0.125, frames: 16_384)
        a.start(pulling: AudioPullSource(ring: ringA, clock: HostClock.shared))
        b.start(pulling: AudioPullSource(ring: ringB, clock: HostClock.shared))
        #expect(output.activeVoiceCount == 2)
        #expect(await Self.wait { ringA.consumePosition >= 4 * 512 })
        a.stop()
        b.stop()
        #expect(output.activeVoiceCount == 0)
        output.close()

        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(samples.count >= 512 * 2 * 4)
        // Two voices summed: 0.25 + 0.125.
        #expect(samples.contains(0.375))
        #expect(samples.allSatisfy { $0 == 0 || $0 == 0.375 || $0 == 0.25 || $0 == 0.125 })
    }

    @Test func muteAndVolumeApplyToTheMix() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reel-sdl-mute-\(getpid()).raw").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let output = try Self.disk(path) { try SDLAudioOutput(bufferFrames: 512, driver: "disk") }
        output.volume = 0.5
        #expect(output.volume == 0.5)
        let voice = output.makeSink()
        let ring = Self.ring(of: 0.5, frames: 32_768)
        // The test plays the player's part and keeps the ring fed: on a starved machine the
        // device may drain a finite ring before the test looks again, and silence after the
        // mute would then prove nothing.
        let more = [Float](repeating: 0.5, count: 4096 * 2)
        func fedWhile(_ condition: @escaping () -> Bool) async -> Bool {
            await Self.wait {
                _ = more.withUnsafeBufferPointer { ring.write($0) }
                return condition()
            }
        }
        voice.start(pulling: AudioPullSource(ring: ring, clock: HostClock.shared))
        #expect(await fedWhile { ring.consumePosition >= 3 * 512 })
        output.isMuted = true
        let mutedAt = ring.consumePosition
        #expect(await fedWhile { ring.consumePosition >= mutedAt + 3 * 512 })
        voice.stop()
        output.close()
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(samples.contains(0.25))
        #expect(samples.allSatisfy { $0 == 0 || $0 == 0.25 })
        #expect(samples.last == 0)
    }

    @Test func aMissingDriverIsAClearError() {
        #expect {
            _ = try SDLAudioOutput(driver: "no-such-driver")
        } throws: { error in
            guard let error = error as? SDLAudioError else { return false }
            return error.description.hasPrefix("no audio")
        }
    }

    @Test func closeIsIdempotentAndSinksOutliveIt() throws {
        let output = try SDLAudioOutput(driver: "dummy")
        let sink = output.makeSink()
        output.close()
        output.close()
        sink.start(pulling: AudioPullSource(ring: Self.ring(of: 0, frames: 1024), clock: HostClock.shared))
        sink.stop()
    }

    @Test func theCallbackOnlyCopiesAndIsTimed() async throws {
        let output = try SDLAudioOutput(bufferFrames: 512, driver: "dummy")
        defer { output.close() }
        let voice = output.makeSink()
        let ring = Self.ring(of: 0.25, frames: 4096)
        voice.start(pulling: AudioPullSource(ring: ring, clock: HostClock.shared))
        #expect(await Self.wait { output.callbackStatistics.callbacks >= 16 })
        let statistics = output.callbackStatistics
        #expect(statistics.maxMicroseconds > 0)
        #expect(statistics.p50Microseconds <= statistics.p99Microseconds)
        #expect(statistics.p99Microseconds <= statistics.maxMicroseconds)
        // The ring ran dry while running: the device played silence and counted it.
        #expect(await Self.wait { ring.underruns > 0 })
        voice.stop()
        #expect(output.activeVoiceCount == 0)
    }
}
