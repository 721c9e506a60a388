import ArgumentParser
import Foundation
import ReelCore
import ReelLoading
import ReelMedia

struct ProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Describe a media file: container, duration, streams."
    )

    @Argument(help: "A file path or an http(s) URL.")
    var input: String

    @Flag(help: "Print JSON.")
    var json = false

    @OptionGroup var loading: LoadingOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        global.apply()
        let source = try MediaSource(input)
        let stack = try loading.makeLoader(for: source)
        let info: MediaInfo
        do {
            info = try await MediaProbe.probe(source.url, loader: stack.loader)
        } catch {
            await stack.shutdown()
            throw CommandFailure.media(describe(error))
        }
        await stack.shutdown()
        if json {
            print(try ProbeOutput.json(info))
        } else {
            print(ProbeOutput.text(info, name: source.displayName))
        }
    }
}

enum ProbeOutput {
    static func json(_ info: MediaInfo) throws -> String {
        var root: [String: Any] = [
            "container": info.container,
            "containerLongName": info.containerLongName,
            "streams": info.streams.map(stream),
        ]
        if let duration = info.duration {
            root["duration"] = duration.stringValue
            root["durationSeconds"] = duration.seconds
        }
        if let bitRate = info.bitRate { root["bitRate"] = bitRate }
        let data = try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    private static func stream(_ s: StreamInfo) -> [String: Any] {
        var out: [String: Any] = [
            "index": s.index, "type": s.kind.rawValue, "codec": s.codec, "timeBase": s.timeBase,
            "default": s.isDefault, "selected": s.isSelected,
        ]
        if let v = s.profile { out["profile"] = v }
        if let v = s.width { out["width"] = v }
        if let v = s.height { out["height"] = v }
        if let v = s.rotation { out["rotation"] = v }
        if let v = s.displayMatrixRotation { out["displayMatrixRotation"] = v }
        if let v = s.pixelFormat { out["pixelFormat"] = v }
        if let v = s.frameRate { out["frameRate"] = v.stringValue; out["fps"] = v.seconds }
        if let v = s.sampleRate { out["sampleRate"] = v }
        if let v = s.channels { out["channels"] = v }
        if let v = s.channelLayout { out["channelLayout"] = v }
        if let v = s.duration { out["duration"] = v.stringValue; out["durationSeconds"] = v.seconds }
        if let v = s.bitRate { out["bitRate"] = v }
        if let v = s.language { out["language"] = v }
        if let v = s.title { out["title"] = v }
        if s.isForced { out["forced"] = true }
        if !s.roles.isEmpty { out["roles"] = s.roles }
        if s.isAttachedPicture { out["attachedPicture"] = true }
        if let color = s.color { out["color"] = ColorProbe.json(color) }
        return out
    }

    static func text(_ info: MediaInfo, name: String) -> String {
        var lines: [String] = []
        var head = "\(name): \(info.container) (\(info.containerLongName))"
        if let duration = info.duration {
            head += ", \(String(format: "%.3f", duration.seconds)) s (\(duration.stringValue))"
        }
        if let bitRate = info.bitRate { head += ", \(bitRate / 1000) kb/s" }
        lines.append(head)
        for s in info.streams {
            var line = "  #\(s.index) \(s.kind.rawValue): \(s.codec)"
            if let profile = s.profile { line += " (\(profile))" }
            if let w = s.width, let h = s.height { line += " \(w)x\(h)" }
            if let p = s.pixelFormat { line += " \(p)" }
            if let r = s.frameRate { line += String(format: " %.3g fps", r.seconds) }
            if let rotation = s.rotation, rotation != 0 { line += ", rotated \(rotation)°" }
            if let rate = s.sampleRate { line += " \(rate) Hz" }
            if let layout = s.channelLayout { line += " \(layout)" } else if let c = s.channels { line += " \(c) ch" }
            if let language = s.language { line += " [\(language)]" }
            if let title = s.title { line += " \"\(title)\"" }
            if s.isDefault { line += " default" }
            if s.isForced { line += " forced" }
            if !s.roles.isEmpty { line += " (\(s.roles.joined(separator: ", ")))" }
            if s.isSelected { line += " *" }
            lines.append(line)
            if let color = s.color { lines += ColorProbe.lines(color) }
        }
        return lines.joined(separator: "\n")
    }
}
