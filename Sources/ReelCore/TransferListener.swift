import Foundation

/// Hears a loader's network transfers: the bytes that really crossed the network, never
/// those served from a cache or a file. A bandwidth meter (`BandwidthMeter` in ReelLoading)
/// is one; the HTTP loader and the fake loader of the tests report to it alike (the
/// `TransferReportingContract` suite checks that they do).
///
/// A transfer starts when the response head has arrived (its body is about to flow) and ends
/// when the body ends, fails or is cancelled: `transferStarted` once, then any number of
/// `bytesTransferred`, then `transferEnded` once. Transfers may overlap. Called from any
/// thread; implementations must be quick (a lock, some arithmetic).
public protocol TransferListener: Sendable {
    func transferStarted(_ url: URL)
    func bytesTransferred(_ count: Int, url: URL)
    func transferEnded(_ url: URL)
}
