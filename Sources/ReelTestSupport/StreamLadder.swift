import Foundation
import ReelCore
import ReelMedia

/// A multi-variant HLS stream for tests: the same picture at three sizes and bit rates,
/// each packaged as fMP4 HLS by ``StreamPackager/packageVariants(_:loader:format:into:segmentSeconds:)``
/// in `v0/`, `v1/`, `v2/` (lowest bandwidth first), with `master.m3u8` naming them — or, with
/// `format: .dash`, as DASH in the same directories with one `manifest.mpd` whose video
/// Representations `v0`…`v2` are the three and whose audio (`a0`) is the first's. With
/// `separateAudio` (HLS), the variants are video alone and the first clip's audio is one audio
/// rendition in `a0/`.
public struct StreamLadder: Sendable {
    public static let specs: [ClipSpec] = [
        ClipSpec(width: 128, height: 72, duration: 2, keyframeInterval: 15, bitRateKbps: 150),
        ClipSpec(width: 256, height: 144, duration: 2, keyframeInterval: 15, bitRateKbps: 500),
        ClipSpec(width: 512, height: 288, duration: 2, keyframeInterval: 15, bitRateKbps: 1_500),
    ]

    public let directory: URL
    /// `master.m3u8`, or `manifest.mpd` for DASH.
    public let master: URL
    public let renditions: [StreamPackager.Rendition]
    /// The clip each rendition was packaged from, in the renditions' order.
    public let clips: [URL]
    /// Every file by its path under `directory` (`master.m3u8`, `v1/seg-0.m4s`…).
    public let files: [String: Data]

    /// `loader` reads the clips (a `FileLoader`).
    public static func make(loader: any ResourceLoader, format: StreamPackager.Format = .hlsFMP4,
                            specs: [ClipSpec] = specs, segmentSeconds: Double = 1,
                            separateAudio: Bool = false) throws -> StreamLadder {
        let clips = try specs.map { try Fixtures.clip($0) }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("reel-ladder-\(UUID().uuidString)", isDirectory: true)
        let (master, renditions) = try StreamPackager.packageVariants(clips, loader: loader, format: format,
                                                                       into: directory, segmentSeconds: segmentSeconds,
                                                                       separateAudio: separateAudio)
        var files: [String: Data] = [:]
        let root = directory.resolvingSymlinksInPath().path
        if let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                let path = String(url.resolvingSymlinksInPath().path.dropFirst(root.count + 1))
                files[path] = try Data(contentsOf: url)
            }
        }
        // The renditions are sorted by bandwidth; the clips follow them.
        let ordered = renditions.map { rendition in clips[Int(rendition.directory.dropFirst())!] }
        return StreamLadder(directory: directory, master: master, renditions: renditions, clips: ordered, files: files)
    }

    /// Serves every file at `base` + its path on `loader`.
    public func serve(on loader: FakeResourceLoader, at base: URL) {
        for (path, data) in files { loader.add(data, at: base.appendingPathComponent(path)) }
    }

    public func remove() { try? FileManager.default.removeItem(at: directory) }
}
