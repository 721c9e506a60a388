import Foundation
import ReelAccountClient
import ReelCore
import ReelFeed
import ReelMedia

/// The window's account side as a value: the bottom tab bar (home / upload / me), the
/// sign-in and sign-up forms, the profile with its editor and "my videos" grid, and the
/// upload page — layout, input and drawing. Each page or form is a value of its own
/// (``AccountForm``, ``UploadForm``, ``ProfilePage``, ``ProfileForm``, ``AvatarForm``) with
/// its own events; this model routes input and the account session's outcomes to the one
/// on screen. The home feed itself is ``FeedViewModel``; this model says when it is on
/// screen (``showsFeed``) and draws everything else. Input in drawable pixels comes in,
/// ``Command``s come out. No SDL, no I/O.
public struct AppShellModel: Sendable {
    public enum Command: Sendable, Hashable {
        case signIn(name: String, password: String)
        case signUp(name: String, email: String, password: String)
        case signOut
        /// Read the signed-in user's profile and videos (the "me" page opened).
        case loadProfile
        case saveProfile(nickname: String, bio: String)
        /// Send the picture at `path` as the avatar.
        case changeAvatar(path: String)
        /// Play the user's videos as a swipe feed from `index`.
        case playMyVideos(index: Int)
        /// Leave my videos' feed (back to the profile).
        case closeMyVideos
        case upload(path: String, title: String, category: String?)
        /// The home feed went off screen or came back (pause or resume it).
        case feedVisible(Bool)
        /// The window closes.
        case quit
    }

    public enum Key: Sendable, Hashable {
        case tab, enter, backspace, escape, up, down, f1, f2, f3, other
    }

    public enum Input: Sendable, Hashable {
        case pointerDown(x: Double, y: Double)
        case pointerUp(x: Double, y: Double)
        case wheel(dy: Double)
        case keyDown(Key, shift: Bool)
        case text(String)
        case composition(String)
        /// A file dropped on the window.
        case drop(path: String)
    }

    /// One of the user's videos in the grid.
    public struct Tile: Sendable {
        public var item: FeedItem
        public var thumbnail: RGBImage?
        public init(item: FeedItem, thumbnail: RGBImage?) {
            self.item = item
            self.thumbnail = thumbnail
        }
    }

    public private(set) var navigation: AppNavigation
    public private(set) var authForm = AccountForm(mode: .signIn)
    public private(set) var upload = UploadForm()
    public private(set) var profileForm: ProfileForm?
    /// The avatar page (over the profile, and over its editor when that is open).
    public private(set) var avatarForm: AvatarForm?
    /// The "me" page: the user, the avatar, the status line, the grid of their videos.
    public private(set) var mePage = ProfilePage()
    /// The signed-in user, once read.
    public var profile: AccountProfile? { mePage.profile }
    /// The avatar's picture, decoded (square); nil draws the nickname's initial.
    public var avatar: RGBImage? { mePage.avatar }
    /// Where ``avatar`` came from (its texture's key: a new picture gets a new one).
    public var avatarSource: String? { mePage.avatarSource }
    /// The profile page's status line (loading, a failure).
    public var profileStatus: String { mePage.status }
    public var tiles: [Tile] { mePage.tiles }
    public var gridScroll: Double { mePage.gridScroll }
    /// Who is signed in (for the chrome before the profile is read).
    public private(set) var signedInName: String?
    /// A short notice at the top of a page ("signed out", "session expired — sign in again").
    public private(set) var notice: String?

    public private(set) var width: Double
    public private(set) var height: Double
    public private(set) var scale: Double

    enum Target: Sendable, Hashable {
        case tab(AppTab), field(Int), togglePassword, submit, switchMode, signOut, edit, save, cancelEdit, tile(Int), uploadButton, avatar
    }
    private var pressed: Target?

    public init(width: Int, height: Int, scale: Double = 1, signedInName: String?) {
        self.width = Double(width)
        self.height = Double(height)
        self.scale = scale
        self.signedInName = signedInName
        navigation = AppNavigation(isSignedIn: signedInName != nil)
    }

    public mutating func resize(width: Int, height: Int, scale: Double) {
        self.width = Double(width)
        self.height = Double(height)
        self.scale = scale
    }

    // MARK: What is on screen

    /// Whether the feed (home, or my videos playing) fills the area above the tab bar.
    public var showsFeed: Bool {
        guard navigation.authPage == nil else { return false }
        switch navigation.place {
        case .feed, .myVideos: return true
        case .upload, .profile: return false
        }
    }

