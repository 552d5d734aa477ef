import HTTPTypes
import Hummingbird
import NIOCore
import ServiceKitHTTP
import Testing

/// `Request.bearerToken`, the one reading of `Authorization: Bearer` (admin tokens, app tokens).
@Suite struct BearerTokenTests {
    func token(_ header: String?) -> String? {
        var fields = HTTPFields()
        if let header { fields[.authorization] = header }
        let request = Request(
            head: HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/", headerFields: fields),
            body: RequestBody(buffer: ByteBuffer()))
        return request.bearerToken
    }

    @Test func theTokenIsReadWhateverTheSchemesCaseAndTheSpacesAround() {
        let cases: [(String?, String?)] = [
            ("Bearer abc", "abc"), ("bearer abc", "abc"), ("BEARER abc", "abc"), ("Bearer   abc \t", "abc"),
            // A combining mark after the space: one Character with it, but the scheme is there.
            ("Bearer \u{301}abc", "\u{301}abc"),
            (nil, nil), ("", nil), ("Bearer", nil), ("Bearer ", nil), ("Bearer    ", nil), ("Basic abc", nil), ("Bearerabc", nil),
            ("Bëarer abc", nil),
        ]
        #expect(cases.count == 13)
        for (header, expected) in cases { #expect(token(header) == expected, "\(String(describing: header))") }
    }
}
