import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// A private tmux server with one pane of a fixed size: `reel` runs in it as a user would
/// run it, keys go in with send-keys, the screen comes out with capture-pane.
final class TmuxPane: Sendable {
    let socket = "reel-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    private static let tmux = URL(fileURLWithPath: "/usr/bin/tmux")
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: tmux.path) }

    func start(columns: Int, rows: Int, command: String) async throws {
        // The server this starts keeps whatever it inherits open, and Foundation's Process
        // waits for that: start it through system(3), bounded by timeout(1).
        let arguments = ["-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "\(columns)", "-y", "\(rows)",
                         "-e", "TERM=xterm-256color", "-e", "COLORTERM=truecolor", command]
        let line = "timeout 120 \(Self.tmux.path) " + arguments.map(Self.quoted).joined(separator: " ") + " </dev/null >/dev/null 2>&1"
        // On a thread of its own: on one core the concurrency pool's only thread would wait.
        let status = await offThePool { system(line) }
        #expect(status == 0, "tmux new-session failed (\(status))")
        // The pane keeps its size whatever clients come and go.
        _ = try await tmux(["set-option", "-g", "window-size", "manual"])
    }

    @discardableResult
    func tmux(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await run(Self.tmux, ["-L", socket, "-f", "/dev/null"] + arguments)
    }

    func send(_ keys: String...) async throws { try await tmux(["send-keys"] + keys) }

    /// The screen's text, or with `escapes` its colours and attributes too.
    func capture(escapes: Bool = false) async throws -> String {
        try await tmux(["capture-pane", "-p"] + (escapes ? ["-e"] : [])).output
    }

    /// Captures until `predicate` holds, for at most `timeout`; the last capture.
    func waitFor(timeout: Double = 30, escapes: Bool = false, _ predicate: (String) -> Bool) async throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var screen = try await capture(escapes: escapes)
        while !predicate(screen) && Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
            screen = try await capture(escapes: escapes)
        }
        return screen
    }

    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// Stops the server and removes its socket file (tmux leaves it behind).
    func kill() async {
        _ = try? await tmux(["kill-server"])
        let directory = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        try? FileManager.default.removeItem(atPath: "\(directory)/tmux-\(getuid())/\(socket)")
    }
}

/// `reel play --terminal` in a real terminal (tmux): colours, chrome, keys, resize, restore.
@Suite("reel play --terminal", .enabled(if: TmuxPane.isAvailable), .serialized)
struct TerminalPlaybackTests {
    /// Solid 0x3060C0 (48, 96, 192) with a tone, 4 s.
    static let clip = ClipSpec(width: 160, height: 120, frameRate: 30, duration: 4,
                               videoSource: "color=c=0x3060C0:size=160x120:rate=30")

