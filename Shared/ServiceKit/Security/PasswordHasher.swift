import HummingbirdBcrypt
import NIOPosix

/// bcrypt at cost 12 (about 0.2 s of CPU), run on NIO's blocking thread pool so it never stalls
/// the threads that serve requests.
public struct PasswordHasher: Sendable {
    public let cost: UInt8

    public init(cost: UInt8 = 12) {
        self.cost = cost
    }

    public func hash(_ password: String) async throws -> String {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    public func verify(_ password: String, hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
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
