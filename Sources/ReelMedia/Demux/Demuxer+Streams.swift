import Foundation
import ReelCore
internal import CFFmpeg

/// Which streams an item plays: the default (else first) video stream that is not a cover
/// picture, the audio stream its ``AudioSelection`` chooses (the one a scheduler joined in when it
/// chose among renditions), the subtitle streams when captions are read — each only if this
/// FFmpeg can decode it.
extension Demuxer {
    struct ChosenStreams {
        var video: Int32?
        var audio: Int32?
        var captions: [Int32] = []
        var audioChoice: String?
    }

    func chooseStreams(_ format: UnsafeMutablePointer<AVFormatContext>) -> ChosenStreams {
        var chosen = ChosenStreams()
        var videoIsDefault = false
        var audioTracks: [AudioTrack] = []
        for i in 0..<Int(format.pointee.nb_streams) {
            guard let stream = format.pointee.streams[i], let parameters = stream.pointee.codecpar else { continue }
            let disposition = stream.pointee.disposition
            let isDefault = disposition & AV_DISPOSITION_DEFAULT != 0
            let decodable = avcodec_find_decoder(parameters.pointee.codec_id) != nil
            switch parameters.pointee.codec_type {
            case AVMEDIA_TYPE_VIDEO:
                if disposition & AV_DISPOSITION_ATTACHED_PIC != 0 || !decodable { continue }
                if chosen.video == nil || (isDefault && !videoIsDefault) {
                    chosen.video = Int32(i)
                    videoIsDefault = isDefault
                }
            case AVMEDIA_TYPE_AUDIO:
                if decodable { audioTracks.append(Self.audioTrack(stream, index: i)) }
            case AVMEDIA_TYPE_SUBTITLE:
                if readsCaptions, decodable { chosen.captions.append(Int32(i)) }
            default:
                continue
            }
        }
        if !scheduledAudioTracks.isEmpty {
            // The scheduler read the chosen rendition in; the choice and its reason are made.
            chosen.audio = audioTracks.first.map { Int32($0.id) }
            chosen.audioChoice = audioChoice
        } else if !audioTracks.isEmpty {
            let choice = audioSelection.choose(from: audioTracks)
            chosen.audio = choice.track.map { Int32($0.id) }
            chosen.audioChoice = choice.reason
        }
        return chosen
    }

    /// What an audio stream offers, as the selection reads it (before probing: channels may be 0).
    static func audioTrack(_ stream: UnsafeMutablePointer<AVStream>, index: Int) -> AudioTrack {
        let parameters = stream.pointee.codecpar.pointee
        func metadata(_ key: String) -> String? {
            av_dict_get(stream.pointee.metadata, key, nil, 0).flatMap { $0.pointee.value.map { String(cString: $0) } }
        }
        let channels = Int(parameters.ch_layout.nb_channels)
        return AudioTrack(id: index, language: metadata("language"), label: metadata("title") ?? metadata("comment"),
                          codec: String(cString: avcodec_get_name(parameters.codec_id)), channels: channels > 0 ? channels : nil,
                          roles: roles(stream.pointee.disposition),
                          isDefault: stream.pointee.disposition & AV_DISPOSITION_DEFAULT != 0)
    }

    /// A stream's roles from its disposition (FFmpeg's HLS demuxer sets them from a rendition's
    /// `CHARACTERISTICS`; Matroska and MP4 from their flags).
    static func roles(_ disposition: Int32) -> [String] {
        let flags: [(Int32, String)] = [
            (AV_DISPOSITION_VISUAL_IMPAIRED, AudioTrack.describesVideo),
            (AV_DISPOSITION_DESCRIPTIONS, AudioTrack.describesVideo),
            (AV_DISPOSITION_HEARING_IMPAIRED, "hearing-impaired"),
            (AV_DISPOSITION_COMMENT, "commentary"),
            (AV_DISPOSITION_DUB, "dub"),
            (AV_DISPOSITION_ORIGINAL, "original"),
        ]
        var roles: [String] = []
        for (flag, role) in flags where disposition & flag != 0 && !roles.contains(role) { roles.append(role) }
        return roles
    }
}