    /// The truecolor backgrounds on a captured screen.
    static func backgrounds(_ screen: String) -> [(Int, Int, Int)] {
        let regex = try! NSRegularExpression(pattern: #"48;2;(\d+);(\d+);(\d+)"#)
        let range = NSRange(screen.startIndex..., in: screen)
        return regex.matches(in: screen, range: range).map { match in
            let value = { (i: Int) in Int(screen[Range(match.range(at: i), in: screen)!])! }
            return (value(1), value(2), value(3))
        }
    }

    @Test func playsPausesResizesAndRestoresTheTerminal() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(Self.clip)
        let scratch = try Scratch("reel-term")
        defer { scratch.remove() }
        let pane = TmuxPane()
        let sttyFile = scratch.file("stty.txt")
        let statsFile = scratch.file("stats.json")
        let soundFile = scratch.file("sound.raw")
        // SDL's disk driver writes what reaches the audio device to a file.
        let command = "SDL_AUDIODRIVER=disk SDL_DISKAUDIOFILE='\(soundFile)' '\(reel.path)' play '\(file.path)' --terminal --hud --loop "
            + "--stats-out '\(statsFile)'; s=$?; stty -a > '\(sttyFile)'; echo REEL-EXIT=$s; sleep 60"
        try await pane.start(columns: 80, rows: 24, command: command)
        do {
            // Playing: the picture in the clip's colour, the chrome around it.
            let playing = try await pane.waitFor(escapes: true) { screen in
                screen.contains("Now playing") && screen.contains("0:04") && screen.contains("fps")
                    && Self.backgrounds(screen).contains { abs($0.0 - 48) <= 8 && abs($0.1 - 96) <= 8 && abs($0.2 - 192) <= 8 }
            }
            #expect(Self.backgrounds(playing).contains { abs($0.0 - 48) <= 8 && abs($0.1 - 96) <= 8 && abs($0.2 - 192) <= 8 },
                    "no picture in the clip's colour:\n\(playing.prefix(2000))")
            // The HUD follows the picture on its next redraw.
            let text = try await pane.waitFor { $0.contains("53×20 cells") }
            #expect(text.contains(file.lastPathComponent))
            #expect(text.contains("► 0:0"))
            // 160×120 (4:3) in 80×20 cells of 1:2 → 53×20.
            #expect(text.contains("53×20 cells"), "\(text)")
            #expect(text.contains("audio disk"), "\(text)")

            // Space pauses.
            try await pane.send("space")
            let paused = try await pane.waitFor { $0.contains("❚❚") }
            #expect(paused.contains("❚❚ 0:0"), "\(paused)")

            // A resize redraws at the new size: 100×26 cells for the picture → 69×26.
            try await pane.tmux(["resize-window", "-x", "100", "-y", "30"])
            let resized = try await pane.waitFor { $0.contains("69×26 cells") }
            #expect(resized.contains("69×26 cells"), "\(resized)")
            let resizedColours = try await pane.capture(escapes: true)
            #expect(Self.backgrounds(resizedColours).contains { abs($0.0 - 48) <= 8 && abs($0.2 - 192) <= 8 })

            // q quits and gives the terminal back: the shell's screen, cooked mode, echo.
            try await pane.send("q")
            let after = try await pane.waitFor { $0.contains("REEL-EXIT=") }
            #expect(after.contains("REEL-EXIT=0"), "\(after)")
            #expect(!after.contains("Now playing"))
            let stty = (try? String(contentsOfFile: sttyFile, encoding: .utf8)) ?? ""
            #expect(stty.contains(" icanon") && !stty.contains("-icanon"), "\(stty)")
            #expect(stty.contains(" echo ") && !stty.contains("-echo "), "\(stty)")
            let stats = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statsFile))) as? [String: Any]
            #expect((stats?["rendered"] as? Int ?? 0) > 0)
            #expect((stats?["fullRedrawBytes"] as? Int ?? 0) > (stats?["videoBytes"] as? Int ?? 0))
            // The clip's tone went through SDL's audio device (float32 stereo).
            let sound = (try? Data(contentsOf: URL(fileURLWithPath: soundFile))) ?? Data()
            let peak = sound.withUnsafeBytes { raw in raw.bindMemory(to: Float.self).reduce(Float(0)) { max($0, abs($1)) } }
            #expect(sound.count > 48_000 && peak > 0.05, "\(sound.count) bytes, peak \(peak)")
        } catch {
            await pane.kill()
            throw error
        }
        await pane.kill()
    }

    @Test func sigtermRestoresTheTerminal() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(Self.clip)
        let scratch = try Scratch("reel-term-term")
        defer { scratch.remove() }
        let pane = TmuxPane()
        let sttyFile = scratch.file("stty.txt")
        let pidFile = scratch.file("pid")
        let trace = scratch.file("trace.jsonl")
        let command = "SDL_AUDIODRIVER=dummy sh -c 'echo $$ > \(pidFile); exec \(reel.path) play \(file.path) --terminal --loop --trace \(trace)'; "
            + "s=$?; stty -a > '\(sttyFile)'; echo REEL-EXIT=$s; sleep 60"
        try await pane.start(columns: 60, rows: 20, command: command)
        // Playing: the chrome, and the picture (so the first frame was presented).
        let playing = try await pane.waitFor(escapes: true) { screen in
            screen.contains("Now playing") && Self.backgrounds(screen).contains { abs($0.0 - 48) <= 8 && abs($0.2 - 192) <= 8 }
        }
        #expect(playing.contains("Now playing"))
        // SIGTERM (as from kill or a session manager) restores the screen and the tty modes.
        let pid = Int32((try? String(contentsOfFile: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        #expect(pid > 0)
        if pid > 0 { kill(pid, SIGTERM) }
        let after = try await pane.waitFor { $0.contains("REEL-EXIT=") }
        #expect(after.contains("REEL-EXIT="), "\(after)")
        #expect(!after.contains("Now playing"))
        let stty = (try? String(contentsOfFile: sttyFile, encoding: .utf8)) ?? ""
        #expect(stty.contains(" icanon") && !stty.contains("-icanon"), "\(stty)")
        // The trace was closed on the way out: whole lines, the first frame, the frames shown.
        let text = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
        #expect(text.hasSuffix("\n"))
        let objects = (try? traceObjects(trace)) ?? []
        #expect(objects.contains { $0["type"] as? String == "firstFrame" }, "\(text.prefix(500))")
        #expect(frames(objects).count >= 1)
        // Inside tmux: cells, and the trace says why.
        let graphics = objects.first { $0["type"] as? String == "graphics" }
        #expect(graphics?["output"] as? String == "cells", "\(String(describing: graphics))")
        #expect((graphics?["why"] as? String)?.contains("inside tmux") == true, "\(String(describing: graphics))")
        await pane.kill()
    }

    static func hasColour(_ screen: String, _ r: Int, _ g: Int, _ b: Int) -> Bool {
        backgrounds(screen).contains { abs($0.0 - r) <= 10 && abs($0.1 - g) <= 10 && abs($0.2 - b) <= 10 }
    }

    @Test func aFeedSwipesWithKeysAndMouseAndChangesCategory() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-term-feed")
        defer { scratch.remove() }
        // Two categories: "warm" holds red then green, "cool" holds blue.
        for (folder, name, colour) in [("warm", "1 red clip", "0xC02020"), ("warm", "2 green clip", "0x20C020"), ("cool", "blue clip", "0x2020C0")] {
            let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 3,
                                                  videoSource: "color=c=\(colour):size=160x120:rate=30"))
            try FileManager.default.createDirectory(atPath: scratch.file(folder), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: clip.path, toPath: scratch.file("\(folder)/\(name).mp4"))
        }
        let pane = TmuxPane()
        let command = "SDL_AUDIODRIVER=dummy '\(reel.path)' feed '\(scratch.path)' --terminal --cache-dir '\(scratch.file("cache"))'; "
            + "echo REEL-EXIT=$?; sleep 60"
        try await pane.start(columns: 80, rows: 24, command: command)
        do {
            let categories = try await pane.waitFor { $0.contains("cool") && $0.contains("warm") }
            #expect(categories.contains("cool") && categories.contains("warm"), "\(categories)")
            // Whichever category the directory lists first, get to "warm".
            let first = try await pane.waitFor(escapes: true) { Self.hasColour($0, 0x20, 0x20, 0xC0) || Self.hasColour($0, 0xC0, 0x20, 0x20) }
            let startsCool = Self.hasColour(first, 0x20, 0x20, 0xC0)
            if startsCool {
                try await pane.send("Tab")
            }
            let red = try await pane.waitFor(escapes: true) { Self.hasColour($0, 0xC0, 0x20, 0x20) && $0.contains("red clip") }
            #expect(Self.hasColour(red, 0xC0, 0x20, 0x20), "\(red.prefix(1500))")

            // j swipes to the next video: green.
            try await pane.send("j")
            let green = try await pane.waitFor(escapes: true) { Self.hasColour($0, 0x20, 0xC0, 0x20) && $0.contains("green clip") }
            #expect(Self.hasColour(green, 0x20, 0xC0, 0x20) && green.contains("2/2"), "\(green.prefix(1500))")

            // A mouse drag downwards swipes back to the previous one (SGR 1006 reports).
            try await pane.send("-l", "\u{1B}[<0;40;6M")
            try await pane.send("-l", "\u{1B}[<32;40;10M")
            try await pane.send("-l", "\u{1B}[<32;40;14M")
            try await pane.send("-l", "\u{1B}[<0;40;14m")
            let back = try await pane.waitFor(escapes: true) { Self.hasColour($0, 0xC0, 0x20, 0x20) && $0.contains("red clip") }
            #expect(Self.hasColour(back, 0xC0, 0x20, 0x20) && back.contains("1/2"), "\(back.prefix(1500))")

            // Tab changes category: the blue clip of the other one.
            try await pane.send("Tab")
            let blue = try await pane.waitFor(escapes: true) { Self.hasColour($0, 0x20, 0x20, 0xC0) && $0.contains("blue clip") }
            #expect(Self.hasColour(blue, 0x20, 0x20, 0xC0), "\(blue.prefix(1500))")

            try await pane.send("q")
            let after = try await pane.waitFor { $0.contains("REEL-EXIT=") }
            #expect(after.contains("REEL-EXIT=0"), "\(after)")
        } catch {
            await pane.kill()
            throw error
        }
        await pane.kill()
    }

    /// `reel feed --trace` in the terminal writes the output chosen and why, as `reel play` does.
    @Test func aFeedsTraceSaysWhichOutputTheTerminalGot() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-term-feed-trace")
        defer { scratch.remove() }
        let clip = try Fixtures.clip(Self.clip)
        try FileManager.default.copyItem(atPath: clip.path, toPath: scratch.file("blue clip.mp4"))
        let trace = scratch.file("trace.jsonl")
        let pane = TmuxPane()
        let command = "SDL_AUDIODRIVER=dummy '\(reel.path)' feed '\(scratch.path)' --terminal --cache-dir '\(scratch.file("cache"))' "
            + "--trace '\(trace)'; echo REEL-EXIT=$?; sleep 60"
        try await pane.start(columns: 80, rows: 24, command: command)
        let playing = try await pane.waitFor(escapes: true) { Self.hasColour($0, 48, 96, 192) && $0.contains("blue clip") }
        #expect(Self.hasColour(playing, 48, 96, 192), "\(playing.prefix(1500))")
        try await pane.send("q")
        let after = try await pane.waitFor { $0.contains("REEL-EXIT=") }
        await pane.kill()
        #expect(after.contains("REEL-EXIT=0"), "\(after)")
        let objects = try traceObjects(trace)
        let graphics = try #require(objects.first { $0["type"] as? String == "graphics" }, "no graphics event in \(objects)")
        #expect(graphics["output"] as? String == "cells", "\(graphics)")
        #expect(graphics["why"] as? String == "inside tmux, which does not pass graphics through", "\(graphics)")
    }

    @Test func terminalWithoutATerminalIsAUsageError() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(Self.clip)
        let result = try await runSeparately(reel, ["play", file.path, "--terminal"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("terminal"), "\(result.stderr)")
    }
}
