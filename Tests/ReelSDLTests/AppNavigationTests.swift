import Testing
import ReelAccountClient
import ReelCore
import ReelFeed
import Foundation
@testable import ReelSDL

@Suite struct AppNavigationTests {
    @Test func signedOutTabsThatNeedSignInShowTheFormAndGoThereAfterwards() {
        var nav = AppNavigation(isSignedIn: false)
        #expect(nav.tab == .home && nav.showsFeed)
        nav.select(.upload)
        #expect(nav.authPage == .signIn)
        #expect(nav.tab == .me)
        #expect(nav.returnPlace == .upload)
        #expect(!nav.showsFeed)
        nav.didSignIn()
        #expect(nav.place == .upload && nav.authPage == nil && nav.tab == .upload)
        #expect(nav.isSignedIn)
    }

    @Test func aUnauthorizedAnswerSendsToSignInAndBackToTheSamePlace() {
        var nav = AppNavigation(isSignedIn: true)
        nav.select(.me)
        nav.open(.myVideos(index: 3))
        nav.unauthorized()
        #expect(nav.authPage == .signIn && !nav.isSignedIn)
        // A second 401 while the form is up keeps the first place.
        nav.select(.upload)
        nav.unauthorized()
        #expect(nav.returnPlace == .upload)
        var again = AppNavigation(isSignedIn: true)
        again.open(.myVideos(index: 3))
        again.unauthorized()
        again.unauthorized()
        #expect(again.returnPlace == .myVideos(index: 3))
        again.showAuth(.signUp)
        again.didSignIn()
        #expect(again.place == .myVideos(index: 3))
        #expect(again.tab == .me)
    }

    @Test func aUnauthorizedFeedReturnsToTheFeed() {
        var nav = AppNavigation(isSignedIn: true)
        nav.unauthorized()
        #expect(!nav.showsFeed)
        nav.didSignIn()
        #expect(nav.place == .feed && nav.showsFeed)
    }

    @Test func signingOutShowsTheFormWithNowhereToReturn() {
        var nav = AppNavigation(isSignedIn: true)
        nav.select(.me)
        nav.didSignOut()
        #expect(nav.authPage == .signIn && nav.returnPlace == nil && !nav.isSignedIn)
        nav.didSignIn()
        #expect(nav.place == .profile)
    }

    @Test func cancellingSignInGoesHome() {
        var nav = AppNavigation(isSignedIn: false)
        nav.select(.me)
        nav.cancelSignIn()
        #expect(nav.showsFeed && nav.authPage == nil)
        nav.select(.home)
        #expect(nav.showsFeed)
    }
}

@Suite struct AccountFormTests {
    static func type(_ form: inout AccountForm, _ field: AccountForm.Field, _ text: String) {
        form.focus(field)
        form.insert(text)
    }

    @Test func signUpValidatesByTheServersRules() {
        var form = AccountForm(mode: .signUp)
        #expect(form.fields == [.name, .email, .password])
        #expect(form.submit() == nil)
        // After a try every field says what is wrong.
        #expect(form.shownProblem(.name) != nil && form.shownProblem(.email) != nil && form.shownProblem(.password) != nil)
        Self.type(&form, .name, "a!")
        Self.type(&form, .email, "ada@example")
        Self.type(&form, .password, "short")
        #expect(form.problem(.name) != nil)
        #expect(form.problem(.email) != nil)
        #expect(form.problem(.password)?.contains("8") == true)
        form.focus(.name); while !form.text(.name).isEmpty { form.backspace() }
        form.insert("ada")
        form.focus(.email); form.insert(".org")
        form.focus(.password); form.insert("-enough")
        #expect(form.isValid)
        #expect(AccountRules.validEmail(form.text(.email)))
        #expect(form.submit() == .signUp(name: "ada", email: "ada@example.org", password: "short-enough"))
    }

    @Test func errorsShowOnlyOnceAFieldWasLeft() {
        var form = AccountForm(mode: .signIn)
        form.insert("ada")
        #expect(form.shownProblem(.password) == nil)
        form.focusNext()
        form.focusNext()
        #expect(form.shownProblem(.password) != nil)
        #expect(form.shownProblem(.name) == nil)
    }

