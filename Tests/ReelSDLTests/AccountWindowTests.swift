import Foundation
import Testing
import ReelAccountClient
import ReelCore
import ReelFeed
import ReelLoading
import ReelMedia
import ReelOrigin
import ReelTestSupport
@testable import ReelSDL

extension XvfbWindowSuites {
    /// The window's account side under Xvfb against a real `reel serve` (a child process
    /// with its SQLite file in a temporary --data directory): sign up, sign in, upload by
    /// dropping a file, find the upload in its category and on the profile, sign out and be
    /// asked to sign in again, and a revoked token sending the user to sign in and back.
    @Suite struct AccountWindowTests {
        static let red = (220, 40, 40), green = (40, 200, 60)

        final class Served {
            let root: URL
            let server: Child
            let url: URL
            let reel: URL
            var config: URL { root.appendingPathComponent("config") }
            var store: TokenStore { TokenStore(directory: config.appendingPathComponent("reel")) }

            init(root: URL, server: Child, url: URL, reel: URL) {
                self.root = root
                self.server = server
                self.url = url
                self.reel = reel
            }

            deinit {
                server.kill(SIGKILL)
                try? FileManager.default.removeItem(at: root)
            }

            /// `reel serve` over one category (travel: a red clip), data and config in a scratch directory.
            static func start() throws -> Served {
                let root = FileManager.default.temporaryDirectory.appendingPathComponent("reel-account-window-\(getpid())-\(UUID().uuidString.prefix(6))")
                let travel = root.appendingPathComponent("served/travel")
                try FileManager.default.createDirectory(at: travel, withIntermediateDirectories: true)
                let spec = WindowTests.solid(AccountWindowTests.red, width: 180, height: 320, duration: 3)
                try FileManager.default.copyItem(at: try Fixtures.clip(spec), to: travel.appendingPathComponent("1_红色.mp4"))
                let reel = LockedValue<URL?>(nil)
                try WindowThread.blocking { reel.set(try await ReelBinary.locate()) }
                guard let binary = reel.value else { throw WindowTests.WaitTimeout() }
                let server = try Child(binary, ["serve", root.appendingPathComponent("served").path,
                                                "--data", root.appendingPathComponent("data").path, "--port", "0"])
                let deadline = Date().addingTimeInterval(120)
                while Date() < deadline {
                    if let line = server.standardOutput.split(separator: "\n").first, let url = URL(string: String(line)) {
                        return Served(root: root, server: server, url: url, reel: binary)
                    }
                    Thread.sleep(forTimeInterval: 0.02)
                }
                server.kill(SIGKILL)
                throw WindowTests.WaitTimeout()
            }

            var apiURL: URL { URL(string: url.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + "/api/")! }

            /// `reel ARGUMENTS` with this config home.
            func reelCommand(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
                var environment = ProcessInfo.processInfo.environment
                environment["XDG_CONFIG_HOME"] = config.path
                let result = LockedValue<(Int32, String, String)?>(nil)
                let binary = reel
                let childEnvironment = environment
                try WindowThread.blocking {
                    let r = try await runSeparately(binary, arguments, environment: childEnvironment, input: nil)
                    result.set((r.status, r.stdout, r.stderr))
                }
                guard let (status, stdout, stderr) = result.value else { throw WindowTests.WaitTimeout() }
                return (status, stdout, stderr)
            }
        }

        final class Fixture {
            let served: Served
            let window: FeedWindow
            let browser: FeedBrowser
            let accounts: AccountSession
            let http: HTTPLoader

            init(served: Served, window: FeedWindow, browser: FeedBrowser, accounts: AccountSession, http: HTTPLoader) {
                self.served = served
                self.window = window
                self.browser = browser
                self.accounts = accounts
                self.http = http
            }

            deinit {
                browser.close()
            }

            var shell: AppShellModel { window.shell! }

            /// Pumps the window until `condition` holds (a watchdog, not a bound: Argon2 on a loaded core is slow).
            func waitUntil(_ what: String, _ condition: () -> Bool) throws {
                let deadline = Date().addingTimeInterval(120)
                while !condition() {
                    if Date() > deadline {
                        Issue.record("waited for \(what)")
                        throw WindowTests.WaitTimeout()
                    }
                    window.pump(waitMs: 10)
                }
            }

