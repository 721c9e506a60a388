import Foundation
import ReelCore
import Testing

/// The live latency machine alone: events in, decisions out, time given — no threads, files or
/// sockets. Examples first, then a simulated player and origin over seeded random orders.
@Suite("LiveLatencyMachine")
struct LiveLatencyMachineTests {
    typealias M = LiveLatencyMachine

    /// A small seeded generator (SplitMix64), so a failing seed can be replayed.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A machine with a target of `target` and an edge `lead` seconds ahead of the clock.
    func machine(target: Double = 1.5, lead: Double = 100) -> M {
        var machine = M()
        _ = machine.handle(.idealTarget(target))
        _ = machine.handle(.edge(newest: lead, at: 0))
        return machine
    }

    @Test func itHoldsUntilItKnowsTheTargetAndTheEdge() {
        var machine = M()
        #expect(machine.handle(.playhead(position: 10, buffered: 2, at: 1))?.action == .hold(.noTarget))
        _ = machine.handle(.idealTarget(1.5))
        #expect(machine.handle(.playhead(position: 10, buffered: 2, at: 2))?.action == .hold(.noEdge))
        _ = machine.handle(.edge(newest: 20, at: 2))
        let decision = machine.handle(.playhead(position: 10, buffered: 2, at: 3))
        #expect(decision?.offset == 11, "the edge moved on a second since the playlist: 21 − 10")
        #expect(decision?.action == .speed(1.03))
    }

    @Test func theSpeedIsProportionalToTheErrorWithinItsBounds() {
        // The edge is at 100 + t; a playhead at 100 + t − offset.
        for (offset, expected) in [(1.7, 1.02), (1.5, 1.0), (1.53, 1.0), (2.5, 1.03), (1.3, 0.98), (0.5, 0.97), (1.45, 1.0)] {
            var machine = machine()
            let decision = machine.handle(.playhead(position: 100 + 5 - offset, buffered: 2, at: 5))
            let speed = decision.map { d -> Double in if case .speed(let s) = d.action { return s } else { return d.speed } }
            #expect(abs((speed ?? 0) - expected) < 1e-9, "offset \(offset): \(String(describing: decision))")
        }
    }

    @Test func itChangesTheSpeedAtMostOnceASecond() {
        var machine = machine()
        #expect(machine.handle(.playhead(position: 100 + 1 - 2.5, buffered: 2, at: 1))?.action == .speed(1.03))
        #expect(machine.handle(.playhead(position: 100 + 1.5 - 1.5, buffered: 2, at: 1.5))?.action == .hold(.tooSoon))
        #expect(machine.handle(.playhead(position: 100 + 2 - 1.5, buffered: 2, at: 2))?.action == .speed(1))
        #expect(machine.handle(.playhead(position: 100 + 3.5 - 1.5, buffered: 2, at: 3.5))?.action == .hold(.unchanged))
    }

    @Test func aStallMovesTheTargetBackAndCalmBringsItHome() {
        var machine = machine()
        _ = machine.handle(.playhead(position: 100 - 1.5, buffered: 2, at: 0))
        _ = machine.handle(.stalled(at: 1))
        #expect(machine.target == 2)
        for stall in 2...10 { _ = machine.handle(.stalled(at: Double(stall))) }
        #expect(machine.target == 4.5, "at most three seconds past the ideal")
        // Ten calm seconds from the last stall, then 0.05 s per second.
        _ = machine.handle(.playhead(position: 100 + 15 - 4.5, buffered: 2, at: 15))
        #expect(machine.target == 4.5)
        _ = machine.handle(.playhead(position: 100 + 30 - 4.5, buffered: 2, at: 30))
        #expect(abs((machine.target ?? 0) - 4) < 1e-9)
        _ = machine.handle(.playhead(position: 200, buffered: 2, at: 200))
        #expect(machine.target == 1.5, "never below the ideal")
    }

    @Test func aRateTheUserChoseIsLeftAlone() {
        var machine = machine()
        _ = machine.handle(.rate(2))
        #expect(machine.handle(.playhead(position: 100 + 5 - 3, buffered: 2, at: 5))?.action == .hold(.userRate))
        _ = machine.handle(.rate(0))
        #expect(machine.handle(.playhead(position: 100 + 6 - 3, buffered: 2, at: 6))?.action == .hold(.userRate))
        _ = machine.handle(.rate(1))
        #expect(machine.handle(.playhead(position: 100 + 7 - 3, buffered: 2, at: 7))?.action == .speed(1.03))
    }

    @Test func itDoesNotSpeedUpOnAnEmptyBuffer() {
        var machine = machine()
        #expect(machine.handle(.playhead(position: 100 + 5 - 3, buffered: 0.2, at: 5))?.action == .hold(.unchanged))
        #expect(machine.handle(.playhead(position: 100 + 6 - 3, buffered: 1, at: 6))?.action == .speed(1.03))
    }

    @Test func theEdgeIsTheLatestOfRecentPlaylistsAndOldOnesAgeOut() {
        var machine = M()
        // The true edge is t + 50; playlists place it up to a part late.
        _ = machine.handle(.edge(newest: 50 + 1 - 0.4, at: 1))
        _ = machine.handle(.edge(newest: 50 + 2 - 0.0, at: 2))
        _ = machine.handle(.edge(newest: 50 + 3 - 0.3, at: 3))
        #expect(machine.edge(at: 4) == 54)
        // Ten seconds on only the sample from 3 s counts; then a timeline placed again (the
        // edge now 10 s earlier on the stream's clock) takes over once the old ones aged out.
        #expect(abs((machine.edge(at: 12.5) ?? 0) - (49.7 + 12.5)) < 1e-9)
        _ = machine.handle(.edge(newest: 40 + 13, at: 13))
        #expect(machine.edge(at: 13) == 49.7 + 13, "the sample from 3 s still counts at 13")
        #expect(machine.edge(at: 13.5) == 53.5)
    }

