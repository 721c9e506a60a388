import Foundation
import ReelAccountClient
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `reel register/login/logout/upload/me` against a real `reel serve` with its SQLite
/// file, as a user meets them. Exit codes: 0, 2 usage, 3 network, 4 authentication, 5 refused.
@Suite("reel login, logout, upload, me against reel serve")
struct AccountCommandTests {
    /// A `reel serve` over a directory with one category, its data directory and a config home.
    struct Served {
        let reel: URL
        let root: Scratch
        let server: Child
        let url: URL
        var served: URL { root.url.appendingPathComponent("served") }
        var data: URL { root.url.appendingPathComponent("data") }
        var config: URL { root.url.appendingPathComponent("config") }
        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_CONFIG_HOME"] = config.path
            return environment
        }

        static func start() async throws -> Served {
            let reel = try await ReelBinary.locate()
            let root = try Scratch("reel-accounts-cli")
            let travel = root.url.appendingPathComponent("served/travel")
            try FileManager.default.createDirectory(at: travel, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: try Fixtures.clip(ClipSpec(duration: 1)), to: travel.appendingPathComponent("harbour.mp4"))
            let server = try Child(reel, ["serve", root.url.appendingPathComponent("served").path,
                                          "--data", root.url.appendingPathComponent("data").path, "--port", "0"])
            let base = try await servedURL(server, attempts: 1000)
            guard let base else {
                server.kill(SIGKILL)
                root.remove()
                throw CLIError(message: "reel serve printed no URL: \(server.output)")
            }
            return Served(reel: reel, root: root, server: server, url: base)
        }

        func reel(_ arguments: [String], input: String? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
            try await runSeparately(reel, arguments, environment: environment, input: input.map { Data($0.utf8) })
        }

        func get(_ path: String) async throws -> String {
            let http = HTTPLoader()
            defer { Task { await http.shutdown() } }
            return String(decoding: try await http.data(URL(string: url.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + path)!), as: UTF8.self)
        }

