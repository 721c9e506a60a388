import Foundation
import Testing
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
@testable import ReelSDL

/// SDL windows must not open on two threads at once: every suite that opens one is
/// nested here, and the whole tree runs one test at a time.
@Suite(.serialized, .enabled(if: XvfbDisplay.isAvailable, "Xvfb is not installed: the window tests need it"))
enum XvfbWindowSuites {}

extension XvfbWindowSuites {
    /// The real window under Xvfb: known synthetic clips drawn by both renderers, sampled
    /// pixels compared with the colours the clips were encoded from; SDL events pushed into
    /// the queue drive hold-to-2x, scrubbing, fullscreen and mute.
    @Suite struct WindowTests {
        /// A solid-colour clip whose YUV values were made with `matrix` and `range` from `rgb`.
        static func solid(_ rgb: (Int, Int, Int), width: Int, height: Int, pixelFormat: String = "yuv420p",
                          matrix: String = "bt601", range: String = "tv", rotation: Int = 0, duration: Double = 0.4) -> ClipSpec {
            let hex = String(format: "0x%02X%02X%02X", rgb.0, rgb.1, rgb.2)
            return ClipSpec(width: width, height: height, frameRate: 10, duration: duration, pixelFormat: pixelFormat,
                            keyframeInterval: 5, bFrames: 0, audioCodec: nil, rotation: rotation,
                            videoSource: "color=c=\(hex):size=\(width)x\(height):rate=10,format=rgb24,scale=out_color_matrix=\(matrix):out_range=\(range)")
        }

        /// Opens a window playing (paused) `spec`'s clip and waits for its first frame.
        static func open(_ spec: ClipSpec, renderer: RendererKind, size: (Int, Int) = (270, 480), clock: (any EngineClock)? = nil,
                         title: String = "") throws -> PlaybackWindow {
            #expect(XvfbDisplay.display != nil)
            let url = try Fixtures.clip(spec)
            let frames = FrameStore()
            let player = Player(clock: HostClock.shared, videoSink: frames, audioSink: nil)
            let window = try PlaybackWindow(player: player, frames: frames,
                                            options: .init(renderer: renderer, allowFallback: false, width: size.0, height: size.1, title: title),
                                            uiClock: clock ?? HostClock.shared)
            SDLEventInjector.parkPointer()
            player.replaceCurrentItem(with: PlayerItem(url: url, loader: FileLoader()))
            try waitUntil(window) { window.frames.current.frame != nil }
            return window
        }

        static func waitUntil(_ window: PlaybackWindow, timeout: TimeInterval = 10, _ condition: () -> Bool) throws {
            let deadline = Date().addingTimeInterval(timeout)
            while !condition() {
                if Date() > deadline { throw WaitTimeout() }
                window.pump(waitMs: 10)
            }
        }

        struct WaitTimeout: Error {}

        static func pixel(_ image: RGBImage, _ x: Int, _ y: Int) -> (Int, Int, Int) {
            let i = (y * image.width + x) * 3
            return (Int(image.bytes[i]), Int(image.bytes[i + 1]), Int(image.bytes[i + 2]))
        }

        static func near(_ a: (Int, Int, Int), _ b: (Int, Int, Int), _ tolerance: Int = 8) -> Bool {
            abs(a.0 - b.0) <= tolerance && abs(a.1 - b.1) <= tolerance && abs(a.2 - b.2) <= tolerance
        }

        struct ColourCase: Sendable, CustomTestStringConvertible {
            let name: String
            let spec: ClipSpec
            let rgb: (Int, Int, Int)
            var testDescription: String { name }
        }

        static let colourCases: [ColourCase] = [
            ColourCase(name: "BT.601 limited 8-bit (SD)", spec: solid((200, 60, 40), width: 320, height: 240), rgb: (200, 60, 40)),
            ColourCase(name: "BT.709 limited 8-bit (HD)", spec: solid((40, 170, 210), width: 1280, height: 720, matrix: "bt709"), rgb: (40, 170, 210)),
            ColourCase(name: "BT.601 limited 10-bit", spec: solid((90, 200, 70), width: 320, height: 240, pixelFormat: "yuv420p10le"), rgb: (90, 200, 70)),
            ColourCase(name: "BT.601 full range (yuvj420p)", spec: solid((230, 210, 30), width: 320, height: 240, pixelFormat: "yuvj420p", range: "pc"), rgb: (230, 210, 30)),
            ColourCase(name: "BT.601 limited 4:4:4", spec: solid((120, 40, 190), width: 320, height: 240, pixelFormat: "yuv444p"), rgb: (120, 40, 190)),
        ]

