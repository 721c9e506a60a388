@testable import ReelCore
import Testing

@Suite struct PlayerStateMachineTests {
    typealias SM = PlayerStateMachine

    @Test func playBeforeTheItemIsReadyWaitsThenRuns() {
        var machine = SM()
        #expect(machine.timeControlStatus == .paused)
        _ = machine.handle(.itemReplaced(hasItem: true))
        let actions = machine.handle(.rateRequested(1))
        #expect(machine.timeControlStatus == .waitingToPlay(.evaluatingBufferingRate))
        #expect(!actions.contains(.runClock(rate: 1)))
        let ready = machine.handle(.itemReady)
        #expect(ready.contains(.runClock(rate: 1)))
        #expect(ready.contains(.notifyStatus(.readyToPlay)))
        #expect(machine.timeControlStatus == .playing)
    }

    @Test func playWithoutAnItemWaitsForOne() {
        var machine = SM()
        _ = machine.handle(.rateRequested(1))
        #expect(machine.timeControlStatus == .waitingToPlay(.noItemToPlay))
    }

    @Test func pauseStopsTheClockAndRateChangesReRunIt() {
        var machine = SM()
        _ = machine.handle(.itemReplaced(hasItem: true))
        _ = machine.handle(.itemReady)
        _ = machine.handle(.rateRequested(1))
        #expect(machine.handle(.rateRequested(2)).contains(.runClock(rate: 2)))
        let paused = machine.handle(.rateRequested(0))
        #expect(paused.contains(.stopClock))
        #expect(paused.contains(.notifyRate(0)))
        #expect(machine.timeControlStatus == .paused)
    }

    @Test func bufferingStopsAndResumes() {
        var machine = SM()
        _ = machine.handle(.itemReplaced(hasItem: true))
        _ = machine.handle(.itemReady)
        _ = machine.handle(.rateRequested(1))
        let empty = machine.handle(.bufferEmpty)
        #expect(empty.contains(.stopClock))
        #expect(machine.timeControlStatus == .waitingToPlay(.buffering))
        let ready = machine.handle(.bufferReady)
        #expect(ready.contains(.runClock(rate: 1)))
        #expect(machine.timeControlStatus == .playing)
    }

    @Test func aNewerSeekFinishesTheOlderWithFalse() {
        var machine = SM()
        _ = machine.handle(.itemReplaced(hasItem: true))
        _ = machine.handle(.itemReady)
        #expect(machine.handle(.seekRequested(id: 1)) == [])
        #expect(machine.handle(.seekRequested(id: 2)) == [.finishSeek(id: 1, finished: false)])
        #expect(machine.handle(.seekCompleted(id: 1)) == [], "a stale completion is ignored")
        #expect(machine.handle(.seekCompleted(id: 2)) == [.finishSeek(id: 2, finished: true)])
        #expect(!machine.isSeeking)
    }

    @Test func replacingTheItemFinishesAPendingSeekWithFalse() {
        var machine = SM()
        _ = machine.handle(.itemReplaced(hasItem: true))
        _ = machine.handle(.seekRequested(id: 7))
        #expect(machine.handle(.itemReplaced(hasItem: false)).contains(.finishSeek(id: 7, finished: false)))
        #expect(machine.status == .unknown)
    }

    @Test func theEndPausesOrLoops() {
        var pausing = SM(actionAtItemEnd: .pause)
        _ = pausing.handle(.itemReplaced(hasItem: true))
        _ = pausing.handle(.itemReady)
        _ = pausing.handle(.rateRequested(1))
        let end = pausing.handle(.reachedEnd)
        #expect(end.contains(.notifyEnded) && end.contains(.stopClock))
        #expect(pausing.rate == 0 && pausing.hasEnded)
        #expect(pausing.handle(.rateRequested(1)).contains(.restartFromBeginning), "play after the end starts over")

        var looping = SM(actionAtItemEnd: .loop)
        _ = looping.handle(.itemReplaced(hasItem: true))
        _ = looping.handle(.itemReady)
        _ = looping.handle(.rateRequested(1))
        let loop = looping.handle(.reachedEnd)
        #expect(loop.contains(.restartFromBeginning))
        #expect(!loop.contains(.stopClock))
        #expect(looping.timeControlStatus == .playing)
    }

    /// A seamless loop: the engine played on into the item's next pass, so observers hear of
    /// the loop (as looping, whatever the action at the end now says) and nothing restarts.
    @Test func aPassCompletedIsALoopWithNothingToRestart() {
        var machine = SM(actionAtItemEnd: .loop)
        _ = machine.handle(.itemReplaced(hasItem: true))
        _ = machine.handle(.itemReady)
        _ = machine.handle(.rateRequested(1))
        #expect(machine.handle(.passCompleted) == [.notifyLooped])
        machine.actionAtItemEnd = .pause
        #expect(machine.handle(.passCompleted) == [.notifyLooped], "the pass was already read and played")
        #expect(machine.timeControlStatus == .playing && !machine.hasEnded)
    }

    @Test func failureIsFinalForTheItem() {
        var machine = SM()
        _ = machine.handle(.itemReplaced(hasItem: true))
        _ = machine.handle(.rateRequested(1))
        let failed = machine.handle(.itemFailed("boom"))
        #expect(failed.contains(.notifyStatus(.failed("boom"))))
        #expect(machine.timeControlStatus == .paused)
        _ = machine.handle(.itemReady)
        #expect(machine.status == .failed("boom"))
    }

    @Test func negativeAndNonFiniteRatesPause() {
        var machine = SM()
        _ = machine.handle(.rateRequested(-2))
        #expect(machine.rate == 0)
        _ = machine.handle(.rateRequested(.nan))
        #expect(machine.rate == 0)
    }
}
