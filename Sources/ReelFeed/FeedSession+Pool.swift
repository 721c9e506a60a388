import Foundation
import ReelCore
import ReelMedia
import Synchronization

/// The session as the machine's driver: events from players, the picture decoder and
/// the pool's queue go in behind the lock; the actions that come out are carried out
/// after it is released.
extension FeedSession {
    typealias Action = FeedPoolMachine.Action

    /// One player of the pool and the frame it last presented.
    final class Slot: Sendable {
        let number: Int
        let player: Player
        let store: FrameStore
        /// The observer on `player` for the item it holds (set and removed on the pool's queue).
        let observer = Mutex<ObserverToken?>(nil)

        init(number: Int, player: Player, store: FrameStore) {
            self.number = number
            self.player = player
            self.store = store
        }
    }

    /// A video sink that keeps the last frame of its slot's assignment and tells the session.
    final class FrameStore: VideoSink, Sendable {
        private struct Contents {
            var frame: VideoFrame?
            /// The assignment whose frames it takes (`nil`: none, the slot changes item).
            var generation: Int?
            var onPresent: (@Sendable (Int) -> Void)?
        }
        /// Never taken together with the session's `state`.
        private let contents = Mutex(Contents())

        func setOnPresent(_ handler: @escaping @Sendable (Int) -> Void) {
            contents.withTrackedLock { $0.onPresent = handler }
        }

        func present(_ frame: VideoFrame, presentation: Presentation) {
            let call: (@Sendable (Int) -> Void, Int)? = contents.withTrackedLock {
                guard let generation = $0.generation else { return nil }
                $0.frame = frame
                return $0.onPresent.map { ($0, generation) }
            }
            if let (handler, generation) = call { handler(generation) }
        }

        /// Forgets the frame and refuses frames until ``accept(generation:)``.
        func reset() {
            contents.withTrackedLock {
                $0.frame = nil
                $0.generation = nil
            }
        }

        /// Takes the frames of assignment `generation` (the previous item's player is closed).
        func accept(generation: Int) { contents.withTrackedLock { $0.generation = generation } }

        /// The last frame of assignment `generation`.
        func latest(generation: Int) -> VideoFrame? {
            contents.withTrackedLock { $0.generation == generation ? $0.frame : nil }
        }
    }

    /// Feeds one event to the machine and carries out what it decides.
    func feed(_ event: (inout FeedPoolMachine) -> [Action]) {
        perform(state.withTrackedLock { event(&$0.machine) })
    }

    /// Carries out the machine's actions, in order, with no lock held. `.assign` and
    /// `.release` come only from ``planNow()`` and `releaseAll`, on the pool's queue.
    func perform(_ actions: [Action]) {
        var released = false
        for action in actions {
            switch action {
            case .assign(let number, let generation, _, let url, let play):
                assign(slots[number], generation: generation, url: url, play: play)
            case .release(let number):
                release(slots[number])
                released = true
            case .play(let number): slots[number].player.play()
            case .pause(let number): slots[number].player.pause()
            case .preload(let urls):
                preloader?.setPreloadQueue(urls.map { .seconds(configuration.preloadSeconds, of: $0) })
            case .stopPreloading: preloader?.stop()
            case .decodePicture(let url): decodePicture(url)
            case .forgetPictures(let urls): state.withTrackedLock { s in for url in urls { s.images[url] = nil } }
            case .emit(let event): emit(event)
            case .firstFrame(let index, let startedAt, let stage):
                let elapsed = (measurementClock.now - startedAt).seconds * 1000
                emit(.firstFrame(index: index, swipeToFirstFrameMs: max(0, elapsed), stage: stage))
            case .frameShown(let index): state.withTrackedLock { $0.onFrame }?(index)
            case .loadNextPage: Task { [weak self] in try? await self?.fetchPage(propagating: false) }
            case .plan: work.async { [weak self] in self?.planNow() }
            }
        }
        if released, !actions.contains(.stopPreloading) { MediaResources.returnFreedMemory() }
    }

