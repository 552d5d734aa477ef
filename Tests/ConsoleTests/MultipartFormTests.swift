import ConsoleCore
import Testing

/// `multipart/form-data` as browsers send it (RFC 7578), and the bodies an attacker would send.
@Suite struct MultipartFormTests {
    static func body(_ boundary: String, _ parts: [String]) -> [UInt8] {
        Array((parts.map { "--\(boundary)\r\n\($0)\r\n" }.joined() + "--\(boundary)--\r\n").utf8)
    }

    @Test func theBoundaryIsReadFromTheContentType() {
        #expect(FormFields.multipartBoundary(contentType: "multipart/form-data; boundary=----WebKitFormBoundaryAbc") == "----WebKitFormBoundaryAbc")
        #expect(FormFields.multipartBoundary(contentType: #"Multipart/Form-Data; charset=utf-8; BOUNDARY="a b""#) == "a b")
        #expect(FormFields.multipartBoundary(contentType: "multipart/form-data") == nil)
        #expect(FormFields.multipartBoundary(contentType: "multipart/form-data; boundary=") == nil)
        #expect(FormFields.multipartBoundary(contentType: "multipart/form-data; boundary=" + String(repeating: "x", count: 71)) == nil)
        #expect(FormFields.multipartBoundary(contentType: "application/x-www-form-urlencoded") == nil)
    }

    @Test func fieldsAndAFileAreReadInOrder() throws {
        let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
        let form = try FormFields(multipart: Self.body(boundary, [
            "Content-Disposition: form-data; name=\"csrf\"\r\n\r\ntoken-1",
            "Content-Disposition: form-data; name=\"design\"\r\n\r\nline one\r\nline two; with \"quotes\"",
            "Content-Disposition: form-data; name=\"designFile\"; filename=\"mood; v2.json\"\r\nContent-Type: application/json\r\n\r\n{\"a\": \"ü\"}",
            "Content-Disposition: form-data; name=\"empty\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n",
            "content-disposition: form-data; name=\"say %22hi%22\"\r\n\r\n--not the boundary",
        ]), boundary: boundary)
        #expect(form.pairs.map(\.name) == ["csrf", "design", "designFile", "designFile#filename", "empty", "empty#filename", "say \"hi\""])
        #expect(form["csrf"] == "token-1")
        #expect(form["design"] == "line one\r\nline two; with \"quotes\"")
        #expect(form["designFile"] == "{\"a\": \"ü\"}")
        #expect(form["designFile#filename"] == "mood; v2.json")
        #expect(form["say \"hi\""] == "--not the boundary")
        // A chosen file wins over pasted text; no file chosen (empty), the text.
        #expect(form.text(file: "designFile", orPasted: "design") == "{\"a\": \"ü\"}")
        #expect(form.text(file: "empty", orPasted: "design") == "line one\r\nline two; with \"quotes\"")
    }

    @Test func whatIsNotAFormIsRefusedWithItsReason() {
        let boundary = "b0undary"
        let binary = Array("--b0undary\r\nContent-Disposition: form-data; name=\"key\"; filename=\"k.p8\"\r\n\r\n".utf8) + [0xFF, 0xFE, 0x00]
            + Array("\r\n--b0undary--\r\n".utf8)
        #expect(throws: FormFields.ParseError.fileNotText("key")) { try FormFields(multipart: binary, boundary: boundary) }
        #expect(throws: FormFields.ParseError.malformed("no part starts with the boundary")) {
            try FormFields(multipart: Array("csrf=1".utf8), boundary: boundary)
        }
        #expect(throws: FormFields.ParseError.malformed("a part is not closed by the boundary")) {
            try FormFields(multipart: Array("--b0undary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\ncut off".utf8), boundary: boundary)
        }
        #expect(throws: FormFields.ParseError.malformed("a part has no Content-Disposition")) {
            try FormFields(multipart: Self.body(boundary, ["Content-Type: text/plain\r\n\r\nx"]), boundary: boundary)
        }
        #expect(throws: FormFields.ParseError.malformed("a part has no name")) {
            try FormFields(multipart: Self.body(boundary, ["Content-Disposition: form-data; filename=\"x\"\r\n\r\nx"]), boundary: boundary)
        }
        #expect(throws: FormFields.ParseError.malformed("a boundary is not followed by a line break")) {
            try FormFields(multipart: Array("--b0undaryX".utf8), boundary: boundary)
        }
        let many = Self.body(boundary, Array(repeating: "Content-Disposition: form-data; name=\"a\"\r\n\r\n1", count: FormFields.maxFields + 1))
        #expect(throws: FormFields.ParseError.tooManyFields) { try FormFields(multipart: many, boundary: boundary) }
    }

    @Test func aBodyBuiltToSlowTheSearchIsReadInOnePass() throws {
        // A boundary of one repeated byte and a megabyte of almost-boundaries: a naive search
        // compares the whole boundary at every byte; this one reads each byte a bounded number of times.
        let boundary = String(repeating: "-", count: 70)
        var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n".utf8)
        body += [UInt8](repeating: UInt8(ascii: "-"), count: 1 << 20)
        #expect(throws: FormFields.ParseError.malformed("a part is not closed by the boundary")) {
            try FormFields(multipart: body, boundary: boundary)
        }
    }
}
