import ReelCore
import ReelMedia

/// What `reel probe` says of a video stream's colour: its tags and what playback applies.
enum ColorProbe {
    static func lines(_ color: ColorDescription) -> [String] {
        var lines = ["      colour: \(color.summary)"]
        lines.append("      shown: \(applied(color))")
        return lines
    }

    /// What the outputs do with it, with the options in effect.
    static func applied(_ color: ColorDescription) -> String {
        if let dv = color.dolbyVision, !dv.hasCompatibleBase {
            return "not played (Dolby Vision profile \(dv.name) has no HDR10, HLG or SDR base layer)"
        }
        guard color.needsMapping else { return "as is (SDR)" }
        let options = ToneMappingOptions.current
        let peak = color.isHDR
            ? (color.metadataPeak.map { "\(Int($0.rounded())) nits from the metadata" } ?? "the peak measured scene by scene")
            : "SDR white"
        let base = color.dolbyVision.map { "Dolby Vision \($0.name) through its base layer; " } ?? ""
        return base + "\(color.transfer.displayName) \(color.primaries.displayName) to BT.709 BT.1886, "
            + "\(options.curve.rawValue) tone mapping of \(peak) to \(Int(options.targetPeak.rounded())) nits"
    }

    static func json(_ color: ColorDescription) -> [String: Any] {
        var out: [String: Any] = [
            "transfer": color.transfer.rawValue, "primaries": color.primaries.rawValue, "matrix": color.matrix.rawValue,
            "range": color.range.rawValue, "chromaLocation": color.chromaLocation.rawValue, "applied": applied(color),
        ]
        if !color.assumed.isEmpty { out["assumed"] = color.assumed }
        if let m = color.masteringDisplay { out["masteringDisplay"] = ["maxLuminance": m.maxLuminance, "minLuminance": m.minLuminance] }
        if let v = color.maxCLL { out["maxCLL"] = v }
        if let v = color.maxFALL { out["maxFALL"] = v }
        if let dv = color.dolbyVision {
            out["dolbyVision"] = ["profile": dv.profile, "level": dv.level, "compatibilityID": dv.compatibilityID]
        }
        return out
    }
}
