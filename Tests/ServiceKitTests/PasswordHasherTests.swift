import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing

/// bcrypt reads 72 bytes at most and stops at a NUL: two different passwords must never match
/// one hash all the same.
@Suite struct PasswordHasherTests {
    let hasher = PasswordHasher(cost: 4)

    @Test func passwordsThatDifferPastByte72DoNotMatch() async throws {
        let prefix = String(repeating: "Aa1!", count: 18)  // 72 bytes
        let hash = try await hasher.hash(prefix + "first")
        #expect(try await hasher.verify(prefix + "first", hash: hash))
        #expect(!(try await hasher.verify(prefix + "second", hash: hash)))
        #expect(!(try await hasher.verify(prefix, hash: hash)))
        // Multi-byte characters count as their UTF-8 bytes: 64 characters can be 256 bytes.
        let wide = String(repeating: "é", count: 40)
        let wideHash = try await hasher.hash(wide + "A1!")
        #expect(!(try await hasher.verify(wide + "B2?", hash: wideHash)))
    }

    @Test func aNulByteDoesNotEndThePassword() async throws {
        let hash = try await hasher.hash("Passw0rd!")
        #expect(try await hasher.verify("Passw0rd!", hash: hash))
        #expect(!(try await hasher.verify("Passw0rd!\u{0}anything", hash: hash)))
        let withNul = try await hasher.hash("Passw0rd!\u{0}one")
        #expect(!(try await hasher.verify("Passw0rd!\u{0}two", hash: withNul)))
        #expect(!(try await hasher.verify("Passw0rd!", hash: withNul)))
    }

    @Test func thePolicyRefusesControlCharacters() {
        #expect(PasswordPolicy.problem(with: "Passw0rd!") == nil)
        #expect(PasswordPolicy.problem(with: "Passw0rd!\u{0}x") != nil)
        #expect(PasswordPolicy.problem(with: "Passw0rd!\u{7}x") != nil)
    }
}