    public var tabBarHeight: Double { 56 * scale }
    /// The area above the tab bar: the feed's, or the page's.
    public var contentHeight: Double { max(1, height - tabBarHeight) }
    public func tabRect(_ tab: AppTab) -> UIRect {
        let w = width / Double(AppTab.allCases.count)
        return UIRect(x: Double(tab.rawValue) * w, y: contentHeight, width: w, height: tabBarHeight)
    }

    /// The focused text field's rect, for SDL text input and the IME's candidate window;
    /// nil when no text field is on screen (text input stops).
    public var textInputRect: UIRect? {
        if navigation.authPage != nil { return fieldRect(authForm.inputs.focus) }
        switch navigation.place {
        case .upload where !upload.isUploading: return fieldRect(upload.inputs.focus)
        case .profile where avatarForm != nil: return fieldRect(0)
        case .profile where profileForm != nil: return fieldRect(profileForm!.inputs.focus)
        default: return nil
        }
    }

    // MARK: Events from the window

    /// The server answered 401 (to the feed or an account call).
    public mutating func unauthorized(reason: String? = nil) -> [Command] {
        let wasFeed = showsFeed
        navigation.unauthorized()
        signedInName = nil
        mePage.signedOut(keepingTiles: true)
        profileForm = nil
        // A picture on its way got no answer but the 401: the path stays for after signing in.
        if avatarForm?.isSending == true { avatarForm?.finish(error: nil) }
        if authForm.isSubmitting { authForm.finish(error: nil) }
        notice = reason.map { Self.describe(reason: $0) } ?? "请登录 Please sign in"
        return wasFeed ? [.feedVisible(false)] : []
    }

    static func describe(reason: String) -> String {
        switch reason {
        case "token_expired": "登录已过期，请重新登录 Your session expired — sign in again"
        case "token_revoked": "已退出登录，请重新登录 You were signed out — sign in again"
        case "feed": "需要登录 The feed needs sign-in"
        default: "请登录 Please sign in"
        }
    }

    /// Signing in (or up and in) ended.
    public mutating func signInFinished(_ result: Result<AccountProfile, UploadRefusal>) -> [Command] {
        switch result {
        case .success(let user):
            authForm.finish(error: nil)
            signedInName = user.name
            mePage.profileLoaded(user, clearsStatus: false)
            notice = nil
            let wasFeed = showsFeed
            navigation.didSignIn()
            return after(wasFeed: wasFeed)
        case .failure(let refusal):
            authForm.finish(error: refusal.message)
            return []
        }
    }

    public mutating func signedOut() -> [Command] {
        let wasFeed = showsFeed
        navigation.didSignOut()
        signedInName = nil
        mePage.signedOut()
        profileForm = nil
        avatarForm = nil
        authForm = AccountForm(mode: .signIn)
        notice = "已退出登录 Signed out"
        return wasFeed ? [.feedVisible(false)] : []
    }

    public mutating func profileSaved(_ result: Result<AccountProfile, UploadRefusal>) {
        switch result {
        case .success(let user):
            mePage.profileLoaded(user, clearsStatus: false)
            profileForm = nil
        case .failure(let refusal):
            profileForm?.finish(error: refusal.message)
        }
    }

    /// The signed-in user was read: the profile page shows it (its status line clears).
    public mutating func profileLoaded(_ user: AccountProfile) { mePage.profileLoaded(user) }

    /// Reading the profile failed: its status line says why (what was shown stays).
    public mutating func profileFailed(_ message: String) { mePage.profileFailed(message) }

    /// The signed-in user's videos were read: one tile each, their thumbnails to come
    /// (``thumbnailsWanted``, ``thumbnailDecoded(_:for:)``).
    public mutating func myVideosLoaded(_ items: [FeedItem]) { mePage.myVideosLoaded(items) }

    /// The pictures the tiles still wait for: each one's cover, or its video's first frame.
    public var thumbnailsWanted: [URL] { mePage.thumbnailsWanted }

    /// A thumbnail decoded from `url`: every tile waiting for it shows it.
    public mutating func thumbnailDecoded(_ image: RGBImage, for url: URL) { mePage.thumbnailDecoded(image, for: url) }

    /// The avatar's picture decoded from `source` (nil: none, the initial shows).
    public mutating func showAvatar(_ image: RGBImage?, from source: String?) { mePage.avatarDecoded(image, from: source) }

