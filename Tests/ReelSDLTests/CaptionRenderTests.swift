import Foundation
import Testing
import ReelCaptions
import ReelCore
import ReelMedia
import ReelLoading
import ReelTestSupport
@testable import ReelSDL

extension XvfbWindowSuites {
    /// Captions through the whole window path (overlay → libass → draw list → renderer),
    /// checked on read-back pixels, with both renderers.
    @Suite struct CaptionWindowTests {
        struct Case: Sendable, CustomTestStringConvertible {
            let name: String
            let text: String
            let rgb: (Int, Int, Int)
            var testDescription: String { name }
            var isBright: Bool { rgb.0 > 128 }
        }

        static let cases: [Case] = [
            Case(name: "Latin on bright", text: "Hello, captions", rgb: (235, 235, 235)),
            Case(name: "Latin on dark", text: "Hello, captions", rgb: (20, 20, 20)),
            Case(name: "CJK on bright", text: "你好，字幕", rgb: (235, 235, 235)),
            Case(name: "CJK on dark", text: "你好，字幕", rgb: (20, 20, 20)),
        ]

        struct Shot {
            var without: RGBImage
            var with: RGBImage
            var area: UIRect
            var video: UIRect
        }

        /// The window with and without the cue over a solid clip the size of the window.
        static func shot(_ c: Case, renderer: RendererKind) throws -> Shot {
            let window = try WindowTests.open(WindowTests.solid(c.rgb, width: 270, height: 480), renderer: renderer, size: (270, 480))
            let without = window.snapshot()
            window.captions.show(CaptionFrame(time: .zero, events: [captionCue(c.text, from: 0, to: 60)]))
            window.pump()
            let with = window.snapshot()
            writeShot(with, named: "captions-\(c.name.replacingOccurrences(of: " ", with: "-"))-\(renderer.rawValue)")
            return Shot(without: without, with: with, area: window.model.layout.captionArea, video: window.model.layout.video)
        }

        /// With REEL_SHOTS=DIR, writes `image` to DIR/NAME.ppm (to look at it).
        static func writeShot(_ image: RGBImage, named name: String) {
            guard let directory = ProcessInfo.processInfo.environment["REEL_SHOTS"] else { return }
            var data = Data("P6\n\(image.width) \(image.height)\n255\n".utf8)
            data.append(contentsOf: image.bytes)
            try? data.write(to: URL(fileURLWithPath: directory).appendingPathComponent(name + ".ppm"))
        }

        /// Pixels the captions changed: (x, y, rgb after).
        static func changed(_ shot: Shot) -> [(x: Int, y: Int, rgb: (Int, Int, Int))] { differences(shot.without, shot.with) }

        static func differences(_ before: RGBImage, _ after: RGBImage) -> [(x: Int, y: Int, rgb: (Int, Int, Int))] {
            var out: [(x: Int, y: Int, rgb: (Int, Int, Int))] = []
            for y in 0..<after.height {
                for x in 0..<after.width {
                    let a = WindowTests.pixel(before, x, y), b = WindowTests.pixel(after, x, y)
                    if !WindowTests.near(a, b, 24) { out.append((x, y, b)) }
                }
            }
            return out
        }

        @Test(arguments: cases)
        func captionsAreLegibleInTheirAreaAndBothRenderersAgree(_ c: Case) async throws {
            try await WindowThread.run {
                var shots: [RendererKind: Shot] = [:]
                for renderer in RendererKind.allCases {
                    let shot = try Self.shot(c, renderer: renderer)
                    shots[renderer] = shot
                    let changes = Self.changed(shot)
                    #expect(changes.count > 100, "\(renderer): \(changes.count) pixels changed")
                    // Inside the caption area (so above the bar and the controls), in the video's columns.
                    let outside = changes.filter {
                        Double($0.y) < shot.area.y - 1 || Double($0.y) > shot.area.maxY + 1
                            || Double($0.x) < shot.video.x - 1 || Double($0.x) > shot.video.maxX + 1
                    }
                    #expect(outside.isEmpty, "\(renderer): \(outside.count) changed pixels outside \(shot.area)")
                    // Legible: dark outline pixels on a bright picture, bright text pixels on a dark one.
                    let dark = changes.filter { max($0.rgb.0, $0.rgb.1, $0.rgb.2) < 80 }.count
                    let bright = changes.filter { min($0.rgb.0, $0.rgb.1, $0.rgb.2) > 200 }.count
                    if c.isBright {
                        #expect(dark > 50, "\(renderer): \(dark) dark outline pixels")
                    } else {
                        #expect(bright > 50, "\(renderer): \(bright) bright text pixels")
                    }
                }
                // The GL pass and the CPU blend draw the same layer: compare them where either changed anything.
                let gl = try #require(shots[.gl]), software = try #require(shots[.software])
                var region = Set<Int>()
                for shot in [gl, software] { for p in Self.changed(shot) { region.insert(p.y * shot.with.width + p.x) } }
                var total = 0, far = 0
                for index in region {
                    let x = index % gl.with.width, y = index / gl.with.width
                    let a = WindowTests.pixel(gl.with, x, y), b = WindowTests.pixel(software.with, x, y)
                    let d = max(abs(a.0 - b.0), abs(a.1 - b.1), abs(a.2 - b.2))
                    total += d
                    if d > 64 { far += 1 }
                }
                let mean = Double(total) / Double(max(1, region.count))
                #expect(mean < 8, "GL vs software: mean difference \(mean) over \(region.count) pixels")
                #expect(Double(far) < Double(region.count) * 0.02, "GL vs software: \(far) of \(region.count) pixels far apart")
            }
        }

