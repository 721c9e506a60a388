import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sign-in tokens kept between runs, one per server, in `tokens.json` inside
/// `$XDG_CONFIG_HOME/reel/` (or `~/.config/reel/`). The directory is made with mode
/// 0700 and the file is written whole to a temporary file with mode 0600 and renamed
/// over the old one, so it is never readable by others nor half-written; a temporary file a
/// killed process left is removed by the next write. Expired
/// tokens are dropped when read. Reads and writes are small and synchronous: the CLI
/// calls them between requests.
public struct TokenStore: Sendable {
    /// One server's token.
    public struct Entry: Codable, Sendable, Hashable {
        public var token: String
        public var expiresAt: Date
        /// Who signed in (for display).
        public var name: String

        public init(token: String, expiresAt: Date, name: String) {
            self.token = token
            self.expiresAt = expiresAt
            self.name = name
        }
    }

    public let directory: URL
    public var file: URL { directory.appendingPathComponent("tokens.json") }

    public init(directory: URL) {
        self.directory = directory
    }

    /// `$XDG_CONFIG_HOME/reel`, or `$HOME/.config/reel` when it is unset or not absolute.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("reel", isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".config/reel", isDirectory: true)
    }

    /// The key a server's token is kept under: scheme, host and port (`http://127.0.0.1:8080`).
    public static func key(for server: URL) -> String {
        let scheme = (server.scheme ?? "http").lowercased()
        let host = (server.host ?? "").lowercased()
        let port = server.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }

    /// The token for `server`, if one is kept and has not expired (an expired one is removed).
    public func entry(for server: URL, now: Date = Date()) throws -> Entry? {
        var all = try load()
        let key = Self.key(for: server)
        guard let entry = all[key] else { return nil }
        if entry.expiresAt <= now {
            all[key] = nil
            try save(all)
            return nil
        }
        return entry
    }

    public func store(_ entry: Entry, for server: URL) throws {
        var all = try load()
        all[Self.key(for: server)] = entry
        try save(all, current: .some(Self.key(for: server)))
    }

    /// Forgets `server`'s token; returns whether there was one.
    @discardableResult
    public func remove(for server: URL) throws -> Entry? {
        var all = try load()
        guard let entry = all.removeValue(forKey: Self.key(for: server)) else { return nil }
        try save(all)
        return entry
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The file: each server's token, and the server signed in to last.
    private struct Contents: Codable {
        var current: String?
        var tokens: [String: Entry] = [:]
    }

    /// The server signed in to most recently, if its token is still kept.
    public func currentServer() throws -> URL? {
        let contents = try read()
        guard let current = contents.current, contents.tokens[current] != nil else { return nil }
        return URL(string: current)
    }

    private func read() throws -> Contents {
        guard let data = FileManager.default.contents(atPath: file.path) else { return Contents() }
        do {
            return try AccountsAPIFormat.decoder.decode(Contents.self, from: data)
        } catch {
            throw Failure(description: "\(file.path) is not a token file; remove it to sign in again")
        }
    }

    private func load() throws -> [String: Entry] { try read().tokens }

    private func save(_ all: [String: Entry], current: String?? = .none) throws {
        var contents = try read()
        contents.tokens = all
        if let current { contents.current = current }
        if let chosen = contents.current, all[chosen] == nil { contents.current = nil }
        try write(contents)
    }

    /// Removes the temporary files of writes whose process is gone (killed between the write
    /// and the rename: `tokens.json` itself is then still the old, whole one). A running
    /// process's temporary file is being written and stays.
    func sweepLeftovers() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names {
            guard let pid = Self.temporaryFilePID(name), kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink(directory.appendingPathComponent(name).path)
        }
    }

    /// The writing process of a temporary token file (`.tokens-<pid>-<n>.json`), or `nil`.
    static func temporaryFilePID(_ name: String) -> Int32? {
        guard name.hasPrefix(".tokens-"), name.hasSuffix(".json") else { return nil }
        let parts = name.dropFirst(".tokens-".count).dropLast(".json".count).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, UInt32(parts[1]) != nil else { return nil }
        return pid
    }

    private func write(_ contents: Contents) throws {
        let fileManager = FileManager.default
        if !fileManager.fileExists(atPath: directory.path) {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        sweepLeftovers()
        let data = try AccountsAPIFormat.encoder.encode(contents)
        let temporary = directory.appendingPathComponent(".tokens-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure(description: "cannot write \(temporary.path): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == data.count, synced == 0, rename(temporary.path, file.path) == 0 else {
            unlink(temporary.path)
            throw Failure(description: "cannot write \(file.path): \(String(cString: strerror(errno)))")
        }
    }
}
