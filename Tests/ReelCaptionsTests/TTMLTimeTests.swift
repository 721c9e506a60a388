import Testing
import ReelCore
import ReelCaptions

@Suite struct TTMLTimeTests {
    private func time(_ value: Int64, _ timescale: Int32) -> MediaTime { MediaTime(value: value, timescale: timescale) }

    @Test func clockTimesWithFractions() {
        #expect(TTMLTime.parse("00:00:01.500") == time(3, 2))
        #expect(TTMLTime.parse("01:02:03") == time(3723, 1))
        #expect(TTMLTime.parse("100:00:00.1") == time(3_600_001, 10))
        #expect(TTMLTime.parse("00:00:00.000000001") == time(1, 1_000_000_000))
    }

    @Test func clockTimesOutOfRangeOrMalformedAreRefused() {
        for bad in ["00:60:00", "00:00:60", "0:00:01", "00:0:01", "00:00:1", "00:00:01.", "00:00", "1:2:3:4:5", "-00:00:01",
                    "00:00:01.5s", "", "０0:00:01", "00:00:30:30"] {
            #expect(TTMLTime.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func framesUseTheFrameRateTimesItsMultiplier() {
        let ntsc = TTMLTimingParameters(frameRate: 30, frameRateMultiplier: (1000, 1001), subFrameRate: 2)
        // 15 frames at 30000/1001 fps = 15015/30000 s.
        #expect(TTMLTime.parse("00:00:01:15", parameters: ntsc) == time(30000 + 15015, 30000))
        // One frame and one of two sub-frames: 1001/30000 + 1001/60000.
        #expect(TTMLTime.parse("00:00:00:01.1", parameters: ntsc) == time(3003, 60000))
        #expect(TTMLTime.parse("00:00:00:01.2", parameters: ntsc) == nil)
        #expect(TTMLTime.parse("00:00:00:30", parameters: ntsc) == nil)
        #expect(TTMLTime.parse("45f", parameters: ntsc) == time(45045, 30000))
        // Default frame rate 30.
        #expect(TTMLTime.parse("45f") == time(3, 2))
        #expect(TTMLTime.parse("00:00:00:29") == time(29, 30))
    }

    @Test func offsetTimesInEveryMetric() {
        #expect(TTMLTime.parse("1.5s") == time(3, 2))
        #expect(TTMLTime.parse("1500ms") == time(3, 2))
        #expect(TTMLTime.parse("0.25h") == time(900, 1))
        #expect(TTMLTime.parse("2m") == time(120, 1))
        #expect(TTMLTime.parse("0.5ms") == time(1, 2000))
        for bad in ["1.5", "s", "1.5x", ".5s", "1..5s", "1 s", "-1s", "1e3s"] {
            #expect(TTMLTime.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func ticksUseTheTickRateOrTheSpecDefault() {
        #expect(TTMLTime.parse("25000000t", parameters: TTMLTimingParameters(tickRate: 10_000_000)) == time(5, 2))
        // No tick rate and no frame rate: one tick per second.
        #expect(TTMLTime.parse("3t") == time(3, 1))
        // No tick rate but a frame rate: frame rate × multiplier × sub-frame rate ticks per second.
        let parameters = TTMLTimingParameters(frameRate: 30, frameRateMultiplier: (1000, 1001), subFrameRate: 2)
        #expect(parameters.effectiveTickRate == (60000, 1001))
        #expect(TTMLTime.parse("60t", parameters: parameters) == time(1001, 1000))
    }
}
