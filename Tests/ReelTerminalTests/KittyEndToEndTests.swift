import Foundation
import ReelCore
import ReelTerminal
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `reel play` in a real kitty under a virtual X server: the choice from reel's trace, the
/// bytes from its statistics, the picture from a screenshot of the virtual screen taken while
/// it plays, and `/dev/shm` after it.
enum Kitty {
    static let tools = ["/usr/bin/kitty", "/usr/bin/xvfb-run", "/usr/bin/timeout", "/usr/bin/import", "/usr/bin/ffmpeg"]
    static var isAvailable: Bool { tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } }
}

@Suite("reel play in kitty", .enabled(if: Kitty.isAvailable), .serialized)
struct KittyEndToEndTests {
    private static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// The names in /dev/shm with reel's prefix whose maker is gone: what a process left
    /// behind. A running process's objects are its own business (another suite's reel in
    /// kitty, on the same machine, is one), and so are this process's.
    private static func reelObjects() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []
        return Set(names.filter { name in
            guard name.hasPrefix("reel-kitty-"), let pid = Int32(name.dropFirst("reel-kitty-".count).prefix { $0 != "-" }) else {
                return false
            }
            return pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
        })
    }

    @Test func autoChoosesKittyThroughSharedMemoryDrawsThePictureAndLeavesNoObject() async throws {
        let reel = try await ReelBinary.locate()
        // Noise on a flat colour: every frame changes everywhere and compresses badly, so
        // what the frames would cost down the terminal shows; its mean is still the colour.
        let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 6, audioCodec: nil,
                                              videoSource: "color=c=0x3060C0:size=160x120:rate=30,noise=alls=24:allf=t"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-kitty-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let trace = directory.appendingPathComponent("trace.jsonl").path
        let stats = directory.appendingPathComponent("stats.json").path
        let before = Self.reelObjects()
        // reel plays in kitty as a user would start it, while the screen is taken every
        // half second from outside (a small window: kitty draws with software GL, and on one
        // core beside busy loops every shot costs): kitty may take seconds to draw
        // its first frame, and the last shots come after the picture is deleted.
        // A minute for kitty's answers (the default half second is for a quiet machine).
        let inner = "SDL_AUDIODRIVER=dummy \(Self.quoted(reel.path)) play --terminal "
            + "--graphics-timeout 60 --frames 90 --trace \(Self.quoted(trace)) "
            + "--stats-out \(Self.quoted(stats)) \(Self.quoted(clip.path))"
        let outer = "kitty --config NONE -o initial_window_width=400 -o initial_window_height=300 -o remember_window_size=no "
            + "sh -c \(Self.quoted(inner)) & pid=$!; k=0; while kill -0 $pid 2>/dev/null && [ $k -lt 30 ]; do sleep 0.5; "
            + "import -window root \(Self.quoted(directory.path))/shot-$k.png; k=$((k+1)); done; wait $pid"
        let line = "timeout 600 xvfb-run -a -s '-screen 0 800x600x24' sh -c \(Self.quoted(outer)) </dev/null >/dev/null 2>&1"
        let status = await Task.detached { system(line) }.value
        #expect(status == 0, "xvfb-run kitty failed (\(status))")

        let events = ((try? String(contentsOfFile: trace, encoding: .utf8))?.split(separator: "\n") ?? []).compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        let graphics = try #require(events.first { $0["type"] as? String == "graphics" }, "no graphics event in the trace")
        #expect(graphics["output"] as? String == "kitty", "\(graphics)")
        #expect(graphics["transfer"] as? String == "shm", "\(graphics)")
        #expect((graphics["why"] as? String)?.contains("read a shared-memory object") == true)

        // Bytes down the terminal: the commands only, against whole compressed frames.
        let data = try #require(FileManager.default.contents(atPath: stats), "no statistics")
        let figures = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let perFrame = try #require(figures["bytesPerFrame"] as? Double)
        let whole = try #require(figures["fullRedrawBytesPerFrame"] as? Double)
        #expect((figures["rendered"] as? Int ?? 0) >= 5)
        #expect(perFrame > 0 && perFrame < 300 && whole > 50 * perFrame, "\(figures)")

        // The picture on kitty's screen while it played: its middle is the clip's colour.
        let shots = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("shot-") }
        let middles = try shots.map { name -> (r: Int, g: Int, b: Int) in
            let raw = try Self.run("/usr/bin/ffmpeg", ["-v", "error", "-i", directory.appendingPathComponent(name).path,
                                                       "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            guard raw.count == 800 * 600 * 3 else { return (0, 0, 0) }
            return Self.mean(RGBImage(width: 800, height: 600, bytes: [UInt8](raw)), x: 170, y: 110, width: 60, height: 60)
        }
        let showing = middles.filter { abs($0.r - 0x30) <= 12 && abs($0.g - 0x60) <= 12 && abs($0.b - 0xC0) <= 12 }
        #expect(!showing.isEmpty, "\(middles)")

        // Every object reel made was read and unlinked by kitty, or unlinked by reel.
        #expect(Self.reelObjects().subtracting(before).isEmpty)
    }

    private static func mean(_ image: RGBImage, x: Int, y: Int, width: Int, height: Int) -> (r: Int, g: Int, b: Int) {
        var sum = (0, 0, 0)
        for row in y..<(y + height) {
            for column in x..<(x + width) {
                let p = image[column, row]
                sum = (sum.0 + Int(p.r), sum.1 + Int(p.g), sum.2 + Int(p.b))
            }
        }
        let n = width * height
        return (sum.0 / n, sum.1 / n, sum.2 / n)
    }

    private static func run(_ tool: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }
}
