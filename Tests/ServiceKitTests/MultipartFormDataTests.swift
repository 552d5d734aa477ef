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

    /// A part's name and file name, however a sender spells the header: any case, quoted values
    /// holding `;` or `=`, a quote sent as `%22`, values unquoted, a CR LF line end; read by
    /// bytes, so a combining mark after the closing quote does not hide it.
    @Test func aPartsNameAndFileNameAreReadFromItsDisposition() throws {
        func part(_ headers: String) throws -> MultipartFormData.Part? {
            let body = "--b\r\n\(headers)\r\n\r\ncontent\r\n--b--\r\n"
            return try MultipartFormData.parts(Array(body.utf8), boundary: "b", maxParts: 2).first
        }
        let cases: [(String, String, String?)] = [
            (#"Content-Disposition: form-data; name="answers""#, "answers", nil),
            (#"content-DISPOSITION:form-data;NAME="a;b=c"; FileName="x.json""#, "a;b=c", "x.json"),
            ("Content-Type: text/plain\r\nContent-Disposition: form-data; name=plain ; filename=", "plain", ""),
            (#"Content-Disposition: form-data; name="say %22hi%22""#, #"say "hi""#, nil),
            ("Content-Disposition: form-data; name=\"e\u{301}\"\u{301}; filename=\"f\"", "e\u{301}", "f"),
        ]
        for (headers, name, filename) in cases {
            let found = try #require(try part(headers))
            #expect(found.name == name && found.filename == filename, "\(headers)")
            #expect(found.content == Array("content".utf8))
        }
        #expect(throws: MultipartFormData.Failure.malformed("a part has no name")) { try part(#"Content-Disposition: form-data; filename="x""#) }
        #expect(throws: MultipartFormData.Failure.malformed("a part has no Content-Disposition")) { try part("Content-Type: text/plain") }
    }

    @Test func theBoundarySearchIsKnuthMorrisPratt() {
        #expect(MultipartFormData.find(Array("abcabd".utf8), in: Array("abcabcabd".utf8), from: 0) == 3)
        #expect(MultipartFormData.find(Array("aab".utf8), in: Array("aaab".utf8), from: 0) == 1)
        #expect(MultipartFormData.find(Array("x".utf8), in: Array("abc".utf8), from: 0) == nil)
        #expect(MultipartFormData.find(Array("c".utf8), in: Array("abc".utf8), from: 3) == nil)
    }
}
