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

    /// Waits (bounded) until `condition` holds.
    private static func wait(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return true
    }

    @Test func opensWithoutAWindowOnTheDummyDriver() throws {
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
        #expect(Self.wait { output.framesRendered > 0 })
    }

    @Test func mixesVoicesAndTheSamplesReachTheDevice() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reel-sdl-disk-\(getpid()).raw").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let output = try Self.disk(path) { try SDLAudioOutput(bufferFrames: 512, driver: "disk") }
        #expect(output.driverName == "disk")
        let a = output.makeSink(), b = output.makeSink()
        let pulls = LockedCounter()
        a.start(pulling: AudioPullSource { frames in pulls.add(); return [Float](repeating: 0.25, count: frames * 2) })
        b.start(pulling: AudioPullSource { frames in [Float](repeating: 0.125, count: frames * 2) })
        #expect(output.activeVoiceCount == 2)
        #expect(Self.wait { pulls.value >= 4 })
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

    @Test func muteAndVolumeApplyToTheMix() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reel-sdl-mute-\(getpid()).raw").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let output = try Self.disk(path) { try SDLAudioOutput(bufferFrames: 512, driver: "disk") }
        output.volume = 0.5
        #expect(output.volume == 0.5)
        let voice = output.makeSink()
        let pulls = LockedCounter()
        voice.start(pulling: AudioPullSource { frames in pulls.add(); return [Float](repeating: 0.5, count: frames * 2) })
        #expect(Self.wait { pulls.value >= 3 })
        output.isMuted = true
        let mutedAt = pulls.value
        #expect(Self.wait { pulls.value >= mutedAt + 3 })
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
        sink.start(pulling: AudioPullSource { frames in [Float](repeating: 0, count: frames * 2) })
        sink.stop()
    }
}

final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
