import Foundation
internal import ReelDigest
import Logging
import ReelAccountClient
import ReelCore
import ReelFeedModel
import ReelOrigin
import NIOPosix

/// Accounts and uploads for `reel serve`: registration, sign-in with Argon2id-hashed
/// passwords, random expiring bearer tokens revoked at sign-out, profiles, avatars and
/// video uploads that join the feed. Everything lives in ``Configuration/dataDirectory``:
///
/// ```
/// reel.sqlite            users, tokens (SHA-256 only), items
/// media/<category>/…     uploaded videos, served under /_uploads/
/// media/avatars/…        avatars
/// incoming/              uploads being received (emptied at start)
/// ```
///
/// The service holds no mutable state of its own besides the login throttle (a Mutex);
/// the database serialises the rest. Every method may be called from any task.
public final class AccountsService: Sendable {
    public struct Configuration: Sendable {
        public var dataDirectory: URL
        /// How long a token stays valid after sign-in.
        public var tokenLifetime: Duration
        /// The largest upload accepted, in bytes.
        public var uploadLimit: Int64
        /// The largest avatar accepted, in bytes.
        public var avatarLimit: Int64
        /// Failed sign-ins per name before further attempts wait.
        public var maximumFailedLogins: Int
        public var failedLoginWindow: Duration
        public var passwordParameters: PasswordHasher.Parameters
        /// The clock tokens and the throttle read (tests move it).
        public var now: @Sendable () -> Date
        /// Why an uploaded file (its path and size) is not a playable video, `nil` when it is.
        /// The server does not link the player: `reel serve` passes ReelMedia's
        /// `MediaProbe.playabilityProblem`.
        public var playabilityProblem: PlayabilityCheck

        public init(
            dataDirectory: URL,
            playabilityProblem: @escaping PlayabilityCheck,
            tokenLifetime: Duration = .seconds(7 * 24 * 3600),
            uploadLimit: Int64 = 512 << 20,
            avatarLimit: Int64 = 5 << 20,
            maximumFailedLogins: Int = 5,
            failedLoginWindow: Duration = .seconds(60),
            passwordParameters: PasswordHasher.Parameters = .standard,
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.dataDirectory = dataDirectory
            self.tokenLifetime = tokenLifetime
            self.uploadLimit = uploadLimit
            self.avatarLimit = avatarLimit
            self.maximumFailedLogins = maximumFailedLogins
            self.failedLoginWindow = failedLoginWindow
            self.passwordParameters = passwordParameters
            self.now = now
            self.playabilityProblem = playabilityProblem
        }
    }

    /// Says why a file (its path, its size in bytes) is not a playable video, or `nil`.
    public typealias PlayabilityCheck = @Sendable (_ file: URL, _ size: Int64) async -> String?

    /// The path prefix uploaded files are served under.
    public static let mediaPathPrefix = "/_uploads"

    public let configuration: Configuration
    let store: AccountStore
    let hasher: PasswordHasher
    let throttle: LoginThrottle
    /// Where uploaded videos and avatars are kept (mount it at ``mediaPathPrefix``).
    public let mediaDirectory: URL
    let incomingDirectory: URL
    private let logger = Logger(label: "reel.accounts")
    /// A hash of a random password, verified against when a login names nobody, so an
    /// unknown name costs as much time as a wrong password.
    private let decoyHash: String

    /// Opens (creating when needed) the data directory and its database, and removes
    /// what an interrupted upload left: its partial file in `incoming/`, and a file moved into
    /// `media/` whose row was never committed (the process ended between the two).
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        let fileManager = FileManager.default
        let data = configuration.dataDirectory
        mediaDirectory = data.appendingPathComponent("media", isDirectory: true)
        incomingDirectory = data.appendingPathComponent("incoming", isDirectory: true)
        for directory in [data, mediaDirectory, incomingDirectory, mediaDirectory.appendingPathComponent("avatars")] {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        for name in (try? fileManager.contentsOfDirectory(atPath: incomingDirectory.path)) ?? [] {
            try? fileManager.removeItem(at: incomingDirectory.appendingPathComponent(name))
        }
        store = try AccountStore(path: data.appendingPathComponent("reel.sqlite").path)
        hasher = PasswordHasher(parameters: configuration.passwordParameters)
        throttle = LoginThrottle(
            maximumFailures: configuration.maximumFailedLogins,
            window: configuration.failedLoginWindow.inSeconds,
            now: configuration.now
        )
        decoyHash = try PasswordHasher.hashNow(Self.randomIdentifier(), parameters: configuration.passwordParameters)
        for relative in MediaSweep.unrecorded(in: mediaDirectory, recorded: try store.referencedPathsNow()) {
            // Stored, then the process ended before its row was committed: the client was never
            // told it worked, so the file is nobody's.
            logger.notice("removing \(relative): stored by an upload that was never recorded")
            try? fileManager.removeItem(at: mediaDirectory.appendingPathComponent(relative))
        }
    }

