import Foundation
import ReelCore
import Synchronization

/// What the user chose for HDR on an SDR screen (`--tone-mapping`, `--target-peak`).
public struct ToneMappingOptions: Sendable, Hashable {
    /// The curve that brings HDR highlights down to the display's peak (`--tone-mapping`);
    /// `.auto` is BT.2390's.
    public var curve: ToneMappingCurve
    /// The display's peak in nits; SDR white (203) by default.
    public var targetPeak: Double

    /// Options for a display whose peak is `targetPeak` nits, mapped with `curve`.
    public init(curve: ToneMappingCurve = .auto, targetPeak: Double = ColorMapping.referenceWhite) {
        self.curve = curve
        self.targetPeak = targetPeak
    }

    private static let shared = Mutex(ToneMappingOptions())

    /// The options every output starts its ``ColorMapper`` with: set once by the command line
    /// before playback starts (the window, the terminal and covers all read it).
    public static var current: ToneMappingOptions {
        get { shared.withLock { $0 } }
        set { shared.withLock { $0 = newValue } }
    }
}

/// Decides, frame by frame, how a frame's colour reaches the SDR display: `nil` for frames
/// shown untouched (SDR BT.709/BT.601), else the `ColorLUT` of its `ColorMapping`, with
/// the peak from the stream's metadata or measured from the frames (`ScenePeak`).
///
/// One per consumer (a renderer, a scaler); not thread-safe. `@unchecked`: its state is
/// owned by the one thread that calls it, like ``FrameScaler``'s context.
public final class ColorMapper: @unchecked Sendable {
    /// The curve and display peak this mapper maps to, fixed for its life.
    public let options: ToneMappingOptions
    private var peak = ScenePeak()
    private var tables: [ColorMapping: ColorLUT] = [:]
    private var order: [ColorMapping] = []
    /// The mapping last used, for the trace and tests.
    public private(set) var lastMapping: ColorMapping?

    /// A mapper for one consumer, with the process's ``ToneMappingOptions/current`` options
    /// unless given others. It measures scene peaks over the frames it is given, so use one per
    /// stream of frames, from one thread.
    public init(options: ToneMappingOptions = .current) {
        self.options = options
    }

    /// The mapping for `frame`, or `nil` when it is shown untouched.
    public func mapping(for frame: VideoFrame) -> ColorMapping? {
        let color = frame.color
        guard color.needsMapping else { return nil }
        let sourcePeak: Double
        if !color.isHDR {
            sourcePeak = ColorMapping.referenceWhite
        } else if options.curve == .clip {
            sourcePeak = 10_000
        } else {
            peak.metadataPeak = color.metadataPeak ?? peak.metadataPeak
            sourcePeak = peak.metadataPeak != nil ? peak.observe(framePeak: nil) : peak.observe(framePeak: FramePeak.measure(frame))
        }
        let mapping = ColorMapping(transfer: color.transfer, primaries: color.primaries, sourcePeak: sourcePeak,
                                   targetPeak: options.targetPeak, curve: options.curve)
        lastMapping = mapping
        return mapping
    }

    /// The lookup table for `frame`, or `nil` when it is shown untouched. Tables are built once
    /// per mapping (a new scene peak makes a new one) and the last four kept.
    public func table(for frame: VideoFrame) -> ColorLUT? {
        guard let mapping = mapping(for: frame) else { return nil }
        if let hit = tables[mapping] { return hit }
        let table = ColorLUT(mapping)
        tables[mapping] = table
        order.append(mapping)
        if order.count > 4 { tables.removeValue(forKey: order.removeFirst()) }
        return table
    }
}

/// A frame's brightest light, measured on a sparse grid of its pixels.
enum FramePeak {
    /// Samples along the longer side.
    static let grid = 128

