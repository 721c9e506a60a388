import Foundation
import ReelCore
internal import CFFmpeg

/// Where chroma samples sit relative to luma (H.273 `ChromaSampleLocType`).
public enum ChromaLocation: String, Sendable, Hashable, Codable {
    /// Co-sited horizontally with the left luma sample (MPEG-2, H.264 and HEVC's default).
    case left
    /// Centred between the luma samples it covers, across and down (type 1: MPEG-1, JPEG).
    case center
    /// Co-sited with the top-left luma sample it covers (type 2, common in BT.2020 HDR masters).
    case topLeft
    /// Centred horizontally, co-sited with the top row of luma samples.
    case top
    /// Co-sited horizontally with the left luma sample, vertically with the bottom row.
    case bottomLeft
    /// Centred horizontally, co-sited with the bottom row of luma samples.
    case bottom

    /// Where a chroma sample sits among the luma samples it covers, as a fraction (0, ½ or 1)
    /// of the way from the first to the last of them: horizontally, then vertically
    /// (H.273 `ChromaSampleLocType`; FFmpeg's `av_chroma_location_enum_to_pos` for 4:2:0, / 256).
    public var fraction: (x: Double, y: Double) {
        switch self {
        case .left: (0, 0.5)
        case .center: (0.5, 0.5)
        case .topLeft: (0, 0)
        case .top: (0.5, 0)
        case .bottomLeft: (0, 1)
        case .bottom: (0.5, 1)
        }
    }

    /// The chroma sample's distance in luma samples from the first luma sample it covers, in a
    /// plane subsampled by 2^`shiftX` across and 2^`shiftY` down (0 along a side that is not
    /// subsampled): left-sited 4:2:0 is (0, 0.5).
    public func position(shiftX: Int, shiftY: Int) -> (x: Double, y: Double) {
        (fraction.x * Double((1 << shiftX) - 1), fraction.y * Double((1 << shiftY) - 1))
    }
}

/// The mastering display of an HDR grade (SMPTE ST 2086).
public struct MasteringDisplay: Sendable, Hashable, Codable {
    /// The display's peak luminance in nits (cd/m²): the brightest the grade can hold.
    public var maxLuminance: Double
    /// The display's black level in nits (cd/m²), typically 0.0001 to 0.05.
    public var minLuminance: Double
}

/// A Dolby Vision stream's configuration record.
public struct DolbyVisionConfiguration: Sendable, Hashable, Codable {
    /// The Dolby Vision profile (`dv_profile`): 4 dual-layer over an SDR base, 5 single-layer
    /// IPTPQc2, 7 dual-layer over an HDR10 base, 8 single-layer over a compatible base, 9 AVC
    /// over an SDR base, 10 AV1.
    public var profile: Int
    /// The Dolby Vision level (`dv_level`), 1 to 13: the largest resolution and frame rate the
    /// stream needs a decoder to handle.
    public var level: Int
    /// The base layer's cross-compatibility: 0 none (profile 5's IPTPQc2), 1 HDR10, 2 SDR,
    /// 4 HLG, 6 BT.2020 (Blu-ray).
    public var compatibilityID: Int
    /// Whether the stream has a base layer (`bl_present_flag`): the pictures a decoder without
    /// Dolby Vision decodes.
    public var hasBaseLayer: Bool
    /// Whether the stream has an enhancement layer (`el_present_flag`, profile 7): a second
    /// picture layer Reel ignores.
    public var hasEnhancementLayer: Bool
    /// Whether the stream carries reference processing units (`rpu_present_flag`): the per-scene
    /// reshaping metadata Reel does not apply.
    public var hasRPU: Bool

    /// Whether the base layer shows on its own as HDR10, HLG or SDR (profile 8.x, 7, 9, 4).
    /// Profile 5 has no such base: its pictures only look right through Dolby's own
    /// reshaping, which Reel does not do.
    public var hasCompatibleBase: Bool { hasBaseLayer && (compatibilityID != 0 || profile == 7) }

    /// `8.4` for profile 8 with an HLG base.
    public var name: String { compatibilityID != 0 ? "\(profile).\(compatibilityID)" : "\(profile)" }
}

