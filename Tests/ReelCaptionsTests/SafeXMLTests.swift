import Foundation
import Testing
import ReelCaptions

@Suite struct SafeXMLTests {
    @Test func declarationsAreFoundInAnyCaseAndEncoding() {
        let doctype = #"<?xml version="1.0"?><!DOCTYPE tt [<!ENTITY a "b">]><tt/>"#
        #expect(SafeXML.hasDeclarations(Data(doctype.utf8)))
        #expect(SafeXML.hasDeclarations(Data("<tt><!entity a 'b'></tt>".utf8)))
        #expect(SafeXML.hasDeclarations(Data("<!DocType tt><tt/>".utf8)))
        var utf16 = Data([0xFF, 0xFE])
        for unit in doctype.utf16 { utf16.append(UInt8(unit & 0xFF)); utf16.append(UInt8(unit >> 8)) }
        #expect(SafeXML.hasDeclarations(utf16))
        // Neither UTF-8 nor UTF-16: the raw bytes are searched.
        #expect(SafeXML.hasDeclarations(Data([0xFF, 0x00]) + Data("<!doctype x>".utf8)))
        #expect(!SafeXML.hasDeclarations(Data(#"<?xml version="1.0"?><tt xmlns="http://www.w3.org/ns/ttml"/>"#.utf8)))
        #expect(!SafeXML.hasDeclarations(Data([0xFF, 0x00, 0x41])))
    }

    @Test func wellFormednessReportsTheFirstErrorLine() {
        #expect(SafeXML.firstErrorLine(in: Data("<a><b/></a>".utf8)) == nil)
        #expect(SafeXML.firstErrorLine(in: Data("<a>\n<b>\n</a>".utf8)) == 3)
        #expect(SafeXML.firstErrorLine(in: Data("<a><b>".utf8)) != nil)
    }
}
