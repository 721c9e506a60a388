import Foundation
import ReelCore
import ReelMedia
import ReelSDL
import ArgumentParser
import ReelFeed

/// `--renderer gl|software`.
enum WindowRendererOption: String, ExpressibleByArgument, CaseIterable {
    case gl, software
    var kind: RendererKind { self == .gl ? .gl : .software }
}

/// Where window playback sends audio: the commands plug the process's SDL audio device
/// in here (`ProcessAudio`); without it audio is consumed at the clock's pace and dropped.
enum WindowAudio {
    nonisolated(unsafe) static var makeSink: (@Sendable () -> (any AudioSink)?)? = nil
}

/// `reel play FILE --window`: a player presenting into a ``PlaybackWindow`` whose loop runs
/// on a thread of its own (SDL and GL stay on that thread).
enum WindowSession {

    static func run(source: MediaSource, loader: any ResourceLoader, start: Double?, rate: Double, loop: Bool,
                    renderer: RendererKind, hud: Bool, frames limit: Int? = nil) async -> SessionOutcome {
        await onThread(named: "reel.window") {
            let frames = FrameStore()
            let audio = WindowAudio.makeSink?() ?? NullAudioSink()
            let player = Player(clock: HostClock.shared, videoSink: frames, audioSink: audio, measurementClock: HostClock.shared)
            player.actionAtItemEnd = loop ? .loop : .pause
            let failure = LockedFailure()
            _ = player.addEventObserver { event in
                if case .failed(let error) = event { failure.set(error.description) }
            }
            let title = source.url.lastPathComponent
            let window: PlaybackWindow
            do {
                window = try PlaybackWindow(player: player, frames: frames,
                                            options: .init(renderer: renderer, title: title, showsHUD: hud))
            } catch {
                return .failed("cannot open the window: \(error)")
            }
            let startTime = start.map { MediaTime(seconds: $0, preferredTimescale: 1_000_000) }
            player.replaceCurrentItem(with: PlayerItem(url: source.url, loader: loader, startTime: startTime))
            player.defaultRate = rate
            player.play()
            // --frames: close after that many frames were drawn (smoke tests, demos).
            window.run(while: { failure.message == nil && limit.map { window.framesDrawn < $0 } ?? true })
            if let message = failure.message {
                player.replaceCurrentItem(with: nil)
                return .failed(message)
            }
            player.pause()
            player.replaceCurrentItem(with: nil)
            return .finished
        }
    }
}

private final class LockedFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: String?
    func set(_ message: String) { lock.withLock { if stored == nil { stored = message } } }
    var message: String? { lock.withLock { stored } }
}

/// `reel feed SOURCE --window`: the category browser and search over the stack, shown in
/// a ``FeedWindow`` whose loop runs on a thread of its own.
enum FeedWindowSession {
    static func run(stack: FeedStack, category: String?, renderer: RendererKind, hud: Bool) async -> SessionOutcome {
        let audio = WindowAudio.makeSink
        let configuration = FeedSession.Configuration(wrapsAround: true)
        let browser = FeedBrowser(source: stack.source) { category in
            stack.makeSession(category: category, configuration: configuration, audioSink: audio)
        }
        do {
            let categories = try await stack.source.categories()
            let initial = category.flatMap { id in categories.firstIndex { $0.id == id } } ?? 0
            try await browser.start(initial: initial)
        } catch {
            browser.close()
            return .failed(describe(error))
        }
        let search = SearchModel(source: stack.source)
        let makeResults: @Sendable (any FeedSource) -> FeedSession = { source in
            FeedSession(source: source, loader: stack.mediaLoader, preloader: stack.preloader, coordinator: stack.coordinator,
                        configuration: configuration, audioSink: audio)
        }
        let outcome: SessionOutcome = await onThread(named: "reel.window") {
            do {
                let window = try FeedWindow(browser: browser, search: search, loader: stack.mediaLoader,
                                            makeResultsSession: makeResults,
                                            options: .init(renderer: renderer, showsHUD: hud))
                window.run()
                return .finished
            } catch {
                return .failed("cannot open the window: \(error)")
            }
        }
        browser.close()
        return outcome
    }
}
