import Crypto
import Foundation
import ServiceKit
import ServiceKitHTTP
import Testing

/// The canonical string and HMAC, without HTTP.
@Suite struct RequestSignatureTests {
    let key = SymmetricKey(data: Data(repeating: 7, count: 32))

    func canonical(method: String = "POST", path: String = "/internal/v1/x", query: String = "a=1", body: String = "{}")
        -> String
    {
        RequestSignature.canonicalString(
            caller: "registration", method: method, path: path, query: query, timestamp: 1_700_000_000,
            nonce: "0123456789abcdef0123456789abcdef", body: Array(body.utf8))
    }

    @Test func canonicalStringCoversEveryPart() {
        let text = canonical()
        #expect(
            text == [
                "studystack-internal-v1", "registration", "POST", "/internal/v1/x", "a=1", "1700000000",
                "0123456789abcdef0123456789abcdef",
                // SHA-256 of "{}"
                "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
            ].joined(separator: "\n"))
    }

    @Test func verifiesOnlyTheSignedText() {
        let signature = RequestSignature.sign(canonical(), key: key)
        #expect(signature.count == 64)
        #expect(RequestSignature.isValid(signature: signature, for: canonical(), key: key))
        #expect(RequestSignature.isValid(signature: signature.uppercased(), for: canonical(), key: key))
        #expect(!RequestSignature.isValid(signature: signature, for: canonical(body: "{ }"), key: key))
        #expect(!RequestSignature.isValid(signature: signature, for: canonical(path: "/internal/v1/y"), key: key))
        #expect(!RequestSignature.isValid(signature: signature, for: canonical(query: "a=2"), key: key))
        #expect(!RequestSignature.isValid(signature: signature, for: canonical(method: "GET"), key: key))
        #expect(!RequestSignature.isValid(signature: "zz", for: canonical(), key: key))
        let otherKey = SymmetricKey(data: Data(repeating: 8, count: 32))
        #expect(!RequestSignature.isValid(signature: signature, for: canonical(), key: otherKey))
    }

    @Test func noncesAreRandomAndWellFormed() {
        let nonces = Set((0..<1000).map { _ in RequestSignature.makeNonce() })
        #expect(nonces.count == 1000)
        #expect(nonces.allSatisfy { $0.count == 32 && RequestSignature.isWellFormedNonce($0) })
        #expect(!RequestSignature.isWellFormedNonce("short"))
        #expect(!RequestSignature.isWellFormedNonce(String(repeating: "a", count: 20) + "\n"))
    }
}
