import AsyncHTTPClient
import Foundation
import NIOCore
import ReelAccountClient
import ReelAccounts
import ReelFeed
import ReelCore
import ReelMedia
import ReelOrigin
import ReelTestSupport
import Synchronization
import Testing

@Suite("Uploads against a real server and SQLite file")
struct UploadTests {
    @Test("an upload joins its category's feed, search and the profile, and is served with ranges")
    func uploadJoinsTheFeed() async throws {
        try await AccountsTestServer.with { server in
            let (token, user) = try await server.signUp("ada")
            let clip = try Fixtures.clip(ClipSpec(duration: 1))
            let progress = ProgressLog()
            let item = try await server.client.withToken(token).upload(file: clip, title: "Harbour at dawn", category: "travel") {
                progress.record($0, $1)
            }
            #expect(item.category == "travel" && item.uploader == "ada" && item.title == "Harbour at dawn")
            let size = Int64(try Data(contentsOf: clip).count)
            #expect(progress.last == size)

            let served = try await server.request("GET", item.videoURL)
            let original = try Data(contentsOf: clip)
            #expect(served.status == 200 && served.body == original)
            let range = try await server.request("GET", item.videoURL, headers: [("Range", "bytes=0-9")])
            #expect(range.status == 206 && range.body.count == 10)

            let feed = AccountsFeedSource(base: try DirectoryFeedSource(directory: server.served), service: server.service)
            let travel = try await feed.page(category: "travel", page: 1, size: 10)
            #expect(travel.items.map(\.title) == ["Harbour at dawn", "harbour"])
            #expect(travel.items.first?.videoURL?.absoluteString == item.videoURL)
            #expect(try await feed.search(text: "dawn", page: 1, size: 10).items.map(\.id) == [item.id])
            #expect(try await feed.search(text: "ADA", page: 1, size: 10).items.map(\.id) == [item.id])

            let mine = try await server.request("GET", "/api/users/\(user.id)/items?current=1&size=10")
            #expect(mine.status == 200)
            #expect(String(decoding: mine.body, as: UTF8.self).contains("Harbour at dawn"))
            #expect(try await server.client.withToken(token).me().uploads == 1)

            // A new category becomes a tab.
            _ = try await server.client.withToken(token).upload(file: clip, title: "Goal", category: "sports")
            #expect(try await feed.categories().map(\.id) == ["travel", "sports"])
        }
    }

    @Test("a file that is not a playable video is refused 422 and nothing stays on disk")
    func notPlayable() async throws {
        try await AccountsTestServer.with { server in
            let (token, _) = try await server.signUp("ada")
            let garbage = try await server.request("POST", "/api/upload?title=Noise", body: Fixtures.garbage(count: 200_000), token: token)
            #expect(garbage.status == 422 && garbage.error?.error == "not_playable")
            let empty = try await server.request("POST", "/api/upload?title=Nothing", body: Data(), token: token)
            #expect(empty.status == 400 && empty.error?.error == "not_playable")
            // Half a real clip: the header is there but not the samples it indexes.
            let clip = try AccountsTestServer.clipData()
            let half = try await server.request("POST", "/api/upload?title=Half", body: clip.prefix(clip.count / 3), token: token)
            #expect(half.status == 422 && half.error?.error == "not_playable")
            #expect(server.storedFiles().isEmpty)
            #expect(try await server.client.withToken(token).me().uploads == 0)
        }
    }

    @Test("an upload over the limit is 413, declared or not, and leaves nothing")
    func oversized() async throws {
        try await AccountsTestServer.with(uploadLimit: 50_000) { server in
            let (token, _) = try await server.signUp("ada")
            let big = Fixtures.garbage(count: 120_000)
            let declared = try await server.request("POST", "/api/upload?title=Big", body: big, token: token)
            #expect(declared.status == 413 && declared.error?.error == "too_large")

            // Chunked, without a length: refused once the limit is passed.
            var request = HTTPClientRequest(url: server.url.absoluteString + "/api/upload?title=Big")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            let pieces = (0..<12).map { ByteBuffer(data: big[($0 * 10_000)..<(($0 + 1) * 10_000)]) }
            request.body = .stream(AsyncStream<ByteBuffer> { sink in pieces.forEach { sink.yield($0) }; sink.finish() }, length: .unknown)
            let status: Int? = try? await {
                let response = try await HTTPClient.shared.execute(request, timeout: .init(AccountsTestServer.watchdog))
                return Int(response.status.code)
            }()
            // The server answers 413 and closes; the client may or may not see the answer
            // before its write fails, but nothing may stay behind either way.
            #expect(status == nil || status == 413)
            #expect(await eventually() { server.storedFiles().isEmpty })
            #expect(try await server.client.withToken(token).me().uploads == 0)
        }
    }

