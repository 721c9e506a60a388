import Foundation
import ReelCore
import ReelFeed
import ReelLoading
import ReelMedia
import ReelTestSupport
import Synchronization
import Testing

/// The feed session on a manual clock with a fake loader: the pool, the pre-rendered
/// next page, ranked preloads, pagination.
@Suite struct FeedSessionTests {
    @Test func theNextPageIsPreRenderedAndShowsOnTheVeryNextPresentation() async throws {
        let harness = try FeedHarness(count: 5)
        try await harness.start()
        #expect(await harness.running(upTo: seconds(2)) { harness.session.frame(at: 1) != nil },
                "the next page's first frame is decoded and held")
        let next = try #require(harness.session.player(at: 1))
        #expect(next.rate == 0, "the pre-rendered page waits, paused")
        #expect(harness.audio[1].written.isEmpty, "its audio has not started")
        let held = try #require(harness.session.frame(at: 1))
        #expect(held.pts == .zero)

        harness.clearEvents()
        harness.session.move(to: 1)
        // No time has passed: the frame is there already.
        let first = try #require(harness.firstFrames.first)
        #expect(first.index == 1)
        #expect(first.stage == .prerendered)
        #expect(first.ms == 0, "on the manual clock no time passes between the swipe and the frame")
        #expect(harness.session.frame(at: 1) === held)
        #expect(next.rate == 1)