    /// The avatar request ended: the profile with the new avatar (the page closes), or the
    /// refusal shown on the avatar page with the path kept (the old avatar stays).
    public mutating func avatarChanged(_ result: Result<AccountProfile, UploadRefusal>) {
        switch result {
        case .success(let user):
            mePage.profileLoaded(user, clearsStatus: false)
            avatarForm = nil
        case .failure(let refusal):
            if avatarForm == nil { avatarForm = AvatarForm() }
            avatarForm?.finish(error: refusal.message)
        }
    }

    public mutating func uploadProgress(sent: Int64, total: Int64) { upload.progress(sent: sent, total: total) }
    public mutating func uploadFinished(_ result: Result<UploadedItem, UploadRefusal>) { upload.finish(result) }

    // MARK: Input

    public mutating func handle(_ input: Input) -> [Command] {
        switch input {
        case .pointerDown(let x, let y):
            pressed = target(x: x, y: y)
            return []
        case .pointerUp(let x, let y):
            defer { pressed = nil }
            guard let pressed, target(x: x, y: y) == pressed else { return [] }
            return activate(pressed)
        case .wheel(let dy):
            if navigation.authPage == nil, navigation.place == .profile, profileForm == nil, avatarForm == nil { scrollGrid(by: -dy * 60 * scale) }
            return []
        case .keyDown(let key, let shift):
            return keyDown(key, shift: shift)
        case .text(let text):
            edit { $0.insert(text) } upload: { $0.insert(text) } profile: { $0.insert(text) } avatar: { $0.insert(text) }
            return []
        case .composition(let text):
            edit { $0.compose(text) } upload: { $0.compose(text) } profile: { $0.compose(text) } avatar: { $0.compose(text) }
            return []
        case .drop(let path):
            // On the profile a picture (anything but a video) becomes the avatar at once;
            // elsewhere a dropped file is an upload.
            if navigation.authPage == nil, navigation.place == .profile, navigation.isSignedIn,
               avatarForm != nil || !Self.isVideo(path: path) {
                var form = avatarForm ?? AvatarForm()
                form.drop(path: path)
                avatarForm = form
                return submitAvatar()
            }
            upload.drop(path: path)
            return select(.upload)
        }
    }

    /// Whether a file's name says it is a video (a drop on the profile uploads it instead of
    /// taking it as the avatar).
    static func isVideo(path: String) -> Bool {
        let ext = (path as NSString).pathExtension.lowercased()
        return ["mp4", "m4v", "mov", "mkv", "webm", "avi", "ts", "m2ts", "mts", "flv", "3gp", "mpg", "mpeg", "ogv", "wmv"].contains(ext)
    }

    private mutating func edit(_ form: (inout AccountForm) -> Void, upload uploadEdit: (inout UploadForm) -> Void,
                               profile profileEdit: (inout ProfileForm) -> Void, avatar avatarEdit: (inout AvatarForm) -> Void) {
        if navigation.authPage != nil { form(&authForm); return }
        switch navigation.place {
        case .upload: uploadEdit(&upload)
        case .profile:
            if var a = avatarForm { avatarEdit(&a); avatarForm = a } else if var f = profileForm { profileEdit(&f); profileForm = f }
        default: break
        }
    }

    /// Tab changes from the keyboard work everywhere (F1 home, F2 upload, F3 me).
    private mutating func keyDown(_ key: Key, shift: Bool) -> [Command] {
        switch key {
        case .f1: return select(.home)
        case .f2: return select(.upload)
        case .f3: return select(.me)
        default: break
        }
        if navigation.authPage != nil {
            switch key {
            case .tab: authForm.focusNext(backwards: shift)
            case .up: authForm.focusNext(backwards: true)
            case .down: authForm.focusNext()
            case .backspace: authForm.backspace()
            case .enter: return submitAuth()
            case .escape:
                let wasFeed = showsFeed
                navigation.cancelSignIn()
                return after(wasFeed: wasFeed)
            default: break
            }
            return []
        }
        switch navigation.place {
        case .upload:
            switch key {
            case .tab, .down: upload.focusNext(backwards: shift)
            case .up: upload.focusNext(backwards: true)
            case .backspace: upload.backspace()
            case .enter: return submitUpload()
            case .escape: return select(.home)
            default: break
            }
        case .profile:
            if var form = avatarForm {
                switch key {
                case .backspace: form.backspace()
                case .enter:
                    avatarForm = form
                    return submitAvatar()
                case .escape where !form.isSending: avatarForm = nil; return []
                default: break
                }
                avatarForm = form
            } else if var form = profileForm {
                switch key {
                case .tab, .down, .up: form.focusNext()
                case .backspace: form.backspace()
                case .enter:
                    profileForm = form
                    return saveProfile()
                case .escape: profileForm = nil; return []
                default: break
                }
                profileForm = form
            } else {
                switch key {
                case .escape: return select(.home)
                case .down: scrollGrid(by: tileSize.height)
                case .up: scrollGrid(by: -tileSize.height)
                case .enter where !tiles.isEmpty: return activate(.tile(0))
                default: break
                }
            }
        case .feed, .myVideos:
            break
        }
        return []
    }

