import ServiceKit
import Testing

/// The shared `multipart/form-data` reader: a form as the schema app's WebView posts it (every
/// field a text part, the answers a JSON text), the boundary search, and the parts limit. The
/// console's file forms are tested through it in `ConsoleTests/MultipartFormTests`.
@Suite struct MultipartFormDataTests {
    @Test func aWebViewFormIsReadPartByPartInOrder() throws {
        let boundary = "----WebKitFormBoundaryQ3gX5tE2cV8bN1mA"
        let fields = [
            ("data_type", "survey_response"), ("user_id", "ABD2345Z"), ("module_index", "1"),
            ("responses", #"{"slider-0yih1evt":63,"multi-q8bohlar":"banana"}"#),
        ]
        let body = fields.map { "--\(boundary)\r\nContent-Disposition: form-data; name=\"\($0.0)\"\r\n\r\n\($0.1)\r\n" }.joined()
            + "--\(boundary)--\r\n"
        let parts = try MultipartFormData.parts(Array(body.utf8), boundary: boundary, maxParts: 32)
        try #require(parts.count == fields.count)
        for (part, field) in zip(parts, fields) {
            #expect(part.name == field.0 && part.filename == nil && String(decoding: part.content, as: UTF8.self) == field.1)
        }
        #expect(MultipartFormData.boundary(contentType: "multipart/form-data; boundary=\(boundary)") == boundary)
        #expect(throws: MultipartFormData.Failure.tooManyParts) {
            try MultipartFormData.parts(Array(body.utf8), boundary: boundary, maxParts: 3)
        }
    }

    @Test func theBoundarySearchIsKnuthMorrisPratt() {
        #expect(MultipartFormData.find(Array("abcabd".utf8), in: Array("abcabcabd".utf8), from: 0) == 3)
        #expect(MultipartFormData.find(Array("aab".utf8), in: Array("aaab".utf8), from: 0) == 1)
        #expect(MultipartFormData.find(Array("x".utf8), in: Array("abc".utf8), from: 0) == nil)
        #expect(MultipartFormData.find(Array("c".utf8), in: Array("abc".utf8), from: 3) == nil)
    }
}