        @Test func theGLAtlasIsUploadedOnlyWhenTheCaptionsChange() async throws {
            try await WindowThread.run {
                let c = Self.cases[1]
                let window = try WindowTests.open(WindowTests.solid(c.rgb, width: 270, height: 480), renderer: .gl, size: (270, 480))
                #expect(window.captionAtlasUploads == 0)
                window.captions.show(CaptionFrame(time: captionSeconds(1), events: [captionCue("First line", from: 0, to: 10)]))
                for _ in 0..<3 { _ = window.snapshot() }
                #expect(window.captionAtlasUploads == 1)
                // The same cue a moment later (the next frame): libass reports no change.
                window.captions.show(CaptionFrame(time: captionSeconds(1.04), events: [captionCue("First line", from: 0, to: 10)]))
                _ = window.snapshot()
                #expect(window.captionAtlasUploads == 1)
                window.captions.show(CaptionFrame(time: captionSeconds(11), events: [captionCue("Second line", from: 10.5, to: 12)]))
                _ = window.snapshot()
                #expect(window.captionAtlasUploads == 2)
            }
        }

        /// The whole chain: a sideloaded SRT read and decoded by the player, looked up at each
        /// presented frame, handed to the player's CaptionOverlay, drawn by the window.
        @Test func aSideloadedSRTShowsInTheWindowThroughThePlayer() async throws {
            try await WindowThread.run {
                let url = try Fixtures.clip(WindowTests.solid((20, 20, 20), width: 270, height: 480, duration: 3))
                let srt = FileManager.default.temporaryDirectory.appendingPathComponent("reel-caption-\(UUID().uuidString).srt")
                try "1\n00:00:00,000 --> 00:00:30,000\nHello from SRT 字幕\n\n".write(to: srt, atomically: true, encoding: .utf8)
                defer { try? FileManager.default.removeItem(at: srt) }
                let frames = FrameStore()
                let player = Player(clock: HostClock.shared, videoSink: frames, audioSink: nil, captionSink: CaptionOverlay())
                let window = try PlaybackWindow(player: player, frames: frames,
                                                options: .init(renderer: .software, allowFallback: false, width: 270, height: 480))
                #expect(window.captions === player.captionSink)
                SDLEventInjector.parkPointer()
                player.replaceCurrentItem(with: PlayerItem(url: url, loader: FileLoader(), captions: [CaptionSource(url: srt)]))
                player.play()
                try WindowTests.waitUntil(window) { window.captions.current.frame?.events.isEmpty == false }
                #expect(window.captions.current.frame?.plainText == "Hello from SRT 字幕")
                let image = window.snapshot()
                Self.writeShot(image, named: "captions-sideloaded-srt")
                player.pause()
                let area = window.model.layout.captionArea
                var bright = 0
                for y in Int(area.y)..<Int(area.maxY) {
                    for x in Int(area.x)..<Int(area.maxX) {
                        let p = WindowTests.pixel(image, x, y)
                        if min(p.0, p.1, p.2) > 200 { bright += 1 }
                    }
                }
                #expect(bright > 50, "\(bright) bright caption pixels in \(area)")
            }
        }

        @Test func theCKeyHidesTheCaptionsInTheWindow() async throws {
            try await WindowThread.run {
                let c = Self.cases[1]
                let window = try WindowTests.open(WindowTests.solid(c.rgb, width: 270, height: 480), renderer: .software, size: (270, 480))
                let plain = window.snapshot()
                window.captions.show(CaptionFrame(time: .zero, events: [captionCue(c.text, from: 0, to: 60)]))
                window.pump()
                #expect(!Self.differences(plain, window.snapshot()).isEmpty)
                SDLEventInjector.keyDown(.c)
                SDLEventInjector.keyUp(.c)
                try WindowTests.waitUntil(window) { !window.model.showsCaptions }
                #expect(Self.differences(plain, window.snapshot()).isEmpty)
            }
        }
    }
}