    /// The light in nits (largest component) that all but the brightest 0.1 % of the sampled
    /// pixels stay under, so one hot pixel does not dim a scene. PQ is linearised once, at the
    /// chosen sample (its curve keeps the order); HLG's OOTF needs each sample's luminance.
    static func measure(_ frame: VideoFrame) -> Double? {
        let format = frame.pixelFormat
        guard format.isYUV, format.planeCount >= 3 || format.isSemiPlanar else { return nil }
        let reader = SampleReader(frame)
        let mapping = ColorMapping(transfer: frame.color.transfer, primaries: frame.color.primaries, sourcePeak: 10_000)
        let isPQ = mapping.transfer == .pq
        let step = max(1, max(frame.width, frame.height) / grid)
        var values: [Double] = []
        values.reserveCapacity((frame.width / step + 1) * (frame.height / step + 1))
        frame.withPlanes { planes in
            guard planes.count >= 2 else { return }
            for y in stride(from: step / 2, to: frame.height, by: step) {
                for x in stride(from: step / 2, to: frame.width, by: step) {
                    let rgb = reader.rgb(planes, x: x, y: y)
                    values.append(isPQ ? rgb.max() : mapping.linearise(rgb).max())
                }
            }
        }
        guard !values.isEmpty else { return nil }
        values.sort()
        let chosen = values[min(values.count - 1, values.count * 999 / 1000)]
        return isPQ ? PQ.eotf(chosen) : chosen
    }
}

/// Reads one pixel's R'G'B' (0…1) straight from a YUV frame's planes.
struct SampleReader {
    let wide: Bool
    let shift: Int
    let chromaShiftX: Int, chromaShiftY: Int
    let semiPlanar: Bool
    let yScale: Double, yBias: Double, cScale: Double, cBias: Double
    let kr: Double, kb: Double

    init(_ frame: VideoFrame) {
        let format = frame.pixelFormat
        wide = format.bitDepth > 8
        let name = format.name
        let msbAligned = format.isSemiPlanar && (name.hasPrefix("p0") || name.hasPrefix("p2") || name.hasPrefix("p4"))
        shift = msbAligned ? 16 - format.bitDepth : 0
        chromaShiftX = format.chromaShiftX
        chromaShiftY = format.chromaShiftY
        semiPlanar = format.isSemiPlanar
        let depth = format.bitDepth
        let k = Double(1 << (depth - 8)), codeMax = Double((1 << depth) - 1)
        switch frame.colorRange {
        case .limited: (yScale, yBias, cScale, cBias) = (1 / (219 * k), 16 * k, 1 / (224 * k), 128 * k)
        case .full: (yScale, yBias, cScale, cBias) = (1 / codeMax, 0, 1 / codeMax, Double(1 << (depth - 1)))
        }
        switch frame.colorMatrix {
        case .bt601: (kr, kb) = (0.299, 0.114)
        case .bt709: (kr, kb) = (0.2126, 0.0722)
        case .bt2020: (kr, kb) = (0.2627, 0.0593)
        }
    }

    private func code(_ plane: VideoFrame.Plane, x: Int, y: Int) -> Double {
        if wide {
            let offset = y * plane.stride + x * 2
            let word = UInt16(plane.bytes[offset]) | UInt16(plane.bytes[offset + 1]) << 8
            return Double(word >> UInt16(shift))
        }
        return Double(plane.bytes[y * plane.stride + x])
    }

    func rgb(_ planes: [VideoFrame.Plane], x: Int, y: Int) -> SIMD3<Double> {
        let luma = (code(planes[0], x: x, y: y) - yBias) * yScale
        let cx = x >> chromaShiftX, cy = y >> chromaShiftY
        let cb, cr: Double
        if semiPlanar {
            cb = (code(planes[1], x: cx * 2, y: cy) - cBias) * cScale
            cr = (code(planes[1], x: cx * 2 + 1, y: cy) - cBias) * cScale
        } else {
            cb = (code(planes[1], x: cx, y: cy) - cBias) * cScale
            cr = (code(planes[2], x: cx, y: cy) - cBias) * cScale
        }
        let kg = 1 - kr - kb
        let r = luma + 2 * (1 - kr) * cr
        let g = luma - 2 * kb * (1 - kb) / kg * cb - 2 * kr * (1 - kr) / kg * cr
        let b = luma + 2 * (1 - kb) * cb
        return SIMD3(min(max(r, 0), 1), min(max(g, 0), 1), min(max(b, 0), 1))
    }
}
