import Foundation

/// The accounts API's JSON bodies, shared by `reel serve` (ReelAccounts) and ``AccountClient``.
/// Dates are ISO 8601 strings.
public enum AccountsAPIFormat {
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

/// A user as the API shows it. `email` is only present on the signed-in user's own profile.
public struct AccountProfile: Codable, Sendable, Hashable {
    public var id: Int64
    public var name: String
    public var nickname: String
    public var bio: String
    /// A path on the server (`/_uploads/avatars/…`), or `nil` before one is set.
    public var avatarURL: String?
    public var email: String?
    /// How many items the user has uploaded.
    public var uploads: Int

    public init(id: Int64, name: String, nickname: String, bio: String, avatarURL: String?, email: String?, uploads: Int) {
        self.id = id
        self.name = name
        self.nickname = nickname
        self.bio = bio
        self.avatarURL = avatarURL
        self.email = email
        self.uploads = uploads
    }
}

/// `POST /api/register`.
public struct RegisterRequest: Codable, Sendable {
    public var name: String
    public var email: String
    public var password: String
    public var nickname: String?

    public init(name: String, email: String, password: String, nickname: String? = nil) {
        self.name = name
        self.email = email
        self.password = password
        self.nickname = nickname
    }
}

/// `POST /api/login`: `name` may also be the e-mail address.
public struct LoginRequest: Codable, Sendable {
    public var name: String
    public var password: String

    public init(name: String, password: String) {
        self.name = name
        self.password = password
    }
}

/// The answer to a successful login.
public struct LoginResponse: Codable, Sendable {
    public var token: String
    public var expiresAt: Date
    public var user: AccountProfile

    public init(token: String, expiresAt: Date, user: AccountProfile) {
        self.token = token
        self.expiresAt = expiresAt
        self.user = user
    }
}

/// `PATCH /api/me`: fields left out stay as they are.
public struct ProfileUpdate: Codable, Sendable {
    public var nickname: String?
    public var bio: String?

    public init(nickname: String? = nil, bio: String? = nil) {
        self.nickname = nickname
        self.bio = bio
    }
}

/// The answer to a successful `POST /api/upload`.
public struct UploadedItem: Codable, Sendable, Hashable {
    public var id: String
    public var title: String
    public var category: String
    /// A path on the server.
    public var videoURL: String
    public var uploader: String

    public init(id: String, title: String, category: String, videoURL: String, uploader: String) {
        self.id = id
        self.title = title
        self.category = category
        self.videoURL = videoURL
        self.uploader = uploader
    }
}

/// Every error answer: a stable machine-readable `error` code and one line for people.
///
/// Codes: `malformed_json`, `invalid_name`, `invalid_email`, `password_too_short`,
/// `name_taken`, `email_taken`, `invalid_credentials`, `too_many_attempts`,
/// `token_missing`, `token_invalid`, `token_expired`, `token_revoked`, `invalid_title`,
/// `invalid_category`, `invalid_file_name`, `too_large`, `truncated`, `not_playable`,
/// `not_an_image`, `not_found`, `method_not_allowed`, `invalid_paging`.
public struct APIErrorBody: Codable, Sendable, Hashable {
    public var error: String
    public var message: String

    public init(error: String, message: String) {
        self.error = error
        self.message = message
    }
}
