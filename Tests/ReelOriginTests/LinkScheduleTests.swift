import Foundation
import ReelOrigin
import ReelTestSupport
import Testing

/// The scripted link's arithmetic, and a server that follows it.
@Suite struct LinkScheduleTests {
    static let second: Int64 = 1_000_000_000

    @Test func itParsesWhatItPrintsAndRefusesNonsense() throws {
        let link = try LinkSchedule(parsing: "0:3000, 5:500,15.5:8000")
        #expect(link.steps == [.init(from: 0, kbps: 3000), .init(from: 5, kbps: 500), .init(from: 15.5, kbps: 8000)])
        #expect(try LinkSchedule(parsing: link.description) == link)
        for bad in ["", "5", "0:0", "0:-1", "5:100,5:200", "6:100,5:200", "x:1", "0:1,", "nan:5", "-1:5"] {
            #expect(throws: LinkSchedule.Failure.self, "\(bad)") { try LinkSchedule(parsing: bad) }
        }
    }

    @Test func aTransferThatSpansAStepGoesAtEachRateForItsPart() throws {
        // 8000 kbit/s = 1 MB/s; from 1 s, 800 kbit/s = 100 kB/s.
        let link = try LinkSchedule(parsing: "0:8000,1:800")
        #expect(link.bytesPerSecond(at: 0, base: nil) == 1_000_000)
        #expect(link.bytesPerSecond(at: 2 * Self.second, base: nil) == 100_000)
        #expect(link.transmissionNanoseconds(500_000, from: 0, base: nil) == Self.second / 2)
        // 500 kB from 0.5 s: 500 kB by 1 s, then nothing left.
        #expect(link.transmissionNanoseconds(500_000, from: Self.second / 2, base: nil) == Self.second / 2)
        // 600 kB from 0.5 s: 500 kB by 1 s, 100 kB more at 100 kB/s: 1.5 s in all.
        #expect(link.transmissionNanoseconds(600_000, from: Self.second / 2, base: nil) == 3 * Self.second / 2)
        // Before the first step: the fixed cap, or nothing.
        let later = try LinkSchedule(parsing: "2:800")
        #expect(later.transmissionNanoseconds(100_000, from: 0, base: nil) == 0)
        #expect(later.transmissionNanoseconds(300_000, from: Self.second, base: 200_000) == 2 * Self.second)
    }

    /// Wall-clock lower bound only (a busy machine is slower, never faster): 250 kB through a
    /// link of 1 MB/s that drops to 100 kB/s at 0.1 s after the start takes more than 1.5 s (at
    /// most 100 kB can go before the drop).
    @Test func theServerPacesByTheSchedule() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-link-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(repeating: 7, count: 250_000).write(to: directory.appendingPathComponent("f.bin"))
        var configuration = OriginServer.Configuration(root: directory)
        configuration.link = try LinkSchedule(parsing: "0:8000,0.1:800")
        let server = OriginServer(configuration: configuration)
        let port = try await server.start()
        let started = ContinuousClock.now
        let response = try await rawRequest(port: port, path: "/f.bin")
        let elapsed = ContinuousClock.now - started
        await server.stop()
        #expect(response.body.count == 250_000)
        #expect(elapsed > .milliseconds(1500), "\(elapsed)")
    }
}