/// A stream's or frame's colour, from its own tags, with the documented fallbacks for what
/// it leaves untagged: the matrix and primaries of HD and larger (1280×720 and up) are BT.709,
/// of SD BT.601 (525-line at 480 and 486 lines, else 625); the transfer BT.709 (BT.601 for
/// SD, the same curve); the range limited; chroma on the left.
public struct ColorDescription: Sendable, Hashable, Codable {
    /// The Y′CbCr to R′G′B′ matrix (tagged, or assumed from the size).
    public var matrix: ColorMatrix
    /// Whether the samples use the limited (16–235) or full (0–255) range; limited when untagged.
    public var range: ColorRange
    /// The transfer function (SDR gamma, PQ or HLG), tagged or assumed.
    public var transfer: ColorTransfer
    /// The colour primaries (BT.709, BT.601 525 or 625, BT.2020, Display P3), tagged or assumed.
    public var primaries: ColorPrimaries
    /// Where the chroma samples sit; ``ChromaLocation/left`` when untagged.
    public var chromaLocation: ChromaLocation
    /// Which of matrix, transfer, primaries the stream did not tag (so they were assumed).
    public var assumed: [String] = []
    /// The HDR grade's mastering display (SMPTE ST 2086), when the stream says.
    public var masteringDisplay: MasteringDisplay?
    /// MaxCLL in nits (CTA-861.3): the brightest pixel of the whole content, when the stream says.
    public var maxCLL: Double?
    /// MaxFALL in nits (CTA-861.3): the brightest frame's average light level, when the stream says.
    public var maxFALL: Double?
    /// The Dolby Vision configuration record, when the stream is Dolby Vision.
    public var dolbyVision: DolbyVisionConfiguration?

    /// HLG or PQ.
    public var isHDR: Bool { transfer.isHDR }

    /// Whether frames go through the HDR / wide-gamut mapping (`ColorMapping/applies`).
    public var needsMapping: Bool { ColorMapping.applies(transfer: transfer, primaries: primaries) }

    /// The content's peak from its metadata: MaxCLL, else the mastering display's peak.
    public var metadataPeak: Double? {
        if let maxCLL, maxCLL > 0 { return maxCLL }
        if let peak = masteringDisplay?.maxLuminance, peak > 0 { return peak }
        return nil
    }

    /// One line for `reel probe` and the trace: `HLG (ARIB STD-B67), BT.2020, BT.2020 matrix, limited, chroma left`.
    public var summary: String {
        var parts = [transfer.displayName, primaries.displayName + " primaries",
                     matrix.rawValue.uppercased().replacingOccurrences(of: "BT", with: "BT.") + " matrix",
                     range.rawValue + " range", "chroma " + chromaLocation.rawValue]
        if !assumed.isEmpty { parts.append("assumed: " + assumed.joined(separator: ", ")) }
        if let m = masteringDisplay { parts.append("mastering \(Int(m.maxLuminance.rounded())) nits") }
        if let maxCLL { parts.append("MaxCLL \(Int(maxCLL))") }
        if let dv = dolbyVision { parts.append("Dolby Vision \(dv.name)") }
        return parts.joined(separator: ", ")
    }
}

