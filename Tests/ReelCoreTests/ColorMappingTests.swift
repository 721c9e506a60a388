@testable import ReelCore
import Foundation
import Testing

@Suite struct ColorMappingTests {
    @Test func pqKnownPoints() {
        #expect(abs(PQ.eotf(1) - 10_000) < 1e-6)
        #expect(PQ.eotf(0) == 0)
        #expect(abs(PQ.inverseEOTF(10_000) - 1) < 1e-12)
        // BT.2408: 203 nits is PQ 58 %; 100 nits about 50.8 %.
        #expect(abs(PQ.inverseEOTF(203) - 0.5807) < 1e-3)
        #expect(abs(PQ.inverseEOTF(100) - 0.5081) < 1e-3)
        for nits in [0.01, 1, 48, 203, 1000, 4000] {
            #expect(abs(PQ.eotf(PQ.inverseEOTF(nits)) - nits) / nits < 1e-9)
        }
    }

    @Test func hlgKnownPoints() {
        #expect(abs(HLG.oetf(1) - 1) < 1e-6)
        #expect(abs(HLG.inverseOETF(0.5) - 1.0 / 12) < 1e-12)
        #expect(abs(HLG.systemGamma(peak: 1000) - 1.2) < 1e-12)
        // BT.2408: HLG 75 % on the 1000-nit reference display is 203 nits.
        let white = HLG.ootf(SIMD3(repeating: HLG.inverseOETF(0.75)))
        #expect(abs(white.x - 203) < 1.5)
        for l in [0.001, 0.05, 1.0 / 12, 0.3, 1] {
            #expect(abs(HLG.inverseOETF(HLG.oetf(l)) - l) < 1e-9)
        }
    }

    @Test func hlgOOTFIsBT2100sLuminanceOOTF() {
        // A saturated BT.2020 red-orange in scene light: BT.2100 scales all three components by
        // Ys^(γ−1), so their ratios (the hue and saturation) stay; a per-component 1.2 power
        // (zscale's default, agamma=1) changes them.
        let scene = SIMD3(0.6, 0.1, 0.02)
        let display = HLG.ootf(scene)
        let ys = 0.2627 * 0.6 + 0.6780 * 0.1 + 0.0593 * 0.02
        #expect(abs(display.x - 1000 * pow(ys, 0.2) * 0.6) < 1e-9)
        #expect(abs(display.y / display.x - scene.y / scene.x) < 1e-12)
        let perComponent = SIMD3(pow(0.6, 1.2), pow(0.1, 1.2), pow(0.02, 1.2)) * 1000
        #expect(abs(perComponent.y / perComponent.x - scene.y / scene.x) > 0.03)
        // The inverse OOTF undoes it, colours and greys alike; greys agree with the per-component form.
        for light in [scene, SIMD3(0.02, 0.5, 0.9), SIMD3(repeating: 0.26)] {
            let error = HLG.inverseOOTF(HLG.ootf(light)) - light
            #expect(max(abs(error.x), abs(error.y), abs(error.z)) < 1e-12)
        }
        let grey = HLG.ootf(SIMD3(repeating: 0.26)).x
        #expect(abs(grey - 1000 * pow(0.26, 1.2)) < 1e-9)
    }

    @Test func primariesMatrices() {
        let y709 = ColorPrimaries.bt709.toXYZ.rows[1]
        #expect(abs(y709.x - 0.2126) < 1e-4 && abs(y709.y - 0.7152) < 1e-4 && abs(y709.z - 0.0722) < 1e-4)
        let y2020 = ColorPrimaries.bt2020.toXYZ.rows[1]
        #expect(abs(y2020.x - 0.2627) < 1e-4 && abs(y2020.y - 0.6780) < 1e-4 && abs(y2020.z - 0.0593) < 1e-4)
        // BT.2087's BT.2020 → BT.709 matrix.
        let m = ColorPrimaries.bt2020.conversion(to: .bt709)
        #expect(abs(m.rows[0].x - 1.6605) < 1e-3 && abs(m.rows[0].y + 0.5876) < 1e-3 && abs(m.rows[0].z + 0.0728) < 1e-3)
        #expect(abs(m.rows[2].z - 1.1187) < 1e-3)
        // White stays white.
        let white = m * SIMD3(1, 1, 1)
        #expect(abs(white.x - 1) < 1e-9 && abs(white.y - 1) < 1e-9 && abs(white.z - 1) < 1e-9)
    }

