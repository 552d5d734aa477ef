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
        if Self.needsReset(hash) {
            // No password matches; as slow as one that might.
            _ = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(Self.bcryptInput(password), hash: Self.decoyHash) }
            return false
        }
        if let carried = CarriedOverHash(hash) {
            // The old scheme's digest is what the wrapping bcrypt was given.
            let input = Self.bcryptInput(CarriedOverHash.myStudiesDigest(password: password, salt: carried.salt))
            return try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(input, hash: carried.wrapping) }
        }
        let input = Self.bcryptInput(password)
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(input, hash: hash) }
    }

    /// A hash carried over from FDA MyStudies 2.x's auth server, wrapped in bcrypt for keeping
    /// (`CarriedOverHash`); nil when `digest` and `salt` are not that scheme's.
    public func wrapMyStudiesHash(digest: String, salt: String) async throws -> String? {
        guard CarriedOverHash.isMyStudiesDigest(digest), CarriedOverHash.isMyStudiesSalt(salt) else { return nil }
        let input = Self.bcryptInput(digest)
        let wrapping = try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(input, cost: cost) }
        return CarriedOverHash.prefix + salt + "$" + wrapping
    }

    /// What an account moved in without a password this platform can check keeps as its hash:
    /// no password matches it, and a sign-in attempt e-mails a temporary password instead
    /// (`Accounts.login`). Random, so no two accounts share it.
    public static func resetOnSignIn() -> String {
        resetPrefix + SecureRandomText.make()
    }

    public static func needsReset(_ hash: String) -> Bool { hash.utf8.starts(with: resetPrefix.utf8) }

    static let resetPrefix = "reset-on-sign-in$"

    /// Whether `hash` is a carried-over one, which the next matching sign-in replaces with the
    /// platform's own.
    public static func isCarriedOver(_ hash: String) -> Bool { CarriedOverHash(hash) != nil }

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

/// A participant's password hash from FDA MyStudies 2.x's auth server, moved in with the account.
/// That server keeps, in `users.user_info.password`, a random `salt` (the hex SHA-512 of a random
/// id) and `hash`: the lowercase hex SHA-512 of the salt's text followed by the password's UTF-8
/// (`HashUtils.hash` in `GoogleCloudPlatform/fda-mystudies`). One unstretched SHA-512 is cheap to
/// guess at, so it is kept only wrapped: bcrypt of that digest, stored as
/// `mystudies-sha512+bcrypt$<salt>$<bcrypt>`. A password is checked by working out its digest
/// with the salt and giving it to bcrypt; a sign-in that matches stores the platform's own hash.
struct CarriedOverHash {
    static let prefix = "mystudies-sha512+bcrypt$"
    let salt: String
    let wrapping: String

    init?(_ hash: String) {
        guard hash.utf8.starts(with: Self.prefix.utf8) else { return nil }
        let rest = hash.utf8.dropFirst(Self.prefix.utf8.count)
        guard let dollar = rest.firstIndex(of: UInt8(ascii: "$")) else { return nil }
        let salt = String(decoding: rest[..<dollar], as: UTF8.self)
        guard Self.isMyStudiesSalt(salt) else { return nil }
        self.salt = salt
        wrapping = String(decoding: rest[rest.index(after: dollar)...], as: UTF8.self)
    }

    /// Lowercase hex digits, as that server makes its salts (128 of them); bounded, and never a `$`.
    static func isMyStudiesSalt(_ salt: String) -> Bool {
        (1...256).contains(salt.utf8.count) && salt.utf8.allSatisfy(isLowercaseHexDigit)
    }

    /// 128 lowercase hex digits: a SHA-512 as that server writes it.
    static func isMyStudiesDigest(_ digest: String) -> Bool {
        digest.utf8.count == 128 && digest.utf8.allSatisfy(isLowercaseHexDigit)
    }

    private static func isLowercaseHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    /// The digest that server keeps for `password` with `salt`.
    static func myStudiesDigest(password: String, salt: String) -> String {
        var hasher = SHA512()
        hasher.update(data: Array(salt.utf8))
        hasher.update(data: Array(password.utf8))
        return hasher.finalize().hexString
    }
}

/// Random text for values that are never shown (the decoy above).
enum SecureRandomText {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next(), radix: 36) }.joined()
    }
}
