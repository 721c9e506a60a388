import Foundation

/// What `--graphics` asked for: let the terminal's answers decide, or one output.
public enum TerminalGraphicsRequest: String, Sendable, Hashable, CaseIterable {
    /// Kitty graphics where the terminal answers its query, else sixel where DA1 lists it,
    /// else character cells.
    case auto
    /// Character cells (half blocks, quadrants or sextants), whatever the terminal can do.
    case cells
    /// Sixel images, even when the terminal did not say it has them.
    case sixel
    /// The kitty graphics protocol, even when the terminal did not answer its query.
    case kitty
}

/// The output a terminal gets, and why.
public struct TerminalGraphics: Sendable, Hashable, CustomStringConvertible {
    /// How the picture is drawn.
    public enum Output: String, Sendable, Hashable {
        case cells, sixel, kitty
    }

    /// How kitty graphics frames reach the terminal.
    public enum Transfer: String, Sendable, Hashable {
        /// Compressed RGB in the escape codes (`t=d,o=z`): any terminal, local or remote.
        case direct
        /// Shared-memory objects (`t=s`): a terminal on this machine that read one when asked.
        case sharedMemory = "shm"
    }

    /// How the picture is drawn.
    public var output: Output
    /// How kitty frames go (direct for the other outputs).
    public var transfer: Transfer = .direct
    /// A cell's size in pixels (sixel and kitty draw at this resolution).
    public var cellWidth: Int
    public var cellHeight: Int
    /// The largest sixel image the terminal draws (XTSMGRAPHICS), when it said.
    public var sixelLimit: (width: Int, height: Int)? {
        get { sixelLimitSize.map { ($0[0], $0[1]) } }
        set { sixelLimitSize = newValue.map { [$0.width, $0.height] } }
    }
    private var sixelLimitSize: [Int]?
    /// The colour registers a sixel image may use (XTSMGRAPHICS item 1), when it said.
    public var sixelColors: Int?
    /// Why: the answers (or their absence) that chose it, in a sentence.
    public var reason: String

    /// Character cells, for `reason`.
    public static func cells(_ reason: String) -> TerminalGraphics {
        TerminalGraphics(output: .cells, cellWidth: 0, cellHeight: 0, reason: reason)
    }

    public init(output: Output, cellWidth: Int, cellHeight: Int, sixelLimit: (width: Int, height: Int)? = nil, reason: String) {
        self.output = output
        self.cellWidth = cellWidth
        self.cellHeight = cellHeight
        self.reason = reason
        self.sixelLimit = sixelLimit
    }

    public var description: String {
        switch output {
        case .cells: "cells (\(reason))"
        case .sixel: "sixel, cells of \(cellWidth)×\(cellHeight) px (\(reason))"
        case .kitty: "kitty, cells of \(cellWidth)×\(cellHeight) px, frames "
            + (transfer == .sharedMemory ? "through shared memory (t=s)" : "as compressed RGB (t=d)") + " (\(reason))"
        }
    }
}

/// The queries that detect graphics, each the exact bytes to write.
public enum TerminalGraphicsQueries {
    /// The image id of the kitty query (its reply names it).
    public static let kittyQueryID = 31
    /// The image id of the kitty shared-memory query.
    public static let kittySharedMemoryQueryID = 32
    /// Kitty graphics through shared memory: "could you read this 1×1 RGB image from the
    /// object named `name`?" (`a=q,t=s`). A terminal on this machine reads it (and unlinks it)
    /// and answers OK; one that cannot reach it (over ssh) answers an error.
    public static func kittySharedMemory(name: String) -> [UInt8] {
        Array("\u{1B}_Gi=32,s=1,v=1,a=q,t=s,S=3,f=24;\(Data(name.utf8).base64EncodedString())\u{1B}\\".utf8)
    }
    /// Kitty graphics: "would you take this 1×1 RGB image?" (`a=q`: answered, never shown).
    public static let kittyGraphics = Array("\u{1B}_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\u{1B}\\".utf8)
    /// XTSMGRAPHICS: the largest sixel image (`ESC[?2;1;0S`, item 2, read).
    public static let sixelGeometry = Array("\u{1B}[?2;1;0S".utf8)
    /// XTSMGRAPHICS: how many colour registers (`ESC[?1;1;0S`, item 1, read).
    public static let sixelColors = Array("\u{1B}[?1;1;0S".utf8)
    /// The cell's size in pixels (`ESC[16t`, answered `ESC[6;h;wt`).
    public static let cellPixelSize = Array("\u{1B}[16t".utf8)
    /// DA1 (`ESC[c`): every terminal answers it, so it comes last and ends the wait.
    public static let primaryDeviceAttributes = Array("\u{1B}[c".utf8)
}

