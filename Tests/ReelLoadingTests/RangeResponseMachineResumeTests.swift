import Foundation
import ReelCore
@testable import ReelLoading
import Testing

// Bodies, resumes and retries of an HTTP range read, as the machine decides them.

let r0to999 = ByteRange(offset: 0, length: 1000)
let connectionReset = ResourceLoaderError.network(url: machineURL, range: r0to999, reason: "connection reset by peer")

/// A read of bytes 0-999 whose first response (a 206 with these validators) delivered
/// `delivered` bytes before its connection connectionReset; the retry's request is sent.
func resumedMachine(etag: String?, modified: String?, delivered: Int = 400) -> (Machine, Machine.Request) {
    var machine = makeMachine(r0to999)
    _ = machine.send()
    let first = machine.headReceived(responseHead(206, range: "bytes 0-999/1000", etag: etag, modified: modified))
    #expect(first == .readBody(respond: expectedInformation(length: 1000, etag: etag, modified: modified)))
    #expect(machine.bodyReceived(byteCount: delivered) == .deliver(0..<delivered))
    #expect(machine.attemptFailed(.retryable(connectionReset)) == .retry(after: .milliseconds(100), from: Int64(delivered), error: connectionReset))
    let request = machine.send()
    return (machine, request)
}

/// A second response head after a resume, and what the read must do with it.
struct ResumeCase: Sendable, CustomTestStringConvertible {
    var name: String
    var etag: String?
    var modified: String?
    var head: Machine.Head
    var expected: Machine.HeadAction
    var testDescription: String { name }
}

func contentChanged(_ expected: String?, _ found: String?) -> ResourceLoaderError {
    .contentChanged(url: machineURL, expected: expected, found: found)
}

let resumes: [ResumeCase] = [
    ResumeCase(name: "206 of the same ETag", etag: "\"v1\"", modified: nil,
               head: responseHead(206, range: "bytes 400-999/1000", etag: "\"v1\""), expected: .readBody(respond: nil)),
    ResumeCase(name: "206 without validators", etag: "\"v1\"", modified: nil,
               head: responseHead(206, range: "bytes 400-999/1000"), expected: .readBody(respond: nil)),
    ResumeCase(name: "206 of another ETag", etag: "\"v1\"", modified: "Mon",
               head: responseHead(206, range: "bytes 400-999/1000", etag: "\"v2\"", modified: "Mon"),
               expected: .discardBody(then: .fail(contentChanged("\"v1\"", "\"v2\""), respond: nil))),
    ResumeCase(name: "206 of the same ETag, another Last-Modified", etag: "\"v1\"", modified: "Mon",
               head: responseHead(206, range: "bytes 400-999/1000", etag: "\"v1\"", modified: "Tue"), expected: .readBody(respond: nil)),
    ResumeCase(name: "206 of another Last-Modified, no ETag", etag: nil, modified: "Mon",
               head: responseHead(206, range: "bytes 400-999/1000", modified: "Tue"),
               expected: .discardBody(then: .fail(contentChanged(nil, nil), respond: nil))),
    ResumeCase(name: "206 of another complete length", etag: "\"v1\"", modified: nil,
               head: responseHead(206, range: "bytes 400-999/2000", etag: "\"v1\""),
               expected: .dropBody(fail: contentChanged("\"v1\"", "\"v1\""))),
    ResumeCase(name: "206 from the start instead of the position", etag: "\"v1\"", modified: nil,
               head: responseHead(206, range: "bytes 0-999/1000", etag: "\"v1\""),
               expected: .dropBody(fail: invalidResponse(r0to999, "asked for bytes 400-999, Content-Range says 0-999"))),
    ResumeCase(name: "200 of the same entity (If-Range ignored)", etag: "\"v1\"", modified: nil,
               head: responseHead(200, length: "1000", etag: "\"v1\""), expected: .readBody(respond: nil)),
    ResumeCase(name: "200 of another entity (If-Range did its work)", etag: "\"v1\"", modified: nil,
               head: responseHead(200, length: "1000", etag: "\"v2\""),
               expected: .discardBody(then: .fail(contentChanged("\"v1\"", "\"v2\""), respond: nil))),
    ResumeCase(name: "200 of another length", etag: "\"v1\"", modified: nil,
               head: responseHead(200, length: "2000", etag: "\"v1\""),
               expected: .discardBody(then: .fail(contentChanged("\"v1\"", "\"v1\""), respond: nil))),
    ResumeCase(name: "416 on a resume is refused by the known length", etag: "\"v1\"", modified: nil,
               head: responseHead(416),
               expected: .discardBody(then: .fail(invalidResponse(r0to999, "416 for byte 400 of a 1000-byte resource"), respond: nil))),
]

