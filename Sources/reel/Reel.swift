import ArgumentParser
import Foundation
import ReelTerminal
import ReelCore
import ReelMedia

/// `reel`: play, probe, benchmark and serve short-video feeds.
@main
struct Reel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reel",
        abstract: "A video playback engine for short-video feeds.",
        discussion: """
            Exit codes: 0 success, 2 usage error, 3 media or network error.
            """,
        version: versionText,
        subcommands: [PlayCommand.self, FeedCommand.self, ProbeCommand.self, ServeCommand.self, CacheCommand.self, BenchCommand.self, DemoCommand.self, VersionCommand.self,
                      RegisterCommand.self, LoginCommand.self, LogoutCommand.self, UploadCommand.self, MeCommand.self]
    )

    static var versionText: String {
        "reel \(ReelCore.version) (FFmpeg \(MediaLibraries.ffmpegVersion))"
    }

    /// Parses, runs, and maps every failure to Reel's exit codes with a one-line message.
    static func main() async {
        MediaResources.limitAllocatorArenas()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            reelExit(with: error)
        }
    }
}

/// Exit codes documented in `reel --help` and the README.
enum ExitStatus {
    static let success: Int32 = 0
    static let usage: Int32 = 2
    static let mediaOrNetwork: Int32 = 3
    /// Accounts: not signed in, a wrong name or password, an expired or revoked token.
    static let authentication: Int32 = 4
    /// Accounts: the server refused the request (bad field, taken name, too large, not playable, rate-limited).
    static let refused: Int32 = 5
}

/// An error the CLI reports in one line with its exit status.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    var status: Int32
    var description: String { message }

    static func usage(_ message: String) -> CommandFailure { CommandFailure(message: message, status: ExitStatus.usage) }
    static func media(_ message: String) -> CommandFailure { CommandFailure(message: message, status: ExitStatus.mediaOrNetwork) }
}

/// How a playback session (headless, window, terminal, feed) ended: ReelTerminal's
/// `SessionOutcome`, which the window sessions share.
extension SessionOutcome {
    /// A failure as the command's one-line media error (exit 3).
    func throwIfFailed() throws {
        if case .failed(let message) = self { throw CommandFailure.media(message) }
    }
}

func reelExit(with error: Error) -> Never {
    if let failure = error as? CommandFailure {
        printError("reel: \(failure.message)")
        exit(failure.status)
    }
    if let loaderError = error as? ResourceLoaderError {
        printError("reel: \(loaderError)")
        exit(ExitStatus.mediaOrNetwork)
    }
    if let terminal = error as? TerminalAppError {
        // Only `notATerminal` leaves the app as an error (the rest end its run as failures).
        printError("reel: \(terminal)")
        exit(terminal == .notATerminal ? ExitStatus.usage : ExitStatus.mediaOrNetwork)
    }
    let code = Reel.exitCode(for: error)
    if code == .success {
        // --help and --version: ArgumentParser prints them.
        Reel.exit(withError: error)
    }
    if code == .validationFailure {
        let message = Reel.message(for: error)
        printError("reel: \(message.split(separator: "\n").first.map(String.init) ?? message)")
        printError("See 'reel --help'.")
        exit(ExitStatus.usage)
    }
    if error is CancellationError { exit(130) }
    printError("reel: \(error)")
    exit(ExitStatus.mediaOrNetwork)
}

func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print the versions of Reel and the libraries it runs on."
    )

    func run() throws {
        print(Reel.versionText)
        for (name, version) in MediaLibraries.libraryVersions {
            print("  \(name) \(version)")
        }
    }
}

