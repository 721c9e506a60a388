import Foundation
import ReelCore
import ReelTerminal
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `reel play` in a real sixel terminal: xterm as a VT340 under a virtual X server, its
/// output logged by xterm itself (`-l -lf`), the choice read from reel's trace.
enum Xterm {
    static var isAvailable: Bool { VirtualScreen.isAvailable(with: ["/usr/bin/xterm"]) }
}

@Suite("reel play in xterm -ti vt340", .enabled(if: Xterm.isAvailable), .serialized)
struct XtermSixelTests {
    @Test func autoChoosesSixelFromTheAnswersAndDrawsThePicture() async throws {
        let reel = try await ReelBinary.locate()
        let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 1, audioCodec: nil,
                                              videoSource: "color=c=0x3060C0:size=160x120:rate=30"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-xterm-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("xterm.log").path
        let trace = directory.appendingPathComponent("trace.jsonl").path
        let inner = "SDL_AUDIODRIVER=dummy \(VirtualScreen.quoted(reel.path)) play --terminal --frames 8 --trace \(VirtualScreen.quoted(trace)) "
            + VirtualScreen.quoted(clip.path)
        let xterm = "xterm -ti vt340 -xrm 'XTerm*numColorRegisters: 256' -geometry 80x30 -l -lf \(VirtualScreen.quoted(log)) "
            + "-e sh -c \(VirtualScreen.quoted(inner))"
        let status = await VirtualScreen.run(xterm, width: 1024, height: 768, timeout: 300)
        #expect(status == 0, "xvfb-run xterm failed (\(status))")

        let graphics = VirtualScreen.jsonLines(trace).first { $0["type"] as? String == "graphics" }
        #expect(graphics?["output"] as? String == "sixel", "\(String(describing: graphics))")
        #expect((graphics?["why"] as? String)?.contains("lists sixel") == true)

        // What xterm received: sixel images, and they draw the clip's colour.
        let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: log))) ?? Data())
        let cell = graphics?["cell"] as? [Int] ?? [6, 13]
        var screen = SixelScreen(columns: 80, rows: 30, cellWidth: cell[0], cellHeight: cell[1])
        screen.feed(bytes)
        let image = try #require(screen.images.first, "no sixel image in xterm's log (\(bytes.count) bytes)")
        let middle = screen.canvas[image.column * cell[0] + image.width / 2, image.row * cell[1] + image.height / 2]
        #expect(abs(Int(middle.r) - 48) <= 10 && abs(Int(middle.g) - 96) <= 10 && abs(Int(middle.b) - 192) <= 10, "\(middle)")
    }
}

