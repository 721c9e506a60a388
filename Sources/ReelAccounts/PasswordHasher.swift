import Foundation
import NIOPosix
internal import CArgon2

/// Argon2id password hashing (Debian's libargon2), in the PHC string format
/// (`$argon2id$v=19$m=65536,t=3,p=1$salt$hash`), so the parameters travel with each hash
/// and can be raised later without breaking old ones. Hashing takes tens of milliseconds
/// and a lot of memory on purpose: it runs on NIO's thread pool, never on a Swift
/// concurrency thread.
public struct PasswordHasher: Sendable {
    /// Argon2id's costs.
    public struct Parameters: Sendable, Hashable {
        /// Passes over memory.
        public var iterations: UInt32
        /// Memory in KiB.
        public var memoryKiB: UInt32
        public var parallelism: UInt32

        public init(iterations: UInt32, memoryKiB: UInt32, parallelism: UInt32 = 1) {
            self.iterations = iterations
            self.memoryKiB = memoryKiB
            self.parallelism = parallelism
        }

        /// RFC 9106's second recommended option scaled to a small server: t=3, 64 MiB.
        public static let standard = Parameters(iterations: 3, memoryKiB: 64 * 1024)
        /// Light costs for tests (still Argon2id, still salted).
        public static let light = Parameters(iterations: 1, memoryKiB: 8 * 1024)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public var parameters: Parameters

    public init(parameters: Parameters = .standard) {
        self.parameters = parameters
    }

    /// A new salted hash of `password` in PHC string form.
    public func hash(_ password: String) async throws -> String {
        let parameters = self.parameters
        return try await NIOThreadPool.singleton.runIfActive { try Self.hashNow(password, parameters: parameters) }
    }

    /// Whether `password` matches `encoded` (a string made by ``hash(_:)``).
    public func verify(_ password: String, against encoded: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Self.verifyNow(password, encoded: encoded) }
    }

    static func hashNow(_ password: String, parameters: Parameters) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let passwordBytes = Array(password.utf8)
        let hashLength = 32
        let encodedLength = argon2_encodedlen(
            parameters.iterations, parameters.memoryKiB, parameters.parallelism,
            UInt32(salt.count), UInt32(hashLength), Argon2_id
        )
        var encoded = [CChar](repeating: 0, count: encodedLength)
        let result = argon2id_hash_encoded(
            parameters.iterations, parameters.memoryKiB, parameters.parallelism,
            passwordBytes, passwordBytes.count, salt, salt.count, hashLength, &encoded, encodedLength
        )
        guard result == ARGON2_OK.rawValue else {
            throw Failure(description: "argon2id: " + String(cString: argon2_error_message(result)))
        }
        return String(decoding: encoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func verifyNow(_ password: String, encoded: String) -> Bool {
        let passwordBytes = Array(password.utf8)
        return encoded.withCString { argon2id_verify($0, passwordBytes, passwordBytes.count) } == ARGON2_OK.rawValue
    }
}