    @Test func referenceWhiteBecomesSDRWhite() {
        let pq = ColorMapping(transfer: .pq, primaries: .bt2020, sourcePeak: 203)
        let out = pq.map(SIMD3(repeating: PQ.inverseEOTF(203)))
        #expect(abs(out.x - 1) < 1e-6 && abs(out.y - 1) < 1e-6 && abs(out.z - 1) < 1e-6)
        let hlg = ColorMapping(transfer: .hlg, primaries: .bt2020, sourcePeak: 203)
        let hlgOut = hlg.map(SIMD3(repeating: 0.75))
        #expect(abs(hlgOut.x - 1) < 2e-3)
        // 50 % grey of an SDR grade (BT.1886) carried in PQ comes back at 50 %.
        let grey = ColorMapping.referenceWhite * pow(0.5, 2.4)
        #expect(abs(pq.map(SIMD3(repeating: PQ.inverseEOTF(grey))).y - 0.5) < 1e-6)
    }

    @Test func bt2390KeepsTheShadowsAndLandsThePeak() {
        // Below the knee, untouched.
        #expect(abs(BT2390.eetf(50, sourcePeak: 1000, targetPeak: 203) - 50) < 1e-9)
        // The source's peak lands on the display's.
        #expect(abs(BT2390.eetf(1000, sourcePeak: 1000, targetPeak: 203) - 203) < 1e-6)
        // No compression when the content fits.
        #expect(BT2390.eetf(180, sourcePeak: 203, targetPeak: 203) == 180)
        var last = 0.0
        for nits in stride(from: 1.0, through: 1000, by: 7) {
            let out = BT2390.eetf(nits, sourcePeak: 1000, targetPeak: 203)
            #expect(out >= last && out <= 203)
            last = out
        }
        // A highlight keeps detail: 300, 600 and 900 nits stay apart.
        let (n3, n6, n9) = (BT2390.eetf(300, sourcePeak: 1000, targetPeak: 203), BT2390.eetf(600, sourcePeak: 1000, targetPeak: 203),
                            BT2390.eetf(900, sourcePeak: 1000, targetPeak: 203))
        #expect(n9 - n6 > 1 && n6 - n3 > 5)
    }

    @Test func gamutMappingKeepsHueAndLuminance() {
        let m = ColorPrimaries.bt2020.conversion(to: .bt709)
        let toXYZ = ColorPrimaries.bt709.toXYZ
        func xy(_ c: SIMD3<Double>) -> SIMD2<Double> {
            let v = toXYZ * c
            return SIMD2(v.x, v.y) / v.sum()
        }
        let white = xy(SIMD3(1, 1, 1))
        for source in [SIMD3(0.0, 0.6, 0), SIMD3(0.6, 0, 0), SIMD3(0.0, 0.2, 0.6), SIMD3(0.6, 0.5, 0.0), SIMD3(0.1, 0.6, 0.6)] {
            let converted = m * source
            #expect(converted.min() < 0 || converted.max() > 1)
            let mapped = GamutMapping.map(converted)
            #expect(mapped.min() >= 0 && mapped.max() <= 1)
            // Luminance kept.
            #expect(abs((mapped * GamutMapping.luma).sum() - (converted * GamutMapping.luma).sum()) < 1e-9)
            // Hue kept: the same direction from the white point on the chromaticity diagram,
            // closer to it.
            let before = xy(converted) - white, after = xy(mapped) - white
            let angle = abs(atan2(before.y, before.x) - atan2(after.y, after.x))
            #expect(angle < 1e-6, "hue moved by \(angle) rad for \(source)")
            #expect((after * after).sum() < (before * before).sum())
        }
        let inside = SIMD3(0.2, 0.5, 0.7)
        #expect(GamutMapping.map(inside) == inside)
        #expect(GamutMapping.map(SIMD3(1.4, 1.2, 1.1)) == SIMD3(1, 1, 1))
    }

    @Test func sdrBT709IsNotMapped() {
        #expect(!ColorMapping.applies(transfer: .bt709, primaries: .bt709))
        #expect(!ColorMapping.applies(transfer: .bt601, primaries: .bt601_525))
        #expect(ColorMapping.applies(transfer: .bt709, primaries: .bt2020))
        #expect(ColorMapping.applies(transfer: .hlg, primaries: .bt2020))
        #expect(ColorMapping.applies(transfer: .pq, primaries: .bt709))
    }