extension XtermSixelTests {
    /// `reel feed` chooses as `reel play` does, and says so in its trace (ended by SIGTERM
    /// after a few seconds: a feed plays until the user quits).
    @Test func aFeedChoosesSixelAndTracesWhy() async throws {
        let reel = try await ReelBinary.locate()
        let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 2, audioCodec: nil,
                                              videoSource: "color=c=0x3060C0:size=160x120:rate=30"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-xterm-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("feed"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: clip, to: directory.appendingPathComponent("feed/blue.mp4"))
        let log = directory.appendingPathComponent("xterm.log").path
        let trace = directory.appendingPathComponent("trace.jsonl").path
        // --foreground: reel stays in the terminal's foreground group, so it reads the answers.
        let inner = "SDL_AUDIODRIVER=dummy timeout --foreground -s TERM 4 \(VirtualScreen.quoted(reel.path)) feed "
            + "\(VirtualScreen.quoted(directory.appendingPathComponent("feed").path)) --terminal "
            + "--cache-dir \(VirtualScreen.quoted(directory.appendingPathComponent("cache").path)) --trace \(VirtualScreen.quoted(trace))"
        let xterm = "xterm -ti vt340 -geometry 80x30 -l -lf \(VirtualScreen.quoted(log)) -e sh -c \(VirtualScreen.quoted(inner))"
        let status = await VirtualScreen.run(xterm, width: 1024, height: 768, timeout: 300)
        #expect(status == 0, "xvfb-run xterm failed (\(status))")
        let graphics = VirtualScreen.jsonLines(trace).first { $0["type"] as? String == "graphics" }
        #expect(graphics?["output"] as? String == "sixel", "\(String(describing: graphics))")
        #expect((graphics?["why"] as? String)?.contains("lists sixel") == true)
        let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: log))) ?? Data())
        #expect(String(decoding: bytes, as: UTF8.self).contains("\u{1B}P"), "no sixel image in xterm's log (\(bytes.count) bytes)")
    }

    /// With `--verbose` the log (the output chosen, FFmpeg's own messages) would land on the
    /// screen mid-picture, and a line on the last row scroll it all up one row (the category
    /// row gone, the progress line twice, a stripe of the picture at the top): in xterm's own
    /// log, no line feed reaches the alternate screen, and the log comes after it.
    @Test func theLogWaitsUntilTheScreenIsTheUsersAgain() async throws {
        let reel = try await ReelBinary.locate()
        let clip = try Fixtures.clip(ClipSpec(width: 90, height: 160, frameRate: 30, duration: 1, audioCodec: nil,
                                              videoSource: "testsrc2=size=90x160:rate=30"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-xterm-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("xterm.log").path
        // The shell stays a second after reel: xterm logs what it read before its child ended.
        let inner = "SDL_AUDIODRIVER=dummy \(VirtualScreen.quoted(reel.path)) play --terminal --verbose --frames 12 "
            + VirtualScreen.quoted(clip.path) + "; sleep 1"
        let xterm = "xterm -ti vt340 -geometry 120x45 -l -lf \(VirtualScreen.quoted(log)) -e sh -c \(VirtualScreen.quoted(inner))"
        let status = await VirtualScreen.run(xterm, width: 1280, height: 1024, timeout: 300)
        #expect(status == 0, "xvfb-run xterm failed (\(status))")
        let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: log))) ?? Data())
        let text = String(decoding: bytes, as: UTF8.self)
        let enter = try #require(text.range(of: "\u{1B}[?1049h"), "no alternate screen in xterm's log (\(bytes.count) bytes)")
        let leave = try #require(text.range(of: "\u{1B}[?1049l", range: enter.upperBound..<text.endIndex))
        let onScreen = text[enter.upperBound..<leave.lowerBound]
        #expect(onScreen.contains("\u{1B}P"), "no sixel image")
        #expect(!onScreen.contains("\n") && !onScreen.contains("terminal output"),
                "\(onScreen.split(separator: "\n").dropFirst().first.map { String($0.prefix(200)) } ?? "")")
        #expect(text[leave.upperBound...].contains("terminal output: sixel"))
    }
}

/// Reel's sixel read by another implementation: libsixel's `sixel2png`, its PNG read back
/// with the ffmpeg command.
@Suite("sixel read by libsixel", .enabled(if: ["/usr/bin/sixel2png", "/usr/bin/ffmpeg"].allSatisfy {
    FileManager.default.isExecutableFile(atPath: $0)
}))
struct LibsixelReadsReelsSixel {
    private func run(_ tool: String, _ arguments: [String]) async throws -> Data {
        let (data, status) = try await VirtualScreen.output(tool, arguments)
        #expect(status == 0, "\(tool) failed")
        return data
    }

    @Test func libsixelSeesThePictureReelsReaderSees() async throws {
        let image = testPicture(width: 96, height: 60)
        var encoder = SixelEncoder(cellHeight: 12)
        // The image alone, without the cursor move (`ESC[1;1H`) in front of it.
        let all = encoder.encode(image)
        let start = try #require(all.firstIndex(of: UInt8(ascii: "P")))
        let sixel = Array(all[(start - 1)...])
        #expect(sixel.starts(with: [0x1B, UInt8(ascii: "P")]))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-sixel-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let six = directory.appendingPathComponent("frame.six"), png = directory.appendingPathComponent("frame.png")
        try Data(sixel).write(to: six)
        _ = try await run("/usr/bin/sixel2png", ["-i", six.path, "-o", png.path])
        let raw = try await run("/usr/bin/ffmpeg", ["-v", "error", "-i", png.path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        try #require(raw.count == 96 * 60 * 3, "libsixel's picture is \(raw.count) bytes")
        let theirs = RGBImage(width: 96, height: 60, bytes: [UInt8](raw))
        var screen = SixelScreen(columns: 16, rows: 5, cellWidth: 6, cellHeight: 12)
        screen.feed(sixel)
        let ours = screen.crop(column: 0, row: 0, width: 96, height: 60)
        // The same picture (percent levels may round apart by one), and close to the original.
        #expect(psnr(theirs, ours) > 45)
        #expect(psnr(theirs, image) > 24)  // 64 entries for a noisy gradient
    }
}