@Suite("HTTP range response machine: resumes")
struct RangeResponseResumeTests {
    @Test(arguments: resumes)
    func decides(_ row: ResumeCase) {
        let resumed = resumedMachine(etag: row.etag, modified: row.modified)
        var machine = resumed.0
        #expect(resumed.1.range == "bytes=400-999")
        #expect(machine.headReceived(row.head) == row.expected)
    }

    @Test("If-Range carries the entity's validator", arguments: [
        ("\"v1\"", "Mon", "\"v1\""),
        ("W/\"v1\"", "Mon", nil),  // a weak tag cannot validate a range, and hides Last-Modified
        (nil, "Mon", "Mon"),
        (nil, nil, nil),
    ] as [(String?, String?, String?)])
    func ifRange(_ etag: String?, _ modified: String?, _ expected: String?) {
        let (_, request) = resumedMachine(etag: etag, modified: modified)
        #expect(request == Machine.Request(url: machineURL, range: "bytes=400-999", ifRange: expected))
    }

    @Test func aResumedTwoHundredIsSkippedToThePosition() {
        var (machine, _) = resumedMachine(etag: "\"v1\"", modified: nil, delivered: 250)
        #expect(machine.headReceived(responseHead(200, length: "1000", etag: "\"v1\"")) == .readBody(respond: nil))
        #expect(machine.bodyReceived(byteCount: 100) == .skip)
        #expect(machine.bodyReceived(byteCount: 0) == .skip)
        #expect(machine.bodyReceived(byteCount: 200) == .deliver(150..<200))
        #expect(machine.bodyReceived(byteCount: 650) == .deliver(0..<650))
        #expect(machine.bodyReceived(byteCount: 50) == .deliverAndFinish(0..<50))
        #expect(machine.position == 1000)
    }
}

@Suite("HTTP range response machine: bodies")
struct RangeResponseBodyTests {
    @Test func aBodyIsDeliveredUpToTheEndAskedFor() {
        var machine = makeMachine(r0to99)
        _ = machine.send()
        _ = machine.headReceived(responseHead(206, range: "bytes 0-99/1000", length: "100"))
        #expect(machine.bodyReceived(byteCount: 60) == .deliver(0..<60))
        #expect(machine.bodyReceived(byteCount: 40) == .deliverAndFinish(0..<40))
        #expect(machine.state == .done)
    }

    @Test func aTwoHundredLongerThanAskedStopsAtTheEnd() {
        var machine = makeMachine(ByteRange(offset: 250, length: 100))
        _ = machine.send()
        #expect(machine.headReceived(responseHead(200, length: "1000")) == .readBody(respond: expectedInformation(length: 1000, ranges: false)))
        #expect(machine.bodyReceived(byteCount: 100) == .skip)
        #expect(machine.bodyReceived(byteCount: 200) == .deliver(150..<200))
        #expect(machine.bodyReceived(byteCount: 700) == .deliverAndFinish(0..<50))
    }

    @Test func aShortPartialAnswerIsFollowedByARequestForTheRest() {
        var machine = makeMachine(r0to99)
        _ = machine.send()
        _ = machine.headReceived(responseHead(206, range: "bytes 0-49/1000", etag: "\"v1\""))
        #expect(machine.bodyReceived(byteCount: 50) == .deliver(0..<50))
        #expect(machine.bodyEnded() == .nextRequest)
        #expect(machine.send() == Machine.Request(url: machineURL, range: "bytes=50-99", ifRange: "\"v1\""))
        #expect(machine.headReceived(responseHead(206, range: "bytes 50-99/1000", etag: "\"v1\"")) == .readBody(respond: nil))
        #expect(machine.bodyReceived(byteCount: 50) == .deliverAndFinish(0..<50))
    }

    @Test func anOpenRangeOfUnknownLengthGoesOnUntilAnAnswerEndsIt() {
        var machine = makeMachine(ByteRange(offset: 0))
        _ = machine.send()
        #expect(machine.headReceived(responseHead(206, range: "bytes 0-99/*")) == .readBody(respond: expectedInformation(length: nil)))
        #expect(machine.bodyReceived(byteCount: 100) == .deliver(0..<100))
        #expect(machine.bodyEnded() == .nextRequest)
        #expect(machine.send().range == "bytes=100-")
        #expect(machine.headReceived(responseHead(416)) == .discardBody(then: .finish(respond: nil)))
    }

