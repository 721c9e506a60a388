@testable import ReelCore
import Testing

@Suite struct ByteRangeTests {
    @Test func endAndContains() {
        let range = ByteRange(offset: 100, length: 50)
        #expect(range.end == 150)
        #expect(range.contains(100) && range.contains(149))
        #expect(!range.contains(150) && !range.contains(99))
        #expect(ByteRange(offset: 5).end == nil)
        #expect(ByteRange(offset: 5).contains(1 << 40))
        #expect(ByteRange(10..<20) == ByteRange(offset: 10, length: 10))
    }

    @Test func clampingToTheResourceLength() {
        #expect(ByteRange(offset: 900, length: 500).clamped(toResourceLength: 1000) == ByteRange(offset: 900, length: 100))
        #expect(ByteRange(offset: 10).clamped(toResourceLength: 1000) == ByteRange(offset: 10, length: 990))
        #expect(ByteRange(offset: 1000).clamped(toResourceLength: 1000) == ByteRange(offset: 1000, length: 0))
        #expect(ByteRange(offset: 2000, length: 5).clamped(toResourceLength: 1000) == ByteRange(offset: 1000, length: 0))
    }

    @Test func httpHeadersAndDescriptions() {
        #expect(ByteRange(offset: 0, length: 100).httpRangeHeader == "bytes=0-99")
        #expect(ByteRange(offset: 100).httpRangeHeader == "bytes=100-")
        #expect(ByteRange(offset: 100, length: 50).description == "bytes 100-149")
        #expect(ByteRange(offset: 7).description == "bytes 7-")
        #expect(ByteRange(offset: 7, length: 0).description == "bytes 7+0")
    }
}
