import Foundation
import ReelCore
import ReelFeed
import ReelLoading
import ReelMedia
import ReelTestSupport
import Synchronization

/// A feed of `count` items held in memory, served in pages (a short page is the last).
struct ListFeedSource: FeedSource {
    var items: [FeedItem]
    var categoryList: [FeedCategory] = []

    func categories() async throws -> [FeedCategory] { categoryList }

    func page(category: String?, page: Int, size: Int) async throws -> FeedPage {
        let list = category.map { c in items.filter { $0.category == c } } ?? items
        return Self.slice(list, page: page, size: size)
    }

    func search(text: String, page: Int, size: Int) async throws -> FeedPage {
        Self.slice(items.filter { $0.title.localizedCaseInsensitiveContains(text) }, page: page, size: size)
    }

    static func slice(_ items: [FeedItem], page: Int, size: Int) -> FeedPage {
        let start = (page - 1) * size
        guard start < items.count else { return FeedPage(items: [], hasMore: false) }
        let end = min(items.count, start + size)
        return FeedPage(items: Array(items[start..<end]), hasMore: end - start == size)
    }
}

/// A feed session on a manual clock over a fake loader: real players, real FFmpeg,
/// every byte and every tick scripted.
final class FeedHarness: @unchecked Sendable {
    static let clipSpec = ClipSpec(width: 64, height: 48, frameRate: 25, duration: 2, keyframeInterval: 25, audioCodec: .aac)

    let clock = ManualClock()
    let loader: FakeResourceLoader
    let session: FeedSession
    let audio: [RecordingAudioSink]
    private let log = Mutex<[FeedEvent]>([])

    /// `count` items, videos except the image posts at `images`; the media (or the
    /// pictures) of the items at `bad` are garbage no demuxer or decoder accepts.
    init(count: Int, pageSize: Int = 10, wraps: Bool = false, script: FakeResourceLoader.Script = .instant,
         preloader: ((FakeResourceLoader, ManualClock) -> any FeedPreloading)? = nil, images: Set<Int> = [],
         bad: Set<Int> = [], captions: [Int: [FeedCaption]] = [:]) throws {
        let data = try Fixtures.data(Self.clipSpec)
        loader = FakeResourceLoader(clock: clock, script: script)
        var items: [FeedItem] = []
        for i in 0..<count {
            if images.contains(i) {
                let picture = URL(string: "https://fake.example/p\(i).png")!
                let second = URL(string: "https://fake.example/p\(i)-2.png")!
                loader.add(bad.contains(i) ? Fixtures.garbage(seed: UInt32(i + 1)) : try Self.pictureData(), at: picture)
                loader.add(try Self.pictureData(), at: second)
                items.append(FeedItem(id: "item\(i)", title: "Post \(i)", images: [picture, second]))
            } else {
                let url = URL(string: "https://fake.example/v\(i).mp4")!
                loader.add(bad.contains(i) ? Fixtures.garbage(seed: UInt32(i + 1)) : data, at: url)
                items.append(FeedItem(id: "item\(i)", title: "Video \(i)", videoURL: url, captions: captions[i] ?? []))
            }
        }
        let sinks = (0..<3).map { _ in RecordingAudioSink() }
        audio = sinks
        let counter = Counter()
        session = FeedSession(
            source: ListFeedSource(items: items), loader: loader, preloader: preloader?(loader, clock),
            clock: clock, configuration: FeedSession.Configuration(pageSize: pageSize, wrapsAround: wraps, displaySize: (32, 32)),
            audioSink: { sinks[counter.next() % 3] }
        )
        session.addObserver { [weak self] event in self?.log.withTrackedLock { $0.append(event) } }
    }

    static func pictureData() throws -> Data {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-feed-picture-\(getpid()).png")
        if !FileManager.default.fileExists(atPath: url.path) {
            try ClipEncoder.encodeImage(source: "color=c=red", width: 400, height: 300, to: url)
        }
        return try Data(contentsOf: url)
    }

    var events: [FeedEvent] { log.withTrackedLock { $0 } }
    func clearEvents() { log.withTrackedLock { $0 = [] } }

    var firstFrames: [(index: Int, ms: Double, stage: PreloadStage)] {
        events.compactMap { if case .firstFrame(let i, let ms, let stage) = $0 { (i, ms, stage) } else { nil } }
    }

    /// The indices of the `failed` events so far, in order.
    var failedIndices: [Int] {
        events.compactMap { if case .failed(let i, _) = $0 { i } else { nil } }
    }

    /// Lets the pool and the players finish what they can without time passing.
    func settle() {
        for _ in 0..<3 {
            session.waitUntilIdle()
            for player in session.poolPlayers { player.waitUntilSettled() }
        }
        session.waitUntilIdle()
    }

    /// Advances the clock from deadline to deadline until `condition` holds or
    /// `limit` of clock time passed.
    @discardableResult
    func run(upTo limit: MediaTime, until condition: () -> Bool = { false }) -> Bool {
        let end = clock.now + limit
        while clock.now < end {
            settle()
            if condition() { return true }
            let next = clock.nextDeadline.map { min($0, end) } ?? end
            clock.advance(to: max(next, clock.now))
        }
        settle()
        return condition()
    }

    /// ``run(upTo:until:)`` on a thread of its own: the concurrency pool stays free
    /// for the session's tasks (page loads, picture decodes, the preloader).
    @discardableResult
    func running(upTo limit: MediaTime, until condition: @escaping @Sendable () -> Bool = { false }) async -> Bool {
        await offThePool { self.run(upTo: limit, until: condition) }
    }

    func start(at index: Int = 0) async throws {
        try await session.start(at: index)
    }
}

final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withTrackedLock { v in defer { v += 1 }; return v } }
}

func seconds(_ value: Double) -> MediaTime { MediaTime(seconds: value, preferredTimescale: 1_000_000) }

/// Records the queues the feed asks for.
final class RecordingPreloader: FeedPreloading, Sendable {
    private let state = Mutex<(list: [[PreloadRequest]], preloaded: Set<URL>)>(([], []))

    func setPreloadQueue(_ requests: [PreloadRequest]) { state.withTrackedLock { $0.list.append(requests) } }
    func hasPreloaded(_ url: URL) -> Bool { state.withTrackedLock { $0.preloaded.contains(url) } }
    func stop() { setPreloadQueue([]) }

    var preloaded: Set<URL> {
        get { state.withTrackedLock { $0.preloaded } }
        set { state.withTrackedLock { $0.preloaded = newValue } }
    }
    var queues: [[PreloadRequest]] { state.withTrackedLock { $0.list } }
    func clear() { state.withTrackedLock { $0.list = [] } }
}
