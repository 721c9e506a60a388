import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Answers the requests of one connection: routes first, then files, with the
/// server's latency, bandwidth cap and fault. Runs on the connection's event loop;
/// `HTTPServerPipelineHandler` ahead of it holds pipelined requests until a response ends.
final class OriginHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: OriginState
    private var head: HTTPRequestHead?
    private var body = Data()
    private var active = true
    /// The body source of the streaming route answering the current request, until its end.
    private var streaming: OriginRequestBody.Producer.Source?
    /// Reads are held back while a streaming route's consumer is behind.
    private var readPaused = false
    private var readPending = false
    /// After a streaming route answered before its body ended: the rest of the body is
    /// read and dropped (at most this many more bytes), then the connection closes. Reading
    /// it, rather than closing at once, lets the client see the answer instead of a reset.
    private var discardBudget: Int?

    init(state: OriginState) {
        self.state = state
    }

    func channelInactive(context: ChannelHandlerContext) {
        active = false
        streaming?.finish(OriginRequestBody.Truncated())
        streaming = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        streaming?.finish(OriginRequestBody.Truncated())
        streaming = nil
        context.fireErrorCaught(error)
    }

    func read(context: ChannelHandlerContext) {
        if readPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    private func resumeReading(context: ChannelHandlerContext) {
        guard readPaused else { return }
        readPaused = false
        if readPending {
            readPending = false
            context.read()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if startStreaming(context: context, head: head) { return }
            self.head = head
            body = Data()
        case .body(let buffer):
            if var budget = discardBudget {
                budget -= buffer.readableBytes
                discardBudget = budget
                if budget < 0 { context.close(promise: nil) }
                return
            }
            if let streaming {
                if streaming.yield(buffer) == .stopProducing { readPaused = true }
                return
            }
            if body.count < 1 << 20 {
                body.append(contentsOf: buffer.readableBytesView)
            }
        case .end:
            if discardBudget != nil {
                discardBudget = nil
                context.close(promise: nil)
                return
            }
            if let streaming {
                streaming.finish()
                self.streaming = nil
                return
            }
            guard let head else { return }
            self.head = nil
            received(context: context, head: head, body: body)
        }
    }

    // MARK: - Requests

    private struct Request {
        var head: HTTPRequestHead
        var origin: OriginRequest
        var index: Int
        /// Which request for this path this is (1 for the first).
        var number: Int
        var isHead: Bool { head.method == .HEAD }
    }

    private static func originRequest(head: HTTPRequestHead, body: Data) -> OriginRequest {
        let uri = head.uri
        let pathPart: Substring
        var query: String?
        if let mark = uri.firstIndex(of: "?") {
            pathPart = uri[..<mark]
            query = String(uri[uri.index(after: mark)...])
        } else {
            pathPart = Substring(uri)
        }
        let path = String(pathPart).removingPercentEncoding ?? String(pathPart)
        return OriginRequest(
            method: head.method.rawValue, path: path, query: query,
            headers: head.headers.map { (name: $0.name, value: $0.value) }, body: body
        )
    }

    /// Starts a streaming route for `head` if one matches; the body parts then go to it.
    private func startStreaming(context: ChannelHandlerContext, head: HTTPRequestHead) -> Bool {
        let origin = Self.originRequest(head: head, body: Data())
        guard let route = state.configuration.routes.first(where: { $0.matches(origin) }),
              let handler = route.streamingHandler else { return false }
        let (index, number) = state.recordRequest(method: head.method.rawValue, path: origin.path, range: nil, ifRange: nil)
        let request = Request(head: head, origin: origin, index: index, number: number)
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        let delegate = OriginBodyDelegate {
            loop.execute { bound.value.handler.resumeReading(context: bound.value.context) }
        }
        let made = OriginRequestBody.Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: 4, highWatermark: 16),
            finishOnDeinit: false,
            delegate: delegate
        )
        streaming = made.source
        let body = OriginRequestBody(producer: made.sequence)
        let promise = loop.makePromise(of: OriginResponse.self)
        state.runRoute(promise) { try await handler(origin, body) }
        promise.futureResult.assumeIsolated().whenComplete { result in
            // A response ready before the body ended closes the connection after it.
            let early = self.streaming != nil
            if early {
                self.streaming?.finish()
                self.streaming = nil
                self.discardBudget = 16 << 20
                self.resumeReading(context: context)
            }
            self.sendRouteResponse(result, context: context, request: request, forceClose: early, closeNow: false)
        }
        return true
    }

    private func received(context: ChannelHandlerContext, head: HTTPRequestHead, body: Data) {
        let uri = head.uri
        let pathPart: Substring
        var query: String?
        if let mark = uri.firstIndex(of: "?") {
            pathPart = uri[..<mark]
            query = String(uri[uri.index(after: mark)...])
        } else {
            pathPart = Substring(uri)
        }
        let path = String(pathPart).removingPercentEncoding ?? String(pathPart)
        let origin = OriginRequest(
            method: head.method.rawValue, path: path, query: query,
            headers: head.headers.map { (name: $0.name, value: $0.value) }, body: body
        )
        let (index, number) = state.recordRequest(
            method: head.method.rawValue, path: path,
            range: head.headers.first(name: "range"), ifRange: head.headers.first(name: "if-range")
        )
        let request = Request(head: head, origin: origin, index: index, number: number)
        let latency = TimeAmount.nanoseconds(
            state.configuration.latency.components.seconds * 1_000_000_000
                + state.configuration.latency.components.attoseconds / 1_000_000_000
        )
        if latency > .zero {
            context.eventLoop.assumeIsolated().scheduleTask(in: latency) {
                self.respond(context: context, request: request)
            }
        } else {
            respond(context: context, request: request)
        }
    }

    private func respond(context: ChannelHandlerContext, request: Request) {
        guard active else { return }
        if let route = state.configuration.routes.first(where: { $0.matches(request.origin) }) {
            answerRoute(route, context: context, request: request)
            return
        }
        guard request.head.method == .GET || request.head.method == .HEAD else {
            sendSimple(context: context, request: request, status: .methodNotAllowed, extraHeaders: [("Allow", "GET, HEAD")])
            return
        }
        guard let path = state.filePath(for: request.origin.path) else {
            sendSimple(context: context, request: request, status: .notFound)
            return
        }
        NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) {
            try OriginFile(path: path)
        }.assumeIsolated().whenComplete { result in
            switch result {
            case .success(let file):
                self.serve(file: file, context: context, request: request)
            case .failure(OriginFile.OpenError.notFound), .failure(OriginFile.OpenError.notARegularFile):
                self.sendSimple(context: context, request: request, status: .notFound)
            case .failure:
                self.sendSimple(context: context, request: request, status: .internalServerError)
            }
        }
    }

    private func answerRoute(_ route: OriginRoute, context: ChannelHandlerContext, request: Request) {
        let promise = context.eventLoop.makePromise(of: OriginResponse.self)
        let origin = request.origin
        state.runRoute(promise) { try await route.handler(origin) }
        promise.futureResult.assumeIsolated().whenComplete { result in
            self.sendRouteResponse(result, context: context, request: request, forceClose: false)
        }
    }

    private func sendRouteResponse(
        _ result: Result<OriginResponse, any Error>, context: ChannelHandlerContext, request: Request, forceClose: Bool,
        closeNow: Bool = true
    ) {
        do {
            guard self.active else { return }
            let response = (try? result.get()) ?? OriginResponse.text("route failed\n", status: 500)
            var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
            self.addConnectionHeader(&headers, request: request, forceClose: forceClose)
            let status = HTTPResponseStatus(statusCode: response.status)
            self.state.recordStatus(response.status, at: request.index)
            context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: request.head.version, status: status, headers: headers))), promise: nil)
            if !request.isHead, !response.body.isEmpty {
                let count = response.body.count
                self.state.recordBytes(count)
                context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
            }
            if closeNow {
                self.finishResponse(context: context, request: request, close: forceClose)
            } else {
                context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }

    // MARK: - Files

    private func serve(file: OriginFile, context: ChannelHandlerContext, request: Request) {
        guard active else { file.closeFile(); return }
        let fault = state.configuration.fault
        if fault == .fiveHundredFirst, request.number == 1 {
            file.closeFile()
            sendSimple(context: context, request: request, status: .internalServerError)
            return
        }
        let length = file.length
        // content-changed: the n-th request sees version n (version 1 is the file itself).
        let version = fault == .contentChanged ? request.number : 1
        let entityTag = version > 1 ? String(file.entityTag.dropLast()) + "-v\(version)\"" : file.entityTag
        let mask: UInt8 = version > 1 ? UInt8((version - 2) % 255 + 1) : 0

        var range = OriginRange.parse(request.head.headers.first(name: "range"), length: length)
        if let validator = request.head.headers.first(name: "if-range"),
           validator != entityTag, validator != file.lastModified {
            range = .whole
        }
        if fault == .ignoreRange { range = .whole }

        var headers = Self.fileHeaders(file, request: request, entityTag: entityTag, fault: fault)
        let hideLength = fault == .noContentLength
        let total = hideLength ? "*" : String(length)

        let status: HTTPResponseStatus
        let start: Int64
        let end: Int64  // exclusive
        switch range {
        case .unsatisfiable:
            file.closeFile()
            var extra: [(String, String)] = [("ETag", entityTag)]
            if !hideLength { extra.append(("Content-Range", "bytes */\(length)")) }
            sendSimple(context: context, request: request, status: .rangeNotSatisfiable, extraHeaders: extra)
            return
        case .whole:
            status = .ok
            start = 0
            end = length
        case .partial(let first, let last):
            status = .partialContent
            start = first
            end = last + 1
            if fault == .wrongContentRange {
                headers.add(name: "Content-Range", value: "bytes \(first + 1)-\(last + 1)/\(total)")
            } else {
                headers.add(name: "Content-Range", value: "bytes \(first)-\(last)/\(total)")
            }
        }
        let closeAfter = hideLength && request.head.version.minor == 0
        if !hideLength {
            headers.add(name: "Content-Length", value: String(end - start))
        } else if request.isHead {
            // A HEAD answer without a length cannot be framed on a kept-alive connection.
            headers.add(name: "Connection", value: "close")
        }
        addConnectionHeader(&headers, request: request, forceClose: closeAfter)
        state.recordStatus(Int(status.code), at: request.index)
        let responseHead = HTTPResponseHead(version: request.head.version, status: status, headers: headers)
        context.writeAndFlush(wrapOutboundOut(.head(responseHead)), promise: nil)

        if request.isHead {
            file.closeFile()
            finishResponse(context: context, request: request, close: hideLength)
            return
        }
        if fault == .stallAfterHeaders, request.number == 1 {
            // Headers, then silence: the client's read timeout must notice.
            file.closeFile()
            return
        }
        var cutAt: Int64?
        if fault == .dropMidBody, end - start > 1 {
            cutAt = start + (end - start) / 2
        }
        let body = BodyWriter(file: file, position: start, end: end, cutAt: cutAt, mask: mask, closeAfter: closeAfter)
        writeNextChunk(context: context, request: request, body: body)
    }

    /// The headers every answer with a file's body has: type, validators, range support.
    private static func fileHeaders(_ file: OriginFile, request: Request, entityTag: String,
                                    fault: OriginFault?) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType(for: request.origin.path))
        headers.add(name: "ETag", value: entityTag)
        headers.add(name: "Last-Modified", value: file.lastModified)
        headers.add(name: "Accept-Ranges", value: fault == .ignoreRange ? "none" : "bytes")
        return headers
    }

    /// The part of a file body still to send.
    private struct BodyWriter {
        var file: OriginFile
        var position: Int64
        var end: Int64
        var cutAt: Int64?
        var mask: UInt8
        var closeAfter: Bool
    }

    private func writeNextChunk(context: ChannelHandlerContext, request: Request, body: BodyWriter) {
        guard active else { body.file.closeFile(); return }
        let limit = body.cutAt ?? body.end
        if body.position >= limit {
            body.file.closeFile()
            if body.cutAt != nil {
                // drop-mid-body: the promised bytes never come.
                context.close(promise: nil)
            } else {
                finishResponse(context: context, request: request, close: body.closeAfter)
            }
            return
        }
        let count = Int(min(Int64(state.chunkSize), limit - body.position))
        let file = body.file
        let position = body.position
        let mask = body.mask
        let allocator = context.channel.allocator
        NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) { () -> ByteBuffer in
            var buffer = try file.read(at: position, count: count, allocator: allocator)
            if mask != 0 {
                buffer.withUnsafeMutableReadableBytes { raw in
                    for i in raw.indices { raw[i] ^= mask }
                }
            }
            return buffer
        }.assumeIsolated().whenComplete { result in
            guard self.active else { file.closeFile(); return }
            guard case .success(let buffer) = result, buffer.readableBytes > 0 else {
                // The file shrank or failed under us: the body cannot be completed.
                file.closeFile()
                context.close(promise: nil)
                return
            }
            let delay = self.state.reserveLink(buffer.readableBytes)
            let send = {
                guard self.active else { file.closeFile(); return }
                let written = buffer.readableBytes
                context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(buffer)))).assumeIsolated().whenComplete { outcome in
                    guard case .success = outcome else { file.closeFile(); return }
                    self.state.recordBytes(written)
                    var next = body
                    next.position += Int64(written)
                    self.writeNextChunk(context: context, request: request, body: next)
                }
            }
            if delay > .zero {
                context.eventLoop.assumeIsolated().scheduleTask(in: delay) { send() }
            } else {
                send()
            }
        }
    }

    // MARK: - Helpers

    private func sendSimple(
        context: ChannelHandlerContext, request: Request, status: HTTPResponseStatus,
        extraHeaders: [(String, String)] = []
    ) {
        guard active else { return }
        let text = request.isHead ? "" : "\(status.code) \(status.reasonPhrase)\n"
        var headers = HTTPHeaders(extraHeaders)
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: String(request.isHead ? 0 : text.utf8.count))
        addConnectionHeader(&headers, request: request, forceClose: false)
        state.recordStatus(Int(status.code), at: request.index)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.head.version, status: status, headers: headers))), promise: nil)
        if !text.isEmpty {
            state.recordBytes(text.utf8.count)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
        }
        finishResponse(context: context, request: request, close: false)
    }

    private func addConnectionHeader(_ headers: inout HTTPHeaders, request: Request, forceClose: Bool) {
        if forceClose || !request.head.isKeepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
        } else if request.head.version.minor == 0 {
            headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
    }

    private func finishResponse(context: ChannelHandlerContext, request: Request, close: Bool) {
        let mustClose = close || !request.head.isKeepAlive
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            if mustClose { context.close(promise: nil) }
        }
    }

    static func contentType(for path: String) -> String {
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "mp4", "m4v": return "video/mp4"
        case "m4a": return "audio/mp4"
        case "mov": return "video/quicktime"
        case "webm": return "video/webm"
        case "mkv": return "video/x-matroska"
        case "ts": return "video/mp2t"
        case "m3u8": return "application/vnd.apple.mpegurl"
        case "mpd": return "application/dash+xml"
        case "m4s": return "video/iso.segment"
        case "mp3": return "audio/mpeg"
        case "aac": return "audio/aac"
        case "ogg", "opus": return "audio/ogg"
        case "wav": return "audio/wav"
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "webp": return "image/webp"
        case "json": return "application/json"
        case "html", "htm": return "text/html; charset=utf-8"
        case "txt": return "text/plain; charset=utf-8"
        default: return "application/octet-stream"
        }
    }
}
