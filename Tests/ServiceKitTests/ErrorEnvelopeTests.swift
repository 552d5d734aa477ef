import Foundation
import ServiceKitHTTP
import Testing

/// The error bodies encode to the exact keys their clients parse.
@Suite struct ErrorEnvelopeTests {
    func json(_ value: some Encodable) throws -> [String: Any] {
        let data = try JSONEncoder().encode(value)
        return try JSONSerialization.jsonObject(with: data) as! [String: Any]
    }

    @Test func labKeyEnvelopeHasSuccessExceptionAndErrors() throws {
        let object = try json(LabKeyErrorEnvelope(exception: "Token is required", field: "token"))
        #expect(object["success"] as? Bool == false)
        #expect(object["exception"] as? String == "Token is required")
        let errors = try #require(object["errors"] as? [[String: Any]])
        #expect(errors.count == 1)
        #expect(errors[0]["msg"] as? String == "Token is required")
        #expect(errors[0]["message"] as? String == "Token is required")
        #expect(errors[0]["field"] as? String == "token")
        #expect(errors[0]["severity"] as? String == "ERROR")
        let formLevel = try json(LabKeyErrorEnvelope(exception: "Metadata not found"))
        #expect((formLevel["errors"] as? [[String: Any]])?.first?["field"] as? String == "form")
    }

    @Test func adminErrorNestsCodeAndMessage() throws {
        let object = try json(AdminErrorBody(code: "not_found", message: "no such study"))
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? String == "not_found")
        #expect(error["message"] as? String == "no such study")
        #expect(error["problems"] == nil)
    }

    @Test func statusMessageCodesMatchTheOriginals() {
        #expect(StatusMessageCode.invalidAuthorization.rawValue == 101)
        #expect(StatusMessageCode.invalidInput.rawValue == 102)
        #expect(StatusMessageCode.noData.rawValue == 103)
        #expect(StatusMessageCode.unknown.rawValue == 104)
    }
}
