import Foundation
import ReelCore

/// The account side of ``FeedWindow``: input for the tab bar and the account pages, the
/// shell's commands to the ``AccountSession``, and the session's outcomes back into the
/// shell as events.
extension FeedWindow {
    /// Input for the tab bar and the account pages; false when it belongs to the feed.
    func handleShell(_ input: HostInput) -> Bool {
        guard var shell else { return false }
        let mapped: AppShellModel.Input?
        let onFeed = shell.showsFeed
        switch input {
        case .pointerDown(let x, let y, _):
            mapped = onFeed && y < shell.contentHeight ? nil : .pointerDown(x: x, y: y)
        case .pointerUp(let x, let y):
            mapped = onFeed && !tabBarPressed ? nil : .pointerUp(x: x, y: y)
        case .pointerMove:
            return !onFeed || tabBarPressed
        case .wheel(let dy): mapped = onFeed ? nil : .wheel(dy: dy)
        case .keyDown(let code, _):
            let key = Self.shellKey(code)
            if [.f1, .f2, .f3].contains(key) || !onFeed { mapped = .keyDown(key, shift: false) } else { mapped = nil }
        case .keyUp: return !onFeed
        case .textInput(let text): mapped = onFeed ? nil : .text(text)
        case .textEditing(let text): mapped = onFeed ? nil : .composition(text)
        case .drop(let path): mapped = .drop(path: path)
        case .quit, .wake, .resized, .pointerLeave: return false
        }
        guard let mapped else { return false }
        if case .pointerDown = mapped { tabBarPressed = onFeed }
        if case .pointerUp = mapped { tabBarPressed = false }
        let commands = shell.handle(mapped)
        self.shell = shell
        performShell(commands)
        return true
    }

    static func shellKey(_ code: Int32) -> AppShellModel.Key {
        switch code {
        case SDLEventInjector.keycode(.tab): .tab
        case SDLEventInjector.keycode(.enter): .enter
        case SDLEventInjector.keycode(.backspace): .backspace
        case SDLEventInjector.keycode(.escape): .escape
        case SDLEventInjector.keycode(.up): .up
        case SDLEventInjector.keycode(.down): .down
        case SDLEventInjector.keycode(.f1): .f1
        case SDLEventInjector.keycode(.f2): .f2
        case SDLEventInjector.keycode(.f3): .f3
        default: .other
        }
    }

    func performShell(_ commands: [AppShellModel.Command]) {
        guard let accounts else { return }
        for command in commands {
            switch command {
            case .signIn(let name, let password): accounts.signIn(name: name, password: password)
            case .signUp(let name, let email, let password): accounts.signUp(name: name, email: email, password: password)
            case .signOut: accounts.signOut()
            case .loadProfile: accounts.loadProfile()
            case .saveProfile(let nickname, let bio): accounts.saveProfile(nickname: nickname, bio: bio)
            case .changeAvatar(let path): accounts.changeAvatar(path: path)
            case .upload(let path, let title, let category): accounts.upload(path: path, title: title, category: category)
            case .feedVisible(let visible):
                if visible {
                    session?.setActive(true)
                } else {
                    session?.setActive(false)
                }
            case .playMyVideos(let index):
                guard let make = makeResultsSession, let user = shell?.profile else { break }
                browser.currentSession?.setActive(false)
                closeResults(resumeFeed: false)
                openResults(make(accounts.itemsSource(of: user.id)), at: index, failure: "作品加载失败 My videos failed")
                playingMyVideos = true
                model.resultsShown(title: "我的作品", label: "‹ 我的作品 My videos")
            case .closeMyVideos:
                closeResults(resumeFeed: false)
            case .quit:
                running = false
            }
        }
    }

    /// Takes the account requests' outcomes and the feed's 401s into the shell; keeps SDL
    /// text input on while a text field is on screen.
    func refreshAccounts() {
        guard var shell, let accounts else { return }
        var commands: [AppShellModel.Command] = []
        if events.takeSignInRequest() { accounts.feedUnauthorized() }
        for event in accounts.drain() {
            switch event {
            case .signedIn(let user):
                commands += shell.signInFinished(.success(user))
                // The feed answered 401 before: read it again, now with the token.
                if events.clearNeedsSignIn() {
                    let browser = self.browser, index = browser.selectedIndex
                    tasks.run("刷新失败 Reload failed", counted: .reload) { try await browser.reload(index) }
                }
            case .signInFailed(let message): commands += shell.signInFinished(.failure(UploadRefusal(message)))
            case .profile(let user): shell.profileLoaded(user)
            case .profileFailed(let message): shell.profileFailed(message)
            case .myVideos(let items): shell.myVideosLoaded(items)
            case .profileSaved(let result): shell.profileSaved(result)
            case .avatarChanged(let result): shell.avatarChanged(result)
            case .signedOut:
                if playingMyVideos { closeResults(resumeFeed: false) }
                commands += shell.signedOut()
            case .uploadProgress(let sent, let total): shell.uploadProgress(sent: sent, total: total)
            case .uploaded(let result):
                shell.uploadFinished(result)
                if case .success(let item) = result {
                    uploaded.append(item)
                    // The category's feed is read again so the new item is in it.
                    if let index = browser.index(ofCategory: item.category) {
                        let browser = self.browser
                        tasks.run("刷新失败 Reload failed", counted: .reload) { try await browser.reload(index) }
                    }
                }
            case .unauthorized(let reason):
                commands += shell.unauthorized(reason: reason)
            }
        }
        // Thumbnails and the avatar, decoded in the background (FFmpeg, as covers are). A new
        // avatar replaces the shown one once it is decoded; until then the old one stays.
        if let path = shell.profile?.avatarURL, let url = URL(string: path, relativeTo: accounts.server)?.absoluteURL {
            if url != avatarShown || shell.avatar == nil {
                covers.request(url, maxWidth: 240, maxHeight: 240)
                if let image = covers.image(url) {
                    shell.showAvatar(image.centredSquare(), from: url.absoluteString)
                    avatarShown = url
                }
            }
        } else if shell.avatar != nil {
            shell.showAvatar(nil, from: nil)
            avatarShown = nil
        }
        for url in shell.thumbnailsWanted {
            covers.request(url, maxWidth: 240, maxHeight: 428)
            if let image = covers.image(url) { shell.thumbnailDecoded(image, for: url) }
        }
        self.shell = shell
        performShell(commands)
        // Text input follows the focused field.
        let wanted = self.shell?.showsFeed == true ? nil : self.shell?.textInputRect
        if wanted != textInputRect {
            if let wanted { host.startTextInput(rect: wanted) } else if !model.isSearching { host.stopTextInput() }
            textInputRect = wanted
        }
    }

    /// The feed could not be read without signing in (its categories answered 401 before
    /// the window opened): the sign-in form shows, and signing in reads the feed.
    public func feedNeedsSignIn() {
        events.record(.authorizationRequired)
    }

    /// Drives the shell directly (tests and scripted demos): a tab, as a click on it would.
    public func select(_ tab: AppTab) {
        guard var shell else { return }
        let commands = shell.select(tab)
        self.shell = shell
        performShell(commands)
    }
}
