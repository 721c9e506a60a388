import Foundation
import ReelAccountClient

extension AccountsService {
    /// Makes the account `name` unless it exists (the demo's accounts); returns its id.
    public func seedAccount(name: String, email: String, password: String, nickname: String, bio: String = "") async throws -> Int64 {
        if let user = try await store.user(login: name) { return user.id }
        do {
            let profile = try await register(RegisterRequest(name: name, email: email, password: password, nickname: nickname))
            if !bio.isEmpty { try await store.updateProfile(id: profile.id, nickname: nil, bio: bio) }
            return profile.id
        } catch let failure as APIFailure {
            throw SeedFailure(description: failure.message)
        }
    }

    /// Adds a copy of `file` as an upload of `userID` unless that user has an item with
    /// this title already (so seeding twice changes nothing).
    public func seedUpload(file: URL, title: String, category: String, userID: Int64) async throws {
        guard Self.validCategory(category) else { throw SeedFailure(description: "invalid category \(category)") }
        if try await store.items(userID: userID).contains(where: { $0.title == title }) { return }
        let id = Self.randomIdentifier()
        let ext = file.pathExtension.isEmpty ? "mp4" : file.pathExtension.lowercased()
        let relative = category + "/" + id + "." + ext
        let incoming = incomingDirectory.appendingPathComponent(id + ".part")
        try FileManager.default.copyItem(at: file, to: incoming)
        try FileManager.default.createDirectory(at: mediaDirectory.appendingPathComponent(category), withIntermediateDirectories: true)
        let destination = mediaDirectory.appendingPathComponent(relative)
        guard rename(incoming.path, destination.path) == 0 else {
            try? FileManager.default.removeItem(at: incoming)
            throw SeedFailure(description: "cannot store \(relative)")
        }
        do {
            try await store.insertItem(id: id, userID: userID, title: title, category: category, path: relative, now: configuration.now())
        } catch {
            try? FileManager.default.removeItem(at: destination)
            throw error
        }
    }

    public struct SeedFailure: Error, CustomStringConvertible {
        public var description: String
    }
}