        @Test(arguments: colourCases, RendererKind.allCases)
        func knownColoursComeOutOfBothRenderers(_ colour: ColourCase, renderer: RendererKind) async throws {
            try await WindowThread.run {
                let window = try Self.open(colour.spec, renderer: renderer)
                #expect(window.rendererName == renderer.rawValue)
                let image = window.snapshot()
                let video = window.model.layout.video
                // Inside the picture, away from the centred play icon and the bottom controls.
                let sample = Self.pixel(image, Int(video.x + video.width * 0.2), Int(video.y + video.height * 0.3))
                #expect(Self.near(sample, colour.rgb), "\(renderer) drew \(sample) for \(colour.rgb)")
                // The letterbox is the blurred, darkened picture: same hue, darker.
                let band = Self.pixel(image, Int(video.x + video.width * 0.2), Int(video.y / 2))
                #expect(band.0 < colour.rgb.0 && band.0 > colour.rgb.0 / 4, "backdrop \(band) for \(colour.rgb)")
            }
        }

        @Test(arguments: RendererKind.allCases)
        func rotationMetadataTurnsThePicture(renderer: RendererKind) async throws {
            try await WindowThread.run {
                // Left half red, right half blue, rotated 90° clockwise: red on top, blue below.
                let spec = ClipSpec(width: 160, height: 120, frameRate: 10, duration: 0.4, keyframeInterval: 5, bFrames: 0, audioCodec: nil,
                                    rotation: 90,
                                    videoSource: "color=c=red:size=80x120:rate=10[a];color=c=blue:size=80x120:rate=10[b];[a][b]hstack")
                let window = try Self.open(spec, renderer: renderer)
                #expect(window.frames.current.frame?.rotation == 90)
                let image = window.snapshot()
                let video = window.model.layout.video
                #expect(video.height > video.width)
                let top = Self.pixel(image, Int(video.x + video.width * 0.2), Int(video.y + video.height * 0.2))
                let bottom = Self.pixel(image, Int(video.x + video.width * 0.2), Int(video.y + video.height * 0.7))
                #expect(top.0 > 180 && top.2 < 70, "top \(top)")
                #expect(bottom.2 > 180 && bottom.0 < 70, "bottom \(bottom)")
            }
        }

        @Test func theWindowBelongsToItsThreadAndStopsFromAnyOther() async throws {
            try await WindowThread.run {
                let window = try Self.open(Self.solid((30, 30, 30), width: 320, height: 240), renderer: .software)
                #expect(window.isOnOwnerThread)
                #expect(!WindowThread.onAnotherThread { window.isOnOwnerThread })
                #expect(window.isRunning)
                // stop() is the one call for any thread: it wakes the loop, which ends.
                WindowThread.onAnotherThread { window.stop() }
                window.run()
                #expect(!window.isRunning)
            }
        }

        @Test func holdingTheVideoPlaysAt2xWithABadge() throws {
            let clock = ManualClock(now: MediaTime(value: 1000, timescale: 1))
            let window = try Self.open(Self.solid((30, 30, 30), width: 320, height: 240, duration: 3), renderer: .gl, clock: clock)
            window.player.play()
            let badge = window.model.layout.badge
            let before = window.snapshot()
            SDLEventInjector.mouseDown(x: 135, y: 200)
            window.pump()
            #expect(window.player.rate == 1)
            clock.advance(by: MediaTime(value: 400, timescale: 1000))
            window.pump()
            #expect(window.player.rate == 2)
            #expect(window.model.badge == "2x")
            let held = window.snapshot()
            // The badge's white text appears where nothing white was.
            func whitePixels(_ image: RGBImage) -> Int {
                var count = 0
                for y in Int(badge.y)..<Int(badge.maxY) {
                    for x in Int(badge.x)..<Int(badge.maxX) where Self.pixel(image, x, y).0 > 200 && Self.pixel(image, x, y).1 > 200 { count += 1 }
                }
                return count
            }
            #expect(whitePixels(before) == 0)
            #expect(whitePixels(held) > 20)
            SDLEventInjector.mouseUp(x: 135, y: 200)
            window.pump()
            #expect(window.player.rate == 1)
            #expect(window.model.badge == nil)
            #expect(whitePixels(window.snapshot()) == 0)
        }

