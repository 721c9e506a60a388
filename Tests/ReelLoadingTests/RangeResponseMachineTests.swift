import Foundation
import ReelCore
@testable import ReelLoading
import Testing

// The decisions of an HTTP range read, one response head at a time: no network, no
// threads, no files. The driver that carries them out (HTTPLoader) keeps the loader
// contract against ReelOrigin and nginx in HTTPLoaderTests and NginxIntegrationTests.

typealias Machine = RangeResponseMachine

let machineURL = URL(string: "http://origin.test/clips/a.mp4")!

func makeMachine(_ range: ByteRange, attempts: Int = 4, redirects: Int = 8,
                 maxBackoff: Duration = .seconds(2)) -> Machine {
    Machine(url: machineURL, range: range, configuration: .init(
        maxAttemptsWithoutProgress: attempts, initialBackoff: .milliseconds(100),
        maxBackoff: maxBackoff, maxRedirects: redirects
    ))
}

func responseHead(
    _ status: Int, range: String? = nil, length: String? = nil, etag: String? = nil,
    modified: String? = nil, type: String? = nil, acceptRanges: String? = nil, location: String? = nil
) -> Machine.Head {
    Machine.Head(
        status: status, contentRange: range, contentLength: length, entityTag: etag,
        lastModified: modified, contentType: type, acceptRanges: acceptRanges, location: location
    )
}

func expectedInformation(
    length: Int64?, type: String? = nil, ranges: Bool = true, etag: String? = nil,
    modified: String? = nil, url: URL = machineURL
) -> ContentInformation {
    ContentInformation(
        length: length, contentType: type, isByteRangeAccessSupported: ranges,
        entityTag: etag, lastModified: modified, finalURL: url
    )
}

func invalidResponse(_ range: ByteRange, _ reason: String) -> ResourceLoaderError {
    .invalidResponse(url: machineURL, range: range, reason: reason)
}

extension Machine {
    /// Starts an attempt that must send a request, and returns it.
    mutating func send() -> Request {
        guard case .send(let request) = startAttempt() else {
            Issue.record("expected a request")
            return Request(url: machineURL, range: "", ifRange: nil)
        }
        return request
    }
}

/// A first response head and what the read must do with it.
struct HeadCase: Sendable, CustomTestStringConvertible {
    var name: String
    var range: ByteRange
    var head: Machine.Head
    var expected: Machine.HeadAction
    var testDescription: String { name }
}

let r0to99 = ByteRange(offset: 0, length: 100)
let r5open = ByteRange(offset: 5)

