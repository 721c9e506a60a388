import Foundation
import ReelCore
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Why a TTML document gives no cues. Each says so in one line.
public enum TTMLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Larger than ``TTMLDocument/maximumBytes``.
    case tooLarge(bytes: Int, limit: Int)
    /// Not UTF-8 or UTF-16 text.
    case notText
    /// A document type declaration or an entity declaration: refused before parsing (entity
    /// expansion and external files are how XML documents attack their readers; TTML needs none).
    case documentTypeDeclaration
    /// Not well-formed XML (truncated, unbalanced…), with the line where the parser stopped.
    case malformed(line: Int)
    /// Well-formed XML whose root is not a TTML `tt` element.
    case notTTML(root: String)
    /// Something this reader does not implement (`ttp:timeBase` other than `media`, `seq` containers).
    case unsupported(String)
    /// An attribute that is not a TTML time expression (or parameter).
    case invalidValue(attribute: String, value: String)
    /// Elements nested deeper than ``TTMLDocument/maximumDepth``.
    case tooDeep(limit: Int)
    /// More cues than ``TTMLDocument/maximumCues``.
    case tooManyCues(limit: Int)

    /// The one line a log or `reel play` prints, starting `TTML:`.
    public var description: String {
        switch self {
        case .tooLarge(let bytes, let limit): "TTML: \(bytes) bytes is over the \(limit)-byte limit"
        case .notText: "TTML: not UTF-8 or UTF-16 text"
        case .documentTypeDeclaration: "TTML: refused a document type or entity declaration"
        case .malformed(let line): "TTML: not well-formed XML (line \(line))"
        case .notTTML(let root): "TTML: the root element is <\(root)>, not <tt>"
        case .unsupported(let what): "TTML: unsupported \(what)"
        case .invalidValue(let attribute, let value): "TTML: invalid \(attribute)=\"\(value)\""
        case .tooDeep(let limit): "TTML: elements nested deeper than \(limit)"
        case .tooManyCues(let limit): "TTML: more than \(limit) cues"
        }
    }
}

/// One cue of a TTML document: a paragraph (`p`) for as long as its visible text stays the same.
public struct TTMLCue: Hashable, Sendable {
    /// When the cue appears, on the document's timeline (for a sidecar, the item's media time;
    /// for an `stpp` sample, the track's).
    public var start: MediaTime
    /// `+infinity` when nothing in the document ends it.
    public var end: MediaTime
    /// The cue's text and styling as ASS (see ``TTMLDocument`` for how TTML maps to it).
    public var dialogue: ASSDialogue

    /// A cue shown from `start` up to, not including, `end`.
    public init(start: MediaTime, end: MediaTime, dialogue: ASSDialogue) {
        self.start = start
        self.end = end
        self.dialogue = dialogue
    }
}

/// A TTML (TTML 1 / IMSC text profile, DFXP) document read into cues, for the text tracks
/// FFmpeg cannot decode (sidecar `.ttml`/`.dfxp`, DASH `application/ttml+xml`, `stpp` samples).
///
/// - Security: at most ``maximumBytes``; any `<!DOCTYPE` or `<!ENTITY` (any case, after
///   decoding UTF-16) is refused before the XML parser runs; external entities are never resolved.
///   At most ``maximumCues`` cues, ``maximumDepth`` levels, style chains 32 deep, and a work
///   budget for paragraphs split by timed spans (a hostile one is refused as unsupported).
/// - Timing (TTML 1 §10.4, `par` semantics): `begin` and `end` are offsets from the parent's
///   begin, `dur` from the element's own; a child never outlasts its parent; no end anywhere
///   means the cue lasts to `+infinity`. `span`s timed inside a `p` split the paragraph into
///   one cue per stretch of unchanged text.
/// - Text as ASS (``ASSDialogue``): `<br/>` → `\N`; whitespace collapsed as `xml:space="default"`
///   says (kept with `preserve`); `tts:fontStyle` italic → `{\i1}…{\i0}`, `tts:fontWeight` bold →
///   `{\b1}…{\b0}`, `tts:textDecoration` underline → `{\u1}…{\u0}`, `tts:color` → `{\c&HBBGGRR&}`
///   (alpha → `{\1a&HAA&}`); inline, referential (`style`) and region styles, inherited down
///   the tree. Placement → a leading `{\anN}` when the document asks for other than bottom centre:
///   `tts:displayAlign` (or the region's position) picks the row, `tts:textAlign` the column.
public struct TTMLDocument: Sendable {
    /// The largest document read, in bytes (4 MiB); a larger one throws ``TTMLError/tooLarge(bytes:limit:)``.
    public static let maximumBytes = 4 << 20
    /// The most cues one document may give; more throws ``TTMLError/tooManyCues(limit:)``.
    public static let maximumCues = 50_000
    /// How deep elements may nest; deeper throws ``TTMLError/tooDeep(limit:)``.
    public static let maximumDepth = 256

