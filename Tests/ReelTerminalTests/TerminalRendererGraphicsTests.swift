import Foundation
import Testing
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
import ReelThreads
import Synchronization
@testable import ReelTerminal

/// The renderer in the sixel and kitty outputs, and the detection driver.
@Suite struct TerminalRendererGraphicsTests {
    private func blueFrame() async throws -> VideoFrame {
        let url = try Fixtures.clip(ClipSpec(width: 64, height: 48, duration: 0.5, audioCodec: nil,
                                             videoSource: "color=c=0x0000FF:size=64x48:rate=30"))
        return try await onOwnThread {
            Result {
                var first: VideoFrame?
                try SequentialDecoder.decodeVideo(url, loader: FileLoader(), threads: 1) { frame in
                    first = frame
                    return false
                }
                return try #require(first)
            }
        }.get()
    }

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
    private let presentation = Presentation(presentedAt: .zero, droppedFrames: 0, isFirstFrameOfSequence: false)

    @Test func sixelDrawsThePictureAtTheCellsPixelsUnwrappedWithItsChrome() async throws {
        let frame = try await blueFrame()
        let output = FakeTerminalOutput()
        let renderer = TerminalRenderer { output.write($0) }
        renderer.graphics = TerminalGraphics(output: .sixel, cellWidth: 8, cellHeight: 16, reason: "test")
        renderer.overlay = { full in full ? Array("CHROME".utf8) : [] }
        renderer.layout(screenColumns: 20, screenRows: 10, area: (0, 1, 20, 6))
        renderer.present(frame, presentation: presentation)
        renderer.start()
        let writes = try #require(await output.writes.wait { !$0.isEmpty })
        let bytes = writes[0]
        let text = Self.text(bytes)
        // No synchronized update around an image; the chrome follows the picture.
        #expect(!text.contains("\u{1B}[?2026h") && text.hasSuffix("CHROME"))
        // 64×48 into 160×96 px: 128×96, centred in whole cells (16 of 20 columns → column 2).
        #expect(text.contains("\u{1B}[2;3H\u{1B}P0;1;0q\"1;1;128;96"))
        var screen = SixelScreen(columns: 20, rows: 10, cellWidth: 8, cellHeight: 16)
        screen.feed(bytes)
        let picture = screen.crop(column: 2, row: 1, width: 128, height: 96)
        #expect(psnr(picture, RGBImage(width: 128, height: 96, fill: picture[64, 48])) > 40)
        #expect(picture[64, 48].b > 200 && picture[64, 48].r < 40)
        let stats = renderer.statistics
        #expect(stats.columns == 16 && stats.rows == 6)
        renderer.stop()
        await renderer.finished()
    }

    @Test func kittyPlacesOneImageAndDeletesItWhenTheRendererStops() async throws {
        let frame = try await blueFrame()
        let output = FakeTerminalOutput()
        let renderer = TerminalRenderer { output.write($0) }
        renderer.graphics = TerminalGraphics(output: .kitty, cellWidth: 10, cellHeight: 20, reason: "test")
        renderer.layout(screenColumns: 40, screenRows: 12, area: (0, 0, 40, 12))
        renderer.present(frame, presentation: presentation)
        renderer.start()
        let writes = try #require(await output.writes.wait { !$0.isEmpty })
        #expect(Self.text(writes[0]).contains("\u{1B}_Ga=T,i=\(KittyEncoder.Configuration().imageID),f=24,s=320,v=240,o=z,q=2,C=1"))
        renderer.stop()
        await renderer.finished()
        #expect(output.all.last == KittyEncoder().delete)
    }

    @Test func aTerminalThatAnswersNothingGetsCellsAtTheDeadline() async {
        let detection = GraphicsDetection(TerminalGraphicsDetector(
            request: .auto, environment: [:], window: .init(columns: 80, rows: 24, pixelWidth: 800, pixelHeight: 480)))
        let written = Mutex<[UInt8]>([])
        let choice = await detection.run(write: { bytes in written.withLock { $0 += bytes } }, timeout: 0.05,
                                         queue: DispatchQueue(label: "test.deadline"))
        #expect(choice.output == .cells && choice.reason.contains("timeout"))
        #expect(written.withLock { $0 }.suffix(3) == TerminalGraphicsQueries.primaryDeviceAttributes)
    }

    @Test func repliesFromTheInputThreadDecideBeforeTheDeadline() async {
        let detection = GraphicsDetection(TerminalGraphicsDetector(
            request: .auto, environment: [:], window: .init(columns: 80, rows: 24, pixelWidth: 800, pixelHeight: 480)))
        // The terminal answers as soon as the queries are written (on another thread, as the
        // session's input thread would); a deadline of a minute is only a watchdog.
        let choice = await detection.run(write: { _ in
            Thread {
                var parser = TerminalInputParser()
                for event in parser.feed(Array("\u{1B}_Gi=31;OK\u{1B}\\\u{1B}[?62;22c".utf8)) { detection.receive(event) }
            }.start()
        }, timeout: 60, queue: DispatchQueue(label: "test.deadline"))
        #expect(choice.output == .kitty && choice.cellWidth == 10 && choice.cellHeight == 20)
    }
}
