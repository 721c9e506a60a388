import Foundation
import ReelCore

/// The audio tracks the scheduler offers (``StreamSchedulingLoader/audioTracks(_:document:)``):
/// an HLS master's separate `AUDIO` renditions, a DASH manifest's audio AdaptationSets, each
/// read beside the video when chosen. Which one plays is the caller's choice (ReelMedia's
/// `AudioSelection`); the scheduler only lists them and reads the one named.
extension HLSSchedulingLoader {
    /// The separate audio renditions of the HLS master `document` (each `id` its place among
    /// ``HLSMasterPlaylist/separateAudioRenditions``), or one track per audio AdaptationSet of
    /// the DASH manifest as published (read from its lowest-bandwidth Representation); empty for
    /// anything else.
    public func audioTracks(_ url: URL, document: Data) -> [AudioTrack] {
        if DASHManifest.looksLikeManifest(document) {
            guard let served = try? DASHManifest(document, url: url) else { return [] }
            let manifest = asPublished(served, url: url)
            return Self.audioSets(of: manifest).enumerated().map { id, representation in
                Self.audioTrack(id: id, representation, isDefault: Self.isDefaultAudio(representation, of: manifest))
            }
        }
        guard let master = HLSMasterPlaylist(document), master.videoRenditions.isEmpty else { return [] }
        let codec = Self.audioCodec(master.videoVariants.first?.codecs)
        return master.separateAudioRenditions.enumerated().map { id, rendition in
            AudioTrack(id: id, language: rendition.language, label: rendition.name.isEmpty ? nil : rendition.name, codec: codec,
                       channels: rendition.channels,
                       roles: rendition.characteristics.contains("public.accessibility.describes-video") ? [AudioTrack.describesVideo] : [],
                       isDefault: rendition.isDefault)
        }
    }

    /// The manifest at `url` as its origin published it (the variant choice serves a copy with
    /// one video and one audio Representation), when the choice kept it; else `served`.
    func asPublished(_ served: DASHManifest, url: URL) -> DASHManifest {
        guard let original = published?(url).flatMap({ try? DASHManifest($0, url: url) }), !original.videos.isEmpty else { return served }
        return original
    }

    /// The audio rendition's playlist every variant of `master` plays with: the one at `audio`
    /// among its separate renditions when there is one there, else the group's `DEFAULT` (or
    /// first) — when it is a playlist of its own and the master has no video rendition
    /// (subtitle renditions are the engine's to read, beside the reader).
    static func separateAudio(of master: HLSMasterPlaylist, base: URL, audio: Int?) -> URL? {
        guard master.videoRenditions.isEmpty else { return nil }
        let renditions = master.separateAudioRenditions
        let chosen = audio.flatMap { renditions.indices.contains($0) ? renditions[$0] : nil } ?? master.sharedAudioRendition
        guard let uri = chosen?.uri else { return nil }
        return URL(string: uri, relativeTo: base)?.absoluteURL
    }

    /// One audio Representation per audio AdaptationSet (the lowest bandwidth of each, the
    /// first listed of equal ones), in document order: the manifest's audio tracks.
    static func audioSets(of manifest: DASHManifest) -> [DASHManifest.Representation] {
        var chosen: [Int: DASHManifest.Representation] = [:]
        for representation in manifest.representations where representation.kind == .audio {
            if let held = chosen[representation.adaptationSet], (held.bandwidth, held.index) <= (representation.bandwidth, representation.index) {
                continue
            }
            chosen[representation.adaptationSet] = representation
        }
        return chosen.values.sorted { $0.index < $1.index }
    }

    /// The Representation of the audio track `audio` (``audioSets(of:)``), else the preferred one.
    static func audioRepresentation(of manifest: DASHManifest, audio: Int?) -> DASHManifest.Representation? {
        let sets = audioSets(of: manifest)
        if let audio, sets.indices.contains(audio) { return sets[audio] }
        return sets.first { isDefaultAudio($0, of: manifest) } ?? manifest.preferredAudio
    }

    /// An AdaptationSet whose `Role` is `main` is the default; without one, the set of the
    /// preferred audio Representation (what the scheduler played before tracks were chosen).
    static func isDefaultAudio(_ representation: DASHManifest.Representation, of manifest: DASHManifest) -> Bool {
        let audio = manifest.representations.filter { $0.kind == .audio }
        if audio.contains(where: { $0.roles.contains("main") }) { return representation.roles.contains("main") }
        return manifest.preferredAudio?.adaptationSet == representation.adaptationSet
    }

    static func audioTrack(id: Int, _ representation: DASHManifest.Representation, isDefault: Bool) -> AudioTrack {
        AudioTrack(id: id, language: representation.language, label: representation.label, codec: audioCodec(representation.codecs),
                   roles: representation.roles.filter { !["main", "alternate", "supplementary"].contains($0) }, isDefault: isDefault)
    }

    /// FFmpeg's name for the audio codec of an RFC 6381 `CODECS` list (`mp4a.40.2` is `aac`),
    /// the sample entry as written for one it does not know, `unknown` without one.
    static func audioCodec(_ codecs: String?) -> String {
        let entries = (codecs ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let names = ["mp4a.40.34": "mp3", "mp4a.6b": "mp3", "mp4a": "aac", "ac-3": "ac3", "ec-3": "eac3", "opus": "opus",
                     "flac": "flac", "fLaC": "flac", "ac-4": "ac4", "alac": "alac"]
        for entry in entries {
            let head = entry.split(separator: ".").first.map(String.init) ?? entry
            if HLSMasterPlaylist.videoCodecs.contains(head.lowercased()) { continue }
            return names[entry] ?? names[head] ?? head
        }
        return "unknown"
    }
}
