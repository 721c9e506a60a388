import Foundation
import ReelCore
import ReelOrigin
import ReelTestSupport
import Testing

/// `reel feed URL --terminal` and accounts: the chrome says who is signed in to the feed's
/// `reel serve`, and a feed API that answers 401 gets a notice saying how to sign in.
@Suite("reel feed --terminal and accounts", .enabled(if: TmuxPane.isAvailable), .serialized)
struct TerminalAccountTests {
    @Test func theChromeSaysWhoIsSignedIn() async throws {
        let served = try await AccountCommandTests.Served.start()
        let pane = TmuxPane()
        do {
            let url = served.url.absoluteString
            let register = try await served.reel(["register", url, "--name", "ada", "--email", "ada@example.org", "--password-stdin"],
                                                  input: "analytical engine\n")
            #expect(register.status == 0, "\(register)")
            let api = url.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + "/api/"
            let command = "XDG_CONFIG_HOME='\(served.config.path)' SDL_AUDIODRIVER=dummy '\(served.reel.path)' feed '\(api)' --terminal; "
                + "echo REEL-EXIT=$?; sleep 60"
            try await pane.start(columns: 100, rows: 30, command: command)
            let screen = try await pane.waitFor { $0.contains("@ada") }
            #expect(screen.contains("@ada"), "\(screen)")
            try await pane.send("q")
            let after = try await pane.waitFor { $0.contains("REEL-EXIT=") }
            #expect(after.contains("REEL-EXIT=0"), "\(after)")
        } catch {
            await pane.kill()
            _ = await served.stop()
            throw error
        }
        await pane.kill()
        _ = await served.stop()
    }

    @Test func aFeedThatAnswers401SaysHowToSignIn() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-term-401")
        defer { scratch.remove() }
        let refuse = OriginRoute(pathPrefix: "/api", methods: ["GET"]) { _ in
            OriginResponse(status: 401, headers: [("WWW-Authenticate", "Bearer")],
                           body: Data(#"{"error":"token_missing","message":"sign in first"}"#.utf8))
        }
        let server = OriginServer(configuration: .init(root: scratch.url, routes: [refuse]))
        let port = try await server.start()
        let pane = TmuxPane()
        do {
            let command = "XDG_CONFIG_HOME='\(scratch.path)' SDL_AUDIODRIVER=dummy '\(reel.path)' feed 'http://127.0.0.1:\(port)/api/' --terminal; "
                + "echo REEL-EXIT=$?; sleep 60"
            try await pane.start(columns: 120, rows: 30, command: command)
            let screen = try await pane.waitFor { $0.contains("REEL-EXIT=") }
            #expect(screen.contains("reel login http://127.0.0.1:\(port)"), "\(screen)")
            #expect(screen.contains("REEL-EXIT=3"), "\(screen)")
        } catch {
            await pane.kill()
            await server.stop()
            throw error
        }
        await pane.kill()
        await server.stop()
    }
}
