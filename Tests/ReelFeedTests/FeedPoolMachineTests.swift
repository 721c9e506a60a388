import Foundation
import ReelCore
@testable import ReelFeed
import Testing

/// The feed pool machine against a simulated world — players, a picture decoder, a
/// paged source — over random orders of events: no threads, files or sockets. Whatever
/// the order, the pool stays within three players, lets every player go on close, serves
/// the current page, and shows a failed item as failed and lets the user past it.
@Suite("FeedPoolMachine properties")
struct FeedPoolMachineTests {
    typealias M = FeedPoolMachine

    /// A small seeded generator (SplitMix64), so a failing seed can be replayed.
    struct Random: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    enum Kind: CaseIterable { case video, badVideo, silentVideo, audioOnly, post, badPost }

    /// What the driver did and what the players and the decoder have yet to report.
    struct World {
        var machine: M
        let kinds: [Kind]
        let items: [FeedItem]
        let pageSize: Int
        /// What each slot's player holds, as the driver carried it out.
        var players: [(index: Int, generation: Int)?] = [nil, nil, nil]
        /// Assignments that were ever made, for late (stale) reports.
        var past: [(slot: Int, generation: Int)] = []
        var plansQueued = 0
        var decoding: Set<URL> = []
        var pageLoading = false
        var events: [FeedEvent] = []
        var now = MediaTime.zero

        func kind(of url: URL) -> Kind? {
            items.firstIndex { M.pictureURLs(of: $0).contains(url) }.map { kinds[$0] }
        }

        mutating func carryOut(_ actions: [M.Action]) {
            for action in actions {
                switch action {
                case .assign(let slot, let generation, let index, _, _):
                    #expect(players[slot] == nil, "slot \(slot) is assigned while it holds an item")
                    #expect(!players.contains { $0?.index == index }, "item \(index) held twice")
                    #expect(index == machine.current || machine.currentIsServed,
                            "a neighbour opens only once the current page is served")
                    players[slot] = (index, generation)
                    past.append((slot, generation))
                case .release(let slot): players[slot] = nil
                case .play(let slot), .pause(let slot): #expect(players[slot] != nil || machine.holding[slot] != nil)
                case .decodePicture(let url): decoding.insert(url)
                case .loadNextPage: pageLoading = true
                case .plan: plansQueued += 1
                case .emit(let event): events.append(event)
                case .firstFrame(let index, let startedAt, let stage):
                    events.append(.firstFrame(index: index, swipeToFirstFrameMs: (now - startedAt).seconds * 1000, stage: stage))
                case .preload, .stopPreloading, .forgetPictures, .frameShown: break
                }
            }
            #expect(players.compactMap { $0 }.count <= 3)
            #expect(machine.holding.compactMap { $0 }.count <= 3)
        }

        mutating func loadPage() {
            let number = machine.nextPageNumber
            let start = (number - 1) * pageSize
            let page = Array(items[min(start, items.count)..<min(items.count, start + pageSize)])
            pageLoading = false
            carryOut(machine.pageLoaded(page, hasMore: page.count == pageSize))
        }

