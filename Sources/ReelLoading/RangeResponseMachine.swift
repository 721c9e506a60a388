import Foundation
import ReelCore

/// The decisions of one HTTP range read as a value: which request to send next, what a
/// response head means (deliver its body, skip into it, follow it, refuse it), which bytes of
/// each body buffer to deliver, and whether a failure is retried or ends the read — with no
/// network, task, lock or clock of its own. ``HTTPLoader``'s read task feeds it what happened
/// and carries out the actions it returns, as swift-nio's protocol state machines are driven
/// by their channel handlers (and AsyncHTTPClient keeps `HTTPRequestStateMachine` apart from
/// its channel handler).
///
/// One read is one or more attempts. Each attempt is:
///
/// 1. ``startAttempt()``: ``StartAction/send(_:)`` a request, or ``StartAction/finish`` the
///    read when everything asked for was delivered.
/// 2. ``headReceived(_:)`` with the response head, or ``attemptFailed(_:)`` when the request
///    failed before one came.
/// 3. When the head says ``HeadAction/readBody(respond:)``: ``bodyReceived(byteCount:)`` for
///    each buffer, then ``bodyEnded()``, or ``attemptFailed(_:)`` when the body broke off.
///
/// Every path ends the attempt with an ``Outcome``: another request, a redirect, a retry
/// after a backoff, the end of the read, or its failure.
struct RangeResponseMachine: Sendable {
    /// The limits the decisions follow (a subset of ``HTTPLoader/Configuration``).
    struct Configuration: Sendable, Hashable {
        /// How many failed attempts in a row, with no new byte between them, end a read.
        var maxAttemptsWithoutProgress: Int
        /// The wait before the first retry; each further retry doubles it.
        var initialBackoff: Duration
        /// The longest wait between retries.
        var maxBackoff: Duration
        /// How many redirects a read may follow.
        var maxRedirects: Int
    }

    /// What the next request asks for.
    struct Request: Sendable, Hashable {
        /// Where it goes (the read's URL, or where redirects led).
        var url: URL
        /// The `Range` header's value: `bytes=a-b` or `bytes=a-`.
        var range: String
        /// The `If-Range` header's value on a resumed request, when the entity has a validator.
        var ifRange: String?
    }

    /// The parts of a response head that the decisions look at (header values as sent).
    struct Head: Sendable, Hashable {
        var status: Int
        var contentRange: String?
        var contentLength: String?
        var entityTag: String?
        var lastModified: String?
        var contentType: String?
        var acceptRanges: String?
        var location: String?
    }

    /// Why an attempt failed, as the driver classified its transport's error.
    enum Failure: Error, Hashable {
        /// Worth another attempt (from where the read got to), after a backoff.
        case retryable(ResourceLoaderError)
        /// The read is over.
        case fatal(ResourceLoaderError)
    }

    /// What ``startAttempt()`` asks for.
    enum StartAction: Hashable {
        /// Send this request.
        case send(Request)
        /// Every byte asked for was delivered: finish the read.
        case finish
    }

    /// What to do with a response head.
    enum HeadAction: Hashable {
        /// Respond with the information when there is some, then read the body through
        /// ``bodyReceived(byteCount:)`` and ``bodyEnded()``.
        case readBody(respond: ContentInformation?)
        /// Read the small body away (so the connection can be reused), then end the
        /// attempt with this outcome.
        case discardBody(then: Outcome)
        /// Respond with the information, discard the body and finish the read: the read
        /// asked for no byte (an empty range) and now has its information.
        case respondAndFinish(ContentInformation)
        /// Fail without reading the body: dropping it closes the connection, so nothing of
        /// an answer that cannot be trusted is left to mislead the next request.
        case dropBody(fail: ResourceLoaderError)
    }

    /// Which bytes of a body buffer to deliver.
    enum BodyAction: Hashable {
        /// None: the buffer lies before the read's position (or is empty).
        case skip
        /// These bytes of the buffer (offsets in it); the ones before are skipped.
        case deliver(Range<Int>)
        /// These bytes of the buffer, and then the read is finished: stop reading the body
        /// (dropping it closes the connection) and finish.
        case deliverAndFinish(Range<Int>)
    }

    /// How an attempt ends.
    enum Outcome: Hashable {
        /// Send another request for the rest (a `206` shorter than asked).
        case nextRequest
        /// Count a redirect; the next request goes to this URL.
        case redirect(to: URL)
        /// Wait this long, then resume from the read's position with another request.
        case retry(after: Duration, from: Int64, error: ResourceLoaderError)
        /// Respond with the information when there is some, then finish the read.
        case finish(respond: ContentInformation?)
        /// Respond with the information when there is some, then fail the read.
        case fail(ResourceLoaderError, respond: ContentInformation?)
    }

    /// The body being read in the current attempt.
    struct Body: Sendable, Hashable {
        var status: Int
        /// How many bytes the head promised, when it said.
        var length: Int64?
        /// Bytes still to skip before the read's position.
        var skip: Int64
        /// Bytes received so far (skipped ones included).
        var received: Int64 = 0
    }

