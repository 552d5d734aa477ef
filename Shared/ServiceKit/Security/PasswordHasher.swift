import Crypto
import Foundation
import HummingbirdBcrypt
import NIOPosix

/// bcrypt at cost 12 (about 0.2 s of CPU), run on NIO's blocking thread pool so it never stalls
/// the threads that serve requests.
///
/// bcrypt reads at most 72 bytes and stops at a NUL byte, so two different passwords could match
/// one hash ("…72 bytes…A" and "…72 bytes…B", or "Passw0rd!" and "Passw0rd!\0anything"). A
/// password longer than 72 bytes of UTF-8, or holding a NUL, is therefore given to bcrypt as the
/// base64 of its SHA-256 (44 bytes, no NUL), and every other password as it is. The rule depends
/// only on the password, so verifying applies it the same way.
public struct PasswordHasher: Sendable {
    public let cost: UInt8

    public init(cost: UInt8 = 12) {
        self.cost = cost
    }

    public func hash(_ password: String) async throws -> String {
        let input = Self.bcryptInput(password)
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(input, cost: cost) }
    }

    public func verify(_ password: String, hash: String) async throws -> Bool {
        let input = Self.bcryptInput(password)
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(input, hash: hash) }
    }

    /// Longest input bcrypt reads whole.
    static let bcryptLimit = 72

    /// What bcrypt is given for `password` (see the type's comment).
    static func bcryptInput(_ password: String) -> String {
        let bytes = Array(password.utf8)
        guard bytes.count > bcryptLimit || bytes.contains(0) else { return password }
        return Data(SHA256.hash(data: bytes)).base64EncodedString()
    }

    /// A hash to verify against when the e-mail is unknown, so a login for a missing account
    /// takes as long as one with a wrong password and does not reveal which accounts exist.
    public static let decoyHash = Bcrypt.hash("studystack-decoy-\(SecureRandomText.make())", cost: 12)
}

/// Random text for values that are never shown (the decoy above).
enum SecureRandomText {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next(), radix: 36) }.joined()
    }
}