    /// ``init(configuration:)`` on NIO's thread pool: opening the database, emptying
    /// `incoming/` and making the decoy hash block, so async callers use this.
    public static func open(configuration: Configuration) async throws -> AccountsService {
        try await NIOThreadPool.singleton.runIfActive { try AccountsService(configuration: configuration) }
    }

    /// 128 random bits from the system generator (getrandom), URL-safe.
    static func randomIdentifier(bytes: Int = 16) -> String {
        var generator = SystemRandomNumberGenerator()
        let raw = Data((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return raw.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func tokenHash(_ token: String) -> String {
        SHA256.hex(of: Data(token.utf8))
    }

    // MARK: - Validation

    // The rules live in ReelAccountClient (`AccountRules`) so clients check the same ones inline.
    static func validName(_ name: String) -> Bool { AccountRules.validName(name) }

    static func validEmail(_ email: String) -> Bool { AccountRules.validEmail(email) }

    static func plainText(_ text: String, field: String, maximum: Int) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= maximum else { throw APIFailure.badRequest("invalid_\(field)", "\(field) must be at most \(maximum) characters") }
        let allowsNewlines = field == "bio"
        guard !trimmed.unicodeScalars.contains(where: {
            CharacterSet.controlCharacters.contains($0) && !(allowsNewlines && $0 == "\n")
        }) else { throw APIFailure.badRequest("invalid_\(field)", "\(field) must not contain control characters") }
        return trimmed
    }

    static func validCategory(_ category: String) -> Bool { AccountRules.validCategory(category) }

    /// The extension an upload is stored with, from the optional client file name. The
    /// name itself is never used on disk; one with a path in it is refused.
    static func storedExtension(fileName: String?) throws -> String {
        guard let fileName, !fileName.isEmpty else { return "mp4" }
        guard !fileName.contains("/"), !fileName.contains("\\"), !fileName.contains("\0"),
              fileName != ".", fileName != "..", !fileName.hasPrefix("."), fileName.count <= 255 else {
            throw APIFailure.badRequest("invalid_file_name", "the file name must be a plain name without a path")
        }
        let ext = (fileName as NSString).pathExtension.lowercased()
        guard ["mp4", "m4v", "mov", "mkv", "webm"].contains(ext) else {
            throw APIFailure.badRequest("invalid_file_name", "the file must be .mp4, .m4v, .mov, .mkv or .webm")
        }
        return ext
    }

    // MARK: - Accounts

    func register(_ request: RegisterRequest) async throws -> AccountProfile {
        let name = request.name.trimmingCharacters(in: .whitespaces)
        let email = request.email.trimmingCharacters(in: .whitespaces)
        guard Self.validName(name) else {
            throw APIFailure.badRequest("invalid_name", "the name must be 3–32 letters, digits, '_', '.' or '-', starting with a letter or digit")
        }
        guard Self.validEmail(email) else { throw APIFailure.badRequest("invalid_email", "'\(email)' is not an e-mail address") }
        guard request.password.count >= AccountRules.minimumPasswordLength else { throw APIFailure.badRequest("password_too_short", "the password must have at least 8 characters") }
        guard request.password.utf8.count <= AccountRules.maximumPasswordBytes else { throw APIFailure.badRequest("password_too_long", "the password must be at most 1024 bytes") }
        let nickname = try Self.plainText(request.nickname ?? name, field: "nickname", maximum: 40)
        let hash = try await hasher.hash(request.password)
        switch try await store.insertUser(name: name, email: email, passwordHash: hash, nickname: nickname.isEmpty ? name : nickname, now: configuration.now()) {
        case .created(let user):
            logger.info("registered \(name)")
            return profile(user, includeEmail: true)
        case .nameTaken: throw APIFailure(status: 409, code: "name_taken", message: "the name '\(name)' is taken")
        case .emailTaken: throw APIFailure(status: 409, code: "email_taken", message: "an account with that e-mail address exists")
        }
    }

    func login(_ request: LoginRequest) async throws -> LoginResponse {
        let login = request.name.trimmingCharacters(in: .whitespaces)
        if let wait = throttle.retryAfter(login) {
            throw APIFailure(status: 429, code: "too_many_attempts", message: "too many failed sign-ins; try again in \(wait) s",
                             headers: [("Retry-After", String(wait))])
        }
        let user = try await store.user(login: login)
        let matches = try await hasher.verify(request.password, against: user?.passwordHash ?? decoyHash)
        guard let user, matches else {
            throttle.recordFailure(login)
            throw APIFailure(status: 401, code: "invalid_credentials", message: "wrong name or password")
        }
        throttle.recordSuccess(login)
        let token = Self.randomIdentifier(bytes: 32)
        let expiresAt = configuration.now().addingTimeInterval(configuration.tokenLifetime.inSeconds)
        try await store.insertToken(hash: Self.tokenHash(token), userID: user.id, expiresAt: expiresAt)
        return LoginResponse(token: token, expiresAt: expiresAt, user: profile(user, includeEmail: true))
    }

    /// The token in `Authorization: Bearer …`, checked.
    func authenticate(_ authorization: String?) async throws -> (user: AccountStore.User, tokenHash: String) {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else {
            throw APIFailure.unauthorized("token_missing", "sign in first (no bearer token)")
        }
        let token = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        let hash = Self.tokenHash(token)
        guard let record = try await store.token(hash: hash) else { throw APIFailure.unauthorized("token_invalid", "the token is not known") }
        if record.revoked { throw APIFailure.unauthorized("token_revoked", "the token was revoked by signing out") }
        if record.expiresAt <= configuration.now() { throw APIFailure.unauthorized("token_expired", "the token has expired") }
        guard let user = try await store.user(id: record.userID) else { throw APIFailure.unauthorized("token_invalid", "the account is gone") }
        return (user, hash)
    }

    func logout(authorization: String?) async throws {
        let (_, hash) = try await authenticate(authorization)
        try await store.revokeToken(hash: hash, now: configuration.now())
    }

    func me(authorization: String?) async throws -> AccountProfile {
        profile(try await authenticate(authorization).user, includeEmail: true)
    }

    func updateMe(authorization: String?, update: ProfileUpdate) async throws -> AccountProfile {
        let (user, _) = try await authenticate(authorization)
        let nickname = try update.nickname.map { try Self.plainText($0, field: "nickname", maximum: 40) }
        if let nickname, nickname.isEmpty { throw APIFailure.badRequest("invalid_nickname", "the nickname must not be empty") }
        let bio = try update.bio.map { try Self.plainText($0, field: "bio", maximum: 500) }
        try await store.updateProfile(id: user.id, nickname: nickname, bio: bio)
        guard let updated = try await store.user(id: user.id) else { throw APIFailure.notFound("the account is gone") }
        return profile(updated, includeEmail: true)
    }

    func publicProfile(id: Int64) async throws -> AccountProfile {
        guard let user = try await store.user(id: id) else { throw APIFailure.notFound("no user \(id)") }
        return profile(user, includeEmail: false)
    }

    func profile(_ user: AccountStore.User, includeEmail: Bool) -> AccountProfile {
        AccountProfile(
            id: user.id, name: user.name, nickname: user.nickname, bio: user.bio,
            avatarURL: user.avatarPath.map { Self.mediaPathPrefix + "/" + $0 },
            email: includeEmail ? user.email : nil, uploads: user.uploads
        )
    }

    // MARK: - Uploads

    /// Receives a video: authenticates, checks the fields, streams the body to
    /// `incoming/`, checks it is a playable video, then moves it into place and records it.
    /// Any failure removes the partial file; the item exists only once both are done.
    func upload(request: OriginRequest, body: OriginRequestBody) async throws -> UploadedItem {
        let (user, _) = try await authenticate(request.header("Authorization"))
        let query = request.queryItems
        let title = try Self.plainText(query["title"] ?? "", field: "title", maximum: 200)
        guard !title.isEmpty else { throw APIFailure.badRequest("invalid_title", "a title is needed (?title=)") }
        let category = query["category"].flatMap { $0.isEmpty ? nil : $0 } ?? "uploads"
        guard Self.validCategory(category) else {
            throw APIFailure.badRequest("invalid_category", "the category must be 1–40 letters, digits, '_' or '-'")
        }
        let ext = try Self.storedExtension(fileName: query["filename"])
        if let declared = request.header("Content-Length").flatMap { Int64($0) }, declared > configuration.uploadLimit {
            throw APIFailure(status: 413, code: "too_large", message: "the upload is larger than \(configuration.uploadLimit) bytes")
        }
        let (incoming, size) = try await UploadSink.receive(body, into: incomingDirectory, limit: configuration.uploadLimit)
        var keep = false
        defer { if !keep { try? FileManager.default.removeItem(at: incoming) } }
        guard size > 0 else { throw APIFailure.badRequest("not_playable", "the upload is empty") }
        try await checkPlayable(incoming, size: size)
        let id = Self.randomIdentifier()
        let relative = category + "/" + id + "." + ext
        let folder = mediaDirectory.appendingPathComponent(category, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = mediaDirectory.appendingPathComponent(relative)
        CrashPoints.reach(.rename, destination.path)
        guard rename(incoming.path, destination.path) == 0 else {
            throw APIFailure(status: 500, code: "storage", message: "cannot store the upload: \(String(cString: strerror(errno)))")
        }
        CrashPoints.reach(.after, destination.path)
        do {
            // A kill from here until the row commits leaves a file the next start sweeps.
            CrashPoints.reach(.commit, relative)
            try await store.insertItem(id: id, userID: user.id, title: title, category: category, path: relative, now: configuration.now())
            CrashPoints.reach(.after, relative)
        } catch {
            try? FileManager.default.removeItem(at: destination)
            throw error
        }
        keep = true
        logger.info("\(user.name) uploaded \(relative) (\(size) bytes)")
        return UploadedItem(id: "u/" + id, title: title, category: category,
                            videoURL: Self.mediaPathPrefix + "/" + relative, uploader: user.name)
    }

    /// Refuses (422 `not_playable`) a file the configuration's playability check refuses.
    func checkPlayable(_ file: URL, size: Int64) async throws {
        guard let reason = await configuration.playabilityProblem(file, size) else { return }
        // The reason may name the file: the server's own path is nobody's business.
        throw APIFailure(status: 422, code: "not_playable",
                         message: "the file is not a playable video: " + reason.replacingOccurrences(of: file.path, with: "the upload"))
    }

    /// Receives an avatar (PNG, JPEG or WebP, checked by its first bytes).
    func replaceAvatar(request: OriginRequest, body: OriginRequestBody) async throws -> AccountProfile {
        let (user, _) = try await authenticate(request.header("Authorization"))
        if let declared = request.header("Content-Length").flatMap { Int64($0) }, declared > configuration.avatarLimit {
            throw APIFailure(status: 413, code: "too_large", message: "the picture is larger than \(configuration.avatarLimit) bytes")
        }
        let (incoming, _) = try await UploadSink.receive(body, into: incomingDirectory, limit: configuration.avatarLimit)
        var keep = false
        defer { if !keep { try? FileManager.default.removeItem(at: incoming) } }
        let head = (try? FileHandle(forReadingFrom: incoming).read(upToCount: 12)) ?? Data()
        let ext: String
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            ext = "png"
        } else if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            ext = "jpg"
        } else if head.count >= 12, head.prefix(4) == Data("RIFF".utf8), head.suffix(4) == Data("WEBP".utf8) {
            ext = "webp"
        } else {
            throw APIFailure(status: 422, code: "not_an_image", message: "the avatar must be a PNG, JPEG or WebP picture")
        }
        let relative = "avatars/\(user.id)-\(Self.randomIdentifier()).\(ext)"
        guard rename(incoming.path, mediaDirectory.appendingPathComponent(relative).path) == 0 else {
            throw APIFailure(status: 500, code: "storage", message: "cannot store the picture: \(String(cString: strerror(errno)))")
        }
        keep = true
        if let old = try await store.replaceAvatar(id: user.id, path: relative) {
            try? FileManager.default.removeItem(at: mediaDirectory.appendingPathComponent(old))
        }
        return try await me(authorization: request.header("Authorization"))
    }

    /// The uploads as feed items (newest first) with server paths as URLs.
    func feedItems(category: String? = nil, userID: Int64? = nil) async throws -> [FeedItem] {
        try await store.items(category: category, userID: userID).map { item in
            FeedItem(id: "u/" + item.id, title: item.title, uploader: item.uploader,
                     videoURL: URL(string: Self.mediaPathPrefix + "/" + item.path), category: item.category)
        }
    }
}
