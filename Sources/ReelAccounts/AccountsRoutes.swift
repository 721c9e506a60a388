import Foundation
import ReelAccountClient
import ReelFeedModel
import ReelOrigin

extension AccountsService {
    /// The accounts API as ``OriginRoute``s for `reel serve` (put them before the feed's):
    ///
    /// | request | answer |
    /// | --- | --- |
    /// | `POST /api/register` `{name, email, password, nickname?}` | 201 ``AccountProfile`` |
    /// | `POST /api/login` `{name, password}` (name or e-mail) | ``LoginResponse`` |
    /// | `POST /api/logout` | 204 (the token is revoked) |
    /// | `GET /api/me`, `PATCH /api/me` `{nickname?, bio?}` | ``AccountProfile`` |
    /// | `PUT /api/me/avatar` (the picture as the body) | ``AccountProfile`` |
    /// | `GET /api/users/{id}` | ``AccountProfile`` without e-mail |
    /// | `GET /api/users/{id}/items?current=&size=` | a feed page |
    /// | `POST /api/upload?title=&category=&filename=` (the video as the body) | 201 ``UploadedItem`` |
    ///
    /// Errors answer ``APIErrorBody`` with a status: 400 bad input, 401 token problems
    /// (with `WWW-Authenticate`), 404, 409 taken, 413 too large, 422 not playable, 429.
    public func routes() -> [OriginRoute] {
        [
            OriginRoute(pathPrefix: "/api/register", methods: ["POST"]) { request in
                await Self.answer(status: 201) { try await self.register(try Self.decode(RegisterRequest.self, request.body)) }
            },
            OriginRoute(pathPrefix: "/api/login", methods: ["POST"]) { request in
                await Self.answer { try await self.login(try Self.decode(LoginRequest.self, request.body)) }
            },
            OriginRoute(pathPrefix: "/api/logout", methods: ["POST"]) { request in
                await Self.answer(status: 204) { try await self.logout(authorization: request.header("Authorization")); return Optional<String>.none }
            },
            OriginRoute(pathPrefix: "/api/me/avatar", methods: ["PUT"]) { request, body in
                await Self.answer { try await self.replaceAvatar(request: request, body: body) }
            },
            OriginRoute(pathPrefix: "/api/me", methods: ["GET", "HEAD", "PATCH"]) { request in
                await Self.answer {
                    guard request.path == "/api/me" else { throw APIFailure.notFound("no such resource") }
                    if request.method == "PATCH" {
                        return try await self.updateMe(authorization: request.header("Authorization"),
                                                       update: try Self.decode(ProfileUpdate.self, request.body))
                    }
                    return try await self.me(authorization: request.header("Authorization"))
                }
            },
            OriginRoute(pathPrefix: "/api/users", methods: ["GET", "HEAD"]) { request in
                await self.userRoute(request)
            },
            OriginRoute(pathPrefix: "/api/upload", methods: ["POST"]) { request, body in
                await Self.answer(status: 201) { try await self.upload(request: request, body: body) }
            },
        ]
    }

    private func userRoute(_ request: OriginRequest) async -> OriginResponse {
        let parts = request.path.split(separator: "/").dropFirst(2)  // api, users
        guard let first = parts.first, let id = Int64(first), parts.count <= 2 else {
            return Self.failure(APIFailure.notFound("no such user"))
        }
        if parts.count == 1 {
            return await Self.answer { try await self.publicProfile(id: id) }
        }
        guard parts.last == "items" else { return Self.failure(APIFailure.notFound("no such resource")) }
        do {
            _ = try await publicProfile(id: id)
            let page = Int(request.queryItems["current"] ?? "1") ?? 0
            let size = Int(request.queryItems["size"] ?? "10") ?? 0
            guard page >= 1, (1...100).contains(size) else {
                throw APIFailure.badRequest("invalid_paging", "current must be ≥ 1 and size 1…100")
            }
            let items = AccountsFeedSource.slice(try await feedItems(userID: id), page: page, size: size).items
            return .json(try FeedAPIFormat.encodeItems(items))
        } catch {
            return Self.failure(error)
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ body: Data) throws -> T {
        do {
            return try AccountsAPIFormat.decoder.decode(T.self, from: body)
        } catch {
            throw APIFailure.badRequest("malformed_json", "the body is not the expected JSON (\(Self.describe(error)))")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, _): "missing '\(key.stringValue)'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            "wrong type at '\(context.codingPath.map(\.stringValue).joined(separator: "."))'"
        case .dataCorrupted: "not JSON"
        default: "unreadable"
        }
    }

    static func answer<T: Encodable>(status: Int = 200, _ body: () async throws -> T?) async -> OriginResponse {
        do {
            guard let value = try await body() else { return OriginResponse(status: status) }
            return .json(try AccountsAPIFormat.encoder.encode(value), status: status)
        } catch {
            return failure(error)
        }
    }

    static func failure(_ error: any Error) -> OriginResponse {
        let failure = error as? APIFailure ?? APIFailure(status: 500, code: "internal", message: "\(error)")
        let body = (try? AccountsAPIFormat.encoder.encode(APIErrorBody(error: failure.code, message: failure.message))) ?? Data()
        var response = OriginResponse.json(body, status: failure.status)
        response.headers += failure.headers
        return response
    }
}