/// Chooses the output from what the terminal answers: a value machine — the environment
/// and the window's pixel size (`TIOCGWINSZ`) at start, then the replies, then DA1 or a
/// timeout, and a ``TerminalGraphics`` out. The driver writes ``start()``'s queries, feeds
/// every reply event to ``receive(_:)`` and calls ``timedOut()`` when its deadline passes.
///
/// The queries go out in one write, DA1 last: a terminal answers in order, so once DA1's
/// reply is in, every other answer it was going to give has come (kitty's own query is
/// answered by the terminals that know it and ignored by the rest).
public struct TerminalGraphicsDetector: Sendable {
    /// What the driver does.
    public enum Action: Sendable, Hashable {
        /// Write these queries and wait for replies (or the timeout).
        case query([UInt8])
        /// Decided.
        case decided(TerminalGraphics)
    }

    /// The grid and window sizes from `TIOCGWINSZ` (pixels 0 when the terminal leaves them out).
    public struct Window: Sendable, Hashable {
        public var columns: Int, rows: Int, pixelWidth: Int, pixelHeight: Int
        public init(columns: Int, rows: Int, pixelWidth: Int, pixelHeight: Int) {
            self.columns = columns
            self.rows = rows
            self.pixelWidth = pixelWidth
            self.pixelHeight = pixelHeight
        }
    }

    /// A cell's size when nothing says it and an output was forced.
    public static let assumedCell = (width: 10, height: 20)

    private let request: TerminalGraphicsRequest
    private let multiplexer: String?
    private var window: Window
    private var kittyReply: String?
    private var sharedMemoryReply: String?
    /// A one-pixel shared-memory object's name to offer in the `t=s` query, set by the
    /// driver before ``start()`` (nil: no such query; kitty frames then go direct).
    public var sharedMemoryProbe: String?
    private var deviceAttributes: [Int]?
    private var sixelLimit: (width: Int, height: Int)?
    private var sixelColors: Int?
    private var cell: (width: Int, height: Int)?
    private var textArea: (width: Int, height: Int)?
    /// The decision, once made (later events change nothing).
    public private(set) var decision: TerminalGraphics?

    /// - Parameters:
    ///   - environment: `TMUX` or `STY` (or a `TERM` of `screen…`/`tmux…`) mean a multiplexer.
    public init(request: TerminalGraphicsRequest, environment: [String: String], window: Window) {
        self.request = request
        self.window = window
        let term = environment["TERM"] ?? ""
        if !(environment["TMUX"] ?? "").isEmpty || term.hasPrefix("tmux") {
            multiplexer = "tmux"
        } else if !(environment["STY"] ?? "").isEmpty || term.hasPrefix("screen") {
            multiplexer = "screen"
        } else {
            multiplexer = nil
        }
    }

    /// What to do first: decide at once (cells asked for, or a multiplexer in between) or query.
    public mutating func start() -> Action {
        if request == .cells { return decide(.cells("asked for with --graphics cells")) }
        if request == .auto, let multiplexer {
            return decide(.cells("inside \(multiplexer), which does not pass graphics through"))
        }
        let sharedMemory = sharedMemoryProbe.map(TerminalGraphicsQueries.kittySharedMemory(name:)) ?? []
        return .query(TerminalGraphicsQueries.kittyGraphics + sharedMemory + TerminalGraphicsQueries.sixelColors
                      + TerminalGraphicsQueries.sixelGeometry + TerminalGraphicsQueries.cellPixelSize
                      + TerminalGraphicsQueries.primaryDeviceAttributes)
    }

    /// A reply from the terminal; returns the decision when this was the last one (DA1).
    @discardableResult
    public mutating func receive(_ event: TerminalInputEvent) -> TerminalGraphics? {
        guard decision == nil else { return nil }
        switch event {
        case .kittyGraphicsReply(let id, let message) where id == TerminalGraphicsQueries.kittyQueryID:
            kittyReply = message
        case .kittyGraphicsReply(let id, let message) where id == TerminalGraphicsQueries.kittySharedMemoryQueryID:
            sharedMemoryReply = message
        case .graphicsAttribute(2, 0, let values) where values.count >= 2 && values[0] > 0 && values[1] > 0:
            sixelLimit = (values[0], values[1])
        case .graphicsAttribute(1, 0, let values) where !values.isEmpty && values[0] >= 2:
            sixelColors = values[0]
        case .pixelSize(true, let width, let height) where width > 0 && height > 0:
            cell = (width, height)
        case .pixelSize(false, let width, let height) where width > 0 && height > 0:
            textArea = (width, height)
        case .deviceAttributes(let attributes):
            deviceAttributes = attributes
            return choose(answered: true)
        default:
            break
        }
        return nil
    }