    @Test func aSubmissionCannotStartTwiceAndTheServersErrorShows() {
        var form = AccountForm(mode: .signIn)
        Self.type(&form, .name, "ada")
        Self.type(&form, .password, "analytical")
        #expect(form.submit() == .signIn(name: "ada", password: "analytical"))
        #expect(form.isSubmitting && !form.canSubmit)
        #expect(form.submit() == nil)
        // Typing is ignored while in flight.
        form.insert("x")
        #expect(form.text(.password) == "analytical")
        form.finish(error: "wrong name or password")
        #expect(form.serverError == "wrong name or password")
        #expect(form.submit() != nil)
        form.finish(error: nil)
        #expect(form.serverError == nil && form.text(.password).isEmpty)
    }

    @Test func thePasswordIsHiddenUnlessShownAndCompositionFollowsTheText() {
        var form = AccountForm(mode: .signIn)
        Self.type(&form, .password, "secret12")
        #expect(form.display(.password) == "••••••••")
        form.toggleShowsPassword()
        #expect(form.display(.password) == "secret12")
        form.focus(.name)
        form.insert("王")
        form.compose("xiao")
        #expect(form.display(.name) == "王xiao")
        #expect(form.text(.name) == "王")
        // Backspace during a composition belongs to the IME.
        form.backspace()
        #expect(form.text(.name) == "王")
        form.insert("小")
        #expect(form.display(.name) == "王小")
    }

    @Test func switchingModeKeepsWhatWasTyped() {
        var form = AccountForm(mode: .signIn)
        Self.type(&form, .name, "ada")
        form.setMode(.signUp)
        #expect(form.text(.name) == "ada" && form.text(.email).isEmpty)
    }

    @Test func uploadFormTakesADropAndRefusesTwice() {
        var form = UploadForm()
        #expect(form.submit() == nil)
        form.drop(path: "/tmp/clips/harbour at dawn.mp4")
        #expect(form.text(.title) == "harbour at dawn")
        form.focus(.category)
        form.insert("travel/..")
        #expect(form.problem(.category) != nil)
        for _ in 0..<3 { form.backspace() }
        let job = form.submit()
        #expect(job?.path == "/tmp/clips/harbour at dawn.mp4" && job?.category == "travel")
        #expect(form.submit() == nil)
        form.progress(sent: 50, total: 100)
        #expect(form.fraction == 0.5)
        form.finish(.failure(UploadRefusal("not a playable video")))
        #expect(form.status == .failed("not a playable video"))
        #expect(form.submit() != nil)
        form.finish(.success(UploadedItem(id: "u/1", title: "harbour at dawn", category: "travel", videoURL: "/x", uploader: "ada")))
        #expect(form.status == .done(title: "harbour at dawn", category: "travel"))
        #expect(form.text(.path).isEmpty)
    }
}

@Suite struct AppShellModelTests {
    static func measure(_ text: String, _ size: Double) -> Double { Double(text.count) * size * 0.6 }

    @Test func theTabBarIsClickableAndF1To3Work() {
        var shell = AppShellModel(width: 540, height: 960, signedInName: "ada")
        let me = shell.tabRect(.me)
        _ = shell.handle(.pointerDown(x: me.midX, y: me.midY))
        let commands = shell.handle(.pointerUp(x: me.midX, y: me.midY))
        #expect(commands.contains(.feedVisible(false)) && commands.contains(.loadProfile))
        #expect(shell.navigation.tab == .me && !shell.showsFeed)
        #expect(shell.handle(.keyDown(.f1, shift: false)).contains(.feedVisible(true)))
        #expect(shell.showsFeed)
        _ = shell.handle(.keyDown(.f2, shift: false))
        #expect(shell.navigation.place == .upload)
        #expect(shell.textInputRect == shell.fieldRect(0))
    }

