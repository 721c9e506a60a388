/// The window's bottom tab bar, as in the seed app: home (the swipe feed), upload, me.
public enum AppTab: Int, CaseIterable, Sendable, Hashable {
    case home, upload, me

    public var title: String {
        switch self {
        case .home: "首页"
        case .upload: "上传"
        case .me: "我的"
        }
    }
}

/// A place in the window a user can be sent back to.
public enum AppPlace: Sendable, Hashable {
    /// The home tab's swipe feed.
    case feed
    /// The upload form.
    case upload
    /// The signed-in user's profile ("me").
    case profile
    /// "My videos" played as a swipe feed, from item `index` (the "me" tab).
    case myVideos(index: Int)

    public var tab: AppTab {
        switch self {
        case .feed: .home
        case .upload: .upload
        case .profile, .myVideos: .me
        }
    }

    /// Whether the place needs a signed-in user.
    public var needsSignIn: Bool { self != .feed }
}

/// Which form the signed-out "me" page shows.
public enum AuthPage: Sendable, Hashable {
    case signIn, signUp
}

/// The tab and page state machine, with the 401 rule: an answer of 401 anywhere (the feed
/// API, an account call) shows the sign-in form and remembers where the user was; signing
/// in goes back there. No SDL, no I/O.
public struct AppNavigation: Sendable, Hashable {
    /// Where the user is (or, while ``authPage`` is shown, what the sign-in is for).
    public private(set) var place: AppPlace = .feed
    public private(set) var isSignedIn: Bool
    /// The sign-in or sign-up form, when it is on screen (in the "me" tab).
    public private(set) var authPage: AuthPage?
    /// Where signing in goes: the place a 401 or a tab needing sign-in interrupted.
    public private(set) var returnPlace: AppPlace?

    public init(isSignedIn: Bool) {
        self.isSignedIn = isSignedIn
    }

    /// The highlighted tab.
    public var tab: AppTab { authPage != nil ? .me : place.tab }

    /// Whether the home feed is what is on screen.
    public var showsFeed: Bool { authPage == nil && place == .feed }

    /// A tab was chosen. A tab that needs sign-in shows the sign-in form while signed
    /// out, and goes there once signed in.
    public mutating func select(_ tab: AppTab) {
        let target: AppPlace = switch tab {
        case .home: .feed
        case .upload: .upload
        case .me: .profile
        }
        if !target.needsSignIn || isSignedIn {
            place = target
            authPage = nil
            returnPlace = nil
        } else {
            if authPage == nil { authPage = .signIn }
            returnPlace = target
        }
    }

    /// Goes to a place inside the current tab (my videos' feed, back to the profile).
    public mutating func open(_ target: AppPlace) {
        guard !target.needsSignIn || isSignedIn else {
            authPage = authPage ?? .signIn
            returnPlace = target
            return
        }
        place = target
        authPage = nil
        returnPlace = nil
    }

    /// The server answered 401: the token is missing, expired or revoked. The sign-in form
    /// shows; the place the user was on is kept to return to. A second 401 while the form is
    /// already up keeps the first place.
    public mutating func unauthorized() {
        isSignedIn = false
        if authPage == nil { returnPlace = place }
        authPage = .signIn
    }

    public mutating func showAuth(_ page: AuthPage) {
        authPage = page
    }

    /// Signed in (or signed up and in): back to where a 401 or a tab interrupted, else the profile.
    public mutating func didSignIn() {
        isSignedIn = true
        place = returnPlace ?? .profile
        authPage = nil
        returnPlace = nil
    }

    /// Signed out: the sign-in form, with nowhere to return to.
    public mutating func didSignOut() {
        isSignedIn = false
        place = .profile
        authPage = .signIn
        returnPlace = nil
    }

    /// Leaves the sign-in form without signing in: back to the feed, unless the place it
    /// interrupted needs no sign-in.
    public mutating func cancelSignIn() {
        guard authPage != nil else { return }
        authPage = nil
        if let returnPlace, !returnPlace.needsSignIn { place = returnPlace } else { place = .feed }
        returnPlace = nil
    }
}
