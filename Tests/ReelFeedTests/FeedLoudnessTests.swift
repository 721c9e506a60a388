import Foundation
import ReelFeedModel
import Testing

/// A feed item's loudness (`loudness`, LUFS; `truePeak`, dBTP) travels in the feed API and in
/// stored items, and feeds written before it existed still read.
@Suite struct FeedLoudnessTests {
    static let base = URL(string: "https://feed.example/api/feed")!

    @Test func theAPICarriesAnItemsLoudnessAndOlderPagesStillRead() throws {
        let item = FeedItem(id: "a", title: "A", videoURL: URL(string: "https://cdn.example/a.mp4"),
                            loudness: -19.5, truePeak: -2.25)
        let page = try FeedAPIFormat.encodeItems([item, FeedItem(id: "b", title: "B")])
        let json = String(decoding: page, as: UTF8.self)
        #expect(json.contains("\"loudness\":-19.5") && json.contains("\"truePeak\":-2.25"), "\(json)")
        let read = try FeedAPIFormat.decodeItems(page, relativeTo: Self.base)
        #expect(read.map(\.loudness) == [-19.5, nil])
        #expect(read.map(\.truePeak) == [-2.25, nil])
        let old = Data(#"{"items": [{"id": "c", "title": "C", "video": "c.mp4"}]}"#.utf8)
        let oldItems = try FeedAPIFormat.decodeItems(old, relativeTo: Self.base)
        #expect(oldItems.count == 1 && oldItems[0].loudness == nil && oldItems[0].truePeak == nil)
    }

    @Test func storedItemsKeepTheirLoudness() throws {
        let item = FeedItem(id: "a", title: "A", loudness: -30, truePeak: -12)
        let again = try JSONDecoder().decode(FeedItem.self, from: JSONEncoder().encode(item))
        #expect(again == item)
        let older = Data(#"{"id": "b", "title": "B", "uploader": "", "images": []}"#.utf8)
        let read = try JSONDecoder().decode(FeedItem.self, from: older)
        #expect(read.loudness == nil && read.truePeak == nil)
    }
}