    @Test("a truncated upload (the client hangs up mid-body) leaves no file and no item")
    func truncated() async throws {
        try await AccountsTestServer.with { server in
            let (token, _) = try await server.signUp("ada")
            let clip = try AccountsTestServer.clipData()
            let port = server.url.port!
            var bytes = Data("""
                POST /api/upload?title=Cut HTTP/1.1\r
                Host: 127.0.0.1\r
                Authorization: Bearer \(token)\r
                Content-Length: \(clip.count)\r
                \r

                """.utf8)
            bytes.append(clip.prefix(clip.count / 2))
            try await sendAndHangUp(port: port, bytes)
            #expect(await eventually() {
                server.storedFiles().isEmpty && server.incomingIsEmpty
            })
            #expect(try await server.client.withToken(token).me().uploads == 0)
            // The server still serves.
            _ = try await server.client.withToken(token).upload(file: try Fixtures.clip(ClipSpec(duration: 1)), title: "Whole")
            #expect(try await server.client.withToken(token).me().uploads == 1)
        }
    }

    @Test("path tricks in the file name, category or served path are refused and write nothing")
    func pathTricks() async throws {
        try await AccountsTestServer.with { server in
            let (token, _) = try await server.signUp("ada")
            let clip = try AccountsTestServer.clipData()
            for name in ["../../evil.mp4", "a/b.mp4", "..", ".hidden.mp4", "evil.sh", "..\\evil.mp4"] {
                let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let answer = try await server.request("POST", "/api/upload?title=T&filename=\(encoded)", body: clip, token: token)
                #expect(answer.status == 400 && answer.error?.error == "invalid_file_name", "\(name)")
            }
            for category in ["../x", "a/b", "avatars", "..", "-x", String(repeating: "c", count: 41)] {
                let encoded = category.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let answer = try await server.request("POST", "/api/upload?title=T&category=\(encoded)", body: clip, token: token)
                #expect(answer.status == 400 && answer.error?.error == "invalid_category", "\(category)")
            }
            #expect(server.storedFiles().isEmpty)
            for path in ["/_uploads/../data/reel.sqlite", "/_uploads/%2e%2e/reel.sqlite", "/_uploads/..%2freel.sqlite", "/../data/reel.sqlite"] {
                let answer = try await server.request("GET", path)
                #expect(answer.status == 404 || answer.status == 400, "\(path)")
                #expect(!answer.body.starts(with: Data("SQLite format".utf8)), "\(path)")
            }
        }
    }

    @Test("concurrent uploads by several users all land, each once, with nothing left over")
    func concurrentUploads() async throws {
        try await AccountsTestServer.with { server in
            var tokens: [String] = []
            for name in ["ada", "grace", "linus"] { tokens.append(try await server.signUp(name).token) }
            let clip = try Fixtures.clip(ClipSpec(duration: 1))
            let client = server.client
            let items = try await withThrowingTaskGroup(of: UploadedItem.self) { group in
                for index in 0..<6 {
                    let token = tokens[index % tokens.count]
                    group.addTask {
                        try await client.withToken(token).upload(file: clip, title: "clip \(index)", category: index % 2 == 0 ? "travel" : "sports")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(items.map(\.id)).count == 6 && Set(items.map(\.videoURL)).count == 6)
            #expect(server.storedFiles().filter { $0.hasPrefix("media/travel/") || $0.hasPrefix("media/sports/") }.count == 6)
            #expect(server.incomingIsEmpty)
            let feed = AccountsFeedSource(base: try DirectoryFeedSource(directory: server.served), service: server.service)
            #expect(try await feed.page(category: "sports", page: 1, size: 10).items.count == 3)
            #expect(try await feed.page(category: "travel", page: 1, size: 10).items.count == 4)
        }
    }
}

final class ProgressLog: Sendable {
    private let values = Mutex<[Int64]>([])
    func record(_ sent: Int64, _ total: Int64) { values.withTrackedLock { $0.append(sent) } }
    var last: Int64? { values.withTrackedLock { $0.last } }
}

extension AccountsTestServer {
    var incomingIsEmpty: Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent("incoming").path)) ?? []).isEmpty
    }
}

@Suite("Seeding accounts and uploads (reel demo)")
struct SeedTests {
    @Test("seeding twice makes each account and upload once; the uploads are on the profile")
    func idempotentSeed() async throws {
        try await AccountsTestServer.with { server in
            let clip = try Fixtures.clip(ClipSpec(duration: 1))
            for _ in 0..<2 {
                let id = try await server.service.seedAccount(name: "mira", email: "mira@reel.invalid", password: "mira-password",
                                                              nickname: "Mira", bio: "Harbours")
                try await server.service.seedUpload(file: clip, title: "Mira: harbour", category: "travel", userID: id)
            }
            let profile = try await server.client.user(id: 1)
            #expect(profile.name == "mira" && profile.bio == "Harbours" && profile.uploads == 1)
            let items = try await server.request("GET", "/api/users/1/items?current=1&size=10")
            #expect(String(decoding: items.body, as: UTF8.self).contains("Mira: harbour"))
            _ = try await server.client.login(name: "mira", password: "mira-password")
            #expect(server.storedFiles().filter { $0.hasPrefix("media/travel/") }.count == 1)
        }
    }
}
