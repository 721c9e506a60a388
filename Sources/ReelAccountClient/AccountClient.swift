import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOPosix

/// Why an accounts request failed.
public enum AccountClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 401: the token is missing, unknown, expired or revoked (`reason` is the server's
    /// code, e.g. `token_expired`), or the name and password do not match
    /// (`invalid_credentials`). The app should sign in (again).
    case unauthorized(reason: String, message: String)
    /// Any other error answer, with the server's code and message.
    case rejected(status: Int, code: String, message: String)
    /// The server could not be reached or the connection broke.
    case network(String)
    /// The answer was not what the API promises.
    case badResponse(String)
    /// A local file could not be read.
    case file(String)

    public var description: String {
        switch self {
        case .unauthorized(_, let message): message
        case .rejected(_, _, let message): message
        case .network(let reason): "network: \(reason)"
        case .badResponse(let reason): "unexpected answer: \(reason)"
        case .file(let reason): reason
        }
    }
}

/// A client of `reel serve`'s accounts API (see ReelAccounts' README), over
/// AsyncHTTPClient. Immutable and Sendable: make a new one with ``withToken(_:)`` after
/// signing in.
///
/// ```swift
/// let client = AccountClient(server: URL(string: "http://127.0.0.1:8080")!)
/// let session = try await client.login(name: "ada", password: "correct horse")
/// let me = try await client.withToken(session.token).me()
/// ```
public struct AccountClient: Sendable {
    public let server: URL
    public private(set) var token: String?
    private let http: HTTPClient
    private let timeout: TimeAmount

    private let uploadTimeout: TimeAmount

    /// `timeout` bounds each request's answer (a server that accepts and never answers fails
    /// after it; one that cannot be reached fails at the HTTP client's connect timeout, 10 s).
    /// It leaves room for the server's password hashing on a loaded machine (Argon2id is slow
    /// on purpose). An upload, which first checks the token with a short request, may take
    /// `uploadTimeout`.
    public init(server: URL, token: String? = nil, httpClient: HTTPClient = .shared,
                timeout: Duration = .seconds(60), uploadTimeout: Duration = .seconds(3600)) {
        self.server = server
        self.token = token
        self.http = httpClient
        self.timeout = Self.amount(timeout)
        self.uploadTimeout = Self.amount(uploadTimeout)
    }