        mutating func runPlan() {
            plansQueued -= 1
            carryOut(machine.plan())
            for (slot, held) in machine.holding.enumerated() {
                #expect(players[slot]?.index == held?.index && players[slot]?.generation == held?.generation,
                        "after a plan the players hold what the machine says")
            }
        }

        /// Slot `slot`'s player reports what its item makes it report.
        mutating func report(slot: Int) {
            guard let (index, generation) = players[slot] else { return }
            switch kinds[index] {
            case .video: carryOut(machine.framePresented(slot: slot, generation: generation))
            case .badVideo: carryOut(machine.playerFailed(slot: slot, generation: generation, message: "bad \(index)"))
            case .silentVideo: carryOut(machine.playerEnded(slot: slot, generation: generation, framePresented: false))
            case .audioOnly: carryOut(machine.playerReady(slot: slot, generation: generation, hasVideo: false))
            case .post, .badPost: Issue.record("an image post got a player")
            }
        }

        mutating func decode(_ url: URL) {
            decoding.remove(url)
            carryOut(machine.pictureDecoded(url, failure: kind(of: url) == .badPost ? "undecodable" : nil))
        }

        mutating func move(to index: Int) {
            let actions = machine.moved(to: index, now: now, isCached: { _ in false })
            carryOut(actions)
            if !actions.isEmpty { carryOut(machine.enterDelivered(index)) }
        }

        /// Lets everything in flight finish: plans, players' reports, decodes, pages.
        mutating func settle() {
            for _ in 0..<1000 {
                if plansQueued > 0 { runPlan(); continue }
                if let url = decoding.first { decode(url); continue }
                if pageLoading { loadPage(); continue }
                let before = machine
                for slot in 0..<3 { report(slot: slot) }
                if plansQueued == 0 && before.holding == machine.holding && before.failures == machine.failures
                    && before.pendingSwipe == machine.pendingSwipe { return }
            }
        }
    }

    static func makeWorld(_ random: inout Random) -> World {
        let count = Int.random(in: 1...25, using: &random)
        var kinds: [Kind] = []
        var items: [FeedItem] = []
        for i in 0..<count {
            let kind = Kind.allCases.randomElement(using: &random)!
            kinds.append(kind)
            switch kind {
            case .post, .badPost:
                items.append(FeedItem(id: "i\(i)", title: "\(i)", images: [URL(string: "p://\(i)/1")!, URL(string: "p://\(i)/2")!]))
            default:
                items.append(FeedItem(id: "i\(i)", title: "\(i)", videoURL: URL(string: "v://\(i)")!))
            }
        }
        let settings = M.Settings(wrapsAround: Bool.random(using: &random))
        return World(machine: M(settings: settings), kinds: kinds, items: items, pageSize: Int.random(in: 1...8, using: &random))
    }

    /// One random step: a swipe, a player's report (current or stale), a decode, a plan, a page, a tab change.
    static func step(_ world: inout World, _ random: inout Random) {
        world.now = world.now + MediaTime(value: Int64.random(in: 0...40, using: &random), timescale: 1000)
        switch Int.random(in: 0..<12, using: &random) {
        case 0, 1: world.move(to: world.machine.target(ofStep: 1) ?? world.machine.current)
        case 2: world.move(to: world.machine.target(ofStep: -1) ?? world.machine.current)
        case 3: world.move(to: Int.random(in: 0..<max(1, world.machine.items.count), using: &random))
        case 4, 5: if world.plansQueued > 0 { world.runPlan() }
        case 6: world.report(slot: Int.random(in: 0..<3, using: &random))
        case 7:
            if let url = world.decoding.randomElement(using: &random) { world.decode(url) }
        case 8: if world.pageLoading { world.loadPage() }
        case 9: world.carryOut(world.machine.setActive(Bool.random(using: &random) || !world.machine.active))
        case 10:
            // A late report from an assignment the slot may no longer hold.
            if let (slot, generation) = world.past.randomElement(using: &random) {
                let before = world.machine.holding
                if world.machine.holding[slot]?.generation != generation {
                    world.carryOut(world.machine.framePresented(slot: slot, generation: generation))
                    world.carryOut(world.machine.playerFailed(slot: slot, generation: generation, message: "late"))
                    #expect(world.machine.holding == before, "a stale report changes nothing")
                }
            }
        default: if world.plansQueued > 0 { world.runPlan() }
        }
    }

    /// Runs a random feed; returns the world, settled, on an active feed.
    static func run(seed: UInt64, steps: Int) -> World {
        var random = Random(state: seed)
        var world = makeWorld(&random)
        // `start(at: 0)`: the first page, then the feed starts.
        if case .load = world.machine.reach(0) { world.loadPage() }
        world.carryOut(world.machine.start(at: 0, now: world.now, isCached: { _ in false }))
        for _ in 0..<steps { step(&world, &random) }
        world.carryOut(world.machine.setActive(true))
        world.settle()
        return world
    }

    /// Whether the current page's outcome (first frame or failure) was told after it was last entered.
    static func servedAfterEnter(_ world: World) -> Bool {
        let current = world.machine.current
        guard let entered = world.events.lastIndex(of: .pageEnter(index: current)) else { return false }
        return world.events[entered...].contains { event in
            switch event {
            case .firstFrame(let index, _, _), .failed(let index, _): index == current
            default: false
            }
        }
    }

    @Test(arguments: 0..<4)
    func neverMoreThanThreePlayersAndTheCurrentPageAlwaysServed(batch: Int) async {
        for seed in UInt64(batch * 150)..<UInt64(batch * 150 + 150) {
            let world = Self.run(seed: seed, steps: 200)
            let m = world.machine
            let current = m.current
            let item = m.items[current]
            let served = m.failures[current] != nil
                || (item.videoURL == nil ? m.decodedPictures.contains(M.pictureURL(of: item)!) : m.isReady(current))
            #expect(served, "seed \(seed): the current page \(current) is served")
            let told = Self.servedAfterEnter(world)
            #expect(told, "seed \(seed): page \(current)'s first frame or failure was told")
            #expect(m.pendingSwipe == nil, "seed \(seed): no swipe left waiting")
            await Task.yield()
        }
    }

    @Test(arguments: 0..<2)
    func everyPlayerIsReleasedOnClose(batch: Int) async {
        for seed in UInt64(1000 + batch * 150)..<UInt64(1000 + batch * 150 + 150) {
            var world = Self.run(seed: seed, steps: 150)
            world.machine.close()
            // Plans still queued on the pool's queue run first, and decide nothing.
            while world.plansQueued > 0 {
                world.runPlan()
            }
            world.carryOut(world.machine.releaseAll())
            #expect(world.players.allSatisfy { $0 == nil }, "seed \(seed): no player left holding an item")
            #expect(world.machine.holding.allSatisfy { $0 == nil })
            // Nothing a player says after close opens anything.
            for (slot, generation) in world.past {
                world.carryOut(world.machine.playerFailed(slot: slot, generation: generation, message: "late"))
                world.carryOut(world.machine.framePresented(slot: slot, generation: generation))
            }
            #expect(world.machine.plan().isEmpty)
            await Task.yield()
        }
    }

    @Test(arguments: 0..<2)
    func aFailedItemIsShownAsFailedAndTheUserMovesPastIt(batch: Int) async {
        var checked = 0
        for seed in UInt64(2000 + batch * 200)..<UInt64(2000 + batch * 200 + 200) {
            var world = Self.run(seed: seed, steps: 120)
            let current = world.machine.current
            guard [.badVideo, .silentVideo, .badPost].contains(world.kinds[current]) else { continue }
            checked += 1
            #expect(world.machine.failures[current] != nil, "seed \(seed): bad item \(current) is marked failed")
            let entered = world.events.lastIndex(of: .pageEnter(index: current)) ?? 0
            let toldFailed = world.events[entered...].contains { if case .failed(current, _) = $0 { true } else { false } }
            #expect(toldFailed, "seed \(seed): landing on failed item \(current) told it failed")
            #expect(world.machine.slot(holding: current) == nil, "seed \(seed): a failed item holds no player")
            guard let past = world.machine.target(ofStep: 1) ?? world.machine.target(ofStep: -1), past != current else { continue }
            world.move(to: past)
            world.settle()
            #expect(world.machine.current == past, "seed \(seed): the user moved past failed item \(current)")
            let told = Self.servedAfterEnter(world)
            #expect(told, "seed \(seed): the page after the failed one is served")
        }
        #expect(checked > 20, "enough runs ended on a bad item")
    }

    /// Starting at a page past the pagination trigger asks for the next page at once, and
    /// the page after that once the user gets near its end.
    @Test func startingPastTheTriggerLoadsTheNextPage() {
        var machine = FeedPoolMachine()
        let page = (0..<10).map { FeedItem(id: "a\($0)", title: "\($0)", videoURL: URL(string: "v://a\($0)")!) }
        _ = machine.pageLoaded(page, hasMore: true)
        let started = machine.start(at: 8, now: .zero, isCached: { _ in false })
        #expect(started.contains(.loadNextPage))
        let next = (0..<10).map { FeedItem(id: "b\($0)", title: "\($0)", videoURL: URL(string: "v://b\($0)")!) }
        _ = machine.pageLoaded(next, hasMore: true)
        var asked = false
        for index in 9..<20 {
            let moved = machine.moved(to: index, now: .zero, isCached: { _ in false })
            asked = asked || moved.contains(.loadNextPage) || machine.enterDelivered(index).contains(.loadNextPage)
        }
        #expect(asked, "no page after the second was asked for")
    }

    @Test func aLandingIsToldOnlyAfterItsEnter() {
        var random = Random(state: 7)
        var world = Self.makeWorld(&random)
        if case .load = world.machine.reach(0) { world.loadPage() }
        world.carryOut(world.machine.start(at: 0, now: .zero, isCached: { _ in false }))
        world.settle()
        guard let next = world.machine.target(ofStep: 1) else { return }
        let moved = world.machine.moved(to: next, now: .zero, isCached: { _ in false })
        // A frame arriving between the move and the delivery of its enter is not yet told.
        for slot in 0..<3 where world.players[slot] != nil {
            let actions = world.machine.framePresented(slot: slot, generation: world.players[slot]!.generation)
            #expect(!actions.contains { if case .firstFrame = $0 { true } else { false } })
        }
        world.carryOut(moved)
        world.carryOut(world.machine.enterDelivered(next))
        world.settle()
        let told = Self.servedAfterEnter(world)
        #expect(told)
    }
}
