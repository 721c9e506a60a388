import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The checks every XML document Reel reads goes through before a parser builds anything from
/// it (TTML here, DASH manifests in ReelStreaming): none of them needs a document type
/// declaration, and a DTD is where entities are declared (billion laughs, external files).
///
/// The text check is the defence, not the parser's callbacks: swift-corelibs-foundation's
/// `XMLParser` took an internal-entity DTD without calling its delegate's declaration methods
/// (seen on Linux), so a declaration must be refused before parsing.
public enum SafeXML {
    /// Whether `data` holds `<!DOCTYPE` or `<!ENTITY`, in any case, anywhere (a comment too:
    /// refused rather than parsed to find out), in its text as decoded from UTF-8 or UTF-16 —
    /// or in its raw bytes when it is neither.
    public static func hasDeclarations(_ data: Data) -> Bool {
        if let text = CaptionText.decode(data) { return hasDeclarations(text) }
        let upper = Data(data.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 })
        return upper.range(of: Data("<!DOCTYPE".utf8)) != nil || upper.range(of: Data("<!ENTITY".utf8)) != nil
    }

    /// Whether `text` holds `<!DOCTYPE` or `<!ENTITY`, in any case.
    public static func hasDeclarations(_ text: String) -> Bool {
        let upper = text.uppercased()
        return upper.contains("<!DOCTYPE") || upper.contains("<!ENTITY")
    }

    /// Parses `data` with the SAX parser (external entities off) only to check it: the line of
    /// the first error, or `nil` when it is well-formed. libxml2 behind `XMLDocument` prints a
    /// malformed document's errors on standard error; this parser reports them to us instead.
    public static func firstErrorLine(in data: Data) -> Int? {
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        _ = parser.parse()
        // `parse()` can answer true for a truncated document; the error is what tells.
        return parser.parserError == nil ? nil : max(parser.lineNumber, 1)
    }
}
