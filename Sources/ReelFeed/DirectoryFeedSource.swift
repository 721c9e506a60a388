import Foundation

/// A feed made of the media files in a directory: each video file is an item
/// (title from its name), each sub-directory of pictures is an image post, and a
/// picture named like a video (`clip.jpg` beside `clip.mp4`) is that video's cover.
/// Sub-directories holding videos are categories.
public struct DirectoryFeedSource: FeedSource {
    /// The directory read at ``init(directory:)``. Later changes to it are not seen: the
    /// items are the ones found then.
    public let directory: URL
    private let items: [FeedItem]
    private let tabs: [FeedCategory]

    static let videoExtensions: Set<String> = ["mp4", "m4v", "mov", "mkv", "webm", "avi", "ts"]
    static let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "webp"]

    /// Reads the directory now; throws `FeedError.unavailable(_:)` when it is not one.
    public init(directory: URL) throws {
        self.directory = directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw FeedError.unavailable("\(directory.path) is not a directory")
        }
        var items: [FeedItem] = []
        var tabs: [FeedCategory] = []
        items += Self.scan(directory, category: nil)
        for sub in Self.children(of: directory) where Self.isDirectory(sub) {
            let name = sub.lastPathComponent
            let videos = Self.scan(sub, category: name)
            if videos.contains(where: { !$0.isImagePost }) {
                tabs.append(FeedCategory(id: name, title: name))
                items += videos
            }
        }
        self.items = items
        self.tabs = tabs
    }

    /// The sub-directories that hold at least one video, by their names (id and title
    /// alike), in file-name order. Empty when the videos are all at the top level. Never
    /// throws: the directory was read at ``init(directory:)``.
    public func categories() async throws -> [FeedCategory] { tabs }

    /// Page `page` (1-based) of `size` items: every item when `category` is `nil` (the top
    /// level's first, then each category's), else the items of the sub-directory with that
    /// name. A page past the end is empty with `hasMore` false. Never throws.
    public func page(category: String?, page: Int, size: Int) async throws -> FeedPage {
        let chosen = category.map { id in items.filter { $0.category == id } } ?? items
        return Self.slice(chosen, page: page, size: size)
    }

    /// Page `page` (1-based) of the items whose title, uploader or category contains
    /// `text` (case-insensitively, surrounding blanks ignored; blank text matches nothing).
    /// Never throws.
    public func search(text: String, page: Int, size: Int) async throws -> FeedPage {
        Self.slice(Self.matching(items, text: text), page: page, size: size)
    }

    private static func scan(_ folder: URL, category: String?) -> [FeedItem] {
        let entries = children(of: folder)
        let files = entries.filter { !isDirectory($0) }
        var covers: [String: URL] = [:]
        for file in files where imageExtensions.contains(file.pathExtension.lowercased()) {
            covers[file.deletingPathExtension().lastPathComponent] = file
        }
        var items: [FeedItem] = []
        for file in files where videoExtensions.contains(file.pathExtension.lowercased()) {
            let stem = file.deletingPathExtension().lastPathComponent
            items.append(FeedItem(
                id: (category.map { $0 + "/" } ?? "") + file.lastPathComponent,
                title: title(from: stem), videoURL: file, coverURL: covers[stem], category: category,
                captions: sidecars(of: stem, in: files)
            ))
        }
        // A folder of pictures (and no video) is an image post.
        for sub in entries where isDirectory(sub) {
            let pictures = children(of: sub).filter { imageExtensions.contains($0.pathExtension.lowercased()) }
            let hasVideo = children(of: sub).contains { videoExtensions.contains($0.pathExtension.lowercased()) }
            guard !pictures.isEmpty, !hasVideo else { continue }
            items.append(FeedItem(
                id: (category.map { $0 + "/" } ?? "") + sub.lastPathComponent + "/",
                title: title(from: sub.lastPathComponent), coverURL: pictures.first, category: category, images: pictures
            ))
        }
        return items
    }

    /// Caption files beside a video: `stem.srt`, `stem.vtt`, `stem.ass`, and with a language
    /// `stem.LANG.srt` (`clip.en.srt`, `clip.zh-Hans.vtt`), the unnamed one first.
    static func sidecars(of stem: String, in files: [URL]) -> [FeedCaption] {
        var found: [FeedCaption] = []
        for file in files where captionExtensions.contains(file.pathExtension.lowercased()) {
            let name = file.deletingPathExtension().lastPathComponent
            if name == stem {
                found.insert(FeedCaption(url: file), at: 0)
            } else if name.hasPrefix(stem + "."), let language = languageTag(String(name.dropFirst(stem.count + 1))) {
                found.append(FeedCaption(url: file, language: language))
            }
        }
        return found
    }

    static let captionExtensions: Set<String> = ["srt", "vtt", "ass", "ssa"]

    /// `en`, `eng`, `zh-Hans`, `pt-BR`: a language tag as a sidecar's name gives it; nil otherwise.
    static func languageTag(_ text: String) -> String? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard let primary = parts.first, (2...3).contains(primary.count), primary.allSatisfy({ $0.isASCII && $0.isLetter }),
              parts.dropFirst().allSatisfy({ (2...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } })
        else { return nil }
        return text
    }

    /// `my_first-clip` → `my first clip`.
    static func title(from stem: String) -> String {
        stem.replacingOccurrences(of: "_", with: " ").replacingOccurrences(of: "-", with: " ")
    }

    private static func children(of folder: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { folder.appendingPathComponent($0) }
    }

    private static func isDirectory(_ url: URL) -> Bool {
        var flag: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &flag) && flag.boolValue
    }
}
