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
    static let tools = ["/usr/bin/xterm", "/usr/bin/xvfb-run", "/usr/bin/timeout"]
    static var isAvailable: Bool { tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } }
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
        // xterm answers at once on a quiet machine; on one core beside the whole suite its
        // answer once took longer than the default half second (reel chose cells), so the
        // test gives it a minute: what is tested is the choice from the answers.
        let inner = "SDL_AUDIODRIVER=dummy \(Self.quoted(reel.path)) play --terminal "
            + "--graphics-timeout 60 --frames 8 --trace \(Self.quoted(trace)) "
            + Self.quoted(clip.path)
        // xvfb-run's server keeps what it inherits open (Foundation's Process would wait for
        // it): system(3), bounded by timeout(1).
        let line = "timeout 300 xvfb-run -a -s '-screen 0 1024x768x24' xterm -ti vt340 -xrm 'XTerm*numColorRegisters: 256' "
            + "-geometry 80x30 -l -lf \(Self.quoted(log)) -e sh -c \(Self.quoted(inner)) </dev/null >/dev/null 2>&1"
        let status = await Task.detached { system(line) }.value
        #expect(status == 0, "xvfb-run xterm failed (\(status))")

        let events = (try? String(contentsOfFile: trace, encoding: .utf8))?.split(separator: "\n") ?? []
        let graphics = events.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }.first { $0["type"] as? String == "graphics" }
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
        let inner = "SDL_AUDIODRIVER=dummy \(Self.quoted(reel.path)) play --terminal --verbose --frames 12 "
            + Self.quoted(clip.path) + "; sleep 1"
        let line = "timeout 300 xvfb-run -a -s '-screen 0 1280x1024x24' xterm -ti vt340 -geometry 120x45 "
            + "-l -lf \(Self.quoted(log)) -e sh -c \(Self.quoted(inner)) </dev/null >/dev/null 2>&1"
        let status = await Task.detached { system(line) }.value
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

    fileprivate static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}

/// Reel's sixel read by another implementation: libsixel's `sixel2png`, its PNG read back
/// with the ffmpeg command.
@Suite("sixel read by libsixel", .enabled(if: ["/usr/bin/sixel2png", "/usr/bin/ffmpeg"].allSatisfy {
    FileManager.default.isExecutableFile(atPath: $0)
}))
struct LibsixelReadsReelsSixel {
    private func run(_ tool: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(tool) failed")
        return data
    }

    @Test func libsixelSeesThePictureReelsReaderSees() throws {
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
        _ = try run("/usr/bin/sixel2png", ["-i", six.path, "-o", png.path])
        let raw = try run("/usr/bin/ffmpeg", ["-v", "error", "-i", png.path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
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
