import Foundation

/// What a benchmark's timings were measured under, in one line, when that explains a missed
/// goal: a debug build (the goals are for `swift build -c release`) or a machine busier than the
/// benchmark makes it (other processes on its cores). Nil when neither holds.
///
/// `ownLoad` is how many runnable threads the benchmark itself keeps busy (its busy loops and
/// the player), so only load beyond it counts.
func benchConditions(ownLoad: Int) -> String? {
    var reasons: [String] = []
    #if DEBUG
    reasons.append("a debug build (the goals are for `swift build -c release`)")
    #endif
    let cores = ProcessInfo.processInfo.activeProcessorCount
    if let load = loadAverage(), load > Double(cores + ownLoad) {
        reasons.append(String(format: "a load average of %.1f on %d cores, beyond the %d the benchmark makes", load, cores, ownLoad))
    }
    guard !reasons.isEmpty else { return nil }
    return "conditions: " + reasons.joined(separator: " and ") + " — a ✗ above measures them as much as Reel\n"
}

/// The one-minute load average (`/proc/loadavg`).
func loadAverage() -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
    return text.split(separator: " ").first.flatMap { Double($0) }
}
