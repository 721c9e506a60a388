import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Synchronization

// A player under stress, in a process of its own so that its threads and its memory can be
// counted: `ReelStressRunner commands|stalled-opens [seconds]` prints one JSON object (see
// `StressResult`) and exits 0, or 2 with the threads' states when its watchdog fires.

let arguments = CommandLine.arguments
guard arguments.count >= 2, let scenario = Scenario(rawValue: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: ReelStressRunner commands|stalled-opens [seconds]\n".utf8))
    exit(64)
}
let seconds = arguments.count >= 3 ? Double(arguments[2]) ?? 5 : 5
MediaResources.limitAllocatorArenas()
Watchdog.start(limit: 240)
let result: StressResult
do {
    switch scenario {
    case .commands: result = try await CommandStress.run(seconds: seconds)
    case .stalledOpens: result = try await StalledOpenStress.run(cycles: 200)
    }
} catch {
    FileHandle.standardError.write(Data("stress failed: \(error)\n".utf8))
    exit(1)
}
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
print(String(decoding: try encoder.encode(result), as: UTF8.self))
exit(0)
