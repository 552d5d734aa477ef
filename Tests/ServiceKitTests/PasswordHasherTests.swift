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

    @Test func aResetMarkerMatchesNoPassword() async throws {
        let marker = PasswordHasher.resetOnSignIn()
        let other = PasswordHasher.resetOnSignIn()
        #expect(PasswordHasher.needsReset(marker) && marker != other)
        for password in ["", "reset-on-sign-in$", marker, String(marker.dropFirst("reset-on-sign-in$".count)), "Passw0rd!"] {
            #expect(!(try await hasher.verify(password, hash: marker)))
        }
        #expect(!PasswordHasher.needsReset(try await hasher.hash("Passw0rd!")))
        #expect(!PasswordHasher.isCarriedOver(marker))
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

    /// The values FDA MyStudies 2.x's auth server keeps for a password (`users.user_info.password`:
    /// `salt`, and `hash`, the lowercase hex SHA-512 of the salt's text then the password's UTF-8,
    /// as `HashUtils.hash` in GoogleCloudPlatform/fda-mystudies computes it), worked out with
    /// Python's hashlib from that code, not by this platform:
    /// `hashlib.sha512(salt.encode() + password.encode("utf-8")).hexdigest()`, the salt itself the
    /// hex SHA-512 of a random id as that server makes it.
    static let myStudiesSalt =
        "8ac435d740047536024bc52aaf4be65c99fcf3357e01a1963ceedd012ab8ee6f7f95e133dd003caccc296696420e3873ce6ce2b4d26ce3ba005169d6f01e43e7"
    static let myStudiesAccounts = [
        ("Correct-Horse-7!", "7b93a8cff66e0a35396d9b7b85062032123ba542efc0c524550a5114e31959aa70c2affb8bfea6fd12b7ad92b664ecbaa441740ee39dfb95667b637bec07fe6d"),
        ("Päss wörd ☃ 7!Aa", "d4f450091c77dc17a8d7d1ff4bc564a85d3b15bb3ce1ff0ddfe27bf28465858eddf42d40f1da8b04c1781b453af340797072f78ec2eccb7b2b8e20f7b0351a23"),
    ]

    /// A MyStudies hash is kept wrapped in bcrypt, never as it came, and checks the password it
    /// was made from: the same text, by its scalars (the decomposed spelling of the same words
    /// does not match), and nothing else.
    @Test func aMyStudiesHashIsKeptWrappedAndChecksItsPassword() async throws {
        #expect(Self.myStudiesAccounts.count == 2)
        for (password, digest) in Self.myStudiesAccounts {
            let kept = try #require(try await hasher.wrapMyStudiesHash(digest: digest, salt: Self.myStudiesSalt))
            #expect(kept.hasPrefix("mystudies-sha512+bcrypt$\(Self.myStudiesSalt)$$2"))
            #expect(!kept.contains(digest), "the digest itself is not kept")
            #expect(PasswordHasher.isCarriedOver(kept))
            #expect(try await hasher.verify(password, hash: kept))
            #expect(!(try await hasher.verify(password + " ", hash: kept)))
            #expect(!(try await hasher.verify(String(password.dropLast()), hash: kept)))
            #expect(!(try await hasher.verify(digest, hash: kept)), "the digest is not the password")
        }
        let decomposed = "Pa\u{308}ss wo\u{308}rd ☃ 7!Aa"
        #expect(decomposed == "Päss wörd ☃ 7!Aa", "Swift calls the two spellings equal")
        let kept = try #require(try await hasher.wrapMyStudiesHash(digest: Self.myStudiesAccounts[1].1, salt: Self.myStudiesSalt))
        #expect(!(try await hasher.verify(decomposed, hash: kept)))
        // The platform's own hashes are not carried over.
        #expect(!PasswordHasher.isCarriedOver(try await hasher.hash("Correct-Horse-7!")))
    }

    /// What is not that scheme's is refused when kept, and a kept value that is not whole checks
    /// no password.
    @Test func whatIsNotAMyStudiesHashIsRefused() async throws {
        let digest = Self.myStudiesAccounts[0].1
        let refused: [(String, String)] = [
            (String(digest.dropLast()), Self.myStudiesSalt), (digest + "0", Self.myStudiesSalt), (digest.uppercased(), Self.myStudiesSalt),
            (String(digest.dropLast()) + "g", Self.myStudiesSalt), (digest, ""), (digest, "ab$cd"), (digest, "zz"),
            (digest, String(repeating: "a", count: 257)),
        ]
        #expect(refused.count == 8)
        for (digest, salt) in refused {
            #expect(try await hasher.wrapMyStudiesHash(digest: digest, salt: salt) == nil, "\(digest) \(salt)")
        }
        for broken in ["mystudies-sha512+bcrypt$", "mystudies-sha512+bcrypt$abc", "mystudies-sha512+bcrypt$zz$x", "mystudies-sha512+bcrypt$ab$"] {
            #expect(!(try await hasher.verify("Correct-Horse-7!", hash: broken)), "\(broken)")
        }
    }
}
