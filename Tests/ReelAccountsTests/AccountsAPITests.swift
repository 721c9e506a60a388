import Foundation
import GRDB
import ReelAccountClient
import ReelAccounts
import Testing

@Suite("Accounts API against a real server and SQLite file")
struct AccountsAPITests {
    @Test("register, sign in, read and edit the profile, sign out: the token is then refused as revoked")
    func lifecycle() async throws {
        try await AccountsTestServer.with() { server in
            let registered = try await server.request("POST", "/api/register", body: try server.json(
                RegisterRequest(name: "ada", email: "ada@example.org", password: "analytical", nickname: "Ada L.")))
            #expect(registered.status == 201)
            let profile = try registered.decode(AccountProfile.self)
            #expect(profile.name == "ada" && profile.nickname == "Ada L." && profile.email == "ada@example.org" && profile.uploads == 0)

            let session = try await server.client.login(name: "ADA@example.org", password: "analytical")
            #expect(session.user.id == profile.id)
            #expect(abs(session.expiresAt.timeIntervalSince(server.clock.now) - 3600) < 1)
            let client = server.client.withToken(session.token)
            #expect(try await client.me().name == "ada")

            let edited = try await client.updateMe(ProfileUpdate(nickname: "Countess", bio: "Notes on the engine"))
            #expect(edited.nickname == "Countess" && edited.bio == "Notes on the engine")
            let seen = try await server.client.user(id: profile.id)
            #expect(seen.nickname == "Countess" && seen.email == nil)
            let missing = try await server.request("GET", "/api/users/999")
            #expect(missing.status == 404 && missing.error?.error == "not_found")

            try await client.logout()
            let after = try await server.request("GET", "/api/me", token: session.token)
            #expect(after.status == 401 && after.error?.error == "token_revoked")
            #expect(after.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            await #expect(throws: AccountClientError.unauthorized(reason: "token_revoked", message: "the token was revoked by signing out")) {
                try await client.me()
            }
        }
    }

    @Test("passwords are stored as Argon2id hashes and tokens only as their SHA-256")
    func storedSecrets() async throws {
        try await AccountsTestServer.with() { server in
            let (token, _) = try await server.signUp("grace", password: "compiler-first")
            let database = try DatabaseQueue(path: server.data.appendingPathComponent("reel.sqlite").path)
            let hash = try await database.read { try String.fetchOne($0, sql: "SELECT passwordHash FROM user WHERE name = 'grace'") }
            #expect(hash?.hasPrefix("$argon2id$v=19$") == true)
            #expect(hash?.contains("compiler-first") == false)
            let stored = try await database.read { try String.fetchAll($0, sql: "SELECT hash FROM token") }
            #expect(stored.count == 1 && stored[0] != token && stored[0].count == 64)
        }
    }

    @Test("malformed JSON is answered 400 malformed_json and creates nothing")
    func malformedJSON() async throws {
        try await AccountsTestServer.with() { server in
            for body in ["{nope", "", "[]", #"{"name":"ada","email":"ada@example.org"}"#, #"{"name":1,"email":"a@b.co","password":"12345678"}"#] {
                let answer = try await server.request("POST", "/api/register", body: Data(body.utf8))
                #expect(answer.status == 400, "\(body)")
                #expect(answer.error?.error == "malformed_json", "\(body)")
            }
            let login = try await server.request("POST", "/api/login", body: Data("not json".utf8))
            #expect(login.status == 400 && login.error?.error == "malformed_json")
            let (token, _) = try await server.signUp("ada")
            let patch = try await server.request("PATCH", "/api/me", body: Data(#"{"nickname": 5}"#.utf8), token: token)
            #expect(patch.status == 400 && patch.error?.error == "malformed_json")
            #expect(try await server.client.withToken(token).me().nickname == "ada")
        }
    }

    @Test("a bad e-mail, a short password, a bad name: 400 with their own codes, no account made")
    func badFields() async throws {
        try await AccountsTestServer.with() { server in
            let cases: [(RegisterRequest, String)] = [
                (RegisterRequest(name: "ada", email: "not-an-address", password: "analytical"), "invalid_email"),
                (RegisterRequest(name: "ada", email: "ada@localhost", password: "analytical"), "invalid_email"),
                (RegisterRequest(name: "ada", email: "a da@example.org", password: "analytical"), "invalid_email"),
                (RegisterRequest(name: "ada", email: "ada@example.org", password: "short"), "password_too_short"),
                (RegisterRequest(name: "../ada", email: "ada@example.org", password: "analytical"), "invalid_name"),
                (RegisterRequest(name: "a", email: "ada@example.org", password: "analytical"), "invalid_name"),
                (RegisterRequest(name: "ada", email: "ada@example.org", password: "analytical", nickname: "bell\u{07}"), "invalid_nickname"),
            ]
            for (request, code) in cases {
                let answer = try await server.request("POST", "/api/register", body: try server.json(request))
                #expect(answer.status == 400, "\(code)")
                #expect(answer.error?.error == code)
                #expect(answer.error?.message.isEmpty == false)
            }
            let login = try await server.request("POST", "/api/login", body: try server.json(LoginRequest(name: "ada", password: "analytical")))
            #expect(login.status == 401)
        }
    }

    @Test("a taken name (in any case) or e-mail is 409, and the first account is untouched")
    func takenName() async throws {
        try await AccountsTestServer.with() { server in
            _ = try await server.signUp("ada", password: "analytical")
            let sameName = try await server.request("POST", "/api/register", body: try server.json(
                RegisterRequest(name: "ADA", email: "other@example.org", password: "different1")))
            #expect(sameName.status == 409 && sameName.error?.error == "name_taken")
            let sameEmail = try await server.request("POST", "/api/register", body: try server.json(
                RegisterRequest(name: "other", email: "Ada@Example.org", password: "different1")))
            #expect(sameEmail.status == 409 && sameEmail.error?.error == "email_taken")
            _ = try await server.client.login(name: "ada", password: "analytical")
        }
    }

    @Test("a wrong password answers exactly like an unknown user; failures are rate-limited per name")
    func wrongPasswordAndThrottle() async throws {
        try await AccountsTestServer.with(maximumFailedLogins: 3) { server in
            _ = try await server.signUp("ada", password: "analytical")
            let wrong = try await server.request("POST", "/api/login", body: try server.json(LoginRequest(name: "ada", password: "wrong-one")))
            let unknown = try await server.request("POST", "/api/login", body: try server.json(LoginRequest(name: "nobody", password: "wrong-one")))
            #expect(wrong.status == 401 && unknown.status == 401)
            #expect(wrong.body == unknown.body)
            #expect(wrong.error?.error == "invalid_credentials")

            for _ in 0..<2 {
                let again = try await server.request("POST", "/api/login", body: try server.json(LoginRequest(name: "ada", password: "wrong-one")))
                #expect(again.status == 401)
            }
            // Three failures within the window: even the right password waits.
            let limited = try await server.request("POST", "/api/login", body: try server.json(LoginRequest(name: "Ada", password: "analytical")))
            #expect(limited.status == 429 && limited.error?.error == "too_many_attempts")
            #expect(Int(limited.header("Retry-After") ?? "") ?? 0 > 0)
            // Another name is not affected.
            _ = try await server.signUp("grace")
            server.clock.advance(seconds: 61)
            _ = try await server.client.login(name: "ada", password: "analytical")
        }
    }

    @Test("a missing, unknown or expired token is 401 with its reason")
    func tokenReasons() async throws {
        try await AccountsTestServer.with(tokenLifetime: .seconds(600)) { server in
            let (token, _) = try await server.signUp("ada")
            let none = try await server.request("GET", "/api/me")
            #expect(none.status == 401 && none.error?.error == "token_missing")
            let unknown = try await server.request("GET", "/api/me", token: "made-up")
            #expect(unknown.status == 401 && unknown.error?.error == "token_invalid")
            #expect(try await server.request("GET", "/api/me", token: token).status == 200)
            server.clock.advance(seconds: 601)
            let expired = try await server.request("GET", "/api/me", token: token)
            #expect(expired.status == 401 && expired.error?.error == "token_expired")
            let upload = try await server.request("POST", "/api/upload?title=x", body: try AccountsTestServer.clipData(), token: token)
            #expect(upload.status == 401 && upload.error?.error == "token_expired")
            #expect(server.storedFiles().isEmpty)
        }
    }

    @Test("an avatar is stored and served; something else than a picture is refused")
    func avatar() async throws {
        try await AccountsTestServer.with() { server in
            let (token, _) = try await server.signUp("ada")
            var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            png.append(Data(repeating: 7, count: 100))
            let put = try await server.request("PUT", "/api/me/avatar", body: png, token: token)
            #expect(put.status == 200)
            let avatar = try #require(try put.decode(AccountProfile.self).avatarURL)
            #expect(try await server.request("GET", avatar).body == png)
            let text = try await server.request("PUT", "/api/me/avatar", body: Data("hello".utf8), token: token)
            #expect(text.status == 422 && text.error?.error == "not_an_image")
            let huge = try await server.request("PUT", "/api/me/avatar", body: Data(repeating: 0xFF, count: 300 * 1024), token: token)
            #expect(huge.status == 413 && huge.error?.error == "too_large")
            #expect(server.storedFiles() == ["media/" + String(avatar.dropFirst("/_uploads/".count))])
        }
    }
}