let firstHeads: [HeadCase] = [
    // 206: Content-Range against the request.
    HeadCase(name: "206 as asked", range: r0to99,
             head: responseHead(206, range: "bytes 0-99/1000", length: "100", etag: "\"v1\"", type: "video/mp4"),
             expected: .readBody(respond: expectedInformation(length: 1000, type: "video/mp4", etag: "\"v1\""))),
    HeadCase(name: "206 shorter than asked", range: r0to99,
             head: responseHead(206, range: "bytes 0-49/1000"),
             expected: .readBody(respond: expectedInformation(length: 1000))),
    HeadCase(name: "206 of unknown complete length", range: r0to99,
             head: responseHead(206, range: "bytes 0-99/*"),
             expected: .readBody(respond: expectedInformation(length: nil))),
    HeadCase(name: "206 starting elsewhere", range: r0to99,
             head: responseHead(206, range: "bytes 10-99/1000"),
             expected: .dropBody(fail: invalidResponse(r0to99, "asked for bytes 0-99, Content-Range says 10-99"))),
    HeadCase(name: "206 ending later than asked", range: r0to99,
             head: responseHead(206, range: "bytes 0-199/1000"),
             expected: .dropBody(fail: invalidResponse(r0to99, "asked for bytes 0-99, Content-Range says 0-199"))),
    HeadCase(name: "206 to an open range starting elsewhere", range: r5open,
             head: responseHead(206, range: "bytes 0-99/1000"),
             expected: .dropBody(fail: invalidResponse(r5open, "asked for bytes 5-, Content-Range says 0-99"))),
    HeadCase(name: "206 without Content-Range", range: r0to99,
             head: responseHead(206, length: "100"),
             expected: .dropBody(fail: invalidResponse(r0to99, "206 without Content-Range"))),
    HeadCase(name: "206 with an unreadable Content-Range", range: r0to99,
             head: responseHead(206, range: "bytes 0-99"),
             expected: .dropBody(fail: invalidResponse(r0to99, "unreadable Content-Range \"bytes 0-99\""))),
    HeadCase(name: "206 with the unsatisfied form of Content-Range", range: r0to99,
             head: responseHead(206, range: "bytes */1000"),
             expected: .dropBody(fail: invalidResponse(r0to99, "unreadable Content-Range \"bytes */1000\""))),
    HeadCase(name: "206 whose Content-Length disagrees", range: r0to99,
             head: responseHead(206, range: "bytes 0-99/1000", length: "50"),
             expected: .dropBody(fail: invalidResponse(r0to99, "Content-Length 50 does not match Content-Range 0-99"))),
    HeadCase(name: "206 to an empty range: information only", range: ByteRange(offset: 0, length: 0),
             head: responseHead(206, range: "bytes 0-0/1000", length: "1"),
             expected: .respondAndFinish(expectedInformation(length: 1000))),

    // 200 to a range request: read from the start, skipped to the offset.
    HeadCase(name: "200 from offset 0 with Accept-Ranges", range: r0to99,
             head: responseHead(200, length: "1000", acceptRanges: "Bytes"),
             expected: .readBody(respond: expectedInformation(length: 1000))),
    HeadCase(name: "200 from offset 0 without Accept-Ranges", range: r0to99,
             head: responseHead(200, length: "1000"),
             expected: .readBody(respond: expectedInformation(length: 1000, ranges: false))),
    HeadCase(name: "200 from an offset: ranges not supported", range: r5open,
             head: responseHead(200, length: "1000", acceptRanges: "bytes"),
             expected: .readBody(respond: expectedInformation(length: 1000, ranges: false))),
    HeadCase(name: "200 of unknown length", range: r5open,
             head: responseHead(200),
             expected: .readBody(respond: expectedInformation(length: nil, ranges: false))),
    HeadCase(name: "200 shorter than the offset", range: ByteRange(offset: 2000, length: 10),
             head: responseHead(200, length: "1000", etag: "\"v1\""),
             expected: .discardBody(then: .fail(
                 .rangeNotSatisfiable(url: machineURL, range: ByteRange(offset: 2000, length: 10), length: 1000),
                 respond: expectedInformation(length: 1000, ranges: false, etag: "\"v1\"")))),
    HeadCase(name: "200 exactly as long as the offset", range: ByteRange(offset: 1000),
             head: responseHead(200, length: "1000"),
             expected: .respondAndFinish(expectedInformation(length: 1000, ranges: false))),

    // 416: the end of input at the end, an error anywhere else.
    HeadCase(name: "416 at the end", range: ByteRange(offset: 1000),
             head: responseHead(416, range: "bytes */1000", etag: "\"v1\"", type: "text/html"),
             expected: .discardBody(then: .finish(respond: expectedInformation(length: 1000, etag: "\"v1\"")))),
    HeadCase(name: "416 of unknown length", range: ByteRange(offset: 1000),
             head: responseHead(416),
             expected: .discardBody(then: .finish(respond: expectedInformation(length: nil)))),
    HeadCase(name: "416 past the end", range: ByteRange(offset: 2000, length: 5),
             head: responseHead(416, range: "bytes */1000"),
             expected: .discardBody(then: .fail(
                 .rangeNotSatisfiable(url: machineURL, range: ByteRange(offset: 2000, length: 5), length: 1000),
                 respond: expectedInformation(length: 1000)))),
    HeadCase(name: "416 before the end", range: r5open,
             head: responseHead(416, range: "bytes */1000"),
             expected: .discardBody(then: .fail(invalidResponse(r5open, "416 for byte 5 of a 1000-byte resource"), respond: nil))),

    // Statuses that end the read or the attempt.
    HeadCase(name: "404", range: r0to99, head: responseHead(404),
             expected: .discardBody(then: .fail(.notFound(url: machineURL), respond: nil))),
    HeadCase(name: "410", range: r0to99, head: responseHead(410),
             expected: .discardBody(then: .fail(.notFound(url: machineURL), respond: nil))),
    HeadCase(name: "401", range: r0to99, head: responseHead(401),
             expected: .discardBody(then: .fail(.unauthorized(url: machineURL, status: 401), respond: nil))),
    HeadCase(name: "403", range: r0to99, head: responseHead(403),
             expected: .discardBody(then: .fail(.unauthorized(url: machineURL, status: 403), respond: nil))),
    HeadCase(name: "400", range: r0to99, head: responseHead(400),
             expected: .discardBody(then: .fail(.httpStatus(url: machineURL, range: r0to99, status: 400), respond: nil))),
    HeadCase(name: "304 is not a redirect", range: r0to99, head: responseHead(304, location: "/b.mp4"),
             expected: .discardBody(then: .fail(.httpStatus(url: machineURL, range: r0to99, status: 304), respond: nil))),
    HeadCase(name: "204", range: r0to99, head: responseHead(204),
             expected: .discardBody(then: .fail(.httpStatus(url: machineURL, range: r0to99, status: 204), respond: nil))),
    HeadCase(name: "500 is retried", range: r0to99, head: responseHead(500),
             expected: .discardBody(then: .retry(
                 after: .milliseconds(100), from: 0, error: .httpStatus(url: machineURL, range: r0to99, status: 500)))),
    HeadCase(name: "503 is retried", range: r5open, head: responseHead(503),
             expected: .discardBody(then: .retry(
                 after: .milliseconds(100), from: 5, error: .httpStatus(url: machineURL, range: r5open, status: 503)))),

    // Redirects.
    HeadCase(name: "302 to a relative Location", range: r0to99, head: responseHead(302, location: "../b.mp4"),
             expected: .discardBody(then: .redirect(to: URL(string: "http://origin.test/b.mp4")!))),
    HeadCase(name: "307 to another host", range: r0to99, head: responseHead(307, location: "https://cdn.test/a.mp4"),
             expected: .discardBody(then: .redirect(to: URL(string: "https://cdn.test/a.mp4")!))),
    HeadCase(name: "302 without Location", range: r0to99, head: responseHead(302),
             expected: .discardBody(then: .fail(invalidResponse(r0to99, "HTTP 302 without a usable Location"), respond: nil))),
    HeadCase(name: "301 to another scheme", range: r0to99, head: responseHead(301, location: "ftp://origin.test/a.mp4"),
             expected: .discardBody(then: .fail(invalidResponse(r0to99, "HTTP 301 without a usable Location"), respond: nil))),
]

