import ArgumentParser
import Foundation
import ReelAccountClient

// `reel register`, `reel login`, `reel logout`, `reel upload`, `reel me`: the accounts
// side of `reel serve`. Exit codes: 0 done, 2 usage (bad arguments, no terminal for the
// password, a missing file), 3 network (server unreachable, unexpected answer),
// 4 authentication (not signed in, wrong name or password, expired or revoked token),
// 5 refused by the server (bad field, taken name, too large, not playable, rate-limited).

/// Options every accounts command shares: where the token file is and which server.
struct AccountOptions: ParsableArguments {
    @Option(help: "The server (default: the one signed in to last).")
    var server: String?

    @Option(help: "A bearer token to use instead of the kept one.")
    var token: String?

    var store: TokenStore { TokenStore(directory: TokenStore.defaultDirectory()) }

    func serverURL() throws -> URL {
        if let server { return try parseServer(server) }
        guard let current = try keptStore({ try $0.currentServer() }) else {
            throw CommandFailure(message: "not signed in; run `reel login URL` first or pass --server", status: ExitStatus.authentication)
        }
        return current
    }

    /// The client for the chosen server, with `--token` or the kept token (when `needsToken`).
    func client(needsToken: Bool = true) throws -> (AccountClient, URL) {
        let server = try serverURL()
        if let token { return (AccountClient(server: server, token: token), server) }
        let entry = try keptStore { try $0.entry(for: server) }
        if needsToken, entry == nil {
            throw CommandFailure(message: "not signed in to \(TokenStore.key(for: server)) (or the token expired); run `reel login`",
                                 status: ExitStatus.authentication)
        }
        return (AccountClient(server: server, token: entry?.token), server)
    }

    func keptStore<T>(_ body: (TokenStore) throws -> T) throws -> T {
        do {
            return try body(store)
        } catch {
            throw CommandFailure.usage("\(error)")
        }
    }
}

func parseServer(_ text: String) throws -> URL {
    guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
        throw CommandFailure.usage("'\(text)' is not an http:// or https:// address")
    }
    return url
}

/// An accounts error as the command's one line and exit status.
func accountFailure(_ error: any Error) -> CommandFailure {
    switch error {
    case let failure as CommandFailure: return failure
    case AccountClientError.unauthorized(let reason, let message):
        let hint = reason.hasPrefix("token_") ? "; run `reel login`" : ""
        return CommandFailure(message: message + hint, status: ExitStatus.authentication)
    case AccountClientError.rejected(_, _, let message): return CommandFailure(message: message, status: ExitStatus.refused)
    case AccountClientError.file(let message): return CommandFailure.usage(message)
    default: return CommandFailure.media("\(error)")
    }
}

/// Reads a password: from a terminal without echo, or the first line of stdin with `--password-stdin`.
/// The read runs on its own thread so no concurrency thread waits for the user.
func readPassword(fromStandardInput: Bool, prompt: String) async throws -> String {
    let line: String? = await withCheckedContinuation { continuation in
        let thread = Thread {
            if fromStandardInput {
                continuation.resume(returning: readLine(strippingNewline: true))
                return
            }
            continuation.resume(returning: readWithoutEcho(prompt: prompt))
        }
        thread.name = "reel.password"
        thread.start()
    }
    guard let line else {
        throw CommandFailure.usage(fromStandardInput
            ? "no password on standard input"
            : "no terminal to read the password from; use --password-stdin")
    }
    guard !line.isEmpty else { throw CommandFailure.usage("the password is empty") }
    return line
}

/// Reads one line from the controlling terminal with echo off (restored after); `nil`
/// when there is no terminal.
private func readWithoutEcho(prompt: String) -> String? {
    let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var original = termios()
    guard tcgetattr(descriptor, &original) == 0 else { return nil }
    var silent = original
    silent.c_lflag &= ~tcflag_t(ECHO)
    silent.c_lflag |= tcflag_t(ECHONL)
    _ = prompt.withCString { write(descriptor, $0, strlen($0)) }
    tcsetattr(descriptor, TCSAFLUSH, &silent)
    defer { tcsetattr(descriptor, TCSAFLUSH, &original) }
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    while read(descriptor, &byte, 1) == 1, byte != 10 {
        if byte != 13 { bytes.append(byte) }
    }
    return String(decoding: bytes, as: UTF8.self)
}

struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Create an account on a `reel serve` server and sign in.",
        discussion: "Exit codes: 0 signed up, 2 usage, 3 network, 5 refused (bad e-mail, short password, taken name)."
    )

    @Argument(help: "The server, e.g. http://127.0.0.1:8080.")
    var url: String

    @Option(help: "The account name (3-32 letters, digits, '_', '.', '-').")
    var name: String

    @Option(help: "The e-mail address.")
    var email: String

    @Option(help: "The name shown on the profile (default: the account name).")
    var nickname: String?

    @Flag(name: .customLong("password-stdin"), help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    func run() async throws {
        let server = try parseServer(url)
        let password = try await readPassword(fromStandardInput: passwordStdin, prompt: "password for new account \(name): ")
        let client = AccountClient(server: server)
        do {
            _ = try await client.register(RegisterRequest(name: name, email: email, password: password, nickname: nickname))
            let session = try await client.login(name: name, password: password)
            try keep(session, server: server)
            print("registered and signed in as \(session.user.name) on \(TokenStore.key(for: server))")
        } catch {
            throw accountFailure(error)
        }
    }
}

