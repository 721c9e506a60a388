import Testing
import ReelCaptions

@Suite struct ASSDialogueTests {
    @Test func aChunkLineIsReadWithCommasInItsText() throws {
        let dialogue = try #require(ASSDialogue(chunk: "0,0,Default,,0,0,0,,Hello, {\\i1}world{\\i0}"))
        #expect(dialogue.style == "Default")
        #expect(dialogue.text == "Hello, {\\i1}world{\\i0}")
        #expect(dialogue.plainText == "Hello, world")
        #expect(dialogue.chunk(readOrder: 7) == "7,0,Default,,0,0,0,,Hello, {\\i1}world{\\i0}")
    }

    @Test func marginsAndLayerAreNumbers() throws {
        let dialogue = try #require(ASSDialogue(chunk: "3,2,Top,Narrator,10,20,30,Banner;5,Text"))
        #expect(dialogue.layer == 2)
        #expect(dialogue.name == "Narrator")
        #expect((dialogue.marginL, dialogue.marginR, dialogue.marginV) == (10, 20, 30))
        #expect(dialogue.effect == "Banner;5")
    }

    @Test func aLineWithTooFewFieldsIsRefused() {
        #expect(ASSDialogue(chunk: "0,0,Default,Hello") == nil)
        #expect(ASSDialogue(chunk: "") == nil)
    }

    @Test func plainTextDropsOverridesAndBreaksLines() {
        #expect(ASSDialogue.plainText(of: "{\\an8}第一行\\N second\\hline") == "第一行\n second line")
        #expect(ASSDialogue.plainText(of: "a\\nb") == "a\nb")
        #expect(ASSDialogue.plainText(of: "{\\pos(1,2)\\c&H00FF00&}green{\\r}") == "green")
        #expect(ASSDialogue.plainText(of: "an unclosed {block") == "an unclosed ")
        #expect(ASSDialogue.plainText(of: "back\\slash \\x kept\\") == "back\\slash \\x kept\\")
    }
}
