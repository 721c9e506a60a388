import Foundation
import ReelCore
import ReelLoading
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `reel serve` killed before and after each step of an upload (the fsync of the received
/// file, its rename into `media/`, the commit of its row), one point per run: after a restart,
/// no upload file is left without its row, no row without its file, and an upload the client
/// was told about is there. The run past the last point must acknowledge the upload.
@Suite("reel serve killed at every commit point of an upload")
struct UploadCrashPointTests {
    struct Round {
        var killed: Bool
        var acknowledged: Bool
        var point: String
    }

    /// One round: a fresh data directory, a server asked to stop at `point`, a sign-up and an
    /// upload; then a restart, and what it serves is compared with what is on the disk.
    static func round(_ reel: URL, point: Int, clip: URL, scratch: Scratch) async throws -> Round {
        let root = scratch.url.appendingPathComponent("round-\(point)")
        let served = root.appendingPathComponent("served")
        let data = root.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        var client = ProcessInfo.processInfo.environment
        client["XDG_CONFIG_HOME"] = root.appendingPathComponent("config").path
        var crashing = ProcessInfo.processInfo.environment
        crashing["REEL_CRASH_AT"] = String(point)
        crashing["REEL_CRASH_LOG"] = root.appendingPathComponent("points").path
        let serve = ["serve", served.path, "--data", data.path, "--port", "0"]

        let server = try Child(reel, serve, environment: crashing)
        defer { server.kill(SIGKILL) }
        let url = try #require(try await servedURL(server, attempts: 1000), "reel serve printed no URL: \(server.output)")
        let register = try await runSeparately(reel, ["register", url.absoluteString, "--name", "ada", "--email", "ada@example.org",
                                                      "--password-stdin"], environment: client, input: Data("analytical engine\n".utf8))
        #expect(register.status == 0, "\(register.stderr)")
        let upload = try await runSeparately(reel, ["upload", clip.path, "--title", "Harbour at dawn", "--category", "travel"],
                                             environment: client)
        // The point is logged just before the kill: its line says whether the server reached it.
        let reached = (try? String(contentsOf: root.appendingPathComponent("points"), encoding: .utf8)) ?? ""
        let line = reached.split(separator: "\n").first { $0.hasPrefix("\(point) ") }.map { String($0.drop { $0 != " " }.dropFirst()) }
        let killed = line != nil
        if killed {
            #expect(await server.exitStatus() == SIGKILL, "point \(point): \(server.output)")
        } else {
            #expect(upload.status == 0, "point \(point): \(upload.stderr)")
        }
        server.kill(SIGKILL)
        _ = await server.exitStatus()

        let restarted = try Child(reel, serve)
        defer { restarted.kill(SIGKILL) }
        let again = try #require(try await servedURL(restarted, attempts: 1000), "restart: \(restarted.output)")
        let http = HTTPLoader()
        let page = try await http.data(URL(string: again.absoluteString + "api/users/1/items?current=1&size=50")!)
        await http.shutdown()
        let items = try #require(try JSONSerialization.jsonObject(with: page) as? [String: Any])["items"] as? [[String: Any]] ?? []
        let recorded = Set(items.compactMap { ($0["video"] as? String).flatMap { URL(string: $0)?.lastPathComponent } })
        let stored = Set((try? FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent("media/travel").path)) ?? [])
        #expect(stored == recorded, "point \(point) (\(line ?? "?")): files \(stored), rows \(recorded)")
        if upload.status == 0 {
            #expect(items.contains { $0["title"] as? String == "Harbour at dawn" }, "point \(point): an acknowledged upload was lost")
        }
        let incoming = (try? FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent("incoming").path)) ?? []
        #expect(incoming.isEmpty, "point \(point): \(incoming) left in incoming/")
        return Round(killed: killed, acknowledged: upload.status == 0, point: line ?? "?")
    }

    @Test func noUploadFileWithoutItsRowAfterAKillAtAnyPoint() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-upload-crash")
        defer { scratch.remove() }
        let clip = try await offThePool { try Fixtures.clip(ClipSpec(duration: 1)) }
        var killedAt: [String] = []
        for point in 1...20 {
            let round = try await Self.round(reel, point: point, clip: clip, scratch: scratch)
            guard round.killed else {
                #expect(round.acknowledged)
                break
            }
            killedAt.append(round.point)
        }
        // fsync, rename, after it, the row's commit, after it: the five steps of an upload.
        #expect(killedAt.map { String($0.prefix { $0 != " " }) } == ["fsync", "rename", "after", "commit", "after"], "\(killedAt)")
    }

    /// A file moved into place by an upload whose row never committed is swept at the next
    /// start; an operator's own file in the media directory (a name the server never makes) is not.
    @Test func aStartSweepsOnlyUnrecordedFilesTheServerNamed() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-upload-sweep")
        defer { scratch.remove() }
        let data = scratch.url.appendingPathComponent("data")
        let travel = data.appendingPathComponent("media/travel")
        try FileManager.default.createDirectory(at: travel, withIntermediateDirectories: true)
        let orphan = "AAAAAAAAAAAAAAAAAAAAAA.mp4"
        try Data("x".utf8).write(to: travel.appendingPathComponent(orphan))
        try Data("y".utf8).write(to: travel.appendingPathComponent("operator-notes.mp4"))
        try FileManager.default.createDirectory(at: scratch.url.appendingPathComponent("served"), withIntermediateDirectories: true)
        let server = try Child(reel, ["serve", scratch.url.appendingPathComponent("served").path, "--data", data.path, "--port", "0"])
        defer { server.kill(SIGKILL) }
        _ = try #require(try await servedURL(server, attempts: 1000), "\(server.output)")
        let left = try FileManager.default.contentsOfDirectory(atPath: travel.path)
        #expect(left == ["operator-notes.mp4"])
    }
}
