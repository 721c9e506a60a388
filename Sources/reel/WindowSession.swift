import Foundation
import ReelTerminal
import ReelCore
import ReelMedia
import ReelSDL
import ArgumentParser
import ReelFeed
import Synchronization
import ReelThreads

/// `--renderer gl|software`.
enum WindowRendererOption: String, ExpressibleByArgument, CaseIterable {
    case gl, software
    var kind: RendererKind { self == .gl ? .gl : .software }
}

/// Where window playback sends audio: the commands plug the process's SDL audio device
/// in here (`ProcessAudio`) before the window's thread starts; without it audio is
/// consumed at the clock's pace and dropped.
enum WindowAudio {
    /// Guarded: the factory (set by the command, read on the window's thread).
    private static let factory = Mutex<(@Sendable () -> (any AudioSink)?)?>(nil)

    static var makeSink: (@Sendable () -> (any AudioSink)?)? {
        get { factory.withTrackedLock { $0 } }
        set { factory.withTrackedLock { $0 = newValue } }
    }
}

/// `reel play FILE --window`: a player presenting into a ``PlaybackWindow`` whose loop runs
/// on a thread of its own. The window, SDL and GL belong to that thread (the window
/// asserts it); the player calls the frame store and the observer on its clock context,
/// and they meet the window's thread only through the store's and `Watch`'s mutexes.
enum WindowSession {

    static func run(source: MediaSource, item: PlayerItem, captions: CaptionSelection, rate: Double, loop: Bool,
                    renderer: RendererKind, hud: Bool, frames limit: Int? = nil, trace writer: TraceWriter) async -> PlaybackEnd {
        await onOwnThread(named: "reel.window") {
            let frames = FrameStore()
            let audio = WindowAudio.makeSink?() ?? NullAudioSink()
            let trace = PlaybackTrace(writer: writer, clock: HostClock.shared)
            let frameLimit = limit.map { FrameLimit($0) }
            let sink: any VideoSink = trace.isEnabled || frameLimit != nil
                ? trace.videoSink(forwardingTo: frames, limit: frameLimit) : frames
            let player = Player(clock: HostClock.shared, videoSink: sink, audioSink: audio, captionSink: CaptionOverlay(),
                                measurementClock: HostClock.shared)
            player.actionAtItemEnd = loop ? .loop : .pause
            player.captionSelection = captions
            let watch = Watch()
            _ = player.addEventObserver { [weak player] event in
                if let player { trace.record(event, player: player) }
                switch event {
                case .failed(let error): watch.fail(error.description)
                case .firstFrame: frameLimit?.firstFrameDelivered()
                default: break
                }
            }
            let title = source.url.lastPathComponent
            let window: PlaybackWindow
            do {
                window = try PlaybackWindow(player: player, frames: frames,
                                            options: .init(renderer: renderer, title: title, showsHUD: hud))
            } catch {
                return .failed("cannot open the window: \(error)")
            }
            player.replaceCurrentItem(with: item)
            player.defaultRate = rate
            player.play()
            // SIGINT/SIGTERM close the window like `q` does (within a loop turn, ≤ 250 ms),
            // so the trace is written on the way out.
            let signals = TerminationSignals { watch.interrupt($0) }
            defer { signals.cancel() }
            // --frames: close once that many frames were presented, the first-frame event
            // came (the trace keeps it) and a frame was drawn (smoke tests, demos).
            window.run(while: {
                guard watch.failure == nil, watch.signal == nil else { return false }
                guard let frameLimit else { return true }
                return !frameLimit.isReached || window.framesDrawn == 0
            })
            if let message = watch.failure {
                player.replaceCurrentItem(with: nil)
                return .failed(message)
            }
            player.pause()
            player.replaceCurrentItem(with: nil)
            return watch.signal.map { .signal($0) } ?? .finished
        }
    }
}

/// What the window's thread learns from the player's events (on the clock context).
private final class Watch: Sendable {
    private struct State {
        var failure: String?
        var signal: Int32?
    }
    /// Guarded: the first failure, and the signal that stopped the run.
    private let state = Mutex(State())

    func interrupt(_ signal: Int32) { state.withTrackedLock { if $0.signal == nil { $0.signal = signal } } }
    var signal: Int32? { state.withTrackedLock { $0.signal } }
    func fail(_ message: String) { state.withTrackedLock { if $0.failure == nil { $0.failure = message } } }
    var failure: String? { state.withTrackedLock { $0.failure } }
}

/// `reel feed SOURCE --window`: the category browser and search over the stack, shown in
/// a ``FeedWindow`` whose loop runs on a thread of its own.
enum FeedWindowSession {
    static func run(stack: FeedStack, category: String?, renderer: RendererKind, hud: Bool,
                    accounts: FeedAccounts? = nil) async -> SessionOutcome {
        let audio = WindowAudio.makeSink
        let configuration = FeedSession.Configuration(wrapsAround: true)
        let browser = FeedBrowser(source: stack.source) { category in
            stack.makeSession(category: category, configuration: configuration, audioSink: audio,
                              captionSink: { CaptionOverlay() })
        }
        let refused: Bool
        do {
            let categories = try await stack.source.categories()
            let initial = category.flatMap { id in categories.firstIndex { $0.id == id } } ?? 0
            try await browser.start(initial: initial)
            refused = false
        } catch FeedError.authorizationRequired where accounts != nil {
            // The window opens on the sign-in form; signing in reads the feed.
            refused = true
        } catch {
            browser.close()
            return .failed(describe(error))
        }
        let search = SearchModel(source: stack.source)
        let makeResults: @Sendable (any FeedSource) -> FeedSession = { source in
            FeedSession(source: source, loader: stack.mediaLoader, preloader: stack.preloader, coordinator: stack.coordinator,
                        configuration: configuration, audioSink: audio)
        }
        let outcome: SessionOutcome = await onOwnThread(named: "reel.window") {
            do {
                // The account side (tab bar, sign-in, profile, upload) for a `reel serve` feed.
                let session = accounts.map {
                    AccountSession(server: $0.server, store: $0.store, token: $0.token, loader: stack.apiLoader)
                }
                session?.setTokenObserver { token in stack.setToken(token) }
                let window = try FeedWindow(browser: browser, search: search, loader: stack.mediaLoader,
                                            makeResultsSession: makeResults,
                                            options: .init(renderer: renderer, showsHUD: hud), accounts: session)
                if refused { window.feedNeedsSignIn() }
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