@Suite("HTTP range response machine: the first response")
struct RangeResponseFirstHeadTests {
    @Test(arguments: firstHeads)
    func decides(_ row: HeadCase) {
        var machine = makeMachine(row.range)
        _ = machine.send()
        #expect(machine.headReceived(row.head) == row.expected)
    }

    @Test("the Range header asks for what is left", arguments: [
        (ByteRange(offset: 0), "bytes=0-"),
        (ByteRange(offset: 7), "bytes=7-"),
        (ByteRange(offset: 10, length: 90), "bytes=10-99"),
        (ByteRange(offset: 10, length: 1), "bytes=10-10"),
        (ByteRange(offset: 10, length: 0), "bytes=10-10"),  // an empty range asks for one byte
    ])
    func requestRange(_ range: ByteRange, _ expected: String) {
        var machine = makeMachine(range)
        #expect(machine.send() == Machine.Request(url: machineURL, range: expected, ifRange: nil))
    }

    @Test func aRedirectIsWhereTheNextRequestGoesAndTheFinalURL() {
        var machine = makeMachine(r0to99)
        _ = machine.send()
        let cdn = URL(string: "https://cdn.test/x/a.mp4")!
        #expect(machine.headReceived(responseHead(302, location: cdn.absoluteString)) == .discardBody(then: .redirect(to: cdn)))
        #expect(machine.send() == Machine.Request(url: cdn, range: "bytes=0-99", ifRange: nil))
        #expect(machine.headReceived(responseHead(301, location: "b.mp4"))
            == .discardBody(then: .redirect(to: URL(string: "https://cdn.test/x/b.mp4")!)))
        _ = machine.send()
        #expect(machine.headReceived(responseHead(206, range: "bytes 0-99/100"))
            == .readBody(respond: expectedInformation(length: 100, url: URL(string: "https://cdn.test/x/b.mp4")!)))
    }

    @Test func redirectsBeyondTheLimitFail() {
        var machine = makeMachine(r0to99, redirects: 2)
        for _ in 0..<2 {
            _ = machine.send()
            #expect(machine.headReceived(responseHead(302, location: "/again")) == .discardBody(then: .redirect(to: URL(string: "http://origin.test/again")!)))
        }
        _ = machine.send()
        #expect(machine.headReceived(responseHead(302, location: "/again"))
            == .discardBody(then: .fail(invalidResponse(r0to99, "more than 2 redirects"), respond: nil)))
    }
}
