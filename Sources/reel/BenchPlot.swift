import Foundation

/// A hand-written SVG of the first-frame distributions: one row per scenario, Reel's
/// runs and FFmpeg's as dots over a box (p25–p75) with the median marked.
enum BenchPlot {
    static func svg(_ report: FirstFrameReportTable) -> String {
        let rows = report.rows
        let left = 190.0, right = 40.0, top = 56.0, rowHeight = 64.0, bottom = 76.0
        let plotWidth = 640.0
        let width = left + plotWidth + right
        let height = top + rowHeight * Double(max(rows.count, 1)) + bottom
        let maxValue = rows.flatMap { $0.reel.sorted + $0.baseline.sorted }.filter(\.isFinite).max() ?? 1
        let axisMax = niceCeiling(max(maxValue, 1))
        func x(_ value: Double) -> Double { left + min(max(value, 0), axisMax) / axisMax * plotWidth }

        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(width / 2))" y="22" text-anchor="middle" font-size="15" font-weight="bold">\(escape("Time to first frame: Reel vs FFmpeg (\(report.runs) runs)"))</text>
            <text x="\(Int(width / 2))" y="40" text-anchor="middle" fill="#555">\(escape(report.origin))</text>

            """
        // Grid and x axis.
        let ticks = 5
        for tick in 0...ticks {
            let value = axisMax * Double(tick) / Double(ticks)
            let px = x(value)
            svg += "<line x1=\"\(fmt(px))\" y1=\"\(fmt(top))\" x2=\"\(fmt(px))\" y2=\"\(fmt(height - bottom))\" stroke=\"#e4e4e4\"/>\n"
            svg += "<text x=\"\(fmt(px))\" y=\"\(fmt(height - bottom + 16))\" text-anchor=\"middle\">\(tickLabel(value))</text>\n"
        }
        svg += "<line x1=\"\(fmt(left))\" y1=\"\(fmt(height - bottom))\" x2=\"\(fmt(left + plotWidth))\" y2=\"\(fmt(height - bottom))\" stroke=\"#333\"/>\n"
        svg += "<line x1=\"\(fmt(left))\" y1=\"\(fmt(top))\" x2=\"\(fmt(left))\" y2=\"\(fmt(height - bottom))\" stroke=\"#333\"/>\n"
        svg += "<text x=\"\(fmt(left + plotWidth / 2))\" y=\"\(fmt(height - bottom + 36))\" text-anchor=\"middle\">time to first frame (ms)</text>\n"
        svg += "<text transform=\"translate(16 \(fmt(top + (height - top - bottom) / 2))) rotate(-90)\" text-anchor=\"middle\">scenario</text>\n"

        let lanes: [(String, String, KeyPath<FirstFrameReportTable.Row, Distribution>, Double)] = [
            ("Reel", "#1f6fd1", \.reel, -12), ("FFmpeg", "#e07b18", \.baseline, 12),
        ]
        for (index, row) in rows.enumerated() {
            let center = top + rowHeight * (Double(index) + 0.5)
            svg += "<text x=\"\(fmt(left - 10))\" y=\"\(fmt(center + 4))\" text-anchor=\"end\">\(escape(row.name))</text>\n"
            for (label, colour, path, offset) in lanes {
                let values = row[keyPath: path]
                guard !values.isEmpty else { continue }
                let y = center + offset
                let q1 = x(values.percentile(25)), q3 = x(values.percentile(75)), median = x(values.p50)
                svg += "<rect x=\"\(fmt(q1))\" y=\"\(fmt(y - 7))\" width=\"\(fmt(max(1, q3 - q1)))\" height=\"14\" fill=\"\(colour)\" fill-opacity=\"0.18\" stroke=\"\(colour)\"><title>\(escape("\(row.name) \(label): p25 \(tickLabel(values.percentile(25))) ms, p75 \(tickLabel(values.percentile(75))) ms"))</title></rect>\n"
                svg += "<line x1=\"\(fmt(median))\" y1=\"\(fmt(y - 9))\" x2=\"\(fmt(median))\" y2=\"\(fmt(y + 9))\" stroke=\"\(colour)\" stroke-width=\"2.5\"/>\n"
                for (n, value) in values.sorted.enumerated() {
                    let jitter = Double((n * 7) % 9 - 4)
                    svg += "<circle cx=\"\(fmt(x(value)))\" cy=\"\(fmt(y + jitter))\" r=\"2.6\" fill=\"\(colour)\" fill-opacity=\"0.75\"/>\n"
                }
            }
        }
        // Legend.
        let legendY = height - 14
        for (n, (label, colour, _, _)) in lanes.enumerated() {
            let lx = left + Double(n) * 120
            svg += "<circle cx=\"\(fmt(lx))\" cy=\"\(fmt(legendY - 4))\" r=\"4\" fill=\"\(colour)\"/>\n"
            svg += "<text x=\"\(fmt(lx + 8))\" y=\"\(fmt(legendY))\">\(label)</text>\n"
        }
        svg += "<text x=\"\(fmt(left + 250))\" y=\"\(fmt(legendY))\" fill=\"#555\">box: p25–p75, bar: median, dots: runs</text>\n"
        svg += "</svg>\n"
        return svg
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private static func fmt(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func tickLabel(_ value: Double) -> String {
        value >= 10 || value == 0 ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }

    /// 1, 2 or 5 times a power of ten, at least `value`.
    static func niceCeiling(_ value: Double) -> Double {
        let power = pow(10, floor(log10(value)))
        for step in [1.0, 2.0, 2.5, 5.0, 10.0] where step * power >= value { return step * power }
        return 10 * power
    }
}
