import Foundation
import ReelCore

/// What a response head means: its status, its `Content-Range` against the request, its
/// entity against the one being read, its length.
extension RangeResponseMachine {
    /// Where a body's bytes lie in the resource, as its head says.
    struct BodyBounds: Hashable {
        /// The offset of the body's first byte.
        var start: Int64
        /// How many bytes the body holds, when the head says.
        var length: Int64?
        /// The resource's complete length, when known.
        var completeLength: Int64?
    }

    /// The head of the current attempt's response arrived.
    mutating func headReceived(_ head: Head) -> HeadAction {
        guard state == .awaitingHead else { preconditionFailure("a response head without a request") }
        let status = head.status
        if (300...399).contains(status), status != 304 {
            return .discardBody(then: redirect(head))
        }
        switch status {
        case 404, 410:
            return .discardBody(then: fail(.notFound(url: url), respond: nil))
        case 401, 403:
            return .discardBody(then: fail(.unauthorized(url: url, status: status), respond: nil))
        case 416:
            return .discardBody(then: unsatisfiable(head))
        case 500...599:
            return .discardBody(then: attemptFailed(.retryable(.httpStatus(url: url, range: range, status: status))))
        case 200, 206:
            return bodyHead(head)
        default:
            return .discardBody(then: fail(.httpStatus(url: url, range: range, status: status), respond: nil))
        }
    }

    /// A `3xx` (other than `304`): the next request goes where `Location` says.
    private mutating func redirect(_ head: Head) -> Outcome {
        guard let location = head.location,
              let target = URL(string: location, relativeTo: currentURL)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return fail(.invalidResponse(
                url: url, range: range, reason: "HTTP \(head.status) without a usable Location"
            ), respond: nil)
        }
        redirects += 1
        guard redirects <= configuration.maxRedirects else {
            return fail(.invalidResponse(
                url: url, range: range, reason: "more than \(configuration.maxRedirects) redirects"
            ), respond: nil)
        }
        currentURL = target
        state = .idle
        return .redirect(to: target)
    }

    /// A `416`: the end of input at the end of the resource, an error anywhere else.
    private mutating func unsatisfiable(_ head: Head) -> Outcome {
        let length = head.contentRange.flatMap(ContentRangeValue.parse)?.completeLength ?? information?.length
        if let length, position > length {
            let info = information == nil ? unsatisfiedInformation(head, length: length) : nil
            return fail(.rangeNotSatisfiable(url: url, range: range, length: length), respond: info)
        }
        if let length, position < length {
            return fail(.invalidResponse(
                url: url, range: range, reason: "416 for byte \(position) of a \(length)-byte resource"
            ), respond: nil)
        }
        // At the end (or the length is unknown): the end of input.
        guard information == nil else { return finish(respond: nil) }
        let info = unsatisfiedInformation(head, length: length)
        information = info
        return finish(respond: info)
    }

    private func unsatisfiedInformation(_ head: Head, length: Int64?) -> ContentInformation {
        ContentInformation(
            length: length,
            contentType: nil,
            isByteRangeAccessSupported: true,
            entityTag: head.entityTag,
            lastModified: head.lastModified,
            finalURL: currentURL
        )
    }

    /// A `200` or `206`: which bytes the body holds, checked against the request and
    /// against the entity being read.
    private mutating func bodyHead(_ head: Head) -> HeadAction {
        let contentLength = head.contentLength.flatMap { Int64($0) }
        let bounds: BodyBounds
        if head.status == 206 {
            switch partialBounds(head, contentLength: contentLength) {
            case .failure(let error):
                state = .done
                return .dropBody(fail: error)
            case .success(let partial):
                bounds = partial
            }
        } else {
            bounds = BodyBounds(start: 0, length: contentLength, completeLength: contentLength)
        }

        var respond: ContentInformation?
        if let previous = information {
            // A resumed request: it must be the same entity.
            let changed = Self.entityChanged(previous: previous, entityTag: head.entityTag, lastModified: head.lastModified)
            let lengthChanged = previous.length.flatMap { known in bounds.completeLength.map { known != $0 } } ?? false
            if changed || lengthChanged {
                return .discardBody(then: fail(
                    .contentChanged(url: url, expected: previous.entityTag, found: head.entityTag), respond: nil
                ))
            }
        } else {
            let info = firstInformation(head, completeLength: bounds.completeLength)
            if let length = bounds.completeLength, range.offset > length {
                return .discardBody(then: fail(.rangeNotSatisfiable(url: url, range: range, length: length), respond: info))
            }
            information = info
            if let length = bounds.completeLength {
                end = min(end ?? length, length)
            }
            respond = info
        }
        if let end, position >= end {
            state = .done
            if let respond { return .respondAndFinish(respond) }
            return .discardBody(then: .finish(respond: nil))
        }
        state = .receiving(Body(status: head.status, length: bounds.length, skip: position - bounds.start))
        return .readBody(respond: respond)
    }

    /// A `206`'s `Content-Range`, checked: it must start at the position asked for, end no
    /// later than asked, agree with `Content-Length` and with the length already known.
    private func partialBounds(_ head: Head, contentLength: Int64?) -> Result<BodyBounds, ResourceLoaderError> {
        guard let header = head.contentRange else {
            return .failure(.invalidResponse(url: url, range: range, reason: "206 without Content-Range"))
        }
        guard let contentRange = ContentRangeValue.parse(header), let first = contentRange.first, let last = contentRange.last else {
            return .failure(.invalidResponse(url: url, range: range, reason: "unreadable Content-Range \"\(header)\""))
        }
        let askedLast = end.map { max($0, position + 1) - 1 }
        if first != position || (askedLast.map { last > $0 } ?? false) {
            let asked = askedLast.map { "\(position)-\($0)" } ?? "\(position)-"
            return .failure(.invalidResponse(
                url: url, range: range,
                reason: "asked for bytes \(asked), Content-Range says \(first)-\(last)"
            ))
        }
        if let contentLength, contentLength != last - first + 1 {
            return .failure(.invalidResponse(
                url: url, range: range,
                reason: "Content-Length \(contentLength) does not match Content-Range \(first)-\(last)"
            ))
        }
        if let known = information?.length, let total = contentRange.completeLength, known != total {
            return .failure(.contentChanged(url: url, expected: information?.entityTag, found: head.entityTag))
        }
        return .success(BodyBounds(
            start: first, length: last - first + 1,
            completeLength: contentRange.completeLength ?? information?.length
        ))
    }

    /// What the read's first `200` or `206` says about the resource.
    private func firstInformation(_ head: Head, completeLength: Int64?) -> ContentInformation {
        ContentInformation(
            length: completeLength,
            contentType: head.contentType,
            isByteRangeAccessSupported: head.status == 206 || (head.acceptRanges?.lowercased() == "bytes" && range.offset == 0),
            entityTag: head.entityTag,
            lastModified: head.lastModified,
            finalURL: currentURL
        )
    }

    /// Whether a resumed response names another entity than the one being read: a
    /// different `ETag` when both have one, else a different `Last-Modified`.
    static func entityChanged(previous: ContentInformation, entityTag: String?, lastModified: String?) -> Bool {
        if let old = previous.entityTag, let new = entityTag { return old != new }
        if let old = previous.lastModified, let new = lastModified { return old != new }
        return false
    }
}