    /// Chooses a tab (a click, F1–F3, a drop).
    public mutating func select(_ tab: AppTab) -> [Command] {
        let wasFeed = showsFeed
        let wasPlace = navigation.place
        navigation.select(tab)
        var out: [Command] = []
        if case .myVideos = wasPlace, navigation.place != wasPlace { out.append(.closeMyVideos) }
        if navigation.authPage != nil, notice == nil { notice = "请先登录 Sign in first" }
        out += after(wasFeed: wasFeed)
        return out
    }

    /// Commands that follow a page change: the feed's visibility, the profile's load.
    private mutating func after(wasFeed: Bool) -> [Command] {
        var out: [Command] = []
        if wasFeed != showsFeed { out.append(.feedVisible(showsFeed)) }
        if navigation.authPage == nil, navigation.place == .profile, navigation.isSignedIn {
            mePage.opened()
            out.append(.loadProfile)
        }
        return out
    }

    private mutating func activate(_ target: Target) -> [Command] {
        switch target {
        case .tab(let tab): return select(tab)
        case .field(let i):
            if navigation.authPage != nil {
                if authForm.fields.indices.contains(i) { authForm.focus(authForm.fields[i]) }
            } else if navigation.place == .upload, let field = UploadForm.Field(rawValue: i) {
                upload.focus(field)
            } else if navigation.place == .profile, avatarForm == nil {
                profileForm?.focus(i)
            }
            return []
        case .togglePassword: authForm.toggleShowsPassword(); return []
        case .submit: return submitAuth()
        case .switchMode:
            let next: AuthPage = authForm.mode == .signIn ? .signUp : .signIn
            authForm.setMode(next)
            navigation.showAuth(next)
            return []
        case .signOut: return [.signOut]
        case .edit:
            profileForm = ProfileForm(nickname: profile?.nickname ?? "", bio: profile?.bio ?? "")
            return []
        case .save: return avatarForm != nil ? submitAvatar() : saveProfile()
        case .cancelEdit:
            if let form = avatarForm {
                if !form.isSending { avatarForm = nil }
            } else {
                profileForm = nil
            }
            return []
        case .avatar:
            avatarForm = AvatarForm()
            return []
        case .tile(let i):
            guard tiles.indices.contains(i) else { return [] }
            navigation.open(.myVideos(index: i))
            return [.playMyVideos(index: i), .feedVisible(true)]
        case .uploadButton: return submitUpload()
        }
    }

    /// Leaves my videos' feed for the profile (Escape there).
    public mutating func closeMyVideos() -> [Command] {
        guard case .myVideos = navigation.place else { return [] }
        navigation.open(.profile)
        return [.closeMyVideos, .feedVisible(false)]
    }

    private mutating func submitAuth() -> [Command] {
        switch authForm.submit() {
        case .signIn(let name, let password): [.signIn(name: name, password: password)]
        case .signUp(let name, let email, let password): [.signUp(name: name, email: email, password: password)]
        case nil: []
        }
    }

    private mutating func submitUpload() -> [Command] {
        guard let job = upload.submit() else { return [] }
        return [.upload(path: job.path, title: job.title, category: job.category)]
    }

    private mutating func saveProfile() -> [Command] {
        guard var form = profileForm else { return [] }
        let submitted = form.submit()
        profileForm = form
        guard let update = submitted else { return [] }
        return [.saveProfile(nickname: update.nickname ?? "", bio: update.bio ?? "")]
    }

    private mutating func submitAvatar() -> [Command] {
        guard var form = avatarForm else { return [] }
        let path = form.submit()
        avatarForm = form
        return path.map { [.changeAvatar(path: $0)] } ?? []
    }

    private mutating func scrollGrid(by delta: Double) {
        mePage.scrollGrid(by: delta, rowHeight: tileSize.height + 4 * scale, visible: contentHeight - gridTop)
    }
}
