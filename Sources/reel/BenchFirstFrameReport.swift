import Foundation
import ReelFeed
import ReelMedia

/// The first-frame benchmark's figures: per scenario, Reel's distribution beside
/// FFmpeg's, the ratio, and the goal.
struct FirstFrameReportTable {
    struct Row {
        var name: String
        var kind: ScenarioRecord.Kind
        var reel: Distribution
        var baseline: Distribution
        var bytes: Double
        var requests: Double
        /// HTTP requests the origin saw before the first frame (p50), when measured.
        var originRequests: Double
        var ratio: Double
        /// p50 of each Reel phase (label, ms), in order.
        var phases: [(String, Double)]
        /// p50 of each FFmpeg phase.
        var baselinePhases: [(String, Double)]
        var playing: Distribution?
        var goal: String
        var goalMet: Bool?
    }

    let rows: [Row]
    let runs: Int
    let origin: String

    init(bench: FirstFrameBench) {
        runs = bench.runs
        origin = bench.originDescription
        var rows: [Row] = []
        for scenario in bench.scenarios {
            let target = bench.targets[scenario.targetIndex]
            let baselineTimings = scenario.kind == .decodeFloor ? target.floorBaseline : target.baseline
            let reel = Distribution(scenario.reel)
            let baseline = Distribution(baselineTimings.map(\.firstFrameMs))
            func p50(_ values: [Double?]) -> Double { Distribution(values.compactMap { $0 }).p50 }
            let reports = scenario.reports
            var phases: [(String, Double)] = [
                ("content info", p50(reports.map(\.contentInfoMs))),
                ("first byte", p50(reports.map(\.firstByteMs))),
                ("header parsed", p50(reports.map(\.headerParsedMs))),
                ("first packet", p50(reports.map(\.firstPacketMs))),
                ("frame decoded", p50(reports.map(\.firstFrameDecodedMs))),
                ("frame presented", p50(reports.map(\.firstFramePresentedMs))),
            ].filter { $0.1.isFinite }
            if scenario.kind == .preloaded {
                // The phases above are the pre-render's; the swipe is what is measured.
                phases = [("swipe → shown", reel.p50)]
                let playing = Distribution(scenario.playing)
                if playing.count > 0 { phases.append(("swipe → playing", playing.p50)) }
            }
            let baselinePhases: [(String, Double)] = [
                ("avformat_open_input", Distribution(baselineTimings.map(\.openMs)).p50),
                ("find_stream_info", Distribution(baselineTimings.map(\.streamInfoMs)).p50),
                ("first frame decoded", baseline.p50),
            ]
            let bytes = Distribution(reports.map { Double($0.bytesRead) }).p50
            let requests = Distribution(reports.map { Double($0.requests) }).p50
            rows.append(Row(
                name: scenario.name, kind: scenario.kind, reel: reel, baseline: baseline, bytes: bytes, requests: requests,
                originRequests: Distribution(scenario.originRequests).p50,
                ratio: reel.p50 / baseline.p50, phases: phases, baselinePhases: baselinePhases,
                playing: scenario.kind == .preloaded ? Distribution(scenario.playing) : nil, goal: "", goalMet: nil
            ))
        }
        // Goals, read against the same run's figures.
        for index in rows.indices {
            let row = rows[index]
            switch row.kind {
            case .cold where row.name.hasPrefix("hls"):
                // FFmpeg fetches the master, every variant's playlist, the init and first segment in turn.
                rows[index].goal = String(format: "≤ 0.60× FFmpeg (%.2f×)", row.ratio)
                rows[index].goalMet = row.ratio <= 0.6
            case .cold:
                rows[index].goal = String(format: "≤ 1.00× FFmpeg (%.2f×)", row.ratio)
                rows[index].goalMet = row.ratio <= 1.0
            case .moovAtEnd:
                rows[index].goal = String(format: "≤ 0.65× FFmpeg (%.2f×)", row.ratio)
                rows[index].goalMet = row.ratio <= 0.65
            case .warm:
                let suffix = row.name.dropFirst("warm".count)
                if let floor = rows.first(where: { $0.kind == .decodeFloor && $0.name.dropFirst("decode-floor".count) == suffix }) {
                    let versusFloor = row.reel.p50 / floor.reel.p50
                    rows[index].goal = String(format: "≤ 1.2× decode floor (%.2f×)", versusFloor)
                    rows[index].goalMet = versusFloor <= 1.2
                } else {
                    rows[index].goal = "≤ 1.2× decode floor (no local file)"
                }
            case .preloaded:
                let prerendered = bench.stages.filter { $0 == .prerendered }.count
                rows[index].goal = String(format: "p95 ≤ 16.7 ms (%.2f ms; ", row.reel.p95) + "pre-rendered \(prerendered)/\(bench.stages.count))"
                rows[index].goalMet = row.reel.p95 <= 16.7
            case .decodeFloor:
                rows[index].goal = "the floor: local file, no network"
            }
        }
        self.rows = rows
    }

