import ReelCaptions

extension PlaybackViewModel.CaptionChoice {
    /// The picker's rows for a player's tracks, in the player's order, by `displayName`.
    static func list(_ tracks: [CaptionTrack]) -> [Self] {
        tracks.map { Self(id: $0.id, name: $0.displayName) }
    }
}

extension CaptionSelection {
    /// The track the picker marks: the one shown, nil while off.
    func shown(among tracks: [CaptionTrack]) -> CaptionTrackID? {
        isEnabled ? choose(from: tracks) : nil
    }

    /// The selection after the picker chose `track` (nil: off): that track's language goes
    /// first among the preferred ones, so a later item in that language starts with it shown.
    func picking(_ track: CaptionTrackID?, among tracks: [CaptionTrack]) -> CaptionSelection {
        var languages = preferredLanguages
        if let track, let language = tracks.first(where: { $0.id == track })?.language, !language.isEmpty, language != "und" {
            languages.removeAll { $0 == language }
            languages.insert(language, at: 0)
        }
        return CaptionSelection(isEnabled: track != nil, preferredLanguages: languages, track: track)
    }
}
