import Foundation
import Testing
import ReelCore
import ReelFeed
import ReelLoading
import ReelMedia
import ReelTestSupport
@testable import ReelSDL

extension XvfbWindowSuites {
    /// The feed window under Xvfb on a directory feed of solid-colour clips: swipes by drag,
    /// wheel and keys, category tabs, and search with a Chinese query, asserting on the feed's
    /// state and on the pixels shown.
    @Suite struct FeedWindowTests {
        static let red = (220, 40, 40), green = (40, 200, 60), blue = (40, 60, 220), yellow = (230, 210, 40)

        /// 推荐: 红色, 绿色, 蓝色; 音乐: 黄色.
        static func makeFeedDirectory() throws -> URL {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("reel-feed-window-\(getpid())-\(UUID().uuidString.prefix(6))")
            let clips: [(String, String, (Int, Int, Int))] = [
                ("推荐", "1_红色.mp4", red), ("推荐", "2_绿色.mp4", green), ("推荐", "3_蓝色.mp4", blue), ("音乐", "黄色.mp4", yellow),
            ]
            for (category, name, rgb) in clips {
                let folder = root.appendingPathComponent(category)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let spec = WindowTests.solid(rgb, width: 180, height: 320, duration: 3)
                try FileManager.default.copyItem(at: try Fixtures.clip(spec), to: folder.appendingPathComponent(name))
            }
            return root
        }

        /// Runs `body` on the pool and blocks this (the window's) thread until it is done.
        static func blocking(_ body: @escaping @Sendable () async throws -> Void) throws {
            try WindowThread.blocking(body)
        }

        final class Fixture {
            let window: FeedWindow
            let clock: ManualClock
            let browser: FeedBrowser
            let directory: URL
            init(window: FeedWindow, clock: ManualClock, browser: FeedBrowser, directory: URL) {
                self.window = window
                self.clock = clock
                self.browser = browser
                self.directory = directory
            }
            deinit {
                browser.close()
                try? FileManager.default.removeItem(at: directory)
            }

            func pump(_ times: Int = 1) { for _ in 0..<times { window.pump() } }
            /// Lets an animation finish.
            func settle() {
                clock.advance(by: MediaTime(value: 400, timescale: 1000))
                window.pump()
            }
            func waitUntil(_ condition: () -> Bool) throws {
                let deadline = Date().addingTimeInterval(10)
                while !condition() {
                    if Date() > deadline { throw WindowTests.WaitTimeout() }
                    window.pump(waitMs: 10)
                }
            }
            func colour(atX fx: Double, y fy: Double) -> (Int, Int, Int) {
                let image = window.snapshot()
                return WindowTests.pixel(image, Int(Double(image.width) * fx), Int(Double(image.height) * fy))
            }
            /// Waits until the picture at (0.25, 0.4) has `rgb`.
            func waitForColour(_ rgb: (Int, Int, Int)) throws {
                var last = (0, 0, 0)
                do {
                    try waitUntil {
                        last = colour(atX: 0.25, y: 0.4)
                        return WindowTests.near(last, rgb, 12)
                    }
                } catch {
                    Issue.record("waited for \(rgb), the window shows \(last)")
                    throw error
                }
            }
        }

        static func open(renderer: RendererKind = .gl) throws -> Fixture {
            #expect(XvfbDisplay.display != nil)
            let directory = try makeFeedDirectory()
            let source = try DirectoryFeedSource(directory: directory)
            let loader = FileLoader()
            let browser = FeedBrowser(source: source) { category in
                FeedSession(source: source, category: category, loader: loader)
            }
            try blocking { try await browser.start() }
            let clock = ManualClock(now: MediaTime(value: 100, timescale: 1))
            let window = try FeedWindow(browser: browser, search: SearchModel(source: source), loader: loader,
                                        makeResultsSession: { FeedSession(source: $0, loader: loader) },
                                        options: .init(renderer: renderer, allowFallback: false, width: 270, height: 480),
                                        uiClock: clock)
            SDLEventInjector.parkPointer()
            let fixture = Fixture(window: window, clock: clock, browser: browser, directory: directory)
            try fixture.waitForColour(red)
            return fixture
        }

        @Test(arguments: RendererKind.allCases)
        func draggingUpSlidesTheNextPageInAndLandsOnIt(renderer: RendererKind) async throws {
            try await WindowThread.run {
                let f = try Self.open(renderer: renderer)
                #expect(f.window.model.tabTitles == ["推荐", "音乐"])
                SDLEventInjector.mouseDown(x: 135, y: 400)
                f.pump()
                for y in stride(from: 380, through: 160, by: -20) {
                    SDLEventInjector.mouseMove(x: 135, y: y)
                }
                f.pump()
                // Mid-drag: the current page moved up by 240 px, the next one follows below it.
                #expect(WindowTests.near(f.colour(atX: 0.25, y: 0.3), Self.red, 12))
                #expect(WindowTests.near(f.colour(atX: 0.25, y: 0.8), Self.green, 40), "\(f.colour(atX: 0.25, y: 0.8))")
                SDLEventInjector.mouseUp(x: 135, y: 160)
                f.pump()
                #expect(f.window.session?.currentIndex == 1)
                f.settle()
                try f.waitForColour(Self.green)
                #expect(f.window.model.playback.title == "2 绿色")
            }
        }

