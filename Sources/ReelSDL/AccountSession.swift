import Foundation
import ReelAccountClient
import ReelCore
import ReelFeed
import Synchronization

/// The window's link to `reel serve`'s accounts API: the ``AccountClient`` with the kept
/// token, the ``TokenStore`` it is kept in (per server, 0600 — `reel me` sees a sign-in made
/// here), and the requests the account pages make. Each request runs in a task of its own;
/// its outcome is queued as an ``Event`` and the window's waker called, and the window takes
/// the events on its thread (``drain()``). A 401 from any request comes back as
/// ``Event/unauthorized(reason:)``.
public final class AccountSession: Sendable {
    public enum Event: Sendable {
        case signedIn(AccountProfile)
        case signInFailed(String)
        case profile(AccountProfile)
        case profileFailed(String)
        case myVideos([FeedItem])
        case profileSaved(Result<AccountProfile, UploadRefusal>)
        /// `PUT /api/me/avatar` answered: the profile with its new avatar, or why the picture was refused.
        case avatarChanged(Result<AccountProfile, UploadRefusal>)
        case signedOut
        case uploadProgress(sent: Int64, total: Int64)
        case uploaded(Result<UploadedItem, UploadRefusal>)
        /// A request answered 401 (token missing, expired or revoked).
        case unauthorized(reason: String)
    }

    // Immutable.
    public let server: URL
    private let store: TokenStore?
    private let loader: any ResourceLoader

    /// Protected by `state`.
    private struct State {
        var client: AccountClient
        var signedInName: String?
        var events: [Event] = []
        var wake: (@Sendable () -> Void)?
        var tasks = 0
        var onTokenChange: (@Sendable (String?) -> Void)?
    }
    private let state: Mutex<State>

    /// - Parameters:
    ///   - server: the `reel serve` address (`http://127.0.0.1:8080`).
    ///   - store: where tokens are kept (nil: only in memory).
    ///   - token: a token to use instead of the kept one (`--token`).
    ///   - loader: reads the user's items (the feed API's JSON).
    public init(server: URL, store: TokenStore?, token: String? = nil, loader: any ResourceLoader, timeout: Duration = .seconds(15)) {
        self.server = server
        self.store = store
        self.loader = loader
        let kept = token == nil ? (try? store?.entry(for: server)) ?? nil : nil
        let client = AccountClient(server: server, token: token ?? kept?.token, timeout: timeout)
        state = Mutex(State(client: client, signedInName: kept?.name ?? (token != nil ? "" : nil)))
    }

    /// The name kept with the token ("" for a `--token` given by hand); nil when signed out.
    public var signedInName: String? { state.withTrackedLock { $0.signedInName } }
    public var token: String? { state.withTrackedLock { $0.client.token } }
    /// Requests still running.
    public var pending: Int { state.withTrackedLock { $0.tasks } }

    /// Called (on any thread) with the new token when the user signs in or out, or a 401
    /// drops it: the feed's loader sends it from then on.
    public func setTokenObserver(_ observer: @escaping @Sendable (String?) -> Void) {
        state.withTrackedLock { $0.onTokenChange = observer }
    }

    /// Called (on any thread) when an event is queued.
    public func setWaker(_ wake: @escaping @Sendable () -> Void) { state.withTrackedLock { $0.wake = wake } }

    /// The events since the last call, oldest first.
    public func drain() -> [Event] {
        state.withTrackedLock { s in
            defer { s.events = [] }
            return s.events
        }
    }

    private var client: AccountClient { state.withTrackedLock { $0.client } }

    private func post(_ event: Event) {
        let wake = state.withTrackedLock { s -> (@Sendable () -> Void)? in
            s.events.append(event)
            return s.wake
        }
        wake?()
    }

    private func run(_ body: @escaping @Sendable () async -> Void) {
        state.withTrackedLock { $0.tasks += 1 }
        Task {
            await body()
            let wake = state.withTrackedLock { s -> (@Sendable () -> Void)? in
                s.tasks -= 1
                return s.wake
            }
            wake?()
        }
    }

    /// A 401 forgets the token (here and in the store) and reports it; other errors become one line.
    private func failure(_ error: any Error) -> String? {
        if case AccountClientError.unauthorized(let reason, _) = error, reason != "invalid_credentials" {
            forgetToken()
            post(.unauthorized(reason: reason))
            return nil
        }
        switch error {
        case AccountClientError.unauthorized(_, let message), AccountClientError.rejected(_, _, let message): return message
        case AccountClientError.network: return "无法连接服务器 Cannot reach \(server.absoluteString)"
        default: return "\(error)"
        }
    }

    private func forgetToken() {
        let observer = state.withTrackedLock { s in
            s.client = s.client.withToken(nil)
            s.signedInName = nil
            return s.onTokenChange
        }
        observer?(nil)
        _ = try? store?.remove(for: server)
    }

    /// The feed API answered 401: the token is no good there either.
    public func feedUnauthorized() {
        forgetToken()
        post(.unauthorized(reason: "feed"))
    }