        // Playing on, it continues from the held frame without showing another first frame.
        let recorder = RecordingFrames()
        let token = next.addEventObserver { event in
            if case .framePresented(let pts, let presentation) = event { recorder.add(pts, presentation.isFirstFrameOfSequence) }
        }
        await harness.running(upTo: seconds(0.2))
        next.removeEventObserver(token)
        let shown = recorder.frames
        #expect(shown.first?.pts == MediaTime(value: 1, timescale: 25), "the next presentation is the second frame")
        #expect(shown.allSatisfy { !$0.isFirst }, "no new first frame, no black frame")
        #expect(!harness.audio[1].written.isEmpty, "audio starts once the page plays")
        await harness.session.shutdown()
    }

    @Test func leavingAPagePausesItAndAPageTwoAwayIsReleased() async throws {
        let harness = try FeedHarness(count: 6)
        try await harness.start()
        await harness.running(upTo: seconds(1)) { harness.session.frame(at: 1) != nil }
        let first = try #require(harness.session.player(at: 0))
        harness.session.move(to: 1)
        await harness.running(upTo: seconds(1)) { harness.session.frame(at: 2) != nil }
        #expect(first.rate == 0, "the page left is paused")
        #expect(harness.session.player(at: 0) === first, "and kept as the previous page")
        harness.session.move(to: 2)
        await harness.running(upTo: seconds(1)) { harness.session.frame(at: 3) != nil }
        #expect(harness.session.player(at: 0) == nil, "two away: released")
        #expect(first.currentItem?.url != URL(string: "https://fake.example/v0.mp4"),
                "its player was given another item (or none)")
        #expect(harness.session.livePlayers == 3)
        await harness.session.shutdown()
        #expect(harness.session.livePlayers == 0)
        #expect(harness.session.liveDecoders == 0)
    }

    @Test func thePoolNeverHoldsMoreThanThreeDecodersAcross200Swipes() async throws {
        let harness = try FeedHarness(count: 12, pageSize: 20, wraps: true)
        try await harness.start()
        await harness.running(upTo: seconds(1)) { harness.session.frame(at: 1) != nil }
        struct Swipe: Sendable { var index: Int; var most: Int; var live: Int; var stage: PreloadStage? }
        let swipes: [Swipe] = await offThePool {
            var result: [Swipe] = []
            for _ in 1...200 {
                harness.clearEvents()
                harness.session.next()
                let index = harness.session.currentIndex
                var most = max(harness.session.liveDecoders, MediaResourcesProbe.livePool(harness.session))
                harness.run(upTo: seconds(1)) {
                    most = max(most, harness.session.liveDecoders)
                    return harness.session.frame(at: (index + 1) % 12) != nil && !harness.firstFrames.isEmpty
                }
                most = max(most, harness.session.liveDecoders)
                result.append(Swipe(index: index, most: most, live: harness.session.livePlayers, stage: harness.firstFrames.first?.stage))
            }
            return result
        }
        #expect(swipes.map(\.index) == (1...200).map { $0 % 12 }, "200 swipes, wrapping around the 12 items")
        let most = swipes.map(\.most).max() ?? 0
        #expect(swipes.allSatisfy { $0.live <= 3 })
        var stages: [PreloadStage: Int] = [:]
        for swipe in swipes { if let stage = swipe.stage { stages[stage, default: 0] += 1 } }
        #expect(most <= 3)
        #expect(most >= 2, "the pool was in use")
        #expect(stages[.prerendered] == 200, "every swipe landed on a pre-rendered page: \(stages)")
        await harness.session.shutdown()
    }

    @Test func preloadsAreRankedByDistanceAndReplacedOnEverySwipe() async throws {
        let recorder = RecordingPreloader()
        let harness = try FeedHarness(count: 10, preloader: { _, _ in recorder })
        let url = { (i: Int) in URL(string: "https://fake.example/v\(i).mp4")! }
        try await harness.start()
        await harness.running(upTo: seconds(2)) { harness.session.frame(at: 1) != nil }
        #expect(recorder.queues.last?.map(\.url) == [2, 3, 4].map(url),
                "items two to four ahead, nearest first; nothing behind the first page")
        #expect(recorder.queues.last?.allSatisfy { $0.amount == .seconds(2) } == true, "two seconds of media each")
        #expect(recorder.queues.dropLast().allSatisfy { $0.isEmpty }, "nothing preloads before the first page shows")

        recorder.clear()
        recorder.preloaded = [url(5)]
        #expect(harness.session.preloadStage(at: 5) == .bytes)
        harness.session.move(to: 4)
        await harness.session.idle()
        #expect(recorder.queues.first == [], "the swipe cancels what was queued while the new page opens")
        await harness.running(upTo: seconds(2)) { harness.session.frame(at: 5) != nil }
        // Around 4: 3 and 5 hold players; then by distance, ahead first at equal distance.
        #expect(recorder.queues.last?.map(\.url) == [6, 2, 7, 1, 8, 0].map(url))

        harness.session.setActive(false)
        await harness.session.idle()
        #expect(recorder.queues.last?.isEmpty == false, "an inactive feed leaves the queue to the active one")
        await harness.session.shutdown()
    }

    @Test func theRealPreloaderDropsWhatTheFeedNoLongerWants() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-feed-preload-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let holder = PreloaderHolder()
        let harness = try FeedHarness(count: 12, script: .init(bytesPerSecond: 20_000), preloader: { loader, clock in
            let cache = try! RangeCache(configuration: .init(directory: directory))
            let preloader = Preloader(loader: CachingLoader(upstream: loader, cache: cache), coordinator: PlaybackLoadCoordinator(), clock: clock)
            holder.preloader = preloader
            return preloader
        })
        let preloader = try #require(holder.preloader)
        try await harness.start()
        await harness.running(upTo: seconds(5)) { harness.session.frame(at: 1) != nil }
        harness.session.move(to: 9)
        await harness.session.idle()
        // Around 9 (items 10 and 11 may still be loading): 11, 7, 6, 5 at most.
        let wanted = Set([11, 7, 6, 5].map { URL(string: "https://fake.example/v\($0).mp4")! })
        #expect(preloader.pendingRequests.allSatisfy { wanted.contains($0.url) }, "\(preloader.pendingRequests)")
        // The running preload of an item no longer wanted stops (its task ends soon after).
        _ = await eventually() { preloader.currentRequest.map { wanted.contains($0.url) } ?? true }
        #expect(preloader.currentRequest.map { wanted.contains($0.url) } ?? true, "\(String(describing: preloader.currentRequest))")
        await harness.session.shutdown()
        preloader.stop()
    }

    @Test func theNextPageLoadsAt70PercentAndDuplicatesAreDropped() async throws {
        let harness = try FeedHarness(count: 25, pageSize: 10)
        try await harness.start()
        #expect(harness.session.items.count == 10)
        await harness.running(upTo: seconds(1)) { harness.session.frame(at: 1) != nil }
        harness.session.move(to: 6)
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(harness.session.items.count == 10, "index 6 of 10 is below 70 %")
        harness.session.move(to: 7)
        _ = await eventually() { harness.session.items.count == 20 }
        #expect(harness.session.items.count == 20)
        #expect(Set(harness.session.items.map(\.id)).count == 20)
        harness.session.move(to: 14)
        _ = await eventually() { harness.events.contains(.noMoreData) }
        #expect(!harness.session.hasMore)
        #expect(harness.events.contains(.noMoreData))
        await harness.session.shutdown()
    }

    @Test func anImagePostShowsItsFirstPictureDownsampled() async throws {
        let harness = try FeedHarness(count: 4, images: [1])
        try await harness.start()
        _ = await eventually() { harness.session.picture(at: 1) != nil }
        let picture = try #require(harness.session.picture(at: 1))
        #expect(picture.width <= 32 && picture.height <= 32, "decoded to the display size, not 400×300")
        #expect(picture.width == 32 && picture.height == 24, "aspect kept")
        let (r, g, b) = picture[16, 12]
        #expect(r > 200 && g < 60 && b < 60, "the red picture")
        #expect(harness.session.player(at: 1) == nil, "an image post has no player")
        let second = URL(string: "https://fake.example/p1-2.png")!
        _ = await eventually() { harness.session.decodedPicture(second) != nil }
        #expect(harness.session.decodedPicture(second)?.width == 32, "every page of the post, for its carousel")
        harness.clearEvents()
        harness.session.move(to: 1)
        #expect(harness.firstFrames.first?.stage == .prerendered)
        await harness.session.shutdown()
    }

    @Test func aFailingItemIsReportedAndTheFeedGoesOn() async throws {
        let harness = try FeedHarness(count: 3)
        harness.loader.add(Data("not a video".utf8), at: URL(string: "https://fake.example/v1.mp4")!)
        try await harness.start()
        await harness.running(upTo: seconds(2)) {
            harness.events.contains { if case .failed(index: 1, _) = $0 { true } else { false } }
        }
        #expect(harness.events.contains { if case .failed(index: 1, _) = $0 { true } else { false } })
        harness.session.move(to: 2)
        #expect(await harness.running(upTo: seconds(2)) { harness.session.frame(at: 2) != nil })
        await harness.session.shutdown()
    }

    @Test func anEmptyFeedFailsToStart() async throws {
        let session = FeedSession(source: ListFeedSource(items: []), loader: FakeResourceLoader())
        await #expect(throws: FeedError.self) { try await session.start() }
    }
}

enum MediaResourcesProbe {
    static func livePool(_ session: FeedSession) -> Int {
        session.poolPlayers.filter(\.hasOpenVideoDecoder).count
    }
}

final class PreloaderHolder: Sendable {
    private let stored = Mutex<Preloader?>(nil)
    var preloader: Preloader? {
        get { stored.withTrackedLock { $0 } }
        set { stored.withTrackedLock { $0 = newValue } }
    }
}

final class RecordingFrames: Sendable {
    private let list = Mutex<[(pts: MediaTime, isFirst: Bool)]>([])
    func add(_ pts: MediaTime, _ isFirst: Bool) { list.withTrackedLock { $0.append((pts, isFirst)) } }
    var frames: [(pts: MediaTime, isFirst: Bool)] { list.withTrackedLock { $0 } }
}
