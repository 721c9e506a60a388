import Foundation
import GRDB

/// The accounts database: users, tokens and uploaded items in one SQLite file, through
/// GRDB. GRDB's `DatabaseQueue` serialises every access on its own queue; the async
/// `read`/`write` used here suspend the caller instead of blocking a pool thread.
/// Tokens are stored as their SHA-256, never in clear.
public final class AccountStore: Sendable {
    struct User: Sendable, Hashable {
        var id: Int64
        var name: String
        var email: String
        var passwordHash: String
        var nickname: String
        var bio: String
        var avatarPath: String?
        var uploads: Int
    }

    struct Token: Sendable, Hashable {
        var userID: Int64
        var expiresAt: Date
        var revoked: Bool
    }

    struct Item: Sendable, Hashable {
        var id: String
        var userID: Int64
        var uploader: String
        var title: String
        var category: String
        /// Relative to the media directory (`travel/abc.mp4`).
        var path: String
        var createdAt: Date
    }

    enum InsertUserResult: Sendable { case created(User), nameTaken, emailTaken }

    private let queue: DatabaseQueue

    /// Opens (creating and migrating when needed) the database at `path`.
    public init(path: String) throws {
        queue = try DatabaseQueue(path: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE user (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
                    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
                    passwordHash TEXT NOT NULL,
                    nickname TEXT NOT NULL,
                    bio TEXT NOT NULL DEFAULT '',
                    avatarPath TEXT,
                    createdAt DOUBLE NOT NULL
                );
                CREATE TABLE token (
                    hash TEXT PRIMARY KEY,
                    userID INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
                    expiresAt DOUBLE NOT NULL,
                    revokedAt DOUBLE
                );
                CREATE TABLE item (
                    id TEXT PRIMARY KEY,
                    userID INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
                    title TEXT NOT NULL,
                    category TEXT NOT NULL,
                    path TEXT NOT NULL UNIQUE,
                    createdAt DOUBLE NOT NULL
                );
                CREATE INDEX item_category ON item(category, createdAt);
                CREATE INDEX item_user ON item(userID, createdAt);
                """)
        }
        try migrator.migrate(queue)
    }

    private static let userColumns = """
        id, name, email, passwordHash, nickname, bio, avatarPath,
        (SELECT COUNT(*) FROM item WHERE item.userID = user.id) AS uploads
        """

    private static func user(_ row: Row) -> User {
        User(id: row["id"], name: row["name"], email: row["email"], passwordHash: row["passwordHash"],
             nickname: row["nickname"], bio: row["bio"], avatarPath: row["avatarPath"], uploads: row["uploads"])
    }

    private static let itemColumns = "item.id, item.userID, user.name AS uploader, item.title, item.category, item.path, item.createdAt"

    private static func item(_ row: Row) -> Item {
        Item(id: row["id"], userID: row["userID"], uploader: row["uploader"], title: row["title"],
             category: row["category"], path: row["path"], createdAt: Date(timeIntervalSince1970: row["createdAt"]))
    }

    func insertUser(name: String, email: String, passwordHash: String, nickname: String, now: Date) async throws -> InsertUserResult {
        try await queue.write { db in
            if try Row.fetchOne(db, sql: "SELECT 1 FROM user WHERE name = ?", arguments: [name]) != nil { return .nameTaken }
            if try Row.fetchOne(db, sql: "SELECT 1 FROM user WHERE email = ?", arguments: [email]) != nil { return .emailTaken }
            try db.execute(
                sql: "INSERT INTO user (name, email, passwordHash, nickname, createdAt) VALUES (?, ?, ?, ?, ?)",
                arguments: [name, email, passwordHash, nickname, now.timeIntervalSince1970]
            )
            let id = db.lastInsertedRowID
            return .created(User(id: id, name: name, email: email, passwordHash: passwordHash, nickname: nickname,
                                 bio: "", avatarPath: nil, uploads: 0))
        }
    }

    /// The user named `login` (a name or an e-mail address), case-insensitively.
    func user(login: String) async throws -> User? {
        try await queue.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.userColumns) FROM user WHERE name = ? OR email = ?", arguments: [login, login])
                .map(Self.user)
        }
    }

    func user(id: Int64) async throws -> User? {
        try await queue.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.userColumns) FROM user WHERE id = ?", arguments: [id]).map(Self.user)
        }
    }

    func updateProfile(id: Int64, nickname: String?, bio: String?) async throws {
        try await queue.write { db in
            if let nickname { try db.execute(sql: "UPDATE user SET nickname = ? WHERE id = ?", arguments: [nickname, id]) }
            if let bio { try db.execute(sql: "UPDATE user SET bio = ? WHERE id = ?", arguments: [bio, id]) }
        }
    }

    /// Sets the avatar and returns the previous one's path.
    func replaceAvatar(id: Int64, path: String) async throws -> String? {
        try await queue.write { db in
            let old = try String.fetchOne(db, sql: "SELECT avatarPath FROM user WHERE id = ?", arguments: [id])
            try db.execute(sql: "UPDATE user SET avatarPath = ? WHERE id = ?", arguments: [path, id])
            return old
        }
    }

    func insertToken(hash: String, userID: Int64, expiresAt: Date) async throws {
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO token (hash, userID, expiresAt) VALUES (?, ?, ?)",
                           arguments: [hash, userID, expiresAt.timeIntervalSince1970])
        }
    }

    func token(hash: String) async throws -> Token? {
        try await queue.read { db in
            try Row.fetchOne(db, sql: "SELECT userID, expiresAt, revokedAt FROM token WHERE hash = ?", arguments: [hash]).map { row in
                Token(userID: row["userID"], expiresAt: Date(timeIntervalSince1970: row["expiresAt"]),
                      revoked: (row["revokedAt"] as Double?) != nil)
            }
        }
    }

    func revokeToken(hash: String, now: Date) async throws {
        try await queue.write { db in
            try db.execute(sql: "UPDATE token SET revokedAt = ? WHERE hash = ? AND revokedAt IS NULL",
                           arguments: [now.timeIntervalSince1970, hash])
        }
    }

    func insertItem(id: String, userID: Int64, title: String, category: String, path: String, now: Date) async throws {
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO item (id, userID, title, category, path, createdAt) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [id, userID, title, category, path, now.timeIntervalSince1970])
        }
    }

    /// Items, newest first: all, or of one category, or of one user.
    func items(category: String? = nil, userID: Int64? = nil) async throws -> [Item] {
        try await queue.read { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let category { conditions.append("item.category = ?"); arguments += [category] }
            if let userID { conditions.append("item.userID = ?"); arguments += [userID] }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            return try Row.fetchAll(db, sql: """
                SELECT \(Self.itemColumns) FROM item JOIN user ON user.id = item.userID
                \(filter) ORDER BY item.createdAt DESC, item.rowid DESC
                """, arguments: arguments).map(Self.item)
        }
    }

    /// Every path the database refers to under the media directory (items and avatars).
    /// Blocking: for opening the service, which runs off the concurrency pool.
    func referencedPathsNow() throws -> Set<String> {
        try queue.read { db in
            let items = try String.fetchAll(db, sql: "SELECT path FROM item")
            let avatars = try String.fetchAll(db, sql: "SELECT avatarPath FROM user WHERE avatarPath IS NOT NULL")
            return Set(items + avatars)
        }
    }
}
