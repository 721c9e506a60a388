import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// swscale's vector writers store past the end of a row; the RGB array FrameScaler
/// hands out must leave them room (a 360-pixel-wide JPEG corrupted the heap before).
@Suite struct FrameScalerOverrunTests {
    @Test func picturesOfAwkwardWidthsConvertRepeatedlyWithExactSizes() throws {
        for (width, height) in [(360, 640), (362, 642), (250, 130), (1000, 18)] {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-overrun-\(UUID().uuidString).jpg")
            defer { try? FileManager.default.removeItem(at: url) }
            try ClipEncoder.encodeImage(source: "gradients=size=\(width)x\(height)", width: width, height: height, to: url)
            for _ in 0..<40 {
                let image = try ImageDecoder.decodeNow(url, loader: FileLoaderForTests(), maxWidth: 1080, maxHeight: 1920)
                #expect(image.width == width && image.height == height)
                #expect(image.bytes.count == width * height * 3)
            }
        }
    }
}