    @Test func aBodyOfUnknownLengthEndsTheResource() {
        var machine = makeMachine(ByteRange(offset: 0))
        _ = machine.send()
        _ = machine.headReceived(responseHead(200))
        #expect(machine.bodyReceived(byteCount: 10) == .deliver(0..<10))
        #expect(machine.bodyEnded() == .finish(respond: nil))
    }

    @Test func aWholeTwoHundredEndsTheReadShortOfItsRange() {
        var machine = makeMachine(r0to99)
        _ = machine.send()
        _ = machine.headReceived(responseHead(200))
        #expect(machine.bodyReceived(byteCount: 40) == .deliver(0..<40))
        #expect(machine.bodyEnded() == .finish(respond: nil))
    }

    @Test func aBodyShorterThanPromisedIsRetriedFromItsLastByte() {
        var machine = makeMachine(r0to99)
        _ = machine.send()
        _ = machine.headReceived(responseHead(206, range: "bytes 0-99/1000", length: "100"))
        #expect(machine.bodyReceived(byteCount: 30) == .deliver(0..<30))
        let short = ResourceLoaderError.network(url: machineURL, range: r0to99, reason: "connection closed after 30 of 100 bytes")
        #expect(machine.bodyEnded() == .retry(after: .milliseconds(100), from: 30, error: short))
        #expect(machine.send().range == "bytes=30-99")
    }

    @Test func aTwoHundredShorterThanItsContentLengthIsRetried() {
        var machine = makeMachine(ByteRange(offset: 0))
        _ = machine.send()
        _ = machine.headReceived(responseHead(200, length: "100"))
        #expect(machine.bodyReceived(byteCount: 99) == .deliver(0..<99))
        let short = ResourceLoaderError.network(url: machineURL, range: ByteRange(offset: 0), reason: "connection closed after 99 of 100 bytes")
        #expect(machine.bodyEnded() == .retry(after: .milliseconds(100), from: 99, error: short))
    }
}

@Suite("HTTP range response machine: retries")
struct RangeResponseRetryTests {
    @Test func failuresWithoutProgressBackOffAndEndTheRead() {
        var machine = makeMachine(r0to999, attempts: 4, maxBackoff: .milliseconds(250))
        for delay in [100, 200, 250] {
            _ = machine.send()
            #expect(machine.attemptFailed(.retryable(connectionReset)) == .retry(after: .milliseconds(delay), from: 0, error: connectionReset))
        }
        _ = machine.send()
        #expect(machine.attemptFailed(.retryable(connectionReset)) == .fail(connectionReset, respond: nil))
        #expect(machine.state == .done)
    }

    @Test func fiveHundredsCountAsFailures() {
        var machine = makeMachine(r0to99, attempts: 2)
        let status = ResourceLoaderError.httpStatus(url: machineURL, range: r0to99, status: 502)
        _ = machine.send()
        #expect(machine.headReceived(responseHead(502)) == .discardBody(then: .retry(after: .milliseconds(100), from: 0, error: status)))
        _ = machine.send()
        #expect(machine.headReceived(responseHead(502)) == .discardBody(then: .fail(status, respond: nil)))
    }

    @Test func aByteReceivedStartsTheCountAgain() {
        var machine = makeMachine(r0to999, attempts: 3)
        _ = machine.send()
        #expect(machine.attemptFailed(.retryable(connectionReset)) == .retry(after: .milliseconds(100), from: 0, error: connectionReset))
        _ = machine.send()
        _ = machine.headReceived(responseHead(206, range: "bytes 0-999/1000"))
        _ = machine.bodyReceived(byteCount: 10)
        #expect(machine.attemptFailed(.retryable(connectionReset)) == .retry(after: .milliseconds(100), from: 10, error: connectionReset))
        _ = machine.send()
        #expect(machine.attemptFailed(.retryable(connectionReset)) == .retry(after: .milliseconds(200), from: 10, error: connectionReset))
        _ = machine.send()
        #expect(machine.attemptFailed(.retryable(connectionReset)) == .fail(connectionReset, respond: nil))
    }

    @Test func aFatalFailureEndsTheReadAtOnce() {
        var machine = makeMachine(r0to999)
        _ = machine.send()
        let gone = ResourceLoaderError.notFound(url: machineURL)
        #expect(machine.attemptFailed(.fatal(gone)) == .fail(gone, respond: nil))
    }

    @Test("the backoff doubles up to its maximum", arguments: [(1, 100), (2, 200), (3, 400), (4, 800), (5, 1000), (9, 1000)])
    func backoff(_ attempt: Int, _ milliseconds: Int) {
        let machine = makeMachine(r0to999, maxBackoff: .seconds(1))
        #expect(machine.backoff(attempt: attempt) == .milliseconds(milliseconds))
    }
}
