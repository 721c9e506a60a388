import Foundation
import ReelCore
import ReelMedia

/// Writes a JSON-lines trace: one object per presented frame and per event.
final class TraceWriter: @unchecked Sendable {
    private let lock = NSLock()
    private let handle: FileHandle?
    private var buffer = Data()

    init(path: String?) throws {
        if path == "-" {
            handle = FileHandle.standardOutput
        } else if let path {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CommandFailure.usage("cannot write the trace file \(path)")
            }
            handle = FileHandle(forWritingAtPath: path)
        } else {
            handle = nil
        }
    }

    var isEnabled: Bool { handle != nil }

    func write(_ object: [String: Any]) {
        guard handle != nil,
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        lock.withLock {
            buffer.append(data)
            buffer.append(0x0A)
            if buffer.count > 64 * 1024 { flushLocked() }
        }
    }

    func close() {
        lock.withLock {
            flushLocked()
            if handle !== FileHandle.standardOutput { try? handle?.close() }
        }
    }

    private func flushLocked() {
        guard !buffer.isEmpty else { return }
        try? handle?.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    static func firstFrame(_ report: FirstFrameReport) -> [String: Any] {
        var phases: [String: Any] = [:]
        func put(_ key: String, _ value: Double?) { if let value { phases[key] = (value * 1000).rounded() / 1000 } }
        put("contentInfo", report.contentInfoMs)
        put("firstByte", report.firstByteMs)
        put("headerParsed", report.headerParsedMs)
        put("firstPacket", report.firstPacketMs)
        put("firstFrameDecoded", report.firstFrameDecodedMs)
        put("firstFramePresented", report.firstFramePresentedMs)
        return [
            "type": "firstFrame", "phasesMs": phases, "bytesRead": report.bytesRead, "requests": report.requests,
            "probedStreamInfo": report.probedStreamInfo,
        ]
    }
}