    /// The pool's queue: decides the plan, then opens and releases players.
    private func planNow() {
        let actions: [Action] = state.withTrackedLock { s in
            let actions = s.machine.plan()
            for case .forgetPictures(let urls) in actions { for url in urls { s.images[url] = nil } }
            return actions
        }
        perform(actions.filter { if case .forgetPictures = $0 { false } else { true } })
    }

    private func detach(_ slot: Slot) {
        if let token = slot.observer.withTrackedLock({ token in defer { token = nil }; return token }) {
            slot.player.removeEventObserver(token)
        }
        slot.player.pause()
    }

    /// The pool's queue: slot `slot` opens `url` as assignment `generation`.
    private func assign(_ slot: Slot, generation: Int, url: URL, play: Bool) {
        dispatchPrecondition(condition: .onQueue(work))
        detach(slot)
        slot.store.reset()
        let player = slot.player, number = slot.number
        let token = player.addEventObserver { [weak self] event in
            self?.playerEvent(event, slot: number, generation: generation)
        }
        slot.observer.withTrackedLock { $0 = token }
        // Frames of the item just released must not pass for the new one's.
        if player.currentItem != nil { player.replaceCurrentItem(with: nil) }
        slot.store.accept(generation: generation)
        let item = state.withTrackedLock { s in s.machine.items.first { $0.videoURL == url } }
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: loader, captions: (item?.captions ?? []).map {
            // Named by the feed: read only where the video's own references may go.
            CaptionSource(url: $0.url, language: $0.language, label: $0.label, isNamedByDocument: true)
        }, loudness: item?.loudness.map { ItemLoudness(integrated: $0, truePeak: item?.truePeak) }))
        if play { player.play() }
    }

    /// The pool's queue: slot `slot` lets go of its item.
    private func release(_ slot: Slot) {
        dispatchPrecondition(condition: .onQueue(work))
        detach(slot)
        slot.store.reset()
        slot.player.replaceCurrentItem(with: nil)
    }

    /// What a pool player tells about the item it holds (`generation` names the assignment).
    private func playerEvent(_ event: PlayerEvent, slot number: Int, generation: Int) {
        switch event {
        case .failed(let error):
            logger.debug("slot \(number) failed: \(error.description)")
            feed { $0.playerFailed(slot: number, generation: generation, message: error.description) }
        case .ended:
            let presented = slots[number].store.latest(generation: generation) != nil
            feed { $0.playerEnded(slot: number, generation: generation, framePresented: presented) }
        case .statusChanged(.readyToPlay):
            guard let info = slots[number].player.mediaInfo else { return }
            let hasVideo = info.videoStream != nil
            feed { $0.playerReady(slot: number, generation: generation, hasVideo: hasVideo) }
        default:
            break
        }
    }

    func slotPresented(_ number: Int, generation: Int) {
        feed { $0.framePresented(slot: number, generation: generation) }
    }

    private func decodePicture(_ url: URL) {
        let size = configuration.displaySize
        let loader = self.loader
        // A queue of its own: decoding blocks, and must not wait for the concurrency pool.
        pictureQueue.async { [weak self] in
            var image: RGBImage?
            var failure: String?
            do {
                image = try ImageDecoder.decodeNow(url, loader: loader, maxWidth: size.width, maxHeight: size.height)
            } catch {
                failure = "\(url.lastPathComponent): \(error)"
            }
            guard let self else { return }
            self.perform(self.state.withTrackedLock { s in
                if let image { s.images[url] = image }
                return s.machine.pictureDecoded(url, failure: failure)
            })
        }
    }

    private func emit(_ event: FeedEvent) {
        let handlers = state.withTrackedLock { $0.observers.sorted { $0.key < $1.key }.map(\.value) }
        for handler in handlers { handler(event) }
    }
}
