import Foundation
import ReelAccountClient
import Testing

@Suite("TokenStore: one token per server, 0600, expired ones dropped")
struct TokenStoreTests {
    private func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-tokens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func keepsOneTokenPerServerInAPrivateFile() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = TokenStore(directory: root.appendingPathComponent("reel"))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let a = URL(string: "http://127.0.0.1:8080/api")!
        let b = URL(string: "http://LOCALHOST:9000")!
        try store.store(.init(token: "t-a", expiresAt: now.addingTimeInterval(60), name: "ada"), for: a)
        try store.store(.init(token: "t-b", expiresAt: now.addingTimeInterval(60), name: "grace"), for: b)
        #expect(try store.entry(for: URL(string: "http://127.0.0.1:8080")!, now: now)?.token == "t-a")
        #expect(try store.entry(for: URL(string: "http://localhost:9000/x")!, now: now)?.token == "t-b")
        #expect(try store.currentServer()?.absoluteString == "http://localhost:9000")
        let fileMode = try FileManager.default.attributesOfItem(atPath: store.file.path)[.posixPermissions] as? Int
        let directoryMode = try FileManager.default.attributesOfItem(atPath: store.directory.path)[.posixPermissions] as? Int
        #expect(fileMode == 0o600 && directoryMode == 0o700)
        #expect(try store.remove(for: b)?.name == "grace")
        #expect(try store.currentServer() == nil)
        #expect(try store.entry(for: a, now: now)?.name == "ada")
    }

    /// A sign-in killed between writing the temporary file and renaming it leaves that file
    /// and the old `tokens.json` whole; the next write removes the dead process's file and
    /// leaves a running one's alone.
    @Test func aKilledWritersTemporaryFileIsRemovedByTheNextWrite() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = TokenStore(directory: root)
        let server = URL(string: "http://127.0.0.1:8080")!
        try store.store(.init(token: "kept", expiresAt: Date().addingTimeInterval(600), name: "ada"), for: server)
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let dead = ".tokens-\(finished.processIdentifier)-12345.json"
        let live = ".tokens-\(ProcessInfo.processInfo.processIdentifier)-67890.json"
        for name in [dead, live] { try Data("{\"tok".utf8).write(to: root.appendingPathComponent(name)) }
        #expect(try store.entry(for: server)?.token == "kept", "the old file is whole and still read")
        try store.store(.init(token: "new", expiresAt: Date().addingTimeInterval(600), name: "ada"), for: server)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: root.path))
        #expect(left == ["tokens.json", live])
        #expect(try store.entry(for: server)?.token == "new")
    }

    @Test func expiredTokensAreDroppedWhenRead() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = TokenStore(directory: root)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let server = URL(string: "http://127.0.0.1:8080")!
        try store.store(.init(token: "old", expiresAt: now, name: "ada"), for: server)
        #expect(try store.entry(for: server, now: now) == nil)
        #expect(!(String(decoding: try Data(contentsOf: store.file), as: UTF8.self).contains("old")))
    }

    @Test func aDamagedFileIsReportedNotTrusted() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = TokenStore(directory: root)
        try Data("{not json".utf8).write(to: store.file)
        #expect(throws: TokenStore.Failure.self) { try store.entry(for: URL(string: "http://a:1")!) }
    }

    @Test func theDirectoryFollowsXDG() {
        #expect(TokenStore.defaultDirectory(environment: ["XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"]).path == "/x/cfg/reel")
        #expect(TokenStore.defaultDirectory(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/u"]).path == "/home/u/.config/reel")
        #expect(TokenStore.defaultDirectory(environment: ["HOME": "/home/u"]).path == "/home/u/.config/reel")
    }
}
