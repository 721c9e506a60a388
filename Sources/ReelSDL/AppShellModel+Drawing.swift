import ReelCore
import ReelFeed

extension AppShellModel {
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

    func header(_ title: String) -> [DrawCommand] {
        var list: [DrawCommand] = [.text(title, point: (width / 2, 34 * scale), size: 20 * scale, color: .white, anchor: .center, maxWidth: width - 32 * scale)]
        if let notice, !notice.isEmpty {
            let box = UIRect(x: margin, y: 60 * scale, width: width - 2 * margin, height: 32 * scale)
            list.append(.fill(box, UIColor.white.withAlpha(0.1), radius: 8 * scale))
            list.append(.text(notice, point: (box.midX, box.midY), size: 13 * scale, color: UIColor.white.withAlpha(0.85), anchor: .center,
                              maxWidth: box.width - 16 * scale))
        }
        return list
    }

    func field(_ i: Int, label: String, shown: String, placeholder: String, focused: Bool, problem: String?,
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
    func paragraph(_ text: String, y: Double, size: Double, color: UIColor, measure: (String, Double) -> Double) -> [DrawCommand] {
        let width = self.width - 2 * margin
        return Self.wrap(text, size: size, width: width, measure: measure).enumerated().map { i, line in
            .text(line, point: (self.width / 2, y + Double(i) * size * 1.4), size: size, color: color, anchor: .center, maxWidth: width)
        }
    }

    func button(_ title: String, rect: UIRect, enabled: Bool, primary: Bool = true) -> [DrawCommand] {
        let fill = primary ? (enabled ? Self.accent : Self.accent.withAlpha(0.35)) : UIColor.white.withAlpha(enabled ? 0.14 : 0.06)
        return [.fill(rect, fill, radius: rect.height / 2),
                .text(title, point: (rect.midX, rect.midY), size: 16 * scale, color: UIColor.white.withAlpha(enabled ? 1 : 0.6),
                      anchor: .center, maxWidth: rect.width - 16 * scale)]
    }

    func authPage(_ measure: (String, Double) -> Double) -> [DrawCommand] {
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

    func uploadPage(_ measure: (String, Double) -> Double) -> [DrawCommand] {
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

    func profilePage() -> [DrawCommand] {
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
    func avatarPicture(in rect: UIRect) -> [DrawCommand] {
        if let avatar {
            return [.picture(source: .image(key: "avatar:\(avatarSource ?? "")", avatar),
                             rect: rect.aspectFit(contentWidth: avatar.width, contentHeight: avatar.height))]
        }
        let initial = String((profile?.nickname ?? signedInName ?? "?").prefix(1)).uppercased()
        return [.fill(rect, Self.accent.withAlpha(0.8), radius: rect.width / 2),
                .text(initial, point: (rect.midX, rect.midY), size: rect.height * 0.42, color: .white, anchor: .center, maxWidth: nil)]
    }

    func avatarPage(_ measure: (String, Double) -> Double) -> [DrawCommand] {
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

    func editPage(_ measure: (String, Double) -> Double) -> [DrawCommand] {
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

    func tabBar() -> [DrawCommand] {
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
