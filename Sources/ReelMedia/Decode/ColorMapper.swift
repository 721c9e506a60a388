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
    private var meter = FramePeak()
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
            sourcePeak = peak.metadataPeak != nil ? peak.observe(framePeak: nil) : peak.observe(framePeak: meter.measure(frame))
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
        return table(for: mapping)
    }

    private func table(for mapping: ColorMapping) -> ColorLUT {
        if let hit = tables[mapping] { return hit }
        let table = ColorLUT(mapping)
        tables[mapping] = table
        order.append(mapping)
        if order.count > 4 { tables.removeValue(forKey: order.removeFirst()) }
        return table
    }
}

/// A frame's brightest light, measured on a sparse grid of its pixels (about 128 along the
/// longer side) into a ``LightHistogram``: O(samples), no sort, and no allocation per frame (the
/// histogram is kept from frame to frame by its owner, a ``ColorMapper``).
struct FramePeak {
    /// Samples along the longer side.
    static let grid = 128
    /// The share of samples the peak is above: all but the brightest 0.1 %, so one hot pixel
    /// does not dim a scene.
    static let fraction = 0.999

    private var histogram = LightHistogram()

    /// The light in nits (largest component) that all but the brightest 0.1 % of the sampled
    /// pixels stay under, to within one bucket of the histogram (1/1024 of PQ). PQ's code is
    /// its light's bucket (its curve keeps the order); HLG's OOTF needs each sample's
    /// luminance. Nil for frames it cannot read or transfers other than PQ and HLG.
    mutating func measure(_ frame: VideoFrame) -> Double? {
        let format = frame.pixelFormat
        let transfer = frame.color.transfer
        guard format.isYUV, format.planeCount >= 3 || format.isSemiPlanar, transfer == .pq || transfer == .hlg else { return nil }
        let reader = SampleReader(frame)
        let step = max(1, max(frame.width, frame.height) / Self.grid)
        histogram.reset()
        let width = frame.width, height = frame.height
        frame.withPlanes { planes in
            guard planes.count >= 2 else { return }
            let chroma = planes[1], other = planes.count > 2 ? planes[2] : planes[1]
            for y in stride(from: step / 2, to: height, by: step) {
                for x in stride(from: step / 2, to: width, by: step) {
                    let (r, g, b) = reader.rgb(luma: planes[0], cb: chroma, cr: other, x: x, y: y)
                    histogram.add(bucket: transfer == .pq ? LightHistogram.bucket(pq: max(r, max(g, b))) : HLGPeakLight.bucket(r, g, b))
                }
            }
        }
        return histogram.percentile(Self.fraction)
    }
}

/// The light (largest component, nits) an HLG pixel has on BT.2100's 1000-nit reference display,
/// by tables: the inverse OETF, and the OOTF's `Ys^0.2` over √Ys (4096 points each, nearest;
/// both well inside one bucket of the histogram above a few nits).
enum HLGPeakLight {
    static let count = 4096
    static let scene: [Float] = (0..<count).map { Float(HLG.inverseOETF(Double($0) / Double(count - 1))) }
    static let gain: [Float] = (0..<count).map { i in
        let root = Double(i) / Double(count - 1)
        return Float(ColorMapping.hlgDisplayPeak * pow(root * root, HLG.systemGamma(peak: ColorMapping.hlgDisplayPeak) - 1))
    }

    @inline(__always)
    static func bucket(_ r: Float, _ g: Float, _ b: Float) -> Int {
        let top = Float(count - 1)
        let sr = scene[Int(r * top + 0.5)], sg = scene[Int(g * top + 0.5)], sb = scene[Int(b * top + 0.5)]
        let ys = 0.2627 * sr + 0.6780 * sg + 0.0593 * sb
        let nits = gain[Int(min(max(ys, 0), 1).squareRoot() * top + 0.5)] * max(sr, max(sg, sb))
        return LightHistogram.bucket(nits: nits)
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
    /// The matrix's Float coefficients (from kr, kb).
    private let crToR: Float, cbToG: Float, crToG: Float, cbToB: Float

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
        crToR = Float(2 * (1 - kr))
        cbToG = Float(2 * kb * (1 - kb) / (1 - kr - kb))
        crToG = Float(2 * kr * (1 - kr) / (1 - kr - kb))
        cbToB = Float(2 * (1 - kb))
    }

    @inline(__always)
    private func code(_ plane: VideoFrame.Plane, x: Int, y: Int) -> Double {
        if wide {
            let word = UInt16(littleEndian: plane.bytes.loadUnaligned(fromByteOffset: y * plane.stride + x * 2, as: UInt16.self))
            return Double(word >> UInt16(shift))
        }
        return Double(plane.bytes[y * plane.stride + x])
    }

    /// R'G'B' (0…1) at `x`, `y` in Float, the planes given one by one (`cr` is `cb` for
    /// semi-planar frames): the peak meter's inner loop.
    @inline(__always)
    func rgb(luma: VideoFrame.Plane, cb cbPlane: VideoFrame.Plane, cr crPlane: VideoFrame.Plane, x: Int, y: Int) -> (Float, Float, Float) {
        let l = Float((code(luma, x: x, y: y) - yBias) * yScale)
        let cx = x >> chromaShiftX, cy = y >> chromaShiftY
        let cb, cr: Float
        if semiPlanar {
            cb = Float((code(cbPlane, x: cx * 2, y: cy) - cBias) * cScale)
            cr = Float((code(cbPlane, x: cx * 2 + 1, y: cy) - cBias) * cScale)
        } else {
            cb = Float((code(cbPlane, x: cx, y: cy) - cBias) * cScale)
            cr = Float((code(crPlane, x: cx, y: cy) - cBias) * cScale)
        }
        let r = l + crToR * cr, g = l - cbToG * cb - crToG * cr, b = l + cbToB * cb
        return (min(max(r, 0), 1), min(max(g, 0), 1), min(max(b, 0), 1))
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
