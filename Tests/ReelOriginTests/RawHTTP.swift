import Foundation
import ReelTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A response read off the wire, byte for byte, by a minimal HTTP/1.1 client: the
/// tests check the server's framing, not a client library's interpretation of it.
struct RawResponse {
    var status: Int
    var headers: [(String, String)]
    var body: Data
    /// Whether the body was chunked.
    var chunked: Bool
    /// Whether the connection closed before the framing said the body ended.
    var truncated: Bool

    func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
}

enum RawHTTPError: Error { case connect(Int32), timeout, malformed(String) }

/// ``hangWatchdog`` in seconds, for socket timeouts.
let watchdogSeconds = TimeInterval(hangWatchdog.components.seconds)

/// Sends one request with `Connection: close` and reads the whole answer, on a thread of
/// its own so the blocking socket never holds a thread of the concurrency pool the
/// server's route handlers need. The answer ends when the server closes, or after
/// `timeout` of silence once the first byte came (how a stalled body shows); the first
/// byte may take up to `firstByteTimeout`. Both default to the hang watchdog: on one loaded
/// core a route's answer waits for the one concurrency thread, shared with the whole suite,
/// and 60 s was once not enough. A test of a stalled body passes its own short `timeout`.
func rawRequest(
    port: Int, method: String = "GET", path: String, headers: [(String, String)] = [],
    timeout: TimeInterval = watchdogSeconds, firstByteTimeout: TimeInterval = watchdogSeconds
) async throws -> RawResponse {
    let headerList = headers.map { [$0.0, $0.1] }
    return try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result {
                try blockingRequest(
                    port: port, method: method, path: path, headers: headerList.map { ($0[0], $0[1]) },
                    timeout: timeout, firstByteTimeout: firstByteTimeout
                )
            })
        }
    }
}

private func setReceiveTimeout(_ fd: Int32, _ seconds: TimeInterval) {
    var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - floor(seconds)) * 1_000_000))
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
}

private func blockingRequest(
    port: Int, method: String, path: String, headers: [(String, String)],
    timeout: TimeInterval, firstByteTimeout: TimeInterval
) throws -> RawResponse {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RawHTTPError.connect(errno) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw RawHTTPError.connect(errno) }
    setReceiveTimeout(fd, firstByteTimeout)
    var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    text += "\r\n"
    let request = Array(text.utf8)
    var sent = 0
    while sent < request.count {
        let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n > 0 { sent += n } else if n < 0, errno == EINTR { continue } else { break }
    }

    var received = Data()
    var buffer = [UInt8](repeating: 0, count: 65536)
    var timedOut = false
    while true {
        let n = recv(fd, &buffer, buffer.count, 0)
        if n > 0 {
            if received.isEmpty { setReceiveTimeout(fd, timeout) }
            received.append(contentsOf: buffer[0..<n])
        } else if n == 0 {
            break
        } else {
            // A signal (a child process of another test exiting) interrupts the wait:
            // that is no answer from the server, so wait again.
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { timedOut = true }
            break
        }
    }
    return try parse(received, isHead: method == "HEAD", timedOut: timedOut)
}

private func parse(_ data: Data, isHead: Bool, timedOut: Bool) throws -> RawResponse {
    let separator = Data("\r\n\r\n".utf8)
    guard let end = data.range(of: separator) else {
        if timedOut { throw RawHTTPError.timeout }
        throw RawHTTPError.malformed("no header end in \(data.count) bytes")
    }
    let headText = String(decoding: data[..<end.lowerBound], as: UTF8.self)
    var lines = headText.components(separatedBy: "\r\n")
    let statusLine = lines.removeFirst().split(separator: " ")
    guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw RawHTTPError.malformed(headText) }
    let headers = lines.compactMap { line -> (String, String)? in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
    var response = RawResponse(status: status, headers: headers, body: Data(), chunked: false, truncated: false)
    let rest = data[end.upperBound...]
    if isHead { return response }
    if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
        response.chunked = true
        var index = rest.startIndex
        while true {
            guard let lineEnd = rest[index...].range(of: Data("\r\n".utf8)) else { response.truncated = true; break }
            let sizeText = String(decoding: rest[index..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";")[0], radix: 16) else { throw RawHTTPError.malformed("chunk size \(sizeText)") }
            index = lineEnd.upperBound
            if size == 0 { break }
            guard rest.endIndex - index >= size else {
                response.body.append(rest[index...])
                response.truncated = true
                break
            }
            response.body.append(rest[index..<(index + size)])
            index += size + 2
        }
    } else {
        response.body = Data(rest)
        if let length = response.header("Content-Length").flatMap(Int.init), response.body.count < length {
            response.truncated = true
        }
    }
    if timedOut { response.truncated = true }
    return response
}