    /// The `ttp:` timing parameters of the `tt` element, by which frame and tick times were read.
    public let parameters: TTMLTimingParameters
    /// `xml:lang` of the `tt` element, if written.
    public let language: String?
    /// Every cue, in document order of their paragraphs (not sorted by time).
    public let cues: [TTMLCue]

    /// Reads `data`; `maximumCues` lowers the cue cap (tests, or a caller with less room).
    /// Throws a ``TTMLError`` saying why the document gives no cues: too large, not text, a
    /// document type declaration, not well-formed, not TTML, an unsupported or invalid timing
    /// attribute, too deep, or too many cues.
    public init(_ data: Data, maximumCues: Int = TTMLDocument.maximumCues) throws(TTMLError) {
        guard data.count <= Self.maximumBytes else { throw .tooLarge(bytes: data.count, limit: Self.maximumBytes) }
        let tree = try TTMLTree.parse(data)
        guard let root = tree.nodes.first else { throw .malformed(line: 1) }
        guard root.name == "tt" else { throw .notTTML(root: root.qualifiedName) }
        parameters = try Self.parameters(of: root)
        if let timeBase = root.attributes["ttp:timeBase"], timeBase != "media" {
            throw .unsupported("ttp:timeBase=\"\(timeBase)\"")
        }
        language = root.attributes["xml:lang"].flatMap { $0.isEmpty ? nil : $0 }
        var builder = CueBuilder(tree: tree, parameters: parameters, maximumCues: min(maximumCues, Self.maximumCues))
        try builder.build()
        cues = builder.cues
    }

    /// The cues as caption events of `track`, moved by `offset` (a DASH period start, an `stpp`
    /// sample's time), carrying the document's language.
    public func events(track: CaptionTrackID, offset: MediaTime = .zero) -> [CaptionEvent] {
        cues.map {
            CaptionEvent(track: track, start: $0.start + offset, end: $0.end + offset,
                         content: .text($0.dialogue), language: language)
        }
    }

    private static func parameters(of root: TTMLTree.Node) throws(TTMLError) -> TTMLTimingParameters {
        func positive(_ name: String) throws(TTMLError) -> Int64? {
            guard let text = root.attributes[name] else { return nil }
            guard let value = Int64(text.trimmingCharacters(in: .whitespaces)), value > 0, value < 1 << 31 else {
                throw .invalidValue(attribute: name, value: text)
            }
            return value
        }
        var multiplier: (Int64, Int64) = (1, 1)
        if let text = root.attributes["ttp:frameRateMultiplier"] {
            let parts = text.split(whereSeparator: \.isWhitespace).compactMap { Int64($0) }
            guard parts.count == 2, parts.allSatisfy({ $0 > 0 && $0 < 1 << 31 }) else {
                throw .invalidValue(attribute: "ttp:frameRateMultiplier", value: text)
            }
            multiplier = (parts[0], parts[1])
        }
        return TTMLTimingParameters(frameRate: try positive("ttp:frameRate"), frameRateMultiplier: multiplier,
                                    subFrameRate: try positive("ttp:subFrameRate") ?? 1,
                                    tickRate: try positive("ttp:tickRate"))
    }
}

// MARK: - The element tree

/// The document as a flat array of elements (index 0 is the root), read with Foundation's SAX
/// parser. Attribute names are normalised to the usual prefixes whatever the document's own:
/// `tts:` (styling), `ttp:` (parameters), `ttm:` (metadata), `xml:`; TTML's own timing and
/// reference attributes have none.
struct TTMLTree {
    struct Node {
        var name: String
        var qualifiedName: String
        /// Whether the element is in a namespace other than TTML's (its content is not shown).
        var isForeign: Bool
        var attributes: [String: String]
        var children: [Child] = []
    }

    enum Child {
        case element(Int)
        case text(String)
    }

    var nodes: [Node] = []

    static func parse(_ data: Data) throws(TTMLError) -> TTMLTree {
        guard let text = CaptionText.decode(data) else { throw .notText }
        // Refused before any parsing (see SafeXML).
        if SafeXML.hasDeclarations(text) { throw .documentTypeDeclaration }
        var utf8 = Data(text.utf8)
        // Re-encoded from UTF-16: the declaration must not announce the old encoding.
        if CaptionText.encoding(of: data).0 != .utf8, text.hasPrefix("<?xml"), let end = text.range(of: "?>") {
            utf8 = Data(text[end.upperBound...].utf8)
        }
        let parser = XMLParser(data: utf8)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        let reader = Reader()
        parser.delegate = reader
        _ = parser.parse()
        if let failure = reader.failure { throw failure }
        // `parse()` can answer true for a truncated document; the error is what tells.
        if parser.parserError != nil || !reader.stack.isEmpty || reader.tree.nodes.isEmpty {
            throw .malformed(line: max(parser.lineNumber, 1))
        }
        return reader.tree
    }