    /// The deadline passed without DA1's reply.
    public mutating func timedOut() -> TerminalGraphics {
        decision ?? choose(answered: false)
    }

    private mutating func decide(_ graphics: TerminalGraphics) -> Action {
        decision = graphics
        return .decided(graphics)
    }

    /// The cell's pixel size, and where it came from.
    private var cellSize: (width: Int, height: Int, source: String)? {
        if let cell { return (cell.width, cell.height, "CSI 16 t") }
        if window.pixelWidth > 0, window.pixelHeight > 0, window.columns > 0, window.rows > 0,
           window.pixelWidth >= window.columns, window.pixelHeight >= window.rows {
            return (window.pixelWidth / window.columns, window.pixelHeight / window.rows, "TIOCGWINSZ")
        }
        if let textArea, window.columns > 0, window.rows > 0, textArea.width >= window.columns, textArea.height >= window.rows {
            return (textArea.width / window.columns, textArea.height / window.rows, "CSI 14 t")
        }
        return nil
    }

    private mutating func choose(answered: Bool) -> TerminalGraphics {
        let graphics = chosen(answered: answered)
        decision = graphics
        return graphics
    }

    private func chosen(answered: Bool) -> TerminalGraphics {
        let kitty = kittyReply == "OK"
        let sixel = deviceAttributes.map { $0.dropFirst().contains(4) } ?? false
        let said = answered ? describeAnswers(kitty: kitty, sixel: sixel) : "no answer to DA1 within the timeout"
        let size = cellSize
        let cellText = size.map { "cell \($0.width)×\($0.height) px from \($0.source)" } ?? "no cell size in pixels"
        func graphics(_ output: TerminalGraphics.Output, _ why: String) -> TerminalGraphics {
            let cell = size.map { ($0.width, $0.height) } ?? Self.assumedCell
            var graphics = TerminalGraphics(output: output, cellWidth: cell.0, cellHeight: cell.1,
                                            sixelLimit: output == .sixel ? sixelLimit : nil, reason: why)
            if output == .sixel { graphics.sixelColors = sixelColors }
            if output == .kitty, sharedMemoryReply == "OK" { graphics.transfer = .sharedMemory }
            return graphics
        }
        switch request {
        case .sixel, .kitty:
            let output: TerminalGraphics.Output = request == .sixel ? .sixel : .kitty
            let size = size == nil ? "cell of \(Self.assumedCell.width)×\(Self.assumedCell.height) px assumed" : cellText
            return graphics(output, "asked for with --graphics \(request.rawValue); \(said); \(size)")
        case .cells:
            return .cells("asked for with --graphics cells")
        case .auto:
            guard kitty || sixel else { return .cells(said) }
            guard size != nil else { return .cells("\(said), but \(cellText)") }
            return graphics(kitty ? .kitty : .sixel, "\(said); \(cellText)")
        }
    }

    private func describeAnswers(kitty: Bool, sixel: Bool) -> String {
        var parts: [String] = []
        parts.append(kitty ? "answered the kitty graphics query" : (kittyReply.map { "kitty graphics query refused (\($0))" }
            ?? "no answer to the kitty graphics query"))
        if kitty || request == .kitty { parts.append(sharedMemoryAnswer) }
        let da1 = (deviceAttributes ?? []).map(String.init).joined(separator: ";")
        parts.append(sixel ? "DA1 \(da1) lists sixel" : "DA1 \(da1) lists no sixel")
        if let sixelLimit { parts.append("sixel up to \(sixelLimit.width)×\(sixelLimit.height)") }
        if let sixelColors { parts.append("\(sixelColors) colour registers") }
        return parts.joined(separator: ", ")
    }

    /// What the terminal said to the shared-memory (`t=s`) query.
    private var sharedMemoryAnswer: String {
        guard sharedMemoryProbe != nil else { return "no shared-memory object to offer" }
        guard let sharedMemoryReply else { return "no answer to the shared-memory (t=s) query" }
        return sharedMemoryReply == "OK" ? "read a shared-memory object (t=s): local"
            : "shared memory (t=s) refused (\(sharedMemoryReply.prefix(80)))"
    }
}