    // MARK: - A simulated player and origin

    /// A player at `speed` behind an origin whose edge is `now + lead`; playlists arrive every
    /// `reload` seconds placing the edge up to `lateness` late; stalls freeze the playhead.
    struct World {
        var machine: M
        var now = 0.0
        var position: Double
        var playerRate = 1.0
        var userRate: Double?
        let lead = 1000.0
        var stalledUntil = -1.0
        var speeds: [(at: Double, speed: Double)] = []

        init(offset: Double, target: Double) {
            machine = M()
            _ = machine.handle(.idealTarget(target))
            position = lead - offset
        }

        var offset: Double { lead + now - position }

        mutating func advance(_ seconds: Double) {
            let playing = now >= stalledUntil ? seconds : max(0, now + seconds - stalledUntil)
            now += seconds
            // Nothing past the edge is there to play: a player that got there waits.
            position = min(position + playing * (userRate ?? playerRate), lead + now - 0.05)
        }

        mutating func tick(buffered: Double) -> M.Decision? {
            _ = machine.handle(.rate(userRate ?? playerRate))
            let decision = machine.handle(.playhead(position: position, buffered: buffered, at: now))
            if case .speed(let speed)? = decision?.action {
                playerRate = speed
                speeds.append((now, speed))
            }
            return decision
        }
    }

    @Test func aPlayerJoinedASecondLateCatchesUpAndHolds() {
        var world = World(offset: 2.5, target: 1.5)
        var offsets: [Double] = []
        for step in 0..<240 {
            if step % 2 == 0 { _ = world.machine.handle(.edge(newest: world.lead + world.now, at: world.now)) }
            _ = world.tick(buffered: 2)
            world.advance(0.5)
            offsets.append(world.offset)
        }
        #expect(abs(offsets.last! - 1.5) <= 0.1, "held at the target: \(offsets.last!)")
        #expect(offsets.suffix(120).allSatisfy { abs($0 - 1.5) <= 0.1 }, "and stays there")
        #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $1 <= $0 + 1e-9 }, "never falling back on the way")
        #expect(world.speeds.allSatisfy { (0.97...1.03).contains($0.speed) })
    }

    /// Random orders of playlists (late by up to a part), playheads, buffer levels, stalls and
    /// user rates. Whatever the order: every speed is within bounds and changes at most once a
    /// second; it speeds up only when behind the target with something buffered and slows only
    /// when ahead; the target stays within what stalls may add; the edge is never estimated
    /// past the true edge; a rate the user chose is never changed; and once the stalls and the
    /// user stop, the offset settles at the target.
    @Test(arguments: 0..<48)
    func randomOrdersKeepTheRules(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let target = [0.5, 1.5, 3, 6][Int(seed % 4)]
        var world = World(offset: target + Double.random(in: -1...3, using: &random), target: target)
        let configuration = world.machine.configuration
        var lastChange = -Double.infinity
        for _ in 0..<600 {
            switch Int.random(in: 0..<20, using: &random) {
            case 0...5:
                let late = Double.random(in: 0...0.5, using: &random)
                _ = world.machine.handle(.edge(newest: world.lead + world.now - late, at: world.now))
            case 6:
                _ = world.machine.handle(.stalled(at: world.now))
                world.stalledUntil = world.now + Double.random(in: 0...1.5, using: &random)
            case 7:
                world.userRate = [nil, nil, 0, 2, 1][Int.random(in: 0..<5, using: &random)]
            default:
                let buffered = Double.random(in: 0...3, using: &random)
                let before = (rate: world.userRate ?? world.playerRate, ())
                let decision = world.tick(buffered: buffered)
                if let edge = world.machine.edge(at: world.now) { #expect(edge <= world.lead + world.now + 1e-9) }
                if case .speed(let speed)? = decision?.action {
                    #expect(speed >= configuration.minimumSpeed && speed <= configuration.maximumSpeed)
                    #expect(world.now - lastChange >= configuration.minimumUpdateInterval - 1e-9)
                    lastChange = world.now
                    #expect(before.rate == 1 || world.userRate == nil, "a user's rate \(before.rate) was changed")
                    if let offset = decision?.offset, let target = decision?.target {
                        if speed > 1 { #expect(offset > target && buffered >= configuration.minimumBufferToSpeedUp) }
                        if speed < 1 { #expect(offset < target) }
                    }
                }
            }
            if let current = world.machine.target {
                #expect(current >= target - 1e-9 && current <= target + configuration.maximumTargetIncrease + 1e-9)
            }
            world.advance(Double.random(in: 0.05...0.6, using: &random))
        }
        // Calm: no stalls, no user, steady playlists: it settles at the (recovered) target.
        world.userRate = nil
        world.stalledUntil = -1
        // Long enough for the target to come home (10 s, then 3 s at 0.05 s a second) and to
        // make up the error at the slowest correction (0.02 s a second near the target).
        let steps = Int((70 + 60 + (abs(world.offset - target) + 3) / 0.02) * 2)
        for step in 0..<steps {
            if step % 2 == 0 { _ = world.machine.handle(.edge(newest: world.lead + world.now, at: world.now)) }
            _ = world.tick(buffered: 2)
            world.advance(0.5)
        }
        #expect(world.machine.target == target, "seed \(seed): the target came home")
        #expect(abs(world.offset - target) <= configuration.tolerance + 0.05,
                "seed \(seed): offset \(world.offset), target \(target), speed \(world.playerRate), \(String(describing: world.tick(buffered: 2)))")
    }
}
