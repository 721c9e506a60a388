import ReelCore
import Testing

@testable import ReelTerminal

private func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

@Suite struct KeyHoldDetectorTests {
    @Test func autoRepeatMeansHeldAndSilenceMeansReleased() {
        var hold = KeyHoldDetector()
        #expect(hold.press(at: ms(0)) == nil)
        #expect(hold.nextDeadline == nil)
        #expect(hold.press(at: ms(500)) == nil, "the first repeat comes after the keyboard's delay")
        #expect(hold.press(at: ms(533)) == .began)
        #expect(hold.isHeld)
        #expect(hold.press(at: ms(566)) == nil)
        #expect(hold.nextDeadline == ms(716))
        #expect(hold.advance(to: ms(715)) == nil)
        #expect(hold.advance(to: ms(716)) == .ended)
        #expect(!hold.isHeld && hold.nextDeadline == nil)
        #expect(hold.advance(to: ms(2000)) == nil)
    }

    @Test func tapsAreNotHolds() {
        var hold = KeyHoldDetector()
        #expect(hold.press(at: ms(0)) == nil)
        #expect(hold.press(at: ms(150)) == nil, "a quick double tap")
        #expect(hold.press(at: ms(400)) == nil)
        #expect(hold.advance(to: ms(5000)) == nil)
        #expect(!hold.isHeld)
    }

    @Test func holdingAgainAfterARelease() {
        var hold = KeyHoldDetector()
        _ = hold.press(at: ms(0))
        #expect(hold.press(at: ms(40)) == .began)
        #expect(hold.advance(to: ms(190)) == .ended)
        #expect(hold.press(at: ms(1000)) == nil)
        #expect(hold.press(at: ms(1040)) == .began)
    }

    @Test func withReleaseEventsAPressHeldPastTheDelayIsAHold() {
        var hold = KeyHoldDetector(expectsReleaseEvents: true)
        #expect(hold.press(at: ms(0)) == nil)
        #expect(hold.nextDeadline == ms(300))
        #expect(hold.advance(to: ms(299)) == nil)
        #expect(hold.advance(to: ms(300)) == .began)
        #expect(hold.advance(to: ms(5000)) == nil, "no timeout: only the release ends it")
        #expect(hold.release(at: ms(5200)) == .ended)
        #expect(!hold.isHeld)
    }

    @Test func withReleaseEventsATapIsNotAHold() {
        var hold = KeyHoldDetector(expectsReleaseEvents: true)
        #expect(hold.press(at: ms(0)) == nil)
        #expect(hold.release(at: ms(120)) == nil)
        #expect(hold.nextDeadline == nil)
        #expect(hold.advance(to: ms(1000)) == nil)
    }

    @Test func aRepeatEventIsAHoldAndTeachesTheDetectorAboutReleases() {
        var hold = KeyHoldDetector()
        #expect(hold.press(at: ms(0)) == nil)
        #expect(hold.repeatEvent(at: ms(250)) == .began)
        #expect(hold.expectsReleaseEvents)
        #expect(hold.repeatEvent(at: ms(280)) == nil)
        #expect(hold.advance(to: ms(5000)) == nil)
        #expect(hold.release(at: ms(5000)) == .ended)
    }
}
