import Foundation
import JSONText
import ResponseCore
import ServiceKit
import StudyModels
import Testing

/// What a SMART client may register as its keys, and what its scopes are granted.
@Suite struct SMARTClientRulesTests {
    static func b64(_ count: Int, first: UInt8 = 0xC1) -> String { Base64URL.encode([first] + [UInt8](repeating: 0xAB, count: count - 1)) }
    static func rsa(kid: String = "r1", bytes: Int = 256, extra: [String: JSONValue] = [:]) -> JSONValue {
        var members: JSONObject = ["kty": .string("RSA"), "kid": .string(kid), "n": .string(b64(bytes)), "e": .string("AQAB")]
        for (name, value) in extra { members[name] = value }
        return .object(members)
    }
    static func ec(kid: String = "e1", curve: String = "P-384") -> JSONValue {
        .object(["kty": .string("EC"), "kid": .string(kid), "crv": .string(curve), "x": .string(b64(48)), "y": .string(b64(48))])
    }
    static func keys(_ keys: [JSONValue]) -> Result<[SMARTClientKeys.Key], ProblemList> {
        SMARTClientKeys.keys(fromJWKS: .object(["keys": .array(keys)]))
    }
    static func problems(_ keys: [JSONValue]) -> [ValidationProblem] {
        if case .failure(let list) = Self.keys(keys) { return list.problems }
        return []
    }

    @Test func rsaAndP384PublicKeysAreKeptWithTheirAlgorithm() throws {
        let kept = try Self.keys([Self.rsa(), Self.ec()]).get()
        #expect(kept.map(\.kid) == ["r1", "e1"])
        #expect(kept.map(\.algorithm) == [.rs384, .es384])
        #expect(kept.map { $0.jwk["alg"]?.string } == ["RS384", "ES384"], "the algorithm is written out for the verifier")
    }

    @Test func aPrivateKeyAWeakKeyAndOtherCurvesAreRefusedEachAtItsField() {
        #expect(Self.problems([Self.rsa(extra: ["d": .string("AQAB")])]).map(\.pointer) == ["/jwks/keys/0/d"])
        #expect(Self.problems([Self.rsa(extra: ["d": .string("AQAB")])]).first?.message.contains("private key") == true)
        #expect(Self.problems([Self.rsa(bytes: 128)]).first?.message.contains("1024") == true, "a 1024-bit key")
        #expect(Self.problems([Self.ec(curve: "P-256")]).map(\.pointer) == ["/jwks/keys/0/crv"])
        #expect(Self.problems([Self.rsa(extra: ["alg": .string("RS256")])]).map(\.pointer) == ["/jwks/keys/0/alg"])
        #expect(Self.problems([Self.rsa(extra: ["use": .string("enc")])]).map(\.pointer) == ["/jwks/keys/0/use"])
        #expect(Self.problems([.object(["kty": .string("oct"), "kid": .string("h"), "k": .string("c2VjcmV0")])]).map(\.pointer) == ["/jwks/keys/0/k"],
            "a shared secret is a private key too")
        #expect(Self.problems([Self.rsa(kid: "same"), Self.ec(kid: "same")]).map(\.pointer) == ["/jwks/keys/1/kid"])
        #expect(Self.problems([Self.rsa(kid: "")]).map(\.pointer) == ["/jwks/keys/0/kid"])
        #expect(Self.problems([]).map(\.pointer) == ["/jwks/keys"])
        #expect(Self.problems((0...10).map { Self.ec(kid: "k\($0)") }).map(\.pointer) == ["/jwks/keys"], "at most 10 keys")
        #expect(Self.problems([Self.rsa(), Self.ec(curve: "P-521"), Self.rsa(kid: "r2", bytes: 64)]).count == 2, "every problem at once")
    }

    @Test func aKeySetPastItsBudgetIsRefusedBeforeItIsRead() {
        let huge = Array("{\"keys\":[\"".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: SMARTClientKeys.maxBytes) + Array("\"]}".utf8)
        guard case .failure(let list) = SMARTClientKeys.keys(fromJWKS: huge) else {
            Issue.record("a key set past \(SMARTClientKeys.maxBytes) bytes was read")
            return
        }
        #expect(list.problems.first?.message.contains("larger than") == true)
    }

    @Test func onlyTheReadingPartOfEachScopeIsGranted() {
        #expect(SMARTScopes.grant(requested: "system/*.read")?.scopes == ["system/*.read"])
        #expect(SMARTScopes.grant(requested: "system/*.cruds")?.scopes == ["system/*.rs"])
        #expect(SMARTScopes.grant(requested: "system/Patient.rs system/Patient.rs")?.scopes == ["system/Patient.rs"])
        #expect(SMARTScopes.grant(requested: "system/*.*")?.scopes == ["system/*.read"], "v1's * is read and write")
        #expect(SMARTScopes.grant(requested: "system/*.cud") == nil, "nothing readable")
        #expect(SMARTScopes.grant(requested: "system/*.write") == nil)
        #expect(SMARTScopes.grant(requested: "system/*.sr") == nil, "v2's letters come in the order c r u d s")
        #expect(SMARTScopes.grant(requested: "patient/*.read user/*.read") == nil, "only system scopes")
        #expect(SMARTScopes.grant(requested: "system/Encounter.read") == nil, "a type the API does not serve")
        #expect(SMARTScopes.grant(requested: String(repeating: "system/*.rs ", count: 200)) == nil, "past its length")
        let grant = SMARTScopes.grant(requested: "system/Patient.r system/QuestionnaireResponse.s openid")
        #expect(grant?.mayRead("Patient") == true)
        #expect(grant?.maySearch("Patient") == false)
        #expect(grant?.maySearch("QuestionnaireResponse") == true)
        #expect(grant?.mayRead("QuestionnaireResponse") == false)
        #expect(grant?.mayRead("ResearchStudy") == false)
        #expect(SMARTScopes.grant(requested: "system/*.read")?.maySearch("ResearchSubject") == true)
    }
}