    @Test func signingInByKeyboardThenTheReturnPlace() {
        var shell = AppShellModel(width: 540, height: 960, signedInName: nil)
        _ = shell.handle(.keyDown(.f2, shift: false))
        #expect(shell.navigation.authPage == .signIn)
        _ = shell.handle(.text("ada"))
        _ = shell.handle(.keyDown(.tab, shift: false))
        _ = shell.handle(.text("analytical"))
        let sent = shell.handle(.keyDown(.enter, shift: false))
        #expect(sent == [.signIn(name: "ada", password: "analytical")])
        #expect(shell.handle(.keyDown(.enter, shift: false)).isEmpty)
        let list = shell.drawList(measure: Self.measure)
        #expect(list.contains { if case .text(let t, _, _, _, _, _) = $0 { t.contains("登录中") } else { false } })
        _ = shell.signInFinished(.success(AccountProfile(id: 1, name: "ada", nickname: "Ada", bio: "", avatarURL: nil, email: nil, uploads: 0)))
        #expect(shell.navigation.place == .upload && shell.signedInName == "ada")
    }

    @Test func aUnauthorizedOnTheFeedHidesItAndSignInShowsItAgain() {
        var shell = AppShellModel(width: 540, height: 960, signedInName: "ada")
        #expect(shell.unauthorized(reason: "token_expired") == [.feedVisible(false)])
        #expect(shell.notice?.contains("expired") == true)
        let back = shell.signInFinished(.success(AccountProfile(id: 1, name: "ada", nickname: "Ada", bio: "", avatarURL: nil, email: nil, uploads: 0)))
        #expect(back == [.feedVisible(true)])
        #expect(shell.showsFeed)
    }

    @Test func aDroppedFileOpensTheUploadPage() {
        var shell = AppShellModel(width: 540, height: 960, signedInName: "ada")
        _ = shell.handle(.drop(path: "/tmp/a.mp4"))
        #expect(shell.navigation.place == .upload)
        #expect(shell.upload.text(.path) == "/tmp/a.mp4" && shell.upload.text(.title) == "a")
    }

    @Test func aTileOpensMyVideosAndEscapeComesBack() {
        var shell = AppShellModel(width: 540, height: 960, signedInName: "ada")
        _ = shell.select(.me)
        shell.myVideosLoaded([.init(id: "u/1", title: "one", uploader: "ada", videoURL: nil)])
        let tile = shell.tileRect(0)
        _ = shell.handle(.pointerDown(x: tile.midX, y: tile.midY))
        #expect(shell.handle(.pointerUp(x: tile.midX, y: tile.midY)) == [.playMyVideos(index: 0), .feedVisible(true)])
        #expect(shell.showsFeed && shell.navigation.tab == .me)
        #expect(shell.closeMyVideos() == [.closeMyVideos, .feedVisible(false)])
        #expect(shell.navigation.place == .profile)
    }
}

@Suite struct AvatarChangeTests {
    static let ada = AccountProfile(id: 1, name: "ada", nickname: "Ada", bio: "", avatarURL: nil, email: nil, uploads: 0)

    static func onProfile() -> AppShellModel {
        var shell = AppShellModel(width: 540, height: 960, signedInName: "ada")
        _ = shell.select(.me)
        shell.profileLoaded(ada)
        return shell
    }

    @Test func aPictureDroppedOnTheProfileIsSentAsTheAvatarAndAVideoIsAnUpload() {
        var shell = Self.onProfile()
        #expect(shell.handle(.drop(path: "/tmp/face.png")) == [.changeAvatar(path: "/tmp/face.png")])
        #expect(shell.avatarForm?.isSending == true && shell.navigation.place == .profile)
        // A second picture while one is on its way sends nothing.
        #expect(shell.handle(.drop(path: "/tmp/other.jpg")).isEmpty)
        #expect(shell.avatarForm?.path == "/tmp/face.png")

        var video = Self.onProfile()
        _ = video.handle(.drop(path: "/tmp/harbour.MP4"))
        #expect(video.navigation.place == .upload && video.avatarForm == nil)
        #expect(video.upload.text(.path) == "/tmp/harbour.MP4")
        // Off the profile, a picture is an upload like any file (the server answers for it).
        var home = AppShellModel(width: 540, height: 960, signedInName: "ada")
        _ = home.handle(.drop(path: "/tmp/face.png"))
        #expect(home.navigation.place == .upload && home.avatarForm == nil)
    }

