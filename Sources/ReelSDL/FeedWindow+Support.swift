import Foundation
import ReelCore
import ReelFeed
import ReelMedia
import Synchronization

/// First-frame events for the HUD.
final class EventBox: Sendable {
    private let last = Mutex<String?>(nil)
    private let signIn = Mutex(false)
    private let signInRequests = Mutex(0)
    /// The feed API answered 401 or 403.
    var needsSignIn: Bool { signIn.withTrackedLock { $0 } }
    /// Forgets that the feed needed sign-in; whether it did.
    func clearNeedsSignIn() -> Bool {
        signIn.withTrackedLock { flag in
            defer { flag = false }
            return flag
        }
    }
    /// Whether a 401/403 came since the last call.
    func takeSignInRequest() -> Bool {
        signInRequests.withTrackedLock { count in
            defer { count = 0 }
            return count > 0
        }
    }
    func record(_ event: FeedEvent) {
        switch event {
        case .authorizationRequired:
            signIn.withTrackedLock { $0 = true }
            signInRequests.withTrackedLock { $0 += 1 }
        case .firstFrame(let index, let ms, let stage):
            last.withTrackedLock { $0 = String(format: "page %d first frame %.0f ms (%@)", index + 1, ms, stage.rawValue) }
        case .failed(let index, _):
            last.withTrackedLock { $0 = "page \(index + 1) failed" }
        default:
            break
        }
    }
    var lastFirstFrame: String? { last.withTrackedLock { $0 } }
}

/// Covers and thumbnails decoded in the background (FFmpeg, downsampled), by URL.
final class CoverCache: Sendable {
    // Immutable.
    private let loader: any ResourceLoader
    private let wake: @Sendable () -> Void

    /// Protected by `state`.
    private struct State {
        var images: [URL: RGBImage] = [:]
        var loading: Set<URL> = []
        var failed: Set<URL> = []
    }
    private let state = Mutex(State())

    init(loader: any ResourceLoader, wake: @escaping @Sendable () -> Void) {
        self.loader = loader
        self.wake = wake
    }

    func image(_ url: URL) -> RGBImage? { state.withTrackedLock { $0.images[url] } }

    func request(_ url: URL, maxWidth: Int, maxHeight: Int) {
        let start: Bool = state.withTrackedLock { s in
            guard s.images[url] == nil, !s.loading.contains(url), !s.failed.contains(url) else { return false }
            if s.images.count > 96 { s.images.removeAll() }
            s.loading.insert(url)
            return true
        }
        guard start else { return }
        let loader = self.loader
        Task.detached { [weak self] in
            let image = try? await ImageDecoder.decode(url, loader: loader, maxWidth: maxWidth, maxHeight: maxHeight)
            guard let self else { return }
            self.state.withTrackedLock { s in
                s.loading.remove(url)
                if let image { s.images[url] = image } else { s.failed.insert(url) }
            }
            self.wake()
        }
    }
}
