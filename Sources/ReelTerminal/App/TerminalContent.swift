import Foundation
import ReelCore
import ReelMedia
import Synchronization

/// How a terminal (or window) session ended: the user quit, or what it showed failed.
public enum SessionOutcome: Sendable, Equatable {
    case finished, failed(String)
}

/// Why ``TerminalApp`` could not show its content; each says it in one line.
public enum TerminalAppError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Standard input or output is not a terminal.
    case notATerminal
    /// `--category` named none of the feed's categories.
    case noSuchCategory(String, have: [String])
    /// The feed answered 401 before anything was on screen; the text says how to sign in.
    case signInRequired(String)

    public var description: String {
        switch self {
        case .notATerminal: "--terminal needs a terminal on standard input and output"
        case .noSuchCategory(let wanted, let have): "no category '\(wanted)' (have: \(have.joined(separator: ", ")))"
        case .signInRequired(let notice): notice
        }
    }
}

/// The process's sound, as the terminal app uses it: sinks for players, the driver's name for
/// the HUD, and a mute. The command line gives it an SDL device or nothing.
public protocol TerminalAudio: AnyObject, Sendable {
    func makeSink() -> any AudioSink
    /// The audio driver in use, nil when there is no device.
    var driverName: String? { get }
    /// Mutes or unmutes the device; false when there is none (the player mutes itself then).
    func setMuted(_ muted: Bool) -> Bool
    func close()
}

/// What the terminal shows and controls: one item (`play`) or a feed (`feed`).
public protocol TerminalContent: AnyObject, Sendable {
    /// The player of what is on screen (nil for an image post).
    var player: Player? { get }
    /// Category names, the selected one, and the item's position ("3/12").
    var chrome: (categories: [String], selected: Int, title: String, uploader: String?, position: String?) { get }
    /// Opens the content; frames go to `renderer`; `failed` ends the run.
    func start(renderer: TerminalRenderer, failed: @escaping @Sendable (String) -> Void) async throws
    /// Swipe: the next (`true`) or previous item.
    func swipe(forward: Bool)
    /// The next (+1) or previous (-1) category.
    func changeCategory(by offset: Int)
    /// Runs a search and shows its results as a feed.
    func search(_ text: String)
    /// Whether swipes, categories and search mean anything here.
    var isFeed: Bool { get }
    /// Which captions show (the feed keeps it across pages).
    var captionSelection: CaptionSelection { get set }
    func close()
}

/// One media item (`reel play --terminal`).
///
/// Threads: `start` and `close` from the app's task; the player's observer on its clock
/// context; `player` from any of the app's threads (under `current`).
public final class SingleItemContent: TerminalContent, Sendable {
    /// Makes the player once the renderer exists: its video goes to the given sink (the
    /// renderer, or a sink that records and forwards to it), its sound to the app's audio.
    public typealias MakePlayer = @Sendable (_ renderer: TerminalRenderer) -> Player

    // Immutable after init.
    private let app: TerminalApp
    private let item: PlayerItem
    private let title: String
    private let makePlayer: MakePlayer
    private let observe: @Sendable (PlayerEvent, Player) -> Void

    /// Guarded: the player, once started.
    private let current = Mutex<Player?>(nil)

    /// `observe` sees every event of the player first (a trace, a frame limit).
    public init(app: TerminalApp, item: PlayerItem, title: String, makePlayer: @escaping MakePlayer,
                observe: @escaping @Sendable (PlayerEvent, Player) -> Void = { _, _ in }) {
        self.app = app
        self.item = item
        self.title = title
        self.makePlayer = makePlayer
        self.observe = observe
    }

    public var player: Player? { current.withTrackedLock { $0 } }
    public var isFeed: Bool { false }
    public var captionSelection: CaptionSelection {
        get { player?.captionSelection ?? CaptionSelection() }
        set { player?.captionSelection = newValue }
    }
    public var chrome: (categories: [String], selected: Int, title: String, uploader: String?, position: String?) {
        (["Now playing"], 0, title, nil, nil)
    }

    public func start(renderer: TerminalRenderer, failed: @escaping @Sendable (String) -> Void) async throws {
        let player = makePlayer(renderer)
        let observe = self.observe
        // Fixed before the item opens; the player holds the observer, which holds it weakly.
        _ = player.addEventObserver { [weak player] event in
            if let player { observe(event, player) }
            switch event {
            case .failed(let error): failed(error.description)
            case .rateChanged, .ended, .seekCompleted: renderer.setNeedsChrome()
            default: break
            }
        }
        current.withTrackedLock { $0 = player }
        player.replaceCurrentItem(with: item)
        player.play()
    }

    public func swipe(forward: Bool) { app.show(notice: "one video: nothing to swipe to (reel feed swipes)") }
    public func changeCategory(by offset: Int) {}
    public func search(_ text: String) {}

    /// Stops the player (blocks until its threads are gone: call it off the pool).
    public func close() {
        guard let player else { return }
        player.pause()
        player.replaceCurrentItem(with: nil)
    }
}