    @Test func aRefusalKeepsThePathAndTheOldAvatarAndSuccessClosesThePage() {
        var shell = Self.onProfile()
        _ = shell.handle(.drop(path: "/tmp/notes.png"))
        shell.avatarChanged(.failure(UploadRefusal("the avatar must be a PNG, JPEG or WebP picture")))
        #expect(shell.avatarForm?.error == "the avatar must be a PNG, JPEG or WebP picture")
        #expect(shell.avatarForm?.path == "/tmp/notes.png" && shell.avatarForm?.isSending == false)
        #expect(shell.profile == Self.ada)
        let list = shell.drawList(measure: AppShellModelTests.measure)
        #expect(list.contains { if case .text(let t, _, _, _, _, _) = $0 { t.contains("Not changed") } else { false } })
        // Fix the path by typing; Enter sends it.
        for _ in 0..<"notes.png".count { _ = shell.handle(.keyDown(.backspace, shift: false)) }
        _ = shell.handle(.text("face.jpg"))
        #expect(shell.handle(.keyDown(.enter, shift: false)) == [.changeAvatar(path: "/tmp/face.jpg")])
        // Escape does not leave while it is on its way.
        _ = shell.handle(.keyDown(.escape, shift: false))
        #expect(shell.avatarForm != nil)
        var changed = Self.ada
        changed.avatarURL = "/_uploads/avatars/1-x.jpg"
        shell.avatarChanged(.success(changed))
        #expect(shell.avatarForm == nil && shell.profile?.avatarURL == "/_uploads/avatars/1-x.jpg")
    }

    @Test func clickingTheAvatarOpensThePageAndAnEmptyPathIsRefusedInline() {
        var shell = Self.onProfile()
        let avatar = shell.avatarRect
        _ = shell.handle(.pointerDown(x: avatar.midX, y: avatar.midY))
        #expect(shell.handle(.pointerUp(x: avatar.midX, y: avatar.midY)).isEmpty)
        #expect(shell.avatarForm != nil && shell.textInputRect == shell.fieldRect(0))
        let save = shell.submitRect
        _ = shell.handle(.pointerDown(x: save.midX, y: save.midY))
        #expect(shell.handle(.pointerUp(x: save.midX, y: save.midY)).isEmpty)
        #expect(shell.avatarForm?.error != nil)
        _ = shell.handle(.text("~/face.webp"))
        _ = shell.handle(.pointerDown(x: save.midX, y: save.midY))
        #expect(shell.handle(.pointerUp(x: save.midX, y: save.midY)) == [.changeAvatar(path: "~/face.webp")])
        // A 401 meanwhile: the form stops waiting and keeps the path; signing out closes it.
        _ = shell.unauthorized(reason: "token_expired")
        #expect(shell.avatarForm?.isSending == false && shell.avatarForm?.path == "~/face.webp")
        _ = shell.signedOut()
        #expect(shell.avatarForm == nil)
    }

    @Test func anEmptyNicknameIsRefusedInlineOnTheEditor() {
        var shell = Self.onProfile()
        let edit = shell.editRect
        _ = shell.handle(.pointerDown(x: edit.midX, y: edit.midY))
        _ = shell.handle(.pointerUp(x: edit.midX, y: edit.midY))
        for _ in 0..<3 { _ = shell.handle(.keyDown(.backspace, shift: false)) }
        #expect(shell.handle(.keyDown(.enter, shift: false)).isEmpty)
        #expect(shell.profileForm?.error != nil && shell.profileForm?.isSaving == false)
    }

    @Test func theAvatarIsCroppedToItsCentredSquare() {
        var bytes: [UInt8] = []
        for _ in 0..<2 { for x in 0..<4 { bytes += x == 0 || x == 3 ? [255, 0, 0] : [0, 0, 255] } }
        let square = RGBImage(width: 4, height: 2, bytes: bytes).centredSquare()
        #expect(square.width == 2 && square.height == 2)
        #expect(square.bytes == [UInt8](repeating: 0, count: 12).enumerated().map { $0.offset % 3 == 2 ? 255 : 0 })
        let tall = RGBImage(width: 1, height: 3, fill: (1, 2, 3)).centredSquare()
        #expect(tall.width == 1 && tall.height == 1 && tall.bytes == [1, 2, 3])
    }
}

