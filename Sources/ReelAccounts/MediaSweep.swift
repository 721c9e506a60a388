import Foundation

/// The files in the media directory that no row refers to and that the service itself named:
/// what an upload (or an avatar change) leaves when the process ends between moving the file
/// into place and committing its row, or between replacing an avatar's row and removing the
/// old picture. Files the service did not name (anything an operator put there) are not its to
/// remove and are never listed.
enum MediaSweep {
    /// Relative paths (`travel/<id>.mp4`, `avatars/<user>-<id>.png`) under `media` that are
    /// not in `recorded`.
    static func unrecorded(in media: URL, recorded: Set<String>) -> [String] {
        let files = FileManager.default
        var found: [String] = []
        for folder in ((try? files.contentsOfDirectory(atPath: media.path)) ?? []).sorted() {
            var isDirectory: ObjCBool = false
            guard files.fileExists(atPath: media.appendingPathComponent(folder).path, isDirectory: &isDirectory),
                  isDirectory.boolValue else { continue }
            let names = (try? files.contentsOfDirectory(atPath: media.appendingPathComponent(folder).path)) ?? []
            for name in names.sorted() where isServiceName(name, avatar: folder == "avatars") {
                let relative = folder + "/" + name
                if !recorded.contains(relative) { found.append(relative) }
            }
        }
        return found
    }

    /// `<id>.<ext>` for an upload, `<user>-<id>.<ext>` for an avatar, where `<id>` is one of
    /// ``AccountsService/randomIdentifier(bytes:)``'s (22 URL-safe base-64 characters).
    static func isServiceName(_ name: String, avatar: Bool) -> Bool {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        var stem = name[..<dot]
        if avatar {
            guard let dash = stem.firstIndex(of: "-"), Int64(stem[..<dash]) != nil else { return false }
            stem = stem[stem.index(after: dash)...]
        }
        return stem.count == 22 && stem.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}
