import Foundation
import ReelAccountClient
import ReelCore
import ReelFeed
import ReelMedia

/// The window's account side as a value: the bottom tab bar (home / upload / me), the
/// sign-in and sign-up forms, the profile with its editor and "my videos" grid, and the
/// upload page — layout, input and drawing. The home feed itself is ``FeedViewModel``;
/// this model says when it is on screen (``showsFeed``) and draws everything else.
/// Input in drawable pixels comes in, ``Command``s come out. No SDL, no I/O.
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
    /// The signed-in user, once read.
    public var profile: AccountProfile?
    /// The avatar's picture, decoded (square); nil draws the nickname's initial.
    public private(set) var avatar: RGBImage?
    /// Where ``avatar`` came from (its texture's key: a new picture gets a new one).
    public private(set) var avatarSource: String?
    /// The profile page's status line (loading, a failure).
    public var profileStatus = ""
    public var tiles: [Tile] = []
    /// Who is signed in (for the chrome before the profile is read).
    public var signedInName: String?
    public private(set) var gridScroll: Double = 0
    /// A short notice at the top of a page ("signed out", "session expired — sign in again").
    public var notice: String?

    public private(set) var width: Double
    public private(set) var height: Double
    public private(set) var scale: Double

    private enum Target: Sendable, Hashable {
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
        profile = nil
        showAvatar(nil, from: nil)
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
            profile = user
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
        profile = nil
        showAvatar(nil, from: nil)
        tiles = []
        profileForm = nil
        avatarForm = nil
        authForm = AccountForm(mode: .signIn)
        notice = "已退出登录 Signed out"
        return wasFeed ? [.feedVisible(false)] : []
    }

    public mutating func profileSaved(_ result: Result<AccountProfile, UploadRefusal>) {
        switch result {
        case .success(let user):
            profile = user
            profileForm = nil
        case .failure(let refusal):
            profileForm?.finish(error: refusal.message)
        }
    }

    /// The avatar's picture decoded from `source` (nil: none, the initial shows).
    public mutating func showAvatar(_ image: RGBImage?, from source: String?) {
        avatar = image
        avatarSource = image == nil ? nil : source
    }

    /// The avatar request ended: the profile with the new avatar (the page closes), or the
    /// refusal shown on the avatar page with the path kept (the old avatar stays).
    public mutating func avatarChanged(_ result: Result<AccountProfile, UploadRefusal>) {
        switch result {
        case .success(let user):
            profile = user
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
            profileStatus = profile == nil ? "加载中… Loading" : profileStatus
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
        let rows = (tiles.count + 2) / 3
        let content = Double(rows) * (tileSize.height + 4 * scale)
        let visible = contentHeight - gridTop
        gridScroll = min(max(0, gridScroll + delta), max(0, content - visible))
    }

    // MARK: Layout

    private var margin: Double { 24 * scale }
    private var fieldsTop: Double { 110 * scale }
    private var fieldBlock: Double { 86 * scale }
    /// Text field `i`'s box on the page showing now.
    public func fieldRect(_ i: Int) -> UIRect {
        var top = fieldsTop
        if navigation.authPage == nil, navigation.place == .profile { top = 250 * scale }
        return UIRect(x: margin, y: top + Double(i) * fieldBlock + 22 * scale, width: width - 2 * margin, height: 42 * scale)
    }
    private var fieldCount: Int {
        if navigation.authPage != nil { return authForm.fields.count }
        switch navigation.place {
        case .upload: return UploadForm.Field.allCases.count
        case .profile: return avatarForm != nil ? 1 : profileForm == nil ? 0 : 2
        default: return 0
        }
    }
    /// The show/hide toggle inside the password field.
    public var passwordToggleRect: UIRect {
        let field = fieldRect(authForm.fields.firstIndex(of: .password) ?? 1)
        return UIRect(x: field.maxX - 64 * scale, y: field.y, width: 64 * scale, height: field.height)
    }
    /// The page's main button (sign in / sign up / upload / save).
    public var submitRect: UIRect {
        let below = fieldRect(fieldCount - 1).maxY + 52 * scale
        return UIRect(x: margin, y: below, width: width - 2 * margin, height: 46 * scale)
    }
    public var switchModeRect: UIRect {
        UIRect(x: margin, y: submitRect.maxY + 12 * scale, width: width - 2 * margin, height: 36 * scale)
    }
    /// The avatar on the profile (a click opens the avatar page).
    public var avatarRect: UIRect { UIRect(x: margin, y: 104 * scale, width: 72 * scale, height: 72 * scale) }
    /// What a click opens the avatar page on: the avatar and the link under it.
    var avatarTarget: UIRect { UIRect(x: 0, y: avatarRect.y, width: avatarRect.maxX + 8 * scale, height: avatarRect.height + 20 * scale) }
    /// The avatar as the avatar page shows it, larger and centred.
    var avatarPreviewRect: UIRect { UIRect(x: width / 2 - 60 * scale, y: 112 * scale, width: 120 * scale, height: 120 * scale) }
    /// The profile's buttons.
    public var editRect: UIRect { UIRect(x: margin, y: 196 * scale, width: (width - 2 * margin - 12 * scale) / 2, height: 36 * scale) }
    public var signOutRect: UIRect { UIRect(x: editRect.maxX + 12 * scale, y: editRect.y, width: editRect.width, height: editRect.height) }
    public var cancelEditRect: UIRect { switchModeRect }
    var gridTop: Double { 276 * scale }
    var tileSize: (width: Double, height: Double) {
        let w = (width - 2 * 4 * scale) / 3
        return (w, (w * 16 / 9).rounded())
    }
    /// Tile `i` of my videos on screen.
    public func tileRect(_ i: Int) -> UIRect {
        let (w, h) = tileSize
        let column = Double(i % 3), row = Double(i / 3)
        return UIRect(x: column * (w + 4 * scale), y: gridTop + row * (h + 4 * scale) - gridScroll, width: w, height: h)
    }

    private func target(x: Double, y: Double) -> Target? {
        if y >= contentHeight {
            return AppTab.allCases.first { tabRect($0).contains(x: x, y: y) }.map(Target.tab)
        }
        if navigation.authPage != nil {
            if passwordToggleRect.contains(x: x, y: y) { return .togglePassword }
            if let i = (0..<fieldCount).first(where: { fieldRect($0).contains(x: x, y: y) }) { return .field(i) }
            if submitRect.contains(x: x, y: y) { return .submit }
            if switchModeRect.contains(x: x, y: y) { return .switchMode }
            return nil
        }
        switch navigation.place {
        case .upload:
            if let i = (0..<fieldCount).first(where: { fieldRect($0).contains(x: x, y: y) }) { return .field(i) }
            if submitRect.contains(x: x, y: y) { return .uploadButton }
        case .profile:
            if avatarForm != nil {
                if fieldRect(0).contains(x: x, y: y) { return .field(0) }
                if submitRect.contains(x: x, y: y) { return .save }
                if cancelEditRect.contains(x: x, y: y) { return .cancelEdit }
                return nil
            }
            if profileForm != nil {
                if let i = (0..<fieldCount).first(where: { fieldRect($0).contains(x: x, y: y) }) { return .field(i) }
                if submitRect.contains(x: x, y: y) { return .save }
                if cancelEditRect.contains(x: x, y: y) { return .cancelEdit }
                return nil
            }
            if avatarTarget.contains(x: x, y: y) { return .avatar }
            if editRect.contains(x: x, y: y) { return .edit }
            if signOutRect.contains(x: x, y: y) { return .signOut }
            if y >= gridTop, let i = tiles.indices.first(where: { tileRect($0).contains(x: x, y: y) }) { return .tile(i) }
        default: break
        }
        return nil
    }

    // MARK: Drawing

    static let accent = UIColor(r: 0.996, g: 0.173, b: 0.333)
    static let page = UIColor(r: 0.07, g: 0.07, b: 0.08)
    static let error = UIColor(r: 1, g: 0.42, b: 0.42)

    /// The page (when the feed is not on screen) and the tab bar. `measure` gives a text's
    /// width in pixels at a size (for the caret).
    public func drawList(measure: (String, Double) -> Double) -> [DrawCommand] {
        var list: [DrawCommand] = []
        if !showsFeed {
            list.append(.fill(UIRect(x: 0, y: 0, width: width, height: contentHeight), Self.page, radius: 0))
            if navigation.authPage != nil {
                list += authPage(measure)
            } else if navigation.place == .upload {
                list += uploadPage(measure)
            } else if navigation.place == .profile {
                list += avatarForm != nil ? avatarPage(measure) : profileForm != nil ? editPage(measure) : profilePage()
            }
        }
        list += tabBar()
        return list
    }

    private func header(_ title: String) -> [DrawCommand] {
        var list: [DrawCommand] = [.text(title, point: (width / 2, 34 * scale), size: 20 * scale, color: .white, anchor: .center, maxWidth: width - 32 * scale)]
        if let notice, !notice.isEmpty {
            let box = UIRect(x: margin, y: 60 * scale, width: width - 2 * margin, height: 32 * scale)
            list.append(.fill(box, UIColor.white.withAlpha(0.1), radius: 8 * scale))
            list.append(.text(notice, point: (box.midX, box.midY), size: 13 * scale, color: UIColor.white.withAlpha(0.85), anchor: .center,
                              maxWidth: box.width - 16 * scale))
        }
        return list
    }

    private func field(_ i: Int, label: String, shown: String, placeholder: String, focused: Bool, problem: String?,
                       trailing: Double = 0, measure: (String, Double) -> Double) -> [DrawCommand] {
        let s = scale
        let box = fieldRect(i)
        var list: [DrawCommand] = [
            .text(label, point: (box.x, box.y - 11 * s), size: 13 * s, color: UIColor.white.withAlpha(0.7), anchor: .centerLeft, maxWidth: box.width),
        ]
        if focused { list.append(.fill(box.insetBy(dx: -2 * s, dy: -2 * s), Self.accent.withAlpha(0.9), radius: 10 * s)) }
        if problem != nil, !focused { list.append(.fill(box.insetBy(dx: -1 * s, dy: -1 * s), Self.error.withAlpha(0.8), radius: 9 * s)) }
        list.append(.fill(box, UIColor(r: 0.16, g: 0.16, b: 0.18), radius: 8 * s))
        let textSize = 16 * s
        let room = box.width - 24 * s - trailing
        if shown.isEmpty {
            list.append(.text(placeholder, point: (box.x + 12 * s, box.midY), size: 15 * s, color: UIColor.white.withAlpha(0.35),
                              anchor: .centerLeft, maxWidth: room))
        } else {
            list.append(.text(shown, point: (box.x + 12 * s, box.midY), size: textSize, color: .white, anchor: .centerLeft, maxWidth: room))
        }
        if focused {
            let caretX = box.x + 12 * s + min(room, shown.isEmpty ? 0 : measure(shown, textSize)) + 1 * s
            list.append(.fill(UIRect(x: caretX, y: box.y + 10 * s, width: 2 * s, height: box.height - 20 * s), Self.accent, radius: 0))
        }
        if let problem {
            list.append(.text(problem, point: (box.x + 2 * s, box.maxY + 12 * s), size: 12 * s, color: Self.error, anchor: .centerLeft,
                              maxWidth: box.width))
        }
        return list
    }

    /// `text` in lines no wider than `width` at `size` (at most `maxLines`, the last cut with
    /// "…"): breaks after a space where there is one, else between characters (CJK).
    static func wrap(_ text: String, size: Double, width: Double, maxLines: Int = 3,
                     measure: (String, Double) -> Double) -> [String] {
        var lines: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            if lines.count == maxLines - 1 || measure(String(rest), size) <= width {
                lines.append(String(rest))
                break
            }
            var end = rest.startIndex
            var lastSpace: Substring.Index?
            while end < rest.endIndex {
                let next = rest.index(after: end)
                if measure(String(rest[rest.startIndex..<next]), size) > width { break }
                if rest[end] == " " { lastSpace = end }
                end = next
            }
            if end == rest.startIndex { end = rest.index(after: end) }
            let cut = end < rest.endIndex && lastSpace != nil ? lastSpace! : end
            lines.append(String(rest[rest.startIndex..<cut]).trimmingCharacters(in: .whitespaces))
            rest = rest[cut...].drop { $0 == " " }
        }
        return lines
    }

    /// Lines of wrapped text centred under each other from `y`.
    private func paragraph(_ text: String, y: Double, size: Double, color: UIColor, measure: (String, Double) -> Double) -> [DrawCommand] {
        let width = self.width - 2 * margin
        return Self.wrap(text, size: size, width: width, measure: measure).enumerated().map { i, line in
            .text(line, point: (self.width / 2, y + Double(i) * size * 1.4), size: size, color: color, anchor: .center, maxWidth: width)
        }
    }

    private func button(_ title: String, rect: UIRect, enabled: Bool, primary: Bool = true) -> [DrawCommand] {
        let fill = primary ? (enabled ? Self.accent : Self.accent.withAlpha(0.35)) : UIColor.white.withAlpha(enabled ? 0.14 : 0.06)
        return [.fill(rect, fill, radius: rect.height / 2),
                .text(title, point: (rect.midX, rect.midY), size: 16 * scale, color: UIColor.white.withAlpha(enabled ? 1 : 0.6),
                      anchor: .center, maxWidth: rect.width - 16 * scale)]
    }

    private func authPage(_ measure: (String, Double) -> Double) -> [DrawCommand] {
        let form = authForm
        let signIn = form.mode == .signIn
        var list = header(signIn ? "登录 Sign in" : "注册 Sign up")
        for (i, f) in form.fields.enumerated() {
            let focused = i == form.inputs.focus
            let isPassword = f == .password
            list += field(i, label: form.inputs.fields[i].label, shown: form.display(f), placeholder: form.inputs.fields[i].placeholder,
                          focused: focused, problem: form.shownProblem(f), trailing: isPassword ? 64 * scale : 0, measure: measure)
            if isPassword {
                let toggle = passwordToggleRect
                list.append(.text(form.showsPassword ? "隐藏 Hide" : "显示 Show", point: (toggle.midX, toggle.midY), size: 12 * scale,
                                  color: UIColor.white.withAlpha(0.8), anchor: .center, maxWidth: toggle.width))
            }
        }
        if let error = form.serverError {
            let lines = Self.wrap(error, size: 13 * scale, width: width - 2 * margin, maxLines: 2, measure: measure).count
            list += paragraph(error, y: submitRect.y - 16 * scale - Double(lines - 1) * 13 * scale * 1.4, size: 13 * scale,
                              color: Self.error, measure: measure)
        }
        let title = form.isSubmitting ? (signIn ? "登录中… Signing in" : "注册中… Signing up") : (signIn ? "登录 Sign in" : "注册 Sign up")
        list += button(title, rect: submitRect, enabled: form.canSubmit)
        list.append(.text(signIn ? "没有账号？注册 No account? Sign up" : "已有账号？登录 Have one? Sign in",
                          point: (switchModeRect.midX, switchModeRect.midY), size: 14 * scale, color: Self.accent, anchor: .center,
                          maxWidth: switchModeRect.width))
        return list
    }

    private func uploadPage(_ measure: (String, Double) -> Double) -> [DrawCommand] {
        var list = header("上传视频 Upload")
        for f in UploadForm.Field.allCases {
            let i = f.rawValue
            list += field(i, label: upload.inputs.fields[i].label, shown: upload.display(f), placeholder: upload.inputs.fields[i].placeholder,
                          focused: i == upload.inputs.focus && !upload.isUploading, problem: upload.shownProblem(f), measure: measure)
        }
        let button = submitRect
        list += self.button(upload.isUploading ? "上传中… Uploading" : "上传 Upload", rect: button, enabled: !upload.isUploading)
        let bar = UIRect(x: margin, y: button.maxY + 20 * scale, width: width - 2 * margin, height: 6 * scale)
        var status = ""
        var colour = UIColor.white.withAlpha(0.75)
        switch upload.status {
        case .editing: status = "拖放视频文件到窗口 Drop a video file on the window"
        case .uploading(let sent, let total):
            status = total > 0 ? String(format: "%.1f / %.1f MB  %ld%%", Double(sent) / 1_048_576, Double(total) / 1_048_576,
                                        Int(upload.fraction * 100)) : "连接中… Connecting"
        case .done(let title, let category):
            status = "已上传 “\(title)” 到 \(category) Uploaded"
            colour = UIColor(r: 0.5, g: 0.9, b: 0.6)
        case .failed(let message):
            status = "上传失败 Refused: \(message)"
            colour = Self.error
        }
        if upload.isUploading || upload.fraction > 0 {
            list.append(.fill(bar, UIColor.white.withAlpha(0.12), radius: bar.height / 2))
            list.append(.fill(UIRect(x: bar.x, y: bar.y, width: max(bar.height, bar.width * upload.fraction), height: bar.height),
                              Self.accent, radius: bar.height / 2))
        }
        list += paragraph(status, y: bar.maxY + 20 * scale, size: 13 * scale, color: colour, measure: measure)
        return list
    }

    private func profilePage() -> [DrawCommand] {
        let s = scale
        var list = header("我的 Me")
        let avatarRect = self.avatarRect
        list += avatarPicture(in: avatarRect)
        // The avatar is a button: a link under it says so.
        list.append(.text("更换头像 Change", point: (avatarRect.midX, avatarRect.maxY + 10 * s), size: 11 * s, color: Self.accent,
                          anchor: .center, maxWidth: avatarRect.width + margin))
        let textX = avatarRect.maxX + 16 * s
        let room = width - textX - margin
        if let profile {
            list.append(.text(profile.nickname, point: (textX, avatarRect.y + 14 * s), size: 20 * s, color: .white, anchor: .centerLeft, maxWidth: room))
            list.append(.text("@\(profile.name) · \(profile.uploads) 个作品 videos", point: (textX, avatarRect.y + 40 * s), size: 13 * s,
                              color: UIColor.white.withAlpha(0.6), anchor: .centerLeft, maxWidth: room))
            list.append(.text(profile.bio.isEmpty ? "还没有简介 No bio yet" : profile.bio, point: (textX, avatarRect.y + 62 * s), size: 14 * s,
                              color: UIColor.white.withAlpha(profile.bio.isEmpty ? 0.4 : 0.85), anchor: .centerLeft, maxWidth: room))
        } else {
            list.append(.text(signedInName.map { "@\($0)" } ?? "", point: (textX, avatarRect.y + 20 * s), size: 18 * s, color: .white,
                              anchor: .centerLeft, maxWidth: room))
        }
        if !profileStatus.isEmpty {
            list.append(.text(profileStatus, point: (textX, avatarRect.maxY + 2 * s), size: 12 * s, color: UIColor.white.withAlpha(0.6),
                              anchor: .centerLeft, maxWidth: room))
        }
        list += button("编辑资料 Edit", rect: editRect, enabled: profile != nil, primary: false)
        list += button("退出登录 Sign out", rect: signOutRect, enabled: true, primary: false)
        list.append(.text("我的作品 My videos", point: (margin, gridTop - 18 * s), size: 15 * s, color: .white, anchor: .centerLeft, maxWidth: nil))
        for (i, tile) in tiles.enumerated() {
            let r = tileRect(i)
            guard r.maxY > gridTop, r.y < contentHeight else { continue }
            list.append(.fill(r, UIColor(r: 0.18, g: 0.18, b: 0.2), radius: 0))
            if let image = tile.thumbnail {
                list.append(.picture(source: .image(key: "tile:" + tile.item.id, image), rect: r.aspectFit(contentWidth: image.width, contentHeight: image.height)))
            }
            list.append(.fill(UIRect(x: r.x, y: r.maxY - 28 * s, width: r.width, height: 28 * s), UIColor.black.withAlpha(0.45), radius: 0))
            list.append(.text(tile.item.title, point: (r.x + 6 * s, r.maxY - 14 * s), size: 12 * s, color: .white, anchor: .centerLeft,
                              maxWidth: r.width - 12 * s))
        }
        if tiles.isEmpty {
            list.append(.text("还没有作品，去上传一个 No videos yet — upload one", point: (width / 2, gridTop + 40 * s), size: 13 * s,
                              color: UIColor.white.withAlpha(0.5), anchor: .center, maxWidth: width - 2 * margin))
        }
        // The header stays over a scrolled grid.
        return list
    }

    /// The avatar's picture in `rect` (square, cropped when it arrived), else the initial on a disc.
    private func avatarPicture(in rect: UIRect) -> [DrawCommand] {
        if let avatar {
            return [.picture(source: .image(key: "avatar:\(avatarSource ?? "")", avatar),
                             rect: rect.aspectFit(contentWidth: avatar.width, contentHeight: avatar.height))]
        }
        let initial = String((profile?.nickname ?? signedInName ?? "?").prefix(1)).uppercased()
        return [.fill(rect, Self.accent.withAlpha(0.8), radius: rect.width / 2),
                .text(initial, point: (rect.midX, rect.midY), size: rect.height * 0.42, color: .white, anchor: .center, maxWidth: nil)]
    }

    private func avatarPage(_ measure: (String, Double) -> Double) -> [DrawCommand] {
        guard let form = avatarForm else { return [] }
        var list = header("更换头像 Change avatar")
        list += avatarPicture(in: avatarPreviewRect)
        list += field(0, label: form.inputs.fields[0].label, shown: form.display(), placeholder: form.inputs.fields[0].placeholder,
                      focused: !form.isSending, problem: nil, measure: measure)
        list += button(form.isSending ? "发送中… Sending" : "设为头像 Set as avatar", rect: submitRect, enabled: !form.isSending)
        list += button("取消 Cancel", rect: cancelEditRect, enabled: !form.isSending, primary: false)
        let y = cancelEditRect.maxY + 20 * scale
        if let error = form.error {
            list += paragraph("头像未更换 Not changed: \(error)", y: y, size: 13 * scale, color: Self.error, measure: measure)
        } else if !form.isSending {
            list += paragraph("PNG、JPEG 或 WebP 图片 A PNG, JPEG or WebP picture", y: y, size: 13 * scale,
                              color: UIColor.white.withAlpha(0.6), measure: measure)
        }
        return list
    }

    private func editPage(_ measure: (String, Double) -> Double) -> [DrawCommand] {
        guard let form = profileForm else { return [] }
        var list = header("编辑资料 Edit profile")
        for i in 0..<2 {
            list += field(i, label: form.inputs.fields[i].label, shown: form.inputs.display(i), placeholder: "",
                          focused: i == form.inputs.focus, problem: i == 0 ? form.error : nil, measure: measure)
        }
        list += button(form.isSaving ? "保存中… Saving" : "保存 Save", rect: submitRect, enabled: !form.isSaving)
        list += button("取消 Cancel", rect: cancelEditRect, enabled: true, primary: false)
        return list
    }

    private func tabBar() -> [DrawCommand] {
        let s = scale
        let bar = UIRect(x: 0, y: contentHeight, width: width, height: tabBarHeight)
        var list: [DrawCommand] = [.fill(bar, UIColor(r: 0.04, g: 0.04, b: 0.05), radius: 0),
                                   .fill(UIRect(x: 0, y: bar.y, width: width, height: max(1, s)), UIColor.white.withAlpha(0.12), radius: 0)]
        for tab in AppTab.allCases {
            let r = tabRect(tab)
            let selected = tab == navigation.tab
            if tab == .upload {
                let plus = UIRect(x: r.midX - 22 * s, y: r.midY - 15 * s, width: 44 * s, height: 30 * s)
                list.append(.fill(plus, selected ? Self.accent : UIColor.white.withAlpha(0.9), radius: 8 * s))
                list.append(.text("+", point: (plus.midX, plus.midY - 1 * s), size: 22 * s, color: selected ? .white : .black,
                                  anchor: .center, maxWidth: nil))
                continue
            }
            list.append(.text(tab.title, point: (r.midX, r.midY), size: (selected ? 17 : 16) * s,
                              color: UIColor.white.withAlpha(selected ? 1 : 0.55), anchor: .center, maxWidth: r.width))
            if selected {
                list.append(.fill(UIRect(x: r.midX - 12 * s, y: r.maxY - 10 * s, width: 24 * s, height: 3 * s), .white, radius: 1.5 * s))
            }
        }
        return list
    }
}