extension ColorDescription {
    /// The colour of a decoded frame (its tags, side data), `width`×`height`.
    init(frame: UnsafePointer<AVFrame>) {
        let f = frame.pointee
        let format = AVPixelFormat(rawValue: f.format)
        let name = av_get_pix_fmt_name(format).map { String(cString: $0) } ?? ""
        self.init(space: f.colorspace, trc: f.color_trc, primaries: f.color_primaries, range: f.color_range,
                  location: f.chroma_location, width: Int(f.width), height: Int(f.height), jpegFormat: name.hasPrefix("yuvj"))
        if let side = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA), side.pointee.size >= MemoryLayout<AVMasteringDisplayMetadata>.size {
            let m = UnsafeRawPointer(side.pointee.data).load(as: AVMasteringDisplayMetadata.self)
            if m.has_luminance != 0 {
                masteringDisplay = MasteringDisplay(maxLuminance: av_q2d(m.max_luminance), minLuminance: av_q2d(m.min_luminance))
            }
        }
        if let side = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL), side.pointee.size >= MemoryLayout<AVContentLightMetadata>.size {
            let c = UnsafeRawPointer(side.pointee.data).load(as: AVContentLightMetadata.self)
            if c.MaxCLL > 0 { maxCLL = Double(c.MaxCLL) }
            if c.MaxFALL > 0 { maxFALL = Double(c.MaxFALL) }
        }
    }

    /// The colour a stream declares (its codec parameters and side data).
    init(stream: UnsafePointer<AVStream>) {
        let p = stream.pointee.codecpar.pointee
        self.init(space: p.color_space, trc: p.color_trc, primaries: p.color_primaries, range: p.color_range,
                  location: p.chroma_location, width: Int(p.width), height: Int(p.height), jpegFormat: false)
        var size = 0
        if let data = reel_stream_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size), size >= MemoryLayout<AVMasteringDisplayMetadata>.size {
            let m = UnsafeRawPointer(data).loadUnaligned(as: AVMasteringDisplayMetadata.self)
            if m.has_luminance != 0 {
                masteringDisplay = MasteringDisplay(maxLuminance: av_q2d(m.max_luminance), minLuminance: av_q2d(m.min_luminance))
            }
        }
        if let data = reel_stream_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &size), size >= MemoryLayout<AVContentLightMetadata>.size {
            let c = UnsafeRawPointer(data).loadUnaligned(as: AVContentLightMetadata.self)
            if c.MaxCLL > 0 { maxCLL = Double(c.MaxCLL) }
            if c.MaxFALL > 0 { maxFALL = Double(c.MaxFALL) }
        }
        dolbyVision = Self.dolbyVision(stream)
    }

    static func dolbyVision(_ stream: UnsafePointer<AVStream>) -> DolbyVisionConfiguration? {
        var profile: Int32 = 0, level: Int32 = 0, compatibility: Int32 = 0, base: Int32 = 0, enhancement: Int32 = 0, rpu: Int32 = 0
        guard reel_stream_dovi(stream, &profile, &level, &compatibility, &base, &enhancement, &rpu) != 0 else { return nil }
        return DolbyVisionConfiguration(profile: Int(profile), level: Int(level), compatibilityID: Int(compatibility),
                                        hasBaseLayer: base != 0, hasEnhancementLayer: enhancement != 0, hasRPU: rpu != 0)
    }

    // swiftlint:disable:next function_parameter_count
    private init(space: AVColorSpace, trc: AVColorTransferCharacteristic, primaries: AVColorPrimaries,
                 range: AVColorRange, location: AVChromaLocation, width: Int, height: Int, jpegFormat: Bool) {
        let isHD = width >= 1280 || height >= 720
        var assumed: [String] = []
        if let tagged = Self.matrix(space) { matrix = tagged } else { matrix = isHD ? .bt709 : .bt601; assumed.append("matrix") }
        if let tagged = Self.transfer(trc) { transfer = tagged } else { transfer = isHD ? .bt709 : .bt601; assumed.append("transfer") }
        if let tagged = Self.primaries(primaries) {
            self.primaries = tagged
        } else {
            self.primaries = isHD ? .bt709 : (height == 480 || height == 486 ? .bt601_525 : .bt601_625)
            assumed.append("primaries")
        }
        self.range = range == AVCOL_RANGE_JPEG || jpegFormat ? .full : .limited
        chromaLocation = Self.location(location)
        self.assumed = assumed
    }

    static func matrix(_ space: AVColorSpace) -> ColorMatrix? {
        switch space {
        case AVCOL_SPC_BT709: .bt709
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: .bt2020
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_SMPTE240M, AVCOL_SPC_FCC: .bt601
        default: nil
        }
    }

    static func transfer(_ trc: AVColorTransferCharacteristic) -> ColorTransfer? {
        switch trc {
        case AVCOL_TRC_BT709, AVCOL_TRC_BT2020_10, AVCOL_TRC_BT2020_12, AVCOL_TRC_SMPTE240M, AVCOL_TRC_IEC61966_2_4: .bt709
        case AVCOL_TRC_SMPTE170M, AVCOL_TRC_BT1361_ECG: .bt601
        case AVCOL_TRC_IEC61966_2_1: .srgb
        case AVCOL_TRC_SMPTE2084: .pq
        case AVCOL_TRC_ARIB_STD_B67: .hlg
        case AVCOL_TRC_LINEAR: .linear
        case AVCOL_TRC_GAMMA22: .gamma22
        case AVCOL_TRC_GAMMA28: .gamma28
        default: nil
        }
    }

    static func primaries(_ primaries: AVColorPrimaries) -> ColorPrimaries? {
        switch primaries {
        case AVCOL_PRI_BT709: .bt709
        case AVCOL_PRI_BT470BG: .bt601_625
        case AVCOL_PRI_SMPTE170M, AVCOL_PRI_SMPTE240M: .bt601_525
        case AVCOL_PRI_BT2020: .bt2020
        // DCI-P3 (SMPTE 431) has the same primaries with a greenish white; shown as Display P3.
        case AVCOL_PRI_SMPTE432, AVCOL_PRI_SMPTE431: .displayP3
        default: nil
        }
    }

    static func location(_ location: AVChromaLocation) -> ChromaLocation {
        switch location {
        case AVCHROMA_LOC_CENTER: .center
        case AVCHROMA_LOC_TOPLEFT: .topLeft
        case AVCHROMA_LOC_TOP: .top
        case AVCHROMA_LOC_BOTTOMLEFT: .bottomLeft
        case AVCHROMA_LOC_BOTTOM: .bottom
        default: .left
        }
    }
}

/// Dolby Vision streams Reel cannot show.
enum DolbyVisionPolicy {
    /// Throws, in one line, for a Dolby Vision stream without a base layer that shows on its
    /// own (profile 5); profile 8.x and the like play through their HDR10, HLG or SDR base.
    static func check(_ stream: UnsafePointer<AVStream>, url: URL) throws {
        guard let dv = ColorDescription.dolbyVision(stream), !dv.hasCompatibleBase else { return }
        throw MediaError.unsupportedStream(url: url, reason: "Dolby Vision profile \(dv.name) has no HDR10, HLG or SDR base layer to show")
    }
}