            func click(_ rect: UIRect) {
                SDLEventInjector.mouseDown(x: Int(rect.midX), y: Int(rect.midY))
                SDLEventInjector.mouseUp(x: Int(rect.midX), y: Int(rect.midY))
                window.pump()
            }

            func key(_ key: SDLEventInjector.Key) {
                SDLEventInjector.keyDown(key)
                SDLEventInjector.keyUp(key)
                window.pump()
            }

            func type(_ text: String) {
                SDLEventInjector.text(text)
                window.pump()
            }

            /// With REEL_SHOTS=DIR, writes what the window shows to DIR/NAME.ppm (to look at it).
            func shot(_ name: String) {
                guard let directory = ProcessInfo.processInfo.environment["REEL_SHOTS"] else { return }
                window.pump()
                let image = window.snapshot()
                var data = Data("P6\n\(image.width) \(image.height)\n255\n".utf8)
                data.append(contentsOf: image.bytes)
                try? data.write(to: URL(fileURLWithPath: directory).appendingPathComponent(name + ".ppm"))
            }

            func colour(atX fx: Double, y fy: Double) -> (Int, Int, Int) {
                let image = window.snapshot()
                return WindowTests.pixel(image, Int(Double(image.width) * fx), Int(Double(image.height) * fy))
            }

            /// The colour at (x, y) in window points (Xvfb's scale is 1: points are pixels).
            func pixel(_ x: Double, _ y: Double) -> (Int, Int, Int) {
                WindowTests.pixel(window.snapshot(), Int(x), Int(y))
            }

            func waitForColour(_ rgb: (Int, Int, Int)) throws {
                var last = (0, 0, 0)
                do {
                    try waitUntil("the colour \(rgb)") {
                        last = colour(atX: 0.5, y: 0.35)
                        return WindowTests.near(last, rgb, 14)
                    }
                } catch {
                    Issue.record("the window shows \(last)")
                    shot("failed-waiting-for-colour")
                    throw error
                }
            }

            /// Fills the sign-in form (the name field focused) and submits with Enter.
            func signIn(_ name: String, _ password: String) {
                click(shell.fieldRect(0))
                type(name)
                key(.tab)
                type(password)
                key(.enter)
            }
        }

        static func open(_ served: Served) throws -> Fixture {
            #expect(XvfbDisplay.display != nil)
            let http = HTTPLoader()
            let source = HTTPFeedSource(baseURL: served.apiURL, loader: http)
            let browser = FeedBrowser(source: source) { FeedSession(source: source, category: $0, loader: http) }
            try WindowThread.blocking { try await browser.start() }
            let accounts = AccountSession(server: served.url, store: served.store, loader: http, timeout: .seconds(120))
            let window = try FeedWindow(browser: browser, search: SearchModel(source: source), loader: http,
                                        makeResultsSession: { FeedSession(source: $0, loader: http) },
                                        options: .init(renderer: .gl, allowFallback: true, width: 360, height: 720),
                                        accounts: accounts)
            SDLEventInjector.parkPointer()
            return Fixture(served: served, window: window, browser: browser, accounts: accounts, http: http)
        }

        /// Runs on the window thread: a synchronous test would hold a concurrency-pool thread for
        /// the whole window session (on one core, the pool's only one).
        @Test func signUpUploadFindItSignOutAndBeAskedAgain() async throws {
            try await WindowThread.run { try Self.signUpUploadFindItSignOutAndBeAskedAgainOnTheWindowThread() }
        }

