import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

@Suite struct ImageDecoderTests {
    @Test func aLargePictureIsDecodedAtTheDisplaySize() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-image-\(UUID().uuidString).jpg")
        defer { try? FileManager.default.removeItem(at: url) }
        try ClipEncoder.encodeImage(source: "color=c=blue", width: 1920, height: 1080, to: url)
        let image = try await ImageDecoder.decode(url, loader: FileLoaderForTests(), maxWidth: 540, maxHeight: 960)
        #expect(image.width == 540 && image.height == 304, "fit inside 540×960, aspect kept")
        #expect(image.bytes.count == 540 * 304 * 3, "only the downsampled pixels are kept")
        let (r, g, b) = image[270, 150]
        #expect(b > 200 && r < 40 && g < 40)
    }

    @Test func smallPicturesAreNotScaledUp() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-image-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: url) }
        try ClipEncoder.encodeImage(source: "color=c=green", width: 100, height: 80, to: url)
        let image = try await ImageDecoder.decode(url, loader: FileLoaderForTests(), maxWidth: 540, maxHeight: 960)
        #expect(image.width == 100 && image.height == 80)
    }

    @Test func garbageIsAnError() async throws {
        let loader = FakeResourceLoader()
        let url = URL(string: "https://fake.example/x.png")!
        loader.add(Data(repeating: 7, count: 5000), at: url)
        await #expect(throws: MediaError.self) { try await ImageDecoder.decode(url, loader: loader, maxWidth: 10, maxHeight: 10) }
    }

    @Test func theIndexTellsHowManyBytesHoldTheFirstSeconds() async throws {
        let file = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 25, duration: 4, audioCodec: .aac))
        let size = Int64(try Data(contentsOf: file).count)
        let loader = FileLoaderForTests()
        let two = try #require(await MediaProbe.byteCount(forSeconds: 2, of: file, loader: loader))
        let one = try #require(await MediaProbe.byteCount(forSeconds: 1, of: file, loader: loader))
        #expect(one < two && two < size, "1 s: \(one), 2 s: \(two), file: \(size)")
        #expect(Double(two) > Double(size) * 0.3 && Double(two) < Double(size) * 0.8)
    }
}
