import Foundation
import ReelAccountClient
import ReelFeed
import ReelCore

/// The "me" page as a value: the signed-in user as last read, the avatar's decoded picture,
/// the status line, the grid of the user's videos with their thumbnails, and how far the
/// grid is scrolled. ``AppShellModel`` routes the account session's outcomes here as events;
/// the page's two forms (``ProfileForm``, ``AvatarForm``) are values of their own.
public struct ProfilePage: Sendable {
    /// The signed-in user, once read.
    public private(set) var profile: AccountProfile?
    /// The avatar's picture, decoded (square); nil draws the nickname's initial.
    public private(set) var avatar: RGBImage?
    /// Where ``avatar`` came from (its texture's key: a new picture gets a new one).
    public private(set) var avatarSource: String?
    /// The status line (loading, a failure).
    public private(set) var status = ""
    public private(set) var tiles: [AppShellModel.Tile] = []
    public private(set) var gridScroll: Double = 0

    public init() {}

    /// The page opened: it says it is loading until the user is read (once read, what it
    /// said stays).
    public mutating func opened() {
        if profile == nil { status = "加载中… Loading" }
    }

    /// The signed-in user was read (or changed: signed in, saved, a new avatar); the status
    /// line clears when `clearsStatus`.
    public mutating func profileLoaded(_ user: AccountProfile, clearsStatus: Bool = true) {
        profile = user
        if clearsStatus { status = "" }
    }

    /// Reading the profile failed: the status line says why (what was shown stays).
    public mutating func profileFailed(_ message: String) { status = message }

    /// The user's videos were read: one tile each, their thumbnails to come.
    public mutating func myVideosLoaded(_ items: [FeedItem]) {
        tiles = items.map { AppShellModel.Tile(item: $0, thumbnail: nil) }
    }

    /// The pictures the tiles still wait for: each one's cover, or its video's first frame.
    public var thumbnailsWanted: [URL] {
        tiles.compactMap { tile in tile.thumbnail == nil ? Self.thumbnailURL(of: tile.item) : nil }
    }

    /// A thumbnail decoded from `url`: every tile waiting for it shows it.
    public mutating func thumbnailDecoded(_ image: RGBImage, for url: URL) {
        for i in tiles.indices where tiles[i].thumbnail == nil && Self.thumbnailURL(of: tiles[i].item) == url {
            tiles[i].thumbnail = image
        }
    }

    private static func thumbnailURL(of item: FeedItem) -> URL? { item.coverURL ?? item.videoURL }

    /// The avatar's picture decoded from `source` (nil: none, the initial shows).
    public mutating func avatarDecoded(_ image: RGBImage?, from source: String?) {
        avatar = image
        avatarSource = image == nil ? nil : source
    }

    /// The grid scrolled by `delta` pixels, kept within `rows` of `rowHeight` in `visible` pixels.
    public mutating func scrollGrid(by delta: Double, rowHeight: Double, visible: Double) {
        let rows = (tiles.count + 2) / 3
        let content = Double(rows) * rowHeight
        gridScroll = min(max(0, gridScroll + delta), max(0, content - visible))
    }

    /// Signed out, or the session ended: nobody's page. With `keepingTiles` the grid stays
    /// (a 401 keeps what was shown until someone signs in).
    public mutating func signedOut(keepingTiles: Bool = false) {
        profile = nil
        avatarDecoded(nil, from: nil)
        if !keepingTiles { tiles = [] }
    }
}