        static func signUpUploadFindItSignOutAndBeAskedAgainOnTheWindowThread() throws {
            let served = try Served.start()
            let f = try Self.open(served)
            try f.waitForColour(Self.red)
            #expect(f.shell.navigation.tab == .home)
            f.shot("1-home")
            #expect(f.shell.signedInName == nil)

            // "me" while signed out: the sign-in form; switch to sign-up by its link.
            f.click(f.shell.tabRect(.me))
            #expect(f.shell.navigation.authPage == .signIn)
            f.click(f.shell.switchModeRect)
            #expect(f.shell.authForm.mode == .signUp)

            // A bad e-mail and a short password are answered inline; nothing is sent.
            f.click(f.shell.fieldRect(0))
            f.type("ada")
            f.key(.tab)
            f.type("ada@example")
            f.key(.tab)
            f.type("short")
            f.key(.enter)
            #expect(f.shell.authForm.shownProblem(.email) != nil)
            #expect(f.shell.authForm.shownProblem(.password) != nil)
            #expect(!f.shell.authForm.isSubmitting && f.accounts.pending == 0)
            f.shot("2-signup-invalid")
            // The password is drawn hidden until shown.
            #expect(f.shell.authForm.display(.password) == "•••••")
            f.click(f.shell.passwordToggleRect)
            #expect(f.shell.authForm.display(.password) == "short")

            f.click(f.shell.fieldRect(1))
            f.type(".org")
            f.click(f.shell.fieldRect(2))
            f.type(" horse battery")
            f.key(.enter)
            #expect(f.shell.authForm.isSubmitting)
            // A second Enter while the request is in flight sends nothing more.
            f.key(.enter)
            try f.waitUntil("signed in") { f.shell.signedInName == "ada" }
            #expect(f.shell.navigation.place == .profile && f.shell.navigation.authPage == nil)
            f.shot("3-profile-empty")
            // The token is kept per server with mode 0600, and the CLI sees it.
            let entry = try served.store.entry(for: served.url)
            #expect(entry?.name == "ada")
            let mode = try FileManager.default.attributesOfItem(atPath: served.store.file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            let me = try served.reelCommand(["me"])
            #expect(me.status == 0 && me.stdout.contains("ada"), "\(me)")

            // A signed-up name cannot be taken twice: the server's answer shows inline (checked
            // later through the CLI would be the same line). Upload by dropping a file.
            let greenClip = try Fixtures.clip(WindowTests.solid(Self.green, width: 180, height: 320, duration: 3))
            let dropped = served.root.appendingPathComponent("harbour.mp4")
            try FileManager.default.copyItem(at: greenClip, to: dropped)
            SDLEventInjector.dropFile(dropped.path)
            f.window.pump()
            #expect(f.shell.navigation.place == .upload)
            #expect(f.shell.upload.text(.title) == "harbour")
            f.click(f.shell.fieldRect(2))
            f.type("travel")
            f.key(.enter)
            try f.waitUntil("the upload") { if case .done = f.shell.upload.status { true } else { false } }
            #expect(f.shell.upload.status == .done(title: "harbour", category: "travel"))
            f.shot("4-uploaded")

            // A file that is not a video: the server's refusal is shown.
            let bogus = served.root.appendingPathComponent("notes.mp4")
            try Data(repeating: 0x41, count: 4096).write(to: bogus)
            SDLEventInjector.dropFile(bogus.path)
            f.window.pump()
            f.click(f.shell.fieldRect(2))
            f.type("travel")
            f.key(.enter)
            try f.waitUntil("the refusal") { if case .failed = f.shell.upload.status { true } else { false } }
            if case .failed(let message) = f.shell.upload.status {
                #expect(message.lowercased().contains("play") || message.lowercased().contains("video"), "\(message)")
            }
            f.shot("5-refused")

            // The upload is in its category's feed.
            try f.waitUntil("the category read again") { !f.window.isReloading }
            f.key(.f1)
            #expect(f.shell.showsFeed)
            try f.waitUntil("the upload in travel") { f.browser.currentSession?.items.contains { $0.title == "harbour" } == true }
            let items = f.browser.currentSession?.items ?? []
            let index = items.firstIndex { $0.title == "harbour" } ?? 0
            for _ in 0..<index { f.key(.j) }
            try f.waitForColour(Self.green)

            // And on the profile: a tile that opens into the swipe feed.
            f.key(.f3)
            try f.waitUntil("the profile's videos") { f.shell.profile?.uploads == 1 && f.shell.tiles.count == 1 }
            #expect(f.shell.tiles.first?.item.title == "harbour")
            f.shot("6-profile-videos")
            f.click(f.shell.tileRect(0))
            #expect(f.shell.showsFeed && f.shell.navigation.place == .myVideos(index: 0))
            try f.waitForColour(Self.green)
            f.key(.escape)
            #expect(f.shell.navigation.place == .profile && !f.shell.showsFeed)

            // Edit the nickname.
            f.click(f.shell.editRect)
            f.click(f.shell.fieldRect(0))
            for _ in 0..<10 { f.key(.backspace) }
            f.type("阿达")
            f.key(.enter)
            try f.waitUntil("the nickname saved") { f.shell.profile?.nickname == "阿达" && f.shell.profileForm == nil }

            // Sign out: the form again, the token gone; upload asks to sign in.
            f.click(f.shell.signOutRect)
            try f.waitUntil("signed out") { f.shell.navigation.authPage == .signIn && f.shell.signedInName == nil }
            #expect(try served.store.entry(for: served.url) == nil)
            f.key(.f2)
            #expect(f.shell.navigation.authPage == .signIn && f.shell.navigation.returnPlace == .upload)
            f.signIn("ada", "wrong password")
            try f.waitUntil("the refusal") { f.shell.authForm.serverError != nil }
            f.shot("7-signin-refused")
            #expect(f.shell.navigation.authPage == .signIn)
            f.click(f.shell.fieldRect(1))
            for _ in 0..<20 { f.key(.backspace) }
            f.type("short horse battery")
            f.key(.enter)
            try f.waitUntil("signed in again") { f.shell.signedInName == "ada" }
            #expect(f.shell.navigation.place == .upload)
        }

        /// The whole story in the window, against a real `reel serve` and its SQLite file: a new
        /// user signs up, signs in, uploads a clip and finds it in its category's feed, in the
        /// feed's search and in "my videos", changes the avatar (a bad picture refused inline, a
        /// dropped one and one chosen by path shown), signs out and is asked to sign in again.
        /// Runs on the window thread (see above).
        @Test func aNewUserFromSignUpToSignOutWithAnAvatar() async throws {
            try await WindowThread.run { try Self.aNewUserFromSignUpToSignOutWithAnAvatarOnTheWindowThread() }
        }

        static let blue = (40, 60, 220), yellow = (230, 210, 40)

        static func aNewUserFromSignUpToSignOutWithAnAvatarOnTheWindowThread() throws {
            let served = try Served.start()
            let f = try Self.open(served)
            try f.waitForColour(Self.red)

            // Sign up (which signs in), sign out, and sign in with the new account.
            f.click(f.shell.tabRect(.me))
            #expect(f.shell.navigation.authPage == .signIn)
            f.click(f.shell.switchModeRect)
            f.click(f.shell.fieldRect(0))
            f.type("eve")
            f.key(.tab)
            f.type("eve@example.org")
            f.key(.tab)
            f.type("curious-cat-42")
            f.key(.enter)
            try f.waitUntil("signed up") { f.shell.signedInName == "eve" }
            #expect(f.shell.navigation.place == .profile)
            f.click(f.shell.signOutRect)
            try f.waitUntil("signed out") { f.shell.navigation.authPage == .signIn && f.shell.signedInName == nil }
            f.signIn("eve@example.org", "curious-cat-42")
            try f.waitUntil("signed in") { f.shell.signedInName == "eve" }
            #expect(f.shell.navigation.place == .profile)
            #expect(try served.store.entry(for: served.url)?.name == "eve")

            // Upload a green clip by dropping it on the window.
            let clip = served.root.appendingPathComponent("lagoon.mp4")
            try FileManager.default.copyItem(at: try Fixtures.clip(WindowTests.solid(Self.green, width: 180, height: 320, duration: 3)), to: clip)
            f.key(.f2)
            SDLEventInjector.dropFile(clip.path)
            f.window.pump()
            #expect(f.shell.upload.text(.title) == "lagoon")
            f.click(f.shell.fieldRect(2))
            f.type("travel")
            f.key(.enter)
            try f.waitUntil("the upload") { if case .done = f.shell.upload.status { true } else { false } }
            #expect(f.shell.upload.fraction == 1)

            // In its category's feed.
            try f.waitUntil("the category read again") { !f.window.isReloading }
            f.key(.f1)
            try f.waitUntil("the upload in travel") { f.browser.currentSession?.items.contains { $0.title == "lagoon" } == true }
            let index = f.browser.currentSession?.items.firstIndex { $0.title == "lagoon" } ?? 0
            for _ in 0..<index { f.key(.j) }
            try f.waitForColour(Self.green)
            // Away from it, so the search result below is what brings it back.
            f.key(index == 0 ? .j : .k)
            try f.waitForColour(Self.red)

            // In search: the feed's search button, a query, the result played.
            f.click(f.window.model.searchButton)
            #expect(f.window.model.isSearching)
            f.type("lagoon")
            f.key(.enter)
            try f.waitUntil("the search result") { f.window.model.resultRows.contains { $0.item.title == "lagoon" } }
            #expect(f.window.model.resultRows.count == 1)
            f.click(f.window.model.resultRect(0))
            #expect(f.window.resultsSession != nil && !f.window.model.isSearching)
            try f.waitForColour(Self.green)
            f.key(.escape)
            #expect(f.window.resultsSession == nil)

            // On the profile's my videos.
            f.key(.f3)
            try f.waitUntil("my videos") { f.shell.tiles.map(\.item.title) == ["lagoon"] && f.shell.profile?.uploads == 1 }
            f.click(f.shell.tileRect(0))
            try f.waitForColour(Self.green)
            f.key(.escape)
            #expect(f.shell.navigation.place == .profile && f.shell.avatar == nil)

            // The avatar. A file that is not a picture: the server's answer shows on the avatar
            // page, the path stays and the profile keeps no avatar.
            let avatar = f.shell.avatarRect
            let bogus = served.root.appendingPathComponent("face.png")
            try Data("not a picture at all".utf8).write(to: bogus)
            SDLEventInjector.dropFile(bogus.path)
            f.window.pump()
            #expect(f.shell.avatarForm?.isSending == true)
            try f.waitUntil("the refusal") { f.shell.avatarForm?.error != nil }
            #expect(f.shell.avatarForm?.error?.contains("PNG, JPEG or WebP") == true, "\(f.shell.avatarForm?.error ?? "")")
            #expect(f.shell.avatarForm?.path == bogus.path)
            #expect(f.shell.profile?.avatarURL == nil)
            // Nothing of the refused picture is left on the server.
            #expect(try FileManager.default.contentsOfDirectory(atPath: served.root.appendingPathComponent("data/incoming").path).isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: served.root.appendingPathComponent("data/media/avatars").path).isEmpty)
            f.shot("9-avatar-refused")
            f.key(.escape)
            #expect(f.shell.avatarForm == nil)

            // A blue picture dropped on the profile (wider than tall: drawn as its centred square).
            let bluePicture = served.root.appendingPathComponent("blue.png")
            try ClipEncoder.encodeImage(source: "color=c=0x283CDC", width: 300, height: 200, to: bluePicture)
            SDLEventInjector.dropFile(bluePicture.path)
            f.window.pump()
            try f.waitUntil("the blue avatar") { f.shell.avatarForm == nil && f.shell.avatar != nil }
            let firstURL = f.shell.profile?.avatarURL
            #expect(firstURL?.hasPrefix("/_uploads/avatars/") == true)
            #expect(f.shell.avatar?.width == f.shell.avatar?.height)
            try f.waitUntil("blue in the avatar") { WindowTests.near(f.pixel(avatar.midX, avatar.y + avatar.height * 0.3), Self.blue, 16) }
            // Left and right of the square are the page, not letterbox bars of the picture.
            #expect(!WindowTests.near(f.pixel(avatar.maxX + 4, avatar.midY), Self.blue, 60))

            // A yellow JPEG chosen by path: a click on the avatar opens its page.
            let yellowPicture = served.root.appendingPathComponent("yellow.jpg")
            try ClipEncoder.encodeImage(source: "color=c=0xE6D228", width: 160, height: 160, to: yellowPicture)
            f.click(avatar)
            #expect(f.shell.avatarForm != nil)
            try f.waitUntil("the preview") { WindowTests.near(f.pixel(f.shell.avatarPreviewRect.midX, f.shell.avatarPreviewRect.midY), Self.blue, 16) }
            f.type(yellowPicture.path)
            f.key(.enter)
            try f.waitUntil("the yellow avatar") { f.shell.avatarForm == nil && f.shell.profile?.avatarURL != firstURL }
            try f.waitUntil("yellow in the avatar") { WindowTests.near(f.pixel(avatar.midX, avatar.y + avatar.height * 0.3), Self.yellow, 20) }
            f.shot("10-profile-avatar")
            // The server serves it to anyone who asks, and replaced the first one.
            let me = try served.reelCommand(["me"])
            #expect(me.status == 0 && me.stdout.contains("eve"), "\(me)")
            let avatars = try FileManager.default.contentsOfDirectory(atPath: served.root.appendingPathComponent("data/media/avatars").path)
            #expect(avatars.count == 1 && avatars.first?.hasSuffix(".jpg") == true, "\(avatars)")

            // Sign out: asked to sign in again — on "me", and for a protected action (upload).
            f.click(f.shell.signOutRect)
            try f.waitUntil("signed out") { f.shell.navigation.authPage == .signIn && f.shell.signedInName == nil }
            #expect(try served.store.entry(for: served.url) == nil)
            #expect(f.shell.avatar == nil && f.shell.profile == nil)
            f.key(.f1)
            #expect(f.shell.showsFeed)
            f.click(f.shell.tabRect(.me))
            #expect(f.shell.navigation.authPage == .signIn)
            f.key(.f1)
            SDLEventInjector.dropFile(clip.path)
            f.window.pump()
            #expect(f.shell.navigation.authPage == .signIn && f.shell.navigation.returnPlace == .upload)
            #expect(f.shell.notice != nil)
            f.shot("11-signed-out-upload")
            #expect(f.accounts.pending == 0)
        }

        /// Runs on the window thread: a synchronous test would hold a concurrency-pool thread for
        /// the whole window session (on one core, the pool's only one).
        @Test func aRevokedTokenSendsToSignInAndBackToTheSamePage() async throws {
            try await WindowThread.run { try Self.aRevokedTokenSendsToSignInAndBackToTheSamePageOnTheWindowThread() }
        }

        static func aRevokedTokenSendsToSignInAndBackToTheSamePageOnTheWindowThread() throws {
            let served = try Served.start()
            let client = AccountClient(server: served.url, timeout: .seconds(120))
            let token = LockedValue<String?>(nil)
            let store = served.store, server = served.url
            try WindowThread.blocking {
                _ = try? await client.register(RegisterRequest(name: "bea", email: "bea@example.org", password: "lovelace-1843"))
                let session = try await client.login(name: "bea", password: "lovelace-1843")
                token.set(session.token)
                try store.store(TokenStore.Entry(token: session.token, expiresAt: session.expiresAt, name: "bea"), for: server)
            }
            let f = try Self.open(served)
            #expect(f.shell.signedInName == "bea")
            f.key(.f3)
            try f.waitUntil("the profile") { f.shell.profile?.name == "bea" }
            f.key(.f1)
            // The token is revoked elsewhere (`reel logout` on another machine).
            try WindowThread.blocking { try await client.withToken(token.value).logout() }
            f.key(.f3)
            try f.waitUntil("the sign-in form") { f.shell.navigation.authPage == .signIn }
            #expect(f.shell.notice?.contains("signed out") == true, "\(f.shell.notice ?? "")")
            #expect(try served.store.entry(for: served.url) == nil)
            // Text input is on for the focused field; an IME's composition shows after the
            // text until it is committed.
            f.click(f.shell.fieldRect(0))
            f.type("b")
            SDLEventInjector.composition("ea")
            f.window.pump()
            #expect(f.shell.authForm.display(.name) == "bea")
            #expect(f.shell.authForm.text(.name) == "b")
            f.type("ea")
            #expect(f.shell.authForm.text(.name) == "bea")
            f.key(.tab)
            f.type("lovelace-1843")
            f.key(.enter)
            try f.waitUntil("signed in") { f.shell.signedInName == "bea" }
            #expect(f.shell.navigation.place == .profile)
            try f.waitUntil("the profile again") { f.shell.profile?.name == "bea" }
        }

        /// A feed API that answers 401 without a valid token (a proxy in front of `reel serve`
        /// that checks the token with it): the window opens on the sign-in form, and signing in
        /// reads the feed with the new token and shows it.
        /// Runs on the window thread: a synchronous test would hold a concurrency-pool thread for
        /// the whole window session (on one core, the pool's only one).
        @Test func aFeedThatNeedsSignInOpensOnTheFormAndPlaysAfterSigningIn() async throws {
            try await WindowThread.run { try Self.aFeedThatNeedsSignInOpensOnTheFormAndPlaysAfterSigningInOnTheWindowThread() }
        }

        static func aFeedThatNeedsSignInOpensOnTheFormAndPlaysAfterSigningInOnTheWindowThread() throws {
            let served = try Served.start()
            let client = AccountClient(server: served.url, timeout: .seconds(120))
            try WindowThread.blocking {
                _ = try await client.register(RegisterRequest(name: "cyd", email: "cyd@example.org", password: "difference-engine"))
            }
            let upstream = served.url.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            let forward = HTTPLoader()
            let gate = OriginRoute(pathPrefix: "/api", methods: ["GET"]) { request in
                let token = request.header("Authorization").map { String($0.dropFirst("Bearer ".count)) }
                guard let token, (try? await client.withToken(token).me()) != nil else {
                    return OriginResponse(status: 401, headers: [(name: "WWW-Authenticate", value: "Bearer")],
                                          body: Data(#"{"error":"token_missing","message":"sign in"}"#.utf8))
                }
                let url = URL(string: upstream + request.path + (request.query.map { "?" + $0 } ?? ""))!
                return OriginResponse(status: 200, headers: [(name: "Content-Type", value: "application/json")], body: try await forward.data(url))
            }
            let proxy = OriginServer(configuration: .init(root: served.root.appendingPathComponent("served"), routes: [gate]))
            let port = LockedValue(0)
            try WindowThread.blocking { port.set(try await proxy.start()) }
            defer { try? WindowThread.blocking { await proxy.stop(); await forward.shutdown() } }

            // The feed's loader sends whatever token the account session holds.
            let bearer = LockedValue<String?>(nil)
            var configuration = HTTPLoader.Configuration()
            configuration.bearerTokenProvider = { bearer.value }
            let http = HTTPLoader(configuration: configuration)
            let source = HTTPFeedSource(baseURL: URL(string: "http://127.0.0.1:\(port.value)/api/")!, loader: http)
            let browser = FeedBrowser(source: source) { FeedSession(source: source, category: $0, loader: http) }
            let refused = LockedValue(false)
            try WindowThread.blocking {
                do { try await browser.start() } catch FeedError.authorizationRequired { refused.set(true) }
            }
            #expect(refused.value)
            let accounts = AccountSession(server: served.url, store: served.store, loader: http, timeout: .seconds(120))
            accounts.setTokenObserver { bearer.set($0) }
            let window = try FeedWindow(browser: browser, search: nil, loader: http, makeResultsSession: nil,
                                        options: .init(renderer: .gl, allowFallback: true, width: 360, height: 720), accounts: accounts)
            window.feedNeedsSignIn()
            SDLEventInjector.parkPointer()
            let f = Fixture(served: served, window: window, browser: browser, accounts: accounts, http: http)
            try f.waitUntil("the sign-in form") { f.shell.navigation.authPage == .signIn }
            #expect(f.shell.notice?.contains("feed") == true, "\(f.shell.notice ?? "")")
            f.shot("8-feed-needs-sign-in")
            f.signIn("cyd", "difference-engine")
            try f.waitUntil("signed in") { f.shell.signedInName == "cyd" }
            #expect(f.shell.showsFeed)
            try f.waitForColour(Self.red)
            #expect(browser.currentSession?.items.first?.title == "1 红色")
        }
    }
}