func keep(_ session: LoginResponse, server: URL) throws {
    do {
        try TokenStore(directory: TokenStore.defaultDirectory())
            .store(.init(token: session.token, expiresAt: session.expiresAt, name: session.user.name), for: server)
    } catch {
        throw CommandFailure.usage("signed in, but the token could not be kept: \(error)")
    }
}

struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in to a `reel serve` server; the token is kept (mode 0600) in $XDG_CONFIG_HOME/reel/.",
        discussion: "Exit codes: 0 signed in, 2 usage (no terminal and no --password-stdin), 3 network, 4 wrong name or password, 5 too many attempts."
    )

    @Argument(help: "The server, e.g. http://127.0.0.1:8080.")
    var url: String

    @Option(help: "The account name or e-mail address (asked for on a terminal when left out).")
    var name: String?

    @Flag(name: .customLong("password-stdin"), help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    func run() async throws {
        let server = try parseServer(url)
        var login = name
        if login == nil {
            guard isatty(STDIN_FILENO) == 1, !passwordStdin else { throw CommandFailure.usage("--name is needed when not on a terminal") }
            FileHandle.standardOutput.write(Data("name: ".utf8))
            login = await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: readLine()) }.start()
            }
        }
        guard let login, !login.isEmpty else { throw CommandFailure.usage("no name given") }
        let password = try await readPassword(fromStandardInput: passwordStdin, prompt: "password for \(login): ")
        do {
            let session = try await AccountClient(server: server).login(name: login, password: password)
            try keep(session, server: server)
            let expiry = ISO8601DateFormatter().string(from: session.expiresAt)
            print("signed in as \(session.user.name) on \(TokenStore.key(for: server)) until \(expiry)")
        } catch {
            throw accountFailure(error)
        }
    }
}

struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Sign out: the server revokes the token and it is forgotten here.",
        discussion: "Exit codes: 0 signed out (also when the server had already dropped the token), 2 usage, 3 network, 4 not signed in."
    )

    @OptionGroup var account: AccountOptions

    func run() async throws {
        let (client, server) = try account.client()
        do {
            try await client.logout()
        } catch AccountClientError.unauthorized {
            // Expired or revoked already: forgetting it is all that is left to do.
        } catch {
            throw accountFailure(error)
        }
        if account.token == nil { _ = try account.keptStore { try $0.remove(for: server) } }
        print("signed out of \(TokenStore.key(for: server))")
    }
}

struct MeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "me",
        abstract: "Show who is signed in, with the profile the server keeps.",
        discussion: "Exit codes: 0, 2 usage, 3 network, 4 not signed in (or the token expired or was revoked: it is then forgotten)."
    )

    @OptionGroup var account: AccountOptions

    func run() async throws {
        let (client, server) = try account.client()
        do {
            let me = try await client.me()
            print("\(me.name) (\(me.nickname)) on \(TokenStore.key(for: server))")
            if let email = me.email { print("e-mail: \(email)") }
            if !me.bio.isEmpty { print("bio: \(me.bio)") }
            print("uploads: \(me.uploads)")
        } catch AccountClientError.unauthorized(let reason, let message) {
            if account.token == nil { _ = try? account.store.remove(for: server) }
            throw CommandFailure(message: "\(message) (\(reason)); run `reel login`", status: ExitStatus.authentication)
        } catch {
            throw accountFailure(error)
        }
    }
}

struct UploadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Upload a video to the signed-in account; it joins its category's feed.",
        discussion: "Exit codes: 0 uploaded, 2 usage (no such file), 3 network, 4 not signed in, 5 refused (too large, not playable, bad title or category)."
    )

    @Argument(help: "The video file.")
    var file: String

    @Option(help: "The title.")
    var title: String

    @Option(help: "The category (default: uploads).")
    var category: String?

    @OptionGroup var account: AccountOptions

    func run() async throws {
        let url = URL(fileURLWithPath: file)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw CommandFailure.usage("\(file): no such file")
        }
        let (client, server) = try account.client()
        let bar = ProgressBar(enabled: isatty(STDERR_FILENO) == 1)
        do {
            let name = url.lastPathComponent
            let item = try await client.upload(file: url, title: title, category: category) { sent, total in
                guard total > 0 else { return }
                bar.update(Double(sent) / Double(total), label: "uploading \(name) " + String(format: "%.1f/%.1f MB", Double(sent) / 1e6, Double(total) / 1e6))
            }
            bar.finish()
            var base = server.absoluteString
            if base.hasSuffix("/") { base.removeLast() }
            print("uploaded \"\(item.title)\" to \(item.category): \(base)\(item.videoURL)")
        } catch {
            bar.finish()
            throw accountFailure(error)
        }
    }
}
