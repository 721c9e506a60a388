import Foundation
import Testing
import ReelTerminal

@Suite struct TerminalGraphicsDetectorTests {
    private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    private let window = TerminalGraphicsDetector.Window(columns: 80, rows: 24, pixelWidth: 0, pixelHeight: 0)

    /// Feeds what a terminal answers, through the parser, to a detector that has queried.
    private func detect(_ answers: String, request: TerminalGraphicsRequest = .auto, environment: [String: String] = [:],
                        window: TerminalGraphicsDetector.Window? = nil, probe: String? = nil) -> TerminalGraphics? {
        var detector = TerminalGraphicsDetector(request: request, environment: environment, window: window ?? self.window)
        detector.sharedMemoryProbe = probe
        guard case .query = detector.start() else { return detector.decision }
        var parser = TerminalInputParser()
        var decided: TerminalGraphics?
        for event in parser.feed(Self.bytes(answers)) {
            if let d = detector.receive(event) { decided = d }
        }
        return decided
    }

    @Test func theParserReadsEveryReplyToTheQueries() {
        var parser = TerminalInputParser()
        let events = parser.feed(Self.bytes("\u{1B}_Gi=31;OK\u{1B}\\\u{1B}[?2;0;1000;1000S\u{1B}[6;20;10t\u{1B}[4;480;800t\u{1B}[?63;1;2;4;22c"))
        #expect(events == [.kittyGraphicsReply(id: 31, message: "OK"),
                           .graphicsAttribute(item: 2, status: 0, values: [1000, 1000]),
                           .pixelSize(cell: true, width: 10, height: 20),
                           .pixelSize(cell: false, width: 800, height: 480),
                           .deviceAttributes([63, 1, 2, 4, 22])])
    }

    @Test func aKittyReplySplitAcrossReadsIsOneEventAndKeysAfterItStayKeys() {
        var parser = TerminalInputParser()
        #expect(parser.feed(Self.bytes("\u{1B}_Gi=31;ENOTSUPPORTED:no")).isEmpty)
        #expect(parser.feed(Self.bytes("pe\u{1B}")).isEmpty)
        #expect(parser.feed(Self.bytes("\\q")) == [.kittyGraphicsReply(id: 31, message: "ENOTSUPPORTED:nope"),
                                                      .key(TerminalKeyEvent(.character("q")))])
        // Alt-underscore alone, resolved by the timeout, is still a key.
        #expect(parser.feed(Self.bytes("\u{1B}_")).isEmpty)
        #expect(parser.flush() == [.key(TerminalKeyEvent(.character("_"), modifiers: [.alt]))])
    }

    @Test func kittyWinsWhenItAnswersWithTheCellSizeFromTheWindow() {
        let window = TerminalGraphicsDetector.Window(columns: 100, rows: 40, pixelWidth: 900, pixelHeight: 720)
        let choice = detect("\u{1B}_Gi=31;OK\u{1B}\\\u{1B}[?62;22c", window: window)
        #expect(choice?.output == .kitty)
        #expect(choice?.cellWidth == 9 && choice?.cellHeight == 18)
        #expect(choice?.reason.contains("TIOCGWINSZ") == true)
    }

    @Test func sixelFromDA1WithItsGeometryAndTheCellFromCSI16t() {
        let choice = detect("\u{1B}[?1;0;16S\u{1B}[?2;0;1000;800S\u{1B}[6;13;6t\u{1B}[?63;1;2;3;4;6;9;15;16;22;28;29c")
        #expect(choice?.output == .sixel)
        #expect(choice?.cellWidth == 6 && choice?.cellHeight == 13)
        #expect(choice.flatMap { $0.sixelLimit.map { [$0.width, $0.height] } } == [1000, 800])
        #expect(choice?.reason.contains("lists sixel") == true)
        #expect(choice?.sixelColors == 16)
    }

    @Test func attributeFourIsOnlySixelAfterTheDeviceClass() {
        // A VT class of 4 would be nonsense, but the first number is the class, not an attribute.
        #expect(detect("\u{1B}[6;20;10t\u{1B}[?4;1;2c")?.output == .cells)
        #expect(detect("\u{1B}[6;20;10t\u{1B}[?62;1;2;6;22c")?.output == .cells)
    }

    @Test func aTerminalWithoutGraphicsOrWithoutACellSizeGetsCells() {
        let plain = detect("\u{1B}[?62;22c")
        #expect(plain?.output == .cells)
        #expect(plain?.reason.contains("no answer to the kitty graphics query") == true)
        // Sixel listed, but no pixel size anywhere: cells, and the reason says so.
        let sizeless = detect("\u{1B}[?63;4c")
        #expect(sizeless?.output == .cells)
        #expect(sizeless?.reason.contains("no cell size") == true)
        // A refused kitty query is no kitty.
        #expect(detect("\u{1B}_Gi=31;EINVAL:bad\u{1B}\\\u{1B}[6;20;10t\u{1B}[?62c")?.output == .cells)
    }

    @Test func aTerminalThatAnswersNothingGetsCellsAtTheTimeout() {
        var detector = TerminalGraphicsDetector(request: .auto, environment: [:], window: window)
        #expect(detector.start() == .query(TerminalGraphicsQueries.kittyGraphics + TerminalGraphicsQueries.sixelColors + TerminalGraphicsQueries.sixelGeometry
                                           + TerminalGraphicsQueries.cellPixelSize + TerminalGraphicsQueries.primaryDeviceAttributes))
        let choice = detector.timedOut()
        #expect(choice.output == .cells)
        #expect(choice.reason.contains("timeout"))
        // A late answer changes nothing.
        #expect(detector.receive(.deviceAttributes([63, 4])) == nil)
        #expect(detector.decision == choice)
    }

    @Test func insideTmuxOrScreenAutoIsCellsWithoutAsking() {
        for environment in [["TMUX": "/tmp/tmux-0/default,1,0"], ["STY": "12.pts-0"], ["TERM": "tmux-256color"]] {
            var detector = TerminalGraphicsDetector(request: .auto, environment: environment, window: window)
            guard case .decided(let choice) = detector.start() else {
                Issue.record("queried inside a multiplexer")
                continue
            }
            #expect(choice.output == .cells)
            #expect(choice.reason.contains("inside"))
        }
    }

    @Test func aForcedOutputIsKeptAndAssumesACellWhenNoneIsSaid() {
        var detector = TerminalGraphicsDetector(request: .sixel, environment: ["TMUX": "x"], window: window)
        guard case .query = detector.start() else {
            Issue.record("a forced output did not query for the cell size")
            return
        }
        let choice = detector.timedOut()
        #expect(choice.output == .sixel)
        #expect(choice.cellWidth == TerminalGraphicsDetector.assumedCell.width)
        #expect(detect("\u{1B}[?62c", request: .kitty)?.output == .kitty)
        var cells = TerminalGraphicsDetector(request: .cells, environment: [:], window: window)
        #expect(cells.start() == .decided(.cells("asked for with --graphics cells")))
    }

    // MARK: Shared memory (t=s)

    private static let kittyCell = "\u{1B}_Gi=31;OK\u{1B}\\\u{1B}[6;20;10t"

    @Test func theSharedMemoryQueryNamesTheProbeAfterKittysOwnQuery() {
        var detector = TerminalGraphicsDetector(request: .auto, environment: [:], window: window)
        detector.sharedMemoryProbe = "/reel-kitty-7-probe-0"
        guard case .query(let bytes) = detector.start() else {
            Issue.record("no query")
            return
        }
        let query = "\u{1B}_Gi=32,s=1,v=1,a=q,t=s,S=3,f=24;" + Data("/reel-kitty-7-probe-0".utf8).base64EncodedString() + "\u{1B}\\"
        #expect(Self.bytes(query) == TerminalGraphicsQueries.kittySharedMemory(name: "/reel-kitty-7-probe-0"))
        #expect(bytes == TerminalGraphicsQueries.kittyGraphics + Self.bytes(query) + TerminalGraphicsQueries.sixelColors
                + TerminalGraphicsQueries.sixelGeometry + TerminalGraphicsQueries.cellPixelSize
                + TerminalGraphicsQueries.primaryDeviceAttributes)
    }

    @Test func kittyFramesGoThroughSharedMemoryOnlyWhenTheTerminalReadTheProbe() throws {
        let probe = "/reel-kitty-7-probe-0"
        // Read: a terminal on this machine.
        let local = try #require(detect(Self.kittyCell + "\u{1B}_Gi=32;OK\u{1B}\\\u{1B}[?62;22c", probe: probe))
        #expect(local.output == .kitty && local.transfer == .sharedMemory)
        #expect(local.reason.contains("read a shared-memory object"))
        #expect(local.description.contains("frames through shared memory (t=s)"))
        // An error: the object is not there for it (over ssh).
        let remote = try #require(detect(Self.kittyCell
            + "\u{1B}_Gi=32;EBADF:Failed to open file for graphics transmission\u{1B}\\\u{1B}[?62;22c", probe: probe))
        #expect(remote.output == .kitty && remote.transfer == .direct)
        #expect(remote.reason.contains("shared memory (t=s) refused (EBADF"))
        #expect(remote.description.contains("frames as compressed RGB (t=d)"))
        // Silence: DA1 came and no answer to the t=s query before it.
        let silent = try #require(detect(Self.kittyCell + "\u{1B}[?62;22c", probe: probe))
        #expect(silent.output == .kitty && silent.transfer == .direct)
        #expect(silent.reason.contains("no answer to the shared-memory (t=s) query"))
        // No object to offer: direct, and said.
        let none = try #require(detect(Self.kittyCell + "\u{1B}[?62;22c"))
        #expect(none.transfer == .direct && none.reason.contains("no shared-memory object to offer"))
        // A terminal that answers nothing at all: cells at the timeout, shared memory or not.
        var mute = TerminalGraphicsDetector(request: .auto, environment: [:], window: window)
        mute.sharedMemoryProbe = probe
        _ = mute.start()
        #expect(mute.timedOut().output == .cells)
    }

    @Test func sharedMemoryAloneIsNoKittyAndAForcedKittyUsesIt() {
        let probe = "/reel-kitty-7-probe-0"
        // The t=s answer without kitty's own: sixel as DA1 says, no transfer.
        let sixel = detect("\u{1B}_Gi=32;OK\u{1B}\\\u{1B}[6;20;10t\u{1B}[?63;4c", probe: probe)
        #expect(sixel?.output == .sixel && sixel?.transfer == .direct)
        // --graphics kitty where the terminal read the object: shared memory.
        let forced = detect("\u{1B}_Gi=32;OK\u{1B}\\\u{1B}[?62c", request: .kitty, probe: probe)
        #expect(forced?.output == .kitty && forced?.transfer == .sharedMemory)
    }
}
