import Foundation
import ReelAccountClient

/// An error answer: the HTTP status, the stable code and one line for people
/// (see ``APIErrorBody`` for the codes).
struct APIFailure: Error, Sendable, CustomStringConvertible {
    var status: Int
    var code: String
    var message: String
    var headers: [(name: String, value: String)] = []

    var description: String { "\(status) \(code): \(message)" }

    static func badRequest(_ code: String, _ message: String) -> APIFailure { APIFailure(status: 400, code: code, message: message) }

    static func unauthorized(_ code: String, _ message: String) -> APIFailure {
        APIFailure(status: 401, code: code, message: message,
                   headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\", error_description=\"\(message)\"")])
    }

    static func notFound(_ message: String) -> APIFailure { APIFailure(status: 404, code: "not_found", message: message) }
}
