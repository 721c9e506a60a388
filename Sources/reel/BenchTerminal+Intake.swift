import Foundation
import ReelCore
import ReelTerminal

extension TerminalBench {
    /// Whether the process has a terminal to write frames to.
    static var hasControllingTerminal: Bool {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        defer { if tty >= 0 { close(tty) } }
        return tty >= 0
    }

    /// `--through-terminal`: every output's frames, then mpv's, written to the controlling
    /// terminal (`/dev/tty`: standard output may be a file for the table) as fast as it takes
    /// them, each timed to the terminal's answer to DA1 after its last frame
    /// (``TerminalIntake``). On a thread of its own: it waits for the answers.
    static func throughTerminal(_ rows: [TerminalBenchRow], sent: [[[UInt8]]], mpv: String, url: URL,
                                grid: TerminalBenchGrid, frames: Int) throws -> [TerminalBenchRow] {
        var rows = rows
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { throw TerminalSessionError.notATerminal }
        defer { close(tty) }
        let session = TerminalSession(input: tty, output: tty)
        let intake = TerminalIntake(session: session)
        try session.enter()
        defer { session.restore() }
        let timeout = 120.0
        for (index, frames) in sent.enumerated() where index < rows.count && !frames.isEmpty {
            // Each output from a clear screen; kitty's image goes after its run.
            session.write(TerminalControl.resetAttributes + TerminalControl.clearScreen)
            rows[index].terminalSeconds = intake.time(frames, timeout: timeout)
            if rows[index].name.hasPrefix("kitty") { session.write(KittyEncoder().delete) }
        }
        // The shared-memory row's objects a terminal did not read (xterm reads none).
        KittySharedMemory.removeLeftovers()
        guard mpv != "none", let executable = MPVTerminalBench.find(mpv) else { return rows }
        for (output, prefix) in [(TerminalGraphics.Output.sixel, "mpv --vo=sixel"), (.cells, "mpv --vo=tct")] {
            guard let index = rows.firstIndex(where: { $0.name.hasPrefix(prefix) }), rows[index].frames > 0 else { continue }
            session.write(TerminalControl.resetAttributes + TerminalControl.clearScreen)
            let arguments = MPVTerminalBench.arguments(output, url: url, grid: grid, frames: frames)
            rows[index].terminalSeconds = intake.time(running: { runOnTerminal(executable, arguments, tty: tty) }, timeout: timeout)
        }
        return rows
    }

    /// Runs `executable` with standard output the terminal `tty`, to its end.
    private static func runOnTerminal(_ executable: String, _ arguments: [String], tty: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(fileDescriptor: tty, closeOnDealloc: false)
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return }
        process.waitUntilExit()
    }
}