        @Test func wheelAndKeysPage() throws {
            let f = try Self.open()
            SDLEventInjector.wheel(dy: -1)
            f.pump()
            f.settle()
            #expect(f.window.session?.currentIndex == 1)
            SDLEventInjector.keyDown(.j)
            f.pump()
            f.settle()
            #expect(f.window.session?.currentIndex == 2)
            try f.waitForColour(Self.blue)
            SDLEventInjector.keyDown(.k)
            f.pump()
            f.settle()
            #expect(f.window.session?.currentIndex == 1)
            try f.waitForColour(Self.green)
        }

        @Test func arrowKeysSwitchCategories() throws {
            let f = try Self.open()
            SDLEventInjector.keyDown(.right)
            f.pump()
            #expect(f.window.model.tabs.selectedIndex == 1)
            try f.waitUntil { f.browser.selectedIndex == 1 && f.browser.currentSession?.items.count == 1 }
            try f.waitForColour(Self.yellow)
            #expect(f.window.model.playback.title == "黄色")
            SDLEventInjector.keyDown(.left)
            f.pump()
            try f.waitForColour(Self.red)
        }

        @Test func draggingSidewaysChangesCategoryWithTheIndicatorFollowing() throws {
            let f = try Self.open()
            let before = f.window.model.tabs.indicator
            SDLEventInjector.mouseDown(x: 220, y: 300)
            f.pump()
            for x in stride(from: 200, through: 40, by: -20) { SDLEventInjector.mouseMove(x: x, y: 302) }
            f.pump()
            #expect(f.window.model.tabs.indicator.x > before.x)
            #expect(f.window.session?.currentIndex == 0)
            SDLEventInjector.mouseUp(x: 40, y: 302)
            f.pump()
            #expect(f.window.model.tabs.selectedIndex == 1)
            try f.waitForColour(Self.yellow)
        }

        @Test func theCoverShowsUntilTheFirstFrame() throws {
            #expect(XvfbDisplay.display != nil)
            let directory = try Self.makeFeedDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let magenta = (200, 60, 200)
            let cover = directory.appendingPathComponent("推荐/1_红色.png")
            try ClipEncoder.encodeImage(source: "color=c=0xC83CC8:size=180x320", width: 180, height: 320, to: cover)
            let source = try DirectoryFeedSource(directory: directory)
            // Media bytes stall until released; covers are read at once.
            let media = FakeResourceLoader(script: .init(fault: .stallAtOffset(0)))
            for name in ["1_红色.mp4", "2_绿色.mp4", "3_蓝色.mp4"] {
                let url = directory.appendingPathComponent("推荐/" + name)
                media.add(try Data(contentsOf: url), at: url)
            }
            let browser = FeedBrowser(source: source) { FeedSession(source: source, category: $0, loader: media) }
            try Self.blocking { try await browser.start() }
            var beforeRelease = (0, 0, 0), afterRelease = (0, 0, 0)
            var frameBeforeRelease = true
            do {
                let window = try FeedWindow(browser: browser, search: nil, loader: FileLoader(), makeResultsSession: nil,
                                            options: .init(renderer: .gl, allowFallback: false, width: 270, height: 480))
                func shown() -> (Int, Int, Int) {
                    let image = window.snapshot()
                    return WindowTests.pixel(image, image.width / 4, image.height * 2 / 5)
                }
                let deadline = Date().addingTimeInterval(10)
                repeat {
                    window.pump(waitMs: 10)
                    beforeRelease = shown()
                } while !WindowTests.near(beforeRelease, magenta, 12) && Date() < deadline
                frameBeforeRelease = browser.currentSession?.frame(at: 0) != nil
                media.resumeStalls()
                let second = Date().addingTimeInterval(10)
                repeat {
                    window.pump(waitMs: 10)
                    afterRelease = shown()
                } while !WindowTests.near(afterRelease, Self.red, 12) && Date() < second
            }
            // Nothing may stay stalled when the feed closes.
            media.resumeStalls()
            browser.close()
            #expect(WindowTests.near(beforeRelease, magenta, 12), "before the first frame: \(beforeRelease)")
            #expect(!frameBeforeRelease)
            #expect(WindowTests.near(afterRelease, Self.red, 12), "after: \(afterRelease)")
        }

        @Test func searchingInChineseListsResultsAndPlaysTheChosenOne() throws {
            let f = try Self.open()
            SDLEventInjector.keyDown(.slash)
            SDLEventInjector.text("/")
            f.pump()
            #expect(f.window.model.isSearching)
            SDLEventInjector.text("绿")
            SDLEventInjector.keyDown(.enter)
            f.pump()
            #expect(f.window.model.query == "绿")
            try f.waitUntil { f.window.model.resultRows.count == 1 }
            #expect(f.window.model.resultRows.first?.item.title == "2 绿色")
            let row = f.window.model.resultRect(0)
            SDLEventInjector.mouseDown(x: Int(row.midX), y: Int(row.midY))
            SDLEventInjector.mouseUp(x: Int(row.midX), y: Int(row.midY))
            f.pump()
            #expect(!f.window.model.isSearching)
            #expect(f.window.resultsSession != nil)
            #expect(f.window.model.resultsTitle == "绿")
            try f.waitForColour(Self.green)
            SDLEventInjector.keyDown(.escape)
            f.pump()
            #expect(f.window.resultsSession == nil)
            try f.waitForColour(Self.red)
        }
    }
}