    enum State: Sendable, Hashable {
        /// Between attempts.
        case idle
        /// A request is out; its head has not come.
        case awaitingHead
        /// A body is being read.
        case receiving(Body)
        /// The read finished or failed.
        case done
    }

    let url: URL
    let range: ByteRange
    let configuration: Configuration
    // The fields below are changed only by the machine's own event methods (here and in
    // RangeResponseMachine+Head.swift, which is why some setters are not private).
    var state = State.idle
    /// Where the next request goes (changed by redirects).
    var currentURL: URL
    /// The next byte to deliver.
    private(set) var position: Int64
    /// One past the last byte to deliver, once known.
    var end: Int64?
    /// What the first response said about the resource (responded once).
    var information: ContentInformation?
    var redirects = 0
    private(set) var attemptsWithoutProgress = 0
    /// The position when the current attempt started.
    private var positionAtAttemptStart: Int64

    init(url: URL, range: ByteRange, configuration: Configuration) {
        self.url = url
        self.range = range
        self.configuration = configuration
        self.currentURL = url
        self.position = range.offset
        self.end = range.end
        self.positionAtAttemptStart = range.offset
    }

    // MARK: - Events

    /// The driver is about to start an attempt.
    mutating func startAttempt() -> StartAction {
        precondition(state == .idle, "an attempt started while another was running")
        if let end, information != nil, position >= end {
            state = .done
            return .finish
        }
        positionAtAttemptStart = position
        state = .awaitingHead
        let first = position
        let rangeValue: String
        if let end {
            // An empty range still needs an answer for its information: ask for one byte.
            rangeValue = "bytes=\(first)-\(max(end, first + 1) - 1)"
        } else {
            rangeValue = "bytes=\(first)-"
        }
        var ifRange: String?
        if let information {
            if let tag = information.entityTag, !tag.hasPrefix("W/") {
                ifRange = tag
            } else if information.entityTag == nil, let modified = information.lastModified {
                ifRange = modified
            }
        }
        return .send(Request(url: currentURL, range: rangeValue, ifRange: ifRange))
    }

    /// A body buffer of `byteCount` bytes arrived.
    mutating func bodyReceived(byteCount: Int) -> BodyAction {
        guard case .receiving(var body) = state else {
            preconditionFailure("body bytes outside a body")
        }
        body.received += Int64(byteCount)
        var first = 0
        if body.skip > 0 {
            first = Int(min(Int64(byteCount), body.skip))
            body.skip -= Int64(first)
        }
        state = .receiving(body)
        var count = byteCount - first
        if count == 0 { return .skip }
        var done = false
        if let end, Int64(count) >= end - position {
            count = Int(end - position)
            done = true
        }
        position += Int64(count)
        attemptsWithoutProgress = 0
        if done {
            state = .done
            return .deliverAndFinish(first..<first + count)
        }
        return .deliver(first..<first + count)
    }

    /// The body ended where its transport says it ended.
    mutating func bodyEnded() -> Outcome {
        guard case .receiving(let body) = state else {
            preconditionFailure("the end of a body outside a body")
        }
        if let length = body.length, body.received < length {
            return attemptFailed(.retryable(.network(
                url: url, range: range,
                reason: "connection closed after \(body.received) of \(length) bytes"
            )))
        }
        if body.length == nil && end == nil {
            // A body of unknown length ended: that is the end of the resource.
            return finish(respond: nil)
        }
        if body.status == 200 {
            // A whole body was read; whatever is left is past the end of the resource.
            return finish(respond: nil)
        }
        // A 206 shorter than asked: the next request asks for the rest.
        state = .idle
        return .nextRequest
    }

    /// The attempt failed (before its head, or while its body was being read).
    mutating func attemptFailed(_ failure: Failure) -> Outcome {
        switch failure {
        case .fatal(let error):
            return fail(error, respond: nil)
        case .retryable(let error):
            if position > positionAtAttemptStart { attemptsWithoutProgress = 0 }
            attemptsWithoutProgress += 1
            guard attemptsWithoutProgress < configuration.maxAttemptsWithoutProgress else {
                return fail(error, respond: nil)
            }
            state = .idle
            return .retry(after: backoff(attempt: attemptsWithoutProgress), from: position, error: error)
        }
    }

    // MARK: - Helpers

    mutating func finish(respond information: ContentInformation?) -> Outcome {
        state = .done
        return .finish(respond: information)
    }

    mutating func fail(_ error: ResourceLoaderError, respond information: ContentInformation?) -> Outcome {
        state = .done
        return .fail(error, respond: information)
    }

    /// The wait before retry number `attempt`: the initial backoff, doubled for each
    /// further retry, at most the maximum.
    func backoff(attempt: Int) -> Duration {
        var delay = configuration.initialBackoff
        for _ in 1..<max(1, attempt) {
            delay *= 2
            if delay >= configuration.maxBackoff { return configuration.maxBackoff }
        }
        return min(delay, configuration.maxBackoff)
    }
}
