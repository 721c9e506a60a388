import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOPosix
import ReelAccountClient
import ReelAccounts
import ReelCore
import ReelFeed
import ReelLoading
import ReelMedia
import ReelOrigin
import ReelTestSupport
import Synchronization

/// A clock the test moves by hand (token expiry, the login throttle).
final class TestClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.withTrackedLock { $0 } }
    func advance(seconds: TimeInterval) { current.withTrackedLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// A real origin server on a real port with the accounts routes and a real SQLite file
/// in a temporary directory (removed by ``stop()``).
struct AccountsTestServer {
    let temporary: URL
    let served: URL
    let data: URL
    let clock: TestClock
    let service: AccountsService
    let server: OriginServer
    let url: URL

    static func start(
        uploadLimit: Int64 = 64 << 20, tokenLifetime: Duration = .seconds(3600), maximumFailedLogins: Int = 5
    ) async throws -> AccountsTestServer {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("reel-accounts-\(UUID().uuidString)")
        let served = temporary.appendingPathComponent("served", isDirectory: true)
        let travel = served.appendingPathComponent("travel", isDirectory: true)
        try FileManager.default.createDirectory(at: travel, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: try Fixtures.clip(ClipSpec(duration: 1)), to: travel.appendingPathComponent("harbour.mp4"))
        let data = temporary.appendingPathComponent("data", isDirectory: true)
        let clock = TestClock()
        let service = try await AccountsService.open(configuration: .init(
            dataDirectory: data,
            playabilityProblem: { await MediaProbe.playabilityProblem(of: $0, size: $1, loader: FileLoader()) },
            tokenLifetime: tokenLifetime, uploadLimit: uploadLimit, avatarLimit: 256 * 1024,
            maximumFailedLogins: maximumFailedLogins, failedLoginWindow: .seconds(60),
            passwordParameters: .light, now: { clock.now }
        ))
        var configuration = OriginServer.Configuration(root: served, routes: service.routes())
        configuration.mounts[AccountsService.mediaPathPrefix] = service.mediaDirectory
        let server = OriginServer(configuration: configuration)
        let port = try await server.start()
        return AccountsTestServer(temporary: temporary, served: served, data: data, clock: clock, service: service,
                                  server: server, url: URL(string: "http://127.0.0.1:\(port)")!)
    }

    func stop() async {
        await server.stop()
        try? FileManager.default.removeItem(at: temporary)
    }

    /// Requests get a watchdog, not the product's 15 s: on one loaded core an Argon2 hash, an
    /// upload's probe or a file write can queue behind the suite's stress tests for a minute.
    static let watchdog: Duration = .seconds(180)

    var client: AccountClient { AccountClient(server: url, timeout: Self.watchdog) }

    struct Answer {
        var status: Int
        var body: Data
        var headers: [(String, String)]
        var error: APIErrorBody? { try? AccountsAPIFormat.decoder.decode(APIErrorBody.self, from: body) }
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try AccountsAPIFormat.decoder.decode(T.self, from: body) }
    }

    /// A plain HTTP request, for answers the client type would turn into errors.
    func request(_ method: String, _ path: String, body: Data = Data(), token: String? = nil,
                 headers: [(String, String)] = []) async throws -> Answer {
        var request = HTTPClientRequest(url: url.absoluteString + path)
        request.method = .init(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if !body.isEmpty || method == "POST" || method == "PUT" || method == "PATCH" { request.body = .bytes(ByteBuffer(data: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .init(Self.watchdog))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return Answer(status: Int(response.status.code), body: Data(buffer: bytes),
                      headers: response.headers.map { ($0.name, $0.value) })
    }

    func json<T: Encodable>(_ value: T) throws -> Data { try AccountsAPIFormat.encoder.encode(value) }

    /// Registers `name` and signs in; returns the token and the profile.
    func signUp(_ name: String, password: String = "correct horse") async throws -> (token: String, user: AccountProfile) {
        _ = try await client.register(RegisterRequest(name: name, email: "\(name)@example.org", password: password))
        let session = try await client.login(name: name, password: password)
        return (session.token, session.user)
    }

    /// Every regular file under the data directory's media and incoming folders.
    func storedFiles() -> [String] {
        var found: [String] = []
        for folder in ["media", "incoming"] {
            let root = data.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(atPath: root.path) else { continue }
            while let relative = walker.nextObject() as? String {
                var isDirectory: ObjCBool = false
                FileManager.default.fileExists(atPath: root.appendingPathComponent(relative).path, isDirectory: &isDirectory)
                if !isDirectory.boolValue { found.append(folder + "/" + relative) }
            }
        }
        return found.sorted()
    }

    static func clipData() throws -> Data { try Data(contentsOf: Fixtures.clip(ClipSpec(duration: 1))) }
}

/// Sends raw bytes on a new connection and closes it (a client that goes away mid-request).
func sendAndHangUp(port: Int, _ bytes: Data) async throws {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
    try await channel.writeAndFlush(ByteBuffer(data: bytes)).get()
    try await channel.close()
}

extension AccountsTestServer {
    /// Runs `body` against a new server and stops it (removing its files) however `body` ends.
    static func with(
        uploadLimit: Int64 = 64 << 20, tokenLifetime: Duration = .seconds(3600), maximumFailedLogins: Int = 5,
        _ body: (AccountsTestServer) async throws -> Void
    ) async throws {
        let server = try await start(uploadLimit: uploadLimit, tokenLifetime: tokenLifetime, maximumFailedLogins: maximumFailedLogins)
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