    private static let ttmlNamespaces: Set<String> = [
        "http://www.w3.org/ns/ttml", "http://www.w3.org/2006/10/ttaf1", "http://www.w3.org/2006/04/ttaf1",
        "http://www.w3.org/2006/10/ttaf1#", "http://www.w3.org/ns/ttml#",
    ]

    private final class Reader: NSObject, XMLParserDelegate {
        var tree = TTMLTree()
        var stack: [Int] = []
        /// Prefix → namespace, one scope per open element (`""` is the default namespace).
        var scopes: [[String: String]] = [[:]]
        var failure: TTMLError?

        private func fail(_ parser: XMLParser, _ error: TTMLError) {
            if failure == nil { failure = error }
            parser.abortParsing()
        }

        private func namespace(of prefix: String) -> String? {
            for scope in scopes.reversed() { if let uri = scope[prefix] { return uri } }
            return nil
        }

        private func split(_ qualified: String) -> (prefix: String, local: String) {
            guard let colon = qualified.firstIndex(of: ":") else { return ("", qualified) }
            return (String(qualified[..<colon]), String(qualified[qualified.index(after: colon)...]))
        }

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]) {
            guard failure == nil else { return }
            guard stack.count < TTMLDocument.maximumDepth else { return fail(parser, .tooDeep(limit: TTMLDocument.maximumDepth)) }
            var scope: [String: String] = [:]
            for (name, value) in attributes {
                if name == "xmlns" { scope[""] = value } else if name.hasPrefix("xmlns:") { scope[String(name.dropFirst(6))] = value }
            }
            scopes.append(scope)
            var normalised: [String: String] = [:]
            for (name, value) in attributes where name != "xmlns" && !name.hasPrefix("xmlns:") {
                let (prefix, local) = split(name)
                if prefix.isEmpty { normalised[local] = value; continue }
                if prefix == "xml" { normalised["xml:" + local] = value; continue }
                let uri = namespace(of: prefix) ?? ""
                let key: String
                if uri.hasSuffix("#styling") || (uri.isEmpty && prefix == "tts") {
                    key = "tts:" + local
                } else if uri.hasSuffix("#parameter") || (uri.isEmpty && prefix == "ttp") {
                    key = "ttp:" + local
                } else if uri.hasSuffix("#metadata") || (uri.isEmpty && prefix == "ttm") {
                    key = "ttm:" + local
                } else {
                    key = "{\(uri)}" + local
                }
                normalised[key] = value
            }
            let (prefix, local) = split(elementName)
            let uri = namespace(of: prefix)
            let foreign = uri.map { !TTMLTree.ttmlNamespaces.contains($0) } ?? !prefix.isEmpty
            let index = tree.nodes.count
            tree.nodes.append(Node(name: local, qualifiedName: elementName, isForeign: foreign, attributes: normalised))
            if let parent = stack.last {
                tree.nodes[parent].children.append(.element(index))
            } else if index != 0 {
                return fail(parser, .malformed(line: parser.lineNumber))
            }
            stack.append(index)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            guard failure == nil else { return }
            stack.removeLast()
            scopes.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard failure == nil, let open = stack.last else { return }
            if case .text(let previous)? = tree.nodes[open].children.last {
                tree.nodes[open].children[tree.nodes[open].children.count - 1] = .text(previous + string)
            } else {
                tree.nodes[open].children.append(.text(string))
            }
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            guard let string = String(validating: CDATABlock, as: UTF8.self) else { return fail(parser, .notText) }
            self.parser(parser, foundCharacters: string)
        }

        // Declarations never get here: SafeXML's text check refuses them first. These are a
        // second line only where a Foundation reports declarations (corelibs' did not).
        func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) {
            fail(parser, .documentTypeDeclaration)
        }

        func parser(_ parser: XMLParser, foundExternalEntityDeclarationWithName name: String, publicID: String?, systemID: String?) {
            fail(parser, .documentTypeDeclaration)
        }

        func parser(_ parser: XMLParser, foundUnparsedEntityDeclarationWithName name: String, publicID: String?,
                    systemID: String?, notationName: String?) {
            fail(parser, .documentTypeDeclaration)
        }

        func parser(_ parser: XMLParser, foundElementDeclarationWithName elementName: String, model: String) {
            fail(parser, .documentTypeDeclaration)
        }

        func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
            fail(parser, .documentTypeDeclaration)
            return nil
        }
    }
}
