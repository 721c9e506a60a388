import ReelCore
import ReelFeed

extension AppShellModel {
    // MARK: Layout

    var margin: Double { 24 * scale }
    var fieldsTop: Double { 110 * scale }
    var fieldBlock: Double { 86 * scale }
    /// Text field `i`'s box on the page showing now.
    public func fieldRect(_ i: Int) -> UIRect {
        var top = fieldsTop
        if navigation.authPage == nil, navigation.place == .profile { top = 250 * scale }
        return UIRect(x: margin, y: top + Double(i) * fieldBlock + 22 * scale, width: width - 2 * margin, height: 42 * scale)
    }
    var fieldCount: Int {
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

    func target(x: Double, y: Double) -> Target? {
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
}