        @Test(arguments: RendererKind.allCases)
        func draggingTheBarScrubsAndSeeksExactlyOnRelease(renderer: RendererKind) async throws {
            try await WindowThread.run {
                let window = try Self.open(Self.solid((30, 30, 30), width: 320, height: 240, duration: 4), renderer: renderer)
                // The model learns the duration when it draws, after the player knows it.
                try Self.waitUntil(window) { window.model.timeText.hasSuffix(" / 0:04") }
                let bar = window.model.layout.bar
                let y = Int(bar.midY)
                SDLEventInjector.mouseDown(x: Int(bar.x + bar.width * 0.8), y: y)
                window.pump()
                #expect(window.model.isScrubbing)
                #expect(window.model.timeText == "0:03 / 0:04")
                SDLEventInjector.mouseMove(x: Int(bar.x + bar.width * 0.5), y: y)
                window.pump()
                #expect(window.model.timeText == "0:02 / 0:04")
                // The knob follows the pointer: white at the thumb, dim track further right.
                let image = window.snapshot()
                let knob = Self.pixel(image, Int(bar.x + bar.width * 0.5), y)
                let track = Self.pixel(image, Int(bar.x + bar.width * 0.9), y)
                #expect(knob.0 > 230 && knob.1 > 230, "knob \(knob)")
                #expect(track.0 < 160, "track \(track)")
                SDLEventInjector.mouseUp(x: Int(bar.x + bar.width * 0.5), y: y)
                window.pump()
                #expect(!window.model.isScrubbing)
                try Self.waitUntil(window) { abs(window.player.currentTime.seconds - 2) < 0.15 }
                try Self.waitUntil(window) { window.frames.current.frame.map { abs($0.pts.seconds - 2) < 0.15 } ?? false }
            }
        }

        @Test func fullscreenTogglesWithFAndTheLayoutFollows() throws {
            let window = try Self.open(Self.solid((30, 30, 30), width: 320, height: 240), renderer: .gl)
            #expect(window.drawableSize.width == 270)
            SDLEventInjector.keyDown(.f)
            SDLEventInjector.keyUp(.f)
            try Self.waitUntil(window) { window.drawableSize.width == 1280 }
            #expect(window.isFullscreen)
            #expect(window.model.isFullscreen)
            window.pump()
            #expect(window.model.layout.bounds.width == 1280)
            let image = window.snapshot()
            #expect(image.width == 1280 && image.height == 1024)
            SDLEventInjector.keyDown(.escape)
            try Self.waitUntil(window) { window.drawableSize.width == 270 }
            #expect(!window.isFullscreen)
            #expect(window.isRunning)
        }

        @Test func mKeyMutesAndShowsIt() throws {
            let window = try Self.open(Self.solid((30, 30, 30), width: 320, height: 240), renderer: .software)
            SDLEventInjector.keyDown(.m)
            window.pump()
            #expect(window.player.isMuted)
            #expect(window.model.isMuted)
        }

        @Test func chineseTitleIsDrawnWithTheCJKFont() throws {
            let window = try Self.open(Self.solid((30, 30, 30), width: 320, height: 240), renderer: .gl, title: "短视频标题")
            let image = window.snapshot()
            let point = window.model.layout.titlePoint
            var white = 0
            for y in Int(point.y - 30)..<Int(point.y) {
                for x in Int(point.x)..<Int(point.x + 100) where Self.pixel(image, x, y).0 > 200 { white += 1 }
            }
            #expect(white > 40)
            #expect(TextRasterizer.locateFont() != nil)
        }
    }
}
