import Foundation
import ServiceKit
import Testing

@Suite struct Base64URLTests {
    /// RFC 4648's test vectors (section 10), in the URL alphabet without padding.
    @Test func theRFCVectorsEncodeAndDecode() {
        let vectors = [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")]
        #expect(vectors.count == 7)
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test func everyLengthAndByteRoundTripsAndMatchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
            #expect(Base64URL.decode(encoded) == bytes)
        }
    }

    @Test func anythingElseIsRefused() {
        // Padding, the standard alphabet's letters, whitespace, a length no bytes encode to.
        for text in ["Zg==", "Zm9v+A", "Zm9v/A", "Zm9v YmFy", "Zm9vY", "\u{FF21}BCD", "Zm9v\r\n"] {
            #expect(Base64URL.decode(text) == nil, "\(text)")
        }
        // A last letter with bits no byte sets: "Zh" would decode to "f" as "Zg" does.
        #expect(Base64URL.decode("Zh") == nil)
        #expect(Base64URL.decode("Zm9") == nil)
        #expect(Base64URL.decode("Zg") == Array("f".utf8))
    }
}