@Suite struct TextWrapTests {
    static func measure(_ text: String, _ size: Double) -> Double { Double(text.count) * 10 }

    @Test func wrapsAtSpacesElseBetweenCharactersAndCutsTheLast() {
        #expect(AppShellModel.wrap("short", size: 10, width: 100, measure: Self.measure) == ["short"])
        #expect(AppShellModel.wrap("the file is not playable", size: 10, width: 100, measure: Self.measure)
                == ["the file", "is not", "playable"])
        #expect(AppShellModel.wrap("上传失败文件不是可以播放的视频", size: 10, width: 50, maxLines: 2, measure: Self.measure)
                == ["上传失败文", "件不是可以播放的视频"])
    }
}

/// The "me" page as a value: the session's outcomes come in as events and the page shows them.
@Suite struct ProfilePageTests {
    static let ada = AccountProfile(id: 1, name: "ada", nickname: "Ada", bio: "", avatarURL: nil, email: nil, uploads: 2)
    static let cover = URL(string: "http://h/covers/1.jpg")!
    static let video = URL(string: "http://h/videos/2.mp4")!
    static let items = [FeedItem(id: "u/1", title: "one", coverURL: cover), FeedItem(id: "u/2", title: "two", videoURL: video)]

    @Test func itSaysLoadingUntilTheProfileComesAndWhyWhenItFails() {
        var page = ProfilePage()
        page.opened()
        #expect(page.status == "加载中… Loading")
        page.profileLoaded(Self.ada)
        #expect(page.status.isEmpty && page.profile?.nickname == "Ada")
        page.opened()
        #expect(page.status.isEmpty)
        page.profileFailed("offline")
        #expect(page.status == "offline" && page.profile == Self.ada)
        // A profile that changed by another answer (saved, a new avatar) leaves the line as it was.
        page.profileLoaded(Self.ada, clearsStatus: false)
        #expect(page.status == "offline")
    }

    @Test func tilesWaitForTheirThumbnailsAndShowThemOnceDecoded() {
        var page = ProfilePage()
        page.myVideosLoaded(Self.items)
        #expect(page.tiles.map(\.item.title) == ["one", "two"])
        #expect(page.thumbnailsWanted == [Self.cover, Self.video])
        page.thumbnailDecoded(RGBImage(width: 2, height: 2), for: Self.video)
        #expect(page.tiles[1].thumbnail != nil && page.tiles[0].thumbnail == nil)
        #expect(page.thumbnailsWanted == [Self.cover])
    }

    @Test func theGridScrollsWithinItsRows() {
        var page = ProfilePage()
        page.myVideosLoaded(Array(repeating: Self.items[0], count: 7))
        page.scrollGrid(by: 500, rowHeight: 100, visible: 150)
        #expect(page.gridScroll == 150)
        page.scrollGrid(by: -1_000, rowHeight: 100, visible: 150)
        #expect(page.gridScroll == 0)
    }

    /// Through the shell: a 401 forgets the user but keeps the grid; signing out clears it.
    @Test func theShellRoutesSignOutAndUnauthorizedToThePage() {
        var shell = AppShellModel(width: 540, height: 960, signedInName: "ada")
        _ = shell.select(.me)
        #expect(shell.profileStatus == "加载中… Loading")
        shell.profileLoaded(Self.ada)
        shell.myVideosLoaded(Self.items)
        shell.showAvatar(RGBImage(width: 4, height: 4), from: "a.png")
        #expect(shell.avatarSource == "a.png")
        _ = shell.unauthorized(reason: "token_expired")
        #expect(shell.profile == nil && shell.avatar == nil && shell.tiles.count == 2)
        _ = shell.signInFinished(.success(Self.ada))
        #expect(shell.profile == Self.ada)
        _ = shell.signedOut()
        #expect(shell.profile == nil && shell.tiles.isEmpty)
    }
}
