import Foundation
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `reel play --terminal` on a pseudo-terminal whose other side reads everything and answers
/// nothing (no DA1, no kitty reply, no XTSMGRAPHICS): graphics detection gives up at its
/// deadline, the clip plays in character cells, and reel ends by itself. The only wall-clock
/// bound is the watchdog that reports a hang.
@Suite("reel in a terminal that answers nothing", .serialized)
struct SilentTerminalTests {
    @Test func getsCellsAtTheDetectionDeadlineAndPlays() async throws {
        let reel = try await ReelBinary.locate()
        let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 2, audioCodec: nil,
                                              videoSource: "color=c=0x3060C0:size=160x120:rate=30"))
        let scratch = try Scratch("reel-silent")
        defer { scratch.remove() }
        let trace = scratch.file("trace.jsonl")
        var master: Int32 = -1, slave: Int32 = -1
        // The window's pixels are known: with an answer, sixel or kitty could have been chosen.
        var size = winsize(ws_row: 24, ws_col: 80, ws_xpixel: 800, ws_ypixel: 480)
        try #require(openpty(&master, &slave, nil, nil, &size) == 0)
        // Neither side leaks into other tests' children (the child gets the slave by dup2).
        _ = fcntl(master, F_SETFD, FD_CLOEXEC)
        _ = fcntl(slave, F_SETFD, FD_CLOEXEC)
        defer { close(master) }
        let process = Process()
        process.executableURL = reel
        process.arguments = ["play", clip.path, "--terminal", "--frames", "15", "--trace", trace]
        var environment = ProcessInfo.processInfo.environment
        for name in ["TMUX", "STY", "DISPLAY", "WAYLAND_DISPLAY"] { environment[name] = nil }
        environment["TERM"] = "xterm-256color"
        environment["COLORTERM"] = "truecolor"
        environment["SDL_AUDIODRIVER"] = "dummy"
        process.environment = environment
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardInput = terminal
        process.standardOutput = terminal
        process.standardError = terminal
        try process.run()
        close(slave)
        // Read the screen until reel has gone (the slave's last holder closed: EIO), or the
        // watchdog: a minute is a hang, not a slow machine.
        let screenSide = master
        let (screen, ended) = await offThePool { Self.readAll(screenSide, watchdog: 60) }
        let hung = !ended
        if hung { process.terminate() }
        await offThePool { process.waitUntilExit() }
        #expect(!hung, "reel still running after a minute on a terminal that answers nothing")
        #expect(process.terminationStatus == 0)

        let objects = try traceObjects(trace)
        let graphics = try #require(objects.first { $0["type"] as? String == "graphics" }, "no graphics event")
        #expect(graphics["output"] as? String == "cells", "\(graphics)")
        #expect(graphics["why"] as? String == "no answer to DA1 within the timeout", "\(graphics)")
        #expect(frames(objects).count >= 1)
        // The queries went out (DA1 last), and after them the picture in cells of the clip's colour.
        let text = String(decoding: screen, as: UTF8.self)
        let query = try #require(text.range(of: "\u{1B}_Gi=31,"), "no kitty query on the screen")
        let da1 = try #require(text.range(of: "\u{1B}[c", range: query.upperBound..<text.endIndex), "no DA1 after the kitty query")
        let picture = text[da1.upperBound...]
        #expect(TerminalPlaybackTests.hasColour(String(picture), 48, 96, 192), "no cells of the clip's colour after the queries")
        #expect(!picture.contains("\u{1B}P") && !picture.contains("\u{1B}_Ga="), "an image was drawn")
    }

    /// Everything readable from `descriptor` until end of input (EIO once no process holds
    /// the slave: `ended`), or `watchdog` seconds.
    private static func readAll(_ descriptor: Int32, watchdog: Double) -> (bytes: [UInt8], ended: Bool) {
        let deadline = Date().addingTimeInterval(watchdog)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) >= 0 else { break }
            guard entry.revents != 0 else { continue }
            let n = read(descriptor, &buffer, buffer.count)
            if n <= 0 { return (out, true) }
            out += buffer[0..<n]
        }
        return (out, false)
    }
}
