import Crypto
import Foundation
import ServiceKit

/// Verification codes and temporary passwords: drawn from the system CSPRNG, shown to the
/// participant once by e-mail, stored only as a keyed hash, single use, and expiring.
package struct OneTimeSecrets: Sendable {
    /// Upper-case letters and digits without the look-alikes 0/O, 1/I/L.
    package static let codeAlphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")
    /// Mixed case and digits, without look-alikes; ten of them carry about 58 bits.
    package static let passwordAlphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZabcdefghjkmnpqrstuvwxyz23456789")

    /// HMAC key for code hashes, derived from the service's encryption key, so a copy of the
    /// database alone does not allow trying all 31^6 codes offline.
    package let codeKey: SymmetricKey

    package init(encryptionKey: Data) {
        codeKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: encryptionKey), info: Data("studystack-registration-codes".utf8),
            outputByteCount: 32)
    }

    /// A six-character verification code.
    package static func makeCode() -> String { random(6, from: codeAlphabet) }

    /// A ten-character temporary password.
    package static func makeTemporaryPassword() -> String { random(10, from: passwordAlphabet) }

    /// The stored form of `code` for `userId`; codes compare case-insensitively, as the originals did.
    package func hash(code: String, userId: UUID) -> String {
        let normalized = code.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data("\(userId.uuidString.lowercased()):\(normalized)".utf8), using: codeKey)
        return mac.hexString
    }

    private static func random(_ count: Int, from alphabet: [Character]) -> String {
        var generator = SystemRandomNumberGenerator()
        // Rejection-free: `random(in:)` on the system generator is uniform.
        return String((0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
}