    // MARK: Text

    func text() -> String {
        var out = "Reel first frame vs FFmpeg — \(origin), \(runs) run\(runs == 1 ? "" : "s") each, interleaved\n\n"
        let nameWidth = max(12, (rows.map(\.name.count).max() ?? 0) + 1)
        out += "scenario".rightPadded(to: nameWidth) + "     p50     p95     max │ FFmpeg p50   Reel/FFmpeg │   bytes  reqs  http │ goal\n"
        out += String(repeating: "─", count: nameWidth + 102) + "\n"
        for row in rows {
            out += row.name.rightPadded(to: nameWidth)
            out += formatMs(row.reel.p50) + formatMs(row.reel.p95) + formatMs(row.reel.max)
            out += " │ " + formatMs(row.baseline.p50, width: 10)
            out += (row.ratio.isFinite ? String(format: "%.2f×", row.ratio) : "–").leftPadded(to: 14)
            out += " │ " + formatBytes(row.bytes).leftPadded(to: 7) + (row.requests.isFinite ? String(format: "%.0f", row.requests) : "–").leftPadded(to: 6)
            out += (row.originRequests.isFinite ? String(format: "%.0f", row.originRequests) : "–").leftPadded(to: 6)
            let mark = row.goalMet.map { $0 ? "✓ " : "✗ " } ?? "  "
            out += " │ " + mark + row.goal + "\n"
        }
        out += "\n(milliseconds; FFmpeg = avformat_open_input + find_stream_info + first decoded frame on the same URL;\n"
        out += " bytes, reqs = what the player read and asked its loader for; http = requests the origin received;\n"
        out += " preloaded = swipe to the pre-rendered next item's frame being the one shown; goals are targets, not checks)\n"

        // The waterfall: p50 of each phase, as bars on one time scale.
        out += "\nPhase waterfall (p50, ms since replaceCurrentItem / avformat_open_input)\n"
        let scale = max(1, rows.flatMap { $0.phases.map(\.1) + $0.baselinePhases.map(\.1) }.filter(\.isFinite).max() ?? 1)
        let width = 48
        func bars(_ phases: [(String, Double)]) -> String {
            var text = ""
            var previous = 0.0
            for (label, ms) in phases {
                let start = Int((min(previous, ms) / scale * Double(width)).rounded())
                let end = max(start + 1, Int((ms / scale * Double(width)).rounded()))
                let bar = String(repeating: " ", count: start) + String(repeating: "█", count: end - start)
                text += "    " + label.rightPadded(to: 20) + bar.rightPadded(to: width + 1) + formatMs(ms) + "\n"
                previous = max(previous, ms)
            }
            return text
        }
        for row in rows {
            out += "  \(row.name) — Reel\n" + bars(row.phases)
            out += "  \(row.name) — FFmpeg\n" + bars(row.baselinePhases)
        }
        return out
    }

    // MARK: JSON

    /// `{"scenarios":[{"name":…,"runs":n,"p50Ms":…,"p95Ms":…,"maxMs":…,"baselineP50Ms":…,"ratio":…,
    /// "bytesBeforeFirstFrame":…,"requestsBeforeFirstFrame":…}]}`, keys in that order.
    func json() -> String {
        let items = rows.map { row in
            "{\"name\":\(jsonString(row.name)),\"runs\":\(row.reel.count),\"p50Ms\":\(jsonNumber(row.reel.p50)),"
                + "\"p95Ms\":\(jsonNumber(row.reel.p95)),\"maxMs\":\(jsonNumber(row.reel.max)),"
                + "\"baselineP50Ms\":\(jsonNumber(row.baseline.p50)),\"ratio\":\(jsonNumber(row.ratio)),"
                + "\"bytesBeforeFirstFrame\":\(jsonNumber(row.bytes.rounded())),\"requestsBeforeFirstFrame\":\(jsonNumber(row.requests.rounded()))}"
        }
        return "{\"scenarios\":[" + items.joined(separator: ",") + "]}"
    }
}