    @Test func lookupTableFollowsTheMaths() {
        for transfer in [ColorTransfer.pq, .hlg] {
            let mapping = ColorMapping(transfer: transfer, primaries: .bt2020, sourcePeak: 1000)
            let lut = ColorLUT(mapping)
            var generator = SplitMix(seed: 44)
            // Anywhere in the cube (mostly colours far outside BT.709, far above white).
            let anywhere = (0..<1500).map { _ in SIMD3(generator.unit(), generator.unit(), generator.unit()) }
            // BT.709 colours up to reference white, carried in BT.2020 (what an SDR grade becomes).
            let toWide = ColorPrimaries.bt709.conversion(to: .bt2020)
            let sdr = (0..<1500).map { _ -> SIMD3<Double> in
                let light = toWide * SIMD3(generator.unit(), generator.unit(), generator.unit()) * ColorMapping.referenceWhite
                if transfer == .pq { return SIMD3(PQ.inverseEOTF(light.x), PQ.inverseEOTF(light.y), PQ.inverseEOTF(light.z)) }
                let scene = light / ColorMapping.referenceWhite * HLG.inverseOETF(0.75)
                return SIMD3(HLG.oetf(scene.x), HLG.oetf(scene.y), HLG.oetf(scene.z))
            }
            let (anywhereMean, _) = Self.difference(mapping, lut, anywhere)
            let (sdrMean, sdrWorst) = Self.difference(mapping, lut, sdr)
            #expect(anywhereMean < 1, "\(transfer): mean ΔE \(anywhereMean) over the cube")
            #expect(sdrMean < 1.5, "\(transfer): mean ΔE \(sdrMean) over SDR colours")
            #expect(sdrWorst < 10, "\(transfer): worst ΔE \(sdrWorst) over SDR colours")
        }
    }

    /// Mean and worst ΔE between the exact mapping and the table at `points`, as 8-bit pixels.
    static func difference(_ mapping: ColorMapping, _ lut: ColorLUT, _ points: [SIMD3<Double>]) -> (Double, Double) {
        func byte(_ v: Double) -> UInt8 { UInt8((min(max(v, 0), 1) * 255).rounded()) }
        var worst = 0.0, total = 0.0
        for p in points {
            let exact = mapping.map(p)
            let table = lut.apply(Float(p.x), Float(p.y), Float(p.z))
            let e = ColorDifference.deltaE76((byte(exact.x), byte(exact.y), byte(exact.z)),
                                             (byte(Double(table.0)), byte(Double(table.1)), byte(Double(table.2))))
            worst = max(worst, e)
            total += e
        }
        return (total / Double(points.count), worst)
    }

    @Test func ditherCoversEveryLevelOnce() {
        var seen = Set<Float>()
        for y in 0..<8 { for x in 0..<8 { seen.insert(ColorLUT.dither(x: x, y: y)) } }
        #expect(seen.count == 64)
        #expect(seen.min()! > -0.5 && seen.max()! < 0.5)
        #expect(ColorLUT.dither(x: 3, y: 5) == ColorLUT.dither(x: 11, y: 13))
    }

    @Test func scenePeak() {
        var withMetadata = ScenePeak(metadataPeak: 1000)
        #expect(withMetadata.observe(framePeak: 300) == 1000)
        var peak = ScenePeak()
        #expect(peak.published == 203)
        #expect(peak.observe(framePeak: 150) == 203)
        let first = peak.observe(framePeak: 1000)
        #expect(abs(first - 1000) / 1000 < 0.05)
        // A small change is followed gradually, a cut at once.
        let smoothed = peak.observe(framePeak: 800)
        #expect(smoothed < first && smoothed > 800)
        #expect(peak.observe(framePeak: 203) == 203)
    }
}

/// A small deterministic generator for the table test.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

@Suite struct ColorLUTCacheTests {
    @Test func theCubeIsMadeOncePerTransferAndPrimaries() {
        // A new scene peak, curve or display peak makes a new table on the same cube (the same
        // storage, not recomputed); another transfer makes another cube.
        let first = ColorLUT(ColorMapping(transfer: .pq, primaries: .bt2020, sourcePeak: 1000), size: 9)
        let brighter = ColorLUT(ColorMapping(transfer: .pq, primaries: .bt2020, sourcePeak: 4000, targetPeak: 300, curve: .clip), size: 9)
        #expect(first.cubeKey == brighter.cubeKey)
        first.values.withUnsafeBufferPointer { a in
            brighter.values.withUnsafeBufferPointer { b in #expect(a.baseAddress == b.baseAddress) }
        }
        #expect(first.values == ColorLUT.cube(first.mapping, size: 9))
        let hlg = ColorLUT(ColorMapping(transfer: .hlg, primaries: .bt2020, sourcePeak: 1000), size: 9)
        #expect(hlg.cubeKey != first.cubeKey && hlg.values != first.values)
        // The peaks still reach the picture, through the 1D tables.
        #expect(first.apply(0.75, 0.75, 0.75) != brighter.apply(0.75, 0.75, 0.75))
    }
}