    // MARK: Requests

    public func signIn(name: String, password: String) {
        run { [self] in
            do {
                let session = try await client.login(name: name, password: password)
                signedIn(session)
            } catch {
                post(.signInFailed(message(error)))
            }
        }
    }

    public func signUp(name: String, email: String, password: String) {
        run { [self] in
            do {
                _ = try await client.register(RegisterRequest(name: name, email: email, password: password))
                let session = try await client.login(name: name, password: password)
                signedIn(session)
            } catch {
                post(.signInFailed(message(error)))
            }
        }
    }

    private func message(_ error: any Error) -> String {
        switch error {
        case AccountClientError.unauthorized(_, let message), AccountClientError.rejected(_, _, let message): message
        case AccountClientError.network: "无法连接服务器 Cannot reach \(server.absoluteString)"
        default: "\(error)"
        }
    }

    private func signedIn(_ session: LoginResponse) {
        let observer = state.withTrackedLock { s in
            s.client = s.client.withToken(session.token)
            s.signedInName = session.user.name
            return s.onTokenChange
        }
        observer?(session.token)
        do {
            try store?.store(TokenStore.Entry(token: session.token, expiresAt: session.expiresAt, name: session.user.name), for: server)
        } catch {
            // Signed in for this window; the next run asks again.
        }
        post(.signedIn(session.user))
    }

    /// The profile, then the user's videos.
    public func loadProfile() {
        run { [self] in
            do {
                let me = try await client.me()
                post(.profile(me))
                post(.myVideos(try await items(of: me.id)))
            } catch {
                if let line = failure(error) { post(.profileFailed(line)) }
            }
        }
    }

    /// Every item of user `id` (`/api/users/{id}/items`, paged).
    private func items(of id: Int64) async throws -> [FeedItem] {
        try await UserItemsFeedSource(server: server, userID: id, loader: loader).all()
    }

    /// The feed of user `id`'s items (my videos played as a swipe feed).
    public func itemsSource(of id: Int64) -> any FeedSource {
        UserItemsFeedSource(server: server, userID: id, loader: loader)
    }

    public func saveProfile(nickname: String, bio: String) {
        run { [self] in
            do {
                post(.profileSaved(.success(try await client.updateMe(ProfileUpdate(nickname: nickname, bio: bio)))))
            } catch {
                if let line = failure(error) { post(.profileSaved(.failure(UploadRefusal(line)))) }
            }
        }
    }

    /// Sends the picture at `path` as the avatar (`PUT /api/me/avatar`).
    public func changeAvatar(path: String) {
        let file = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
        run { [self] in
            do {
                post(.avatarChanged(.success(try await client.setAvatar(file: file))))
            } catch {
                if let line = failure(error) { post(.avatarChanged(.failure(UploadRefusal(line)))) }
            }
        }
    }

    /// Revokes the token on the server and forgets it here (and in the store) either way.
    public func signOut() {
        run { [self] in
            try? await client.logout()
            forgetToken()
            post(.signedOut)
        }
    }

    public func upload(path: String, title: String, category: String?) {
        let file = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
        run { [self] in
            do {
                let item = try await client.upload(file: file, title: title, category: category) { [weak self] sent, total in
                    self?.post(.uploadProgress(sent: sent, total: total))
                }
                post(.uploaded(.success(item)))
            } catch {
                if let line = failure(error) { post(.uploaded(.failure(UploadRefusal(line)))) }
            }
        }
    }
}

/// `/api/users/{id}/items` as a feed: the items one user uploaded, paged like `/api/feed`.
struct UserItemsFeedSource: FeedSource {
    let server: URL
    let userID: Int64
    let loader: any ResourceLoader

    func categories() async throws -> [FeedCategory] { [] }

    func page(category: String?, page: Int, size: Int) async throws -> FeedPage {
        let base = server.absoluteString.hasSuffix("/") ? String(server.absoluteString.dropLast()) : server.absoluteString
        guard let url = URL(string: "\(base)/api/users/\(userID)/items?current=\(page)&size=\(size)") else {
            throw FeedError.unavailable("bad server address")
        }
        let data: Data
        do {
            data = try await loader.data(url)
        } catch let error as ResourceLoaderError {
            if case .unauthorized = error { throw FeedError.authorizationRequired }
            throw FeedError.unavailable(error.description)
        }
        let items = try FeedAPIFormat.decodeItems(data, relativeTo: url)
        return FeedPage(items: items, hasMore: items.count >= size)
    }

    func search(text: String, page: Int, size: Int) async throws -> FeedPage { FeedPage(items: [], hasMore: false) }

    /// Every page (a profile's grid; bounded at 50 pages).
    func all() async throws -> [FeedItem] {
        var items: [FeedItem] = []
        for number in 1...50 {
            let page = try await page(category: nil, page: number, size: 30)
            items += page.items
            if !page.hasMore { break }
        }
        return items
    }
}
