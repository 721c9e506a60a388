import Testing
import ReelCore
import ReelMedia

@Suite struct AudioSelectionTests {
    let tracks = [
        AudioTrack(id: 1, language: "eng", codec: "aac", isDefault: true),
        AudioTrack(id: 2, language: "fra", codec: "aac"),
        AudioTrack(id: 3, language: "fra", label: "Audiodescription", codec: "aac", roles: [AudioTrack.describesVideo]),
    ]

    @Test func withoutAPreferenceTheDefaultTrackPlays() {
        let choice = AudioSelection().choose(from: tracks)
        #expect(choice.track?.id == 1)
        #expect(choice.reason == "the default track")
        #expect(AudioSelection().choose(from: tracks.map { var t = $0; t.isDefault = false; return t }).reason == "the first track")
    }

    @Test func aPreferredLanguageMatchesHoweverItIsWrittenAndSkipsAudioDescription() {
        for language in ["fr", "fra", "fre", "fr-CA"] {
            let choice = AudioSelection(preferredLanguages: [language]).choose(from: tracks)
            #expect(choice.track?.id == 2, "\(language)")
            #expect(choice.reason == "language \(language)")
        }
    }

    @Test func aPreferredRoleChoosesAmongTheLanguagesTracks() {
        let choice = AudioSelection(preferredLanguages: ["fr"], preferredRole: AudioTrack.describesVideo).choose(from: tracks)
        #expect(choice.track?.id == 3)
        #expect(AudioSelection(preferredRole: AudioTrack.describesVideo).choose(from: tracks).track?.id == 3)
        let missing = AudioSelection(preferredLanguages: ["en"], preferredRole: AudioTrack.describesVideo).choose(from: tracks)
        #expect(missing.track?.id == 1)
        #expect(missing.reason == "language en (no track with role describes-video)")
    }

    @Test func anExplicitTrackWinsWhileOfferedAndTheFallbackSaysWhy() {
        #expect(AudioSelection(preferredLanguages: ["en"], track: 3).choose(from: tracks).track?.id == 3)
        let gone = AudioSelection(preferredLanguages: ["de", "ja"], track: 9).choose(from: tracks)
        #expect(gone.track?.id == 1)
        #expect(gone.reason == "no audio track in de, ja: no track 9: the default track")
        #expect(AudioSelection().choose(from: []).track == nil)
    }
}
