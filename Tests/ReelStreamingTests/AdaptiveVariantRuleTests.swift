import Foundation
import ReelStreaming
import Testing

@Suite struct AdaptiveVariantRuleTests {
    let ladder: [Int64] = [400_000, 1_200_000, 2_500_000]
    let rule = AdaptiveVariantRule()

    @Test func stepsUpOnlyWithEnoughBuffered() {
        let early = rule.decide(bandwidths: ladder, current: 0, estimate: 10_000_000, buffered: 1)
        #expect(early.rank == 0)
        #expect(early.reason == .holdUpForBuffer)
        let later = rule.decide(bandwidths: ladder, current: 0, estimate: 10_000_000, buffered: 4)
        #expect(later.rank == 2, "straight to the highest that fits, as Media3 does")
        #expect(later.reason == .up)
        #expect(later.description.hasPrefix("up: fits the estimate 10000000 b/s"))
    }

    @Test func stepsDownWhenTheEstimateFallsUnlessTheBufferIsDeep() {
        let down = rule.decide(bandwidths: ladder, current: 2, estimate: 1_000_000, buffered: 6)
        #expect(down.rank == 0, "1 Mb/s × 0.7 carries only the lowest")
        #expect(down.reason == .down)
        let deep = rule.decide(bandwidths: ladder, current: 2, estimate: 1_000_000, buffered: 20)
        #expect(deep.rank == 2)
        #expect(deep.reason == .holdDownForBuffer)
    }

    @Test func panicsOnTheLastSegmentWhenTheBufferIsNearlyDry() {
        // The estimate still says 4 Mb/s (it lags); the last segment came at 600 kb/s.
        let decision = rule.decide(bandwidths: ladder, current: 2, estimate: 4_000_000, buffered: 1.5, lastThroughput: 600_000)
        #expect(decision.rank == 0)
        #expect(decision.reason == .panic)
        // With the buffer full the same segment is only a sample among others.
        let calm = rule.decide(bandwidths: ladder, current: 2, estimate: 4_000_000, buffered: 8, lastThroughput: 600_000)
        #expect(calm.rank == 2)
    }

    @Test func nothingKnownKeepsTheCurrentVariant() {
        let decision = rule.decide(bandwidths: ladder, current: 1, estimate: nil, buffered: 10)
        #expect(decision.rank == 1)
        #expect(decision.reason == .keep)
        #expect(rule.decide(bandwidths: [800_000], current: 0, estimate: 100, buffered: 0).rank == 0)
    }

    @Test func theHysteresisHoldsBetweenTheTwoFractions() {
        // 2.5 Mb/s needs 3.57 Mb/s to be chosen (0.7) and 2.94 Mb/s to be kept (0.85): every
        // estimate in between keeps whichever of the two it already plays.
        for estimate in stride(from: Int64(3_000_000), through: 3_500_000, by: 100_000) {
            #expect(rule.decide(bandwidths: ladder, current: 2, estimate: estimate, buffered: 6).rank == 2)
            #expect(rule.decide(bandwidths: ladder, current: 1, estimate: estimate, buffered: 6).rank == 1)
        }
    }

    /// The rule driven through a simulated session: 2 s segments of a 3-variant ladder over a
    /// scripted link, an estimate that is the mean of the last three segments' throughput,
    /// playback that drains the buffer in real time. Returns the ranks fetched and the stall time.
    func simulate(link: [(from: Double, bitsPerSecond: Double)], seconds: Double, fixed: Int? = nil) -> (ranks: [Int], stall: Double) {
        let segment = 2.0
        var clock = 0.0, buffered = 0.0, stall = 0.0, played = 0.0
        var rank = fixed ?? 0
        var throughputs: [Double] = []
        var ranks: [Int] = []
        func rate(at time: Double) -> Double { link.last { $0.from <= time }!.bitsPerSecond }
        var fetched = 0.0
        while fetched < seconds {
            if fixed == nil {
                let estimate = throughputs.isEmpty ? nil : Int64(throughputs.suffix(3).reduce(0, +) / Double(min(throughputs.count, 3)))
                rank = rule.decide(bandwidths: ladder, current: rank, estimate: estimate, buffered: buffered,
                                   lastThroughput: throughputs.last.map { Int64($0) }).rank
            }
            ranks.append(rank)
            // Download the segment bit by bit across the link's steps (10 ms steps).
            var bits = Double(ladder[rank]) * segment
            let began = clock
            while bits > 0 {
                bits -= rate(at: clock) * 0.01
                clock += 0.01
                if played > 0 || fetched > 0 {
                    if buffered > 0 { buffered = max(0, buffered - 0.01); played += 0.01 } else { stall += 0.01 }
                }
            }
            throughputs.append(Double(ladder[rank]) * segment / (clock - began))
            buffered += segment
            fetched += segment
            // A buffer of 12 s is enough: wait while it is full.
            while buffered > 12 { buffered -= 0.01; played += 0.01; clock += 0.01 }
        }
        return (ranks, stall)
    }

    @Test func onTheIssuesLinkItStepsDownBeforeStallingAndBackUpAfter() {
        // 3 Mb/s, then 0.5 Mb/s at 5 s, then 8 Mb/s at 15 s; a 30 s stream.
        let link: [(from: Double, bitsPerSecond: Double)] = [(0, 3_000_000), (5, 500_000), (15, 8_000_000)]
        let adaptive = simulate(link: link, seconds: 30)
        let fixedTop = simulate(link: link, seconds: 30, fixed: 2)
        #expect(adaptive.ranks.contains(2) || adaptive.ranks.contains(1), "it stepped up on the 3 Mb/s link: \(adaptive.ranks)")
        let firstDown = adaptive.ranks.indices.dropFirst().first { adaptive.ranks[$0] < adaptive.ranks[$0 - 1] }
        #expect(firstDown != nil, "it stepped down when the link fell: \(adaptive.ranks)")
        #expect(adaptive.ranks.last == 2, "and back to the top once the link recovered: \(adaptive.ranks)")
        #expect(adaptive.stall < fixedTop.stall, "stall \(adaptive.stall) s against the fixed top variant's \(fixedTop.stall) s")
    }

    @Test func onASteadyLinkItDoesNotOscillate() {
        for bitsPerSecond in stride(from: 500_000.0, through: 6_000_000, by: 250_000) {
            let run = simulate(link: [(0, bitsPerSecond)], seconds: 60)
            let switches = zip(run.ranks, run.ranks.dropFirst()).filter { $0 != $1 }.count
            let downs = zip(run.ranks, run.ranks.dropFirst()).filter { $0 > $1 }.count
            #expect(downs == 0, "no step down on a steady \(bitsPerSecond) b/s link: \(run.ranks)")
            #expect(switches <= 2, "at most the steps up at the start at \(bitsPerSecond) b/s: \(run.ranks)")
        }
    }
}