    private static func amount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(Int64(duration.components.seconds) * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    public func withToken(_ token: String?) -> AccountClient {
        var copy = self
        copy.token = token
        return copy
    }

    public func register(_ request: RegisterRequest) async throws -> AccountProfile {
        try await send("POST", "/api/register", json: request)
    }

    public func login(name: String, password: String) async throws -> LoginResponse {
        try await send("POST", "/api/login", json: LoginRequest(name: name, password: password))
    }

    /// Revokes the token on the server.
    public func logout() async throws {
        _ = try await perform("POST", "/api/logout", body: nil, contentType: nil)
    }

    public func me() async throws -> AccountProfile { try await send("GET", "/api/me") }

    public func updateMe(_ update: ProfileUpdate) async throws -> AccountProfile {
        try await send("PATCH", "/api/me", json: update)
    }

    public func user(id: Int64) async throws -> AccountProfile { try await send("GET", "/api/users/\(id)") }

    /// Sets the avatar to the picture in `file` (PNG, JPEG or WebP; the server checks it and
    /// answers 422 `not_an_image` otherwise, 413 `too_large` past its limit), streamed from disk.
    public func setAvatar(file: URL) async throws -> AccountProfile {
        let (handle, size) = try Self.open(file)
        defer { try? handle.close() }
        let types = ["png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "webp": "image/webp"]
        return try await send("PUT", "/api/me/avatar", body: .stream(FileChunks(handle: handle, total: size, progress: { _, _ in }), length: .known(size)),
                              contentType: types[file.pathExtension.lowercased()] ?? "application/octet-stream")
    }

    /// A regular file opened for reading, and its size; a clear ``AccountClientError/file(_:)`` otherwise.
    private static func open(_ file: URL) throws -> (FileHandle, Int64) {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        } catch {
            throw AccountClientError.file("\(file.path): cannot read it")
        }
        guard (attributes[.type] as? FileAttributeType) == .typeRegular, let size = (attributes[.size] as? NSNumber)?.int64Value else {
            throw AccountClientError.file("\(file.path): not a regular file")
        }
        guard let handle = try? FileHandle(forReadingFrom: file) else { throw AccountClientError.file("\(file.path): cannot open it") }
        return (handle, size)
    }

    /// Uploads `file` (streamed from disk), calling `progress(sent, total)` as bytes leave.
    public func upload(
        file: URL, title: String, category: String? = nil,
        progress: @escaping @Sendable (_ sent: Int64, _ total: Int64) -> Void = { _, _ in }
    ) async throws -> UploadedItem {
        let (handle, size) = try Self.open(file)
        defer { try? handle.close() }
        // Fail fast (unreachable server, expired token) before streaming a large file.
        _ = try await me()
        var components = URLComponents()
        components.queryItems = [URLQueryItem(name: "title", value: title), URLQueryItem(name: "filename", value: file.lastPathComponent)]
            + (category.map { [URLQueryItem(name: "category", value: $0)] } ?? [])
        let query = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B") ?? ""
        let chunks = FileChunks(handle: handle, total: size, progress: progress)
        return try await send("POST", "/api/upload?" + query, body: .stream(chunks, length: .known(size)),
                              contentType: "application/octet-stream", timeout: uploadTimeout)
    }

    // MARK: - Transport

    private func send<Body: Encodable, Answer: Decodable>(_ method: String, _ path: String, json: Body) async throws -> Answer {
        let data = try AccountsAPIFormat.encoder.encode(json)
        return try await send(method, path, body: .bytes(ByteBuffer(data: data)), contentType: "application/json")
    }

    private func send<Answer: Decodable>(_ method: String, _ path: String) async throws -> Answer {
        try await send(method, path, body: nil, contentType: nil)
    }

    private func send<Answer: Decodable>(
        _ method: String, _ path: String, body: HTTPClientRequest.Body?, contentType: String?, timeout: TimeAmount? = nil
    ) async throws -> Answer {
        let data = try await perform(method, path, body: body, contentType: contentType, timeout: timeout)
        do {
            return try AccountsAPIFormat.decoder.decode(Answer.self, from: data)
        } catch {
            throw AccountClientError.badResponse("\(method) \(path): \(error)")
        }
    }

    /// Sends a request and returns the body of a 2xx answer; other answers throw.
    private func perform(
        _ method: String, _ path: String, body: HTTPClientRequest.Body?, contentType: String?, timeout: TimeAmount? = nil
    ) async throws -> Data {
        let base = server.absoluteString.hasSuffix("/") ? String(server.absoluteString.dropLast()) : server.absoluteString
        var request = HTTPClientRequest(url: base + path)
        request.method = .init(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
        request.body = body
        let status: Int
        let bytes: ByteBuffer
        do {
            let response = try await http.execute(request, timeout: timeout ?? self.timeout)
            status = Int(response.status.code)
            bytes = try await response.body.collect(upTo: 16 << 20)
        } catch let error as AccountClientError {
            throw error
        } catch {
            throw AccountClientError.network("\(server.absoluteString): \(error)")
        }
        let data = Data(buffer: bytes)
        guard (200..<300).contains(status) else {
            let failure = try? AccountsAPIFormat.decoder.decode(APIErrorBody.self, from: data)
            let code = failure?.error ?? "http_\(status)"
            let message = failure?.message ?? "the server answered \(status)"
            if status == 401 { throw AccountClientError.unauthorized(reason: code, message: message) }
            throw AccountClientError.rejected(status: status, code: code, message: message)
        }
        return data
    }
}

/// A file read in 256 KiB pieces on NIO's thread pool as the upload asks for them.
private struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let handle: FileHandle
    let total: Int64
    let progress: @Sendable (Int64, Int64) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: FileChunks
        var sent: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard sent < chunks.total else { return nil }
            let handle = chunks.handle
            let want = Int(Swift.min(256 * 1024, chunks.total - sent))
            let data = try await NIOThreadPool.singleton.runIfActive { try handle.read(upToCount: want) ?? Data() }
            guard !data.isEmpty else { throw AccountClientError.file("the file got shorter while uploading") }
            sent += Int64(data.count)
            chunks.progress(sent, chunks.total)
            return ByteBuffer(data: data)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self) }
}