        func stop() async -> Int32? {
            server.kill(SIGTERM)
            let status = await server.exitStatus()
            root.remove()
            return status
        }
    }

    struct CLIError: Error, CustomStringConvertible { var message: String; var description: String { message } }

    @Test("sign up, sign in, upload, find it in the feed, search and profile, sign out, be asked to sign in")
    func endToEnd() async throws {
        let served = try await Served.start()
        do {
            let url = served.url.absoluteString
            let register = try await served.reel(["register", url, "--name", "ada", "--email", "ada@example.org", "--password-stdin"],
                                                 input: "analytical engine\n")
            #expect(register.status == 0, "\(register.stderr)")
            let store = TokenStore(directory: served.config.appendingPathComponent("reel"))
            let mode = try FileManager.default.attributesOfItem(atPath: store.file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(!(try String(contentsOf: store.file, encoding: .utf8).contains("analytical")))

            let me = try await served.reel(["me"])
            #expect(me.status == 0 && me.stdout.contains("ada") && me.stdout.contains("uploads: 0"), "\(me)")

            let clip = try Fixtures.clip(ClipSpec(duration: 1))
            let upload = try await served.reel(["upload", clip.path, "--title", "Harbour at dawn", "--category", "travel"])
            #expect(upload.status == 0, "\(upload.stderr)")
            #expect(upload.stdout.contains("uploaded \"Harbour at dawn\" to travel"))
            let feed = try await served.get("/api/feed?category=travel&current=1&size=10")
            #expect(feed.contains("Harbour at dawn") && feed.contains("harbour"))
            #expect(try await served.get("/api/search?text=dawn&current=1&size=10").contains("Harbour at dawn"))
            #expect(try await served.get("/api/users/1/items?current=1&size=10").contains("Harbour at dawn"))
            let videoPath = try #require(upload.stdout.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })
            let http = HTTPLoader()
            let bytes = try await http.data(URL(string: videoPath)!)
            await http.shutdown()
            let original = try Data(contentsOf: clip)
            #expect(bytes == original)

            let logout = try await served.reel(["logout"])
            #expect(logout.status == 0, "\(logout.stderr)")
            let again = try await served.reel(["upload", clip.path, "--title", "Second", "--server", url])
            #expect(again.status == 4 && again.stderr.contains("not signed in"), "\(again)")
            let meAfter = try await served.reel(["me", "--server", url])
            #expect(meAfter.status == 4)

            let wrong = try await served.reel(["login", url, "--name", "ada", "--password-stdin"], input: "not the password\n")
            #expect(wrong.status == 4 && wrong.stderr.contains("wrong name or password"), "\(wrong)")
            let login = try await served.reel(["login", url, "--name", "ada", "--password-stdin"], input: "analytical engine\n")
            #expect(login.status == 0 && login.stdout.contains("signed in as ada"), "\(login)")
            #expect(try await served.reel(["me"]).stdout.contains("uploads: 1"))
        } catch {
            _ = await served.stop()
            throw error
        }
        #expect(await served.stop() == 0)
    }

    @Test("bad input: each answered in one line with its exit code, nothing uploaded")
    func badInput() async throws {
        let served = try await Served.start()
        do {
            let url = served.url.absoluteString
            let short = try await served.reel(["register", url, "--name", "ada", "--email", "ada@example.org", "--password-stdin"], input: "short\n")
            #expect(short.status == 5 && short.stderr.contains("at least 8 characters"), "\(short)")
            let email = try await served.reel(["register", url, "--name", "ada", "--email", "nope", "--password-stdin"], input: "long enough\n")
            #expect(email.status == 5 && email.stderr.contains("not an e-mail address"), "\(email)")
            let registered = try await served.reel(["register", url, "--name", "ada", "--email", "a@example.org", "--password-stdin"], input: "long enough\n")
            #expect(registered.status == 0, "\(registered)")
            let taken = try await served.reel(["register", url, "--name", "ADA", "--email", "b@example.org", "--password-stdin"], input: "long enough\n")
            #expect(taken.status == 5 && taken.stderr.contains("taken"), "\(taken)")
            let noPassword = try await served.reel(["login", url, "--name", "ada", "--password-stdin"])
            #expect(noPassword.status == 2, "\(noPassword)")
            let badURL = try await served.reel(["login", "ftp://x", "--name", "ada", "--password-stdin"], input: "x\n")
            #expect(badURL.status == 2)

            let garbage = served.root.url.appendingPathComponent("noise.mp4")
            try Fixtures.garbage(count: 100_000).write(to: garbage)
            let notPlayable = try await served.reel(["upload", garbage.path, "--title", "Noise"])
            #expect(notPlayable.status == 5 && notPlayable.stderr.contains("not a playable video"), "\(notPlayable)")
            let missing = try await served.reel(["upload", served.root.url.appendingPathComponent("missing.mp4").path, "--title", "x"])
            #expect(missing.status == 2)
            let clip = try Fixtures.clip(ClipSpec(duration: 1))
            let badCategory = try await served.reel(["upload", clip.path, "--title", "x", "--category", "../etc"])
            #expect(badCategory.status == 5 && badCategory.stderr.contains("category"), "\(badCategory)")
            let bogus = try await served.reel(["me", "--server", url, "--token", "bogus"])
            #expect(bogus.status == 4 && bogus.stderr.contains("token_invalid"), "\(bogus)")
            #expect(try await served.reel(["me"]).stdout.contains("uploads: 0"))
            let leftovers = (try? FileManager.default.subpathsOfDirectory(atPath: served.data.appendingPathComponent("media").path)) ?? []
            #expect(leftovers.filter { $0.hasSuffix(".mp4") }.isEmpty, "\(leftovers)")

            // An expired token kept here is dropped and the user is asked to sign in.
            let store = TokenStore(directory: served.config.appendingPathComponent("reel"))
            try store.store(.init(token: "stale", expiresAt: Date(timeIntervalSinceNow: -60), name: "ada"), for: served.url)
            let expired = try await served.reel(["me"])
            #expect(expired.status == 4 && expired.stderr.contains("run `reel login`"), "\(expired)")
            #expect(!(try String(contentsOf: store.file, encoding: .utf8).contains("stale")))
            let unreachable = try await served.reel(["me", "--server", "http://127.0.0.1:1", "--token", "x"])
            #expect(unreachable.status == 3, "\(unreachable)")
        } catch {
            _ = await served.stop()
            throw error
        }
        #expect(await served.stop() == 0)
    }
}
