import Crypto
import Foundation
import ServiceKit
import StudyModels

/// One POST of the schema app to its study's data URL, read from its form fields: a survey's
/// answers (`survey_response`) or a page event (`log`). The app posts the fields as
/// `multipart/form-data` from its WebView, counts only an HTTP 200 as delivered, and sends
/// anything else again on every home-screen visit with no idempotency key; so replays are normal,
/// and `dedupKey` is what recognises them (docs/schema-protocols.md, Receiving data).
package struct SchemaSubmission: Sendable, Equatable {
    package enum Kind: String, Sendable {
        case surveyResponse = "survey_response"
        case log
    }

    /// Why a POST cannot be stored: the app will send it again forever, so only what no retry
    /// can mend is refused.
    package struct Problem: Error, Equatable, Sendable {
        package var field: String
        package var message: String

        package init(field: String, message: String) {
            self.field = field
            self.message = message
        }
    }

    package var kind: Kind
    package var userId: String
    package var studyId: String
    /// The module's place in the protocol's `modules`; -1 for a log of a page that is no module's.
    package var moduleIndex: Int
    /// A survey's answers by question id, as the app collected them.
    package var responses: JSONObject?
    /// Every field as it came, text for text.
    package var fields: [String: String]
    /// SHA-256 (hex) of what makes one submission: the same POST sent again has the same key.
    package var dedupKey: String

    /// The fields the app sends, and a bound on any other: a form is a few hundred bytes of
    /// metadata beside the answers.
    package static let maxFields = 32
    package static let maxIdBytes = 64

    package static func parse(_ pairs: [(name: String, value: String)]) throws(Problem) -> SchemaSubmission {
        guard pairs.count <= maxFields else { throw Problem(field: "", message: "at most \(maxFields) fields are taken") }
        var fields: [String: String] = [:]
        for (name, value) in pairs {
            guard fields[name] == nil else { throw Problem(field: name, message: "\(name) is given more than once") }
            fields[name] = value
        }
        guard let kindText = fields["data_type"], let kind = Kind(rawValue: kindText) else {
            throw Problem(field: "data_type", message: "data_type must be survey_response or log")
        }
        let userId = try identifier("user_id", fields)
        let studyId = try identifier("study_id", fields)
        guard let moduleIndex = fields["module_index"].flatMap({ Int($0) }), moduleIndex >= (kind == .log ? -1 : 0),
            moduleIndex < 100_000
        else {
            throw Problem(field: "module_index", message: "module_index must be the module's place in the protocol (-1 for a page log)")
        }
        var responses: JSONObject?
        let identity: [String]
        switch kind {
        case .surveyResponse:
            guard let text = fields["responses"], case .object(let answers)? = try? JSONValue.parse(Array(text.utf8), budget: .responseAnswers) else {
                throw Problem(field: "responses", message: "responses must be a JSON object of answers by question id")
            }
            responses = answers
            let alertTime = try required("alert_time", fields)
            _ = try required("response_time", fields)
            try optionalMilliseconds("response_time_in_ms", fields)
            identity = [alertTime, fields["response_time_in_ms"] ?? fields["response_time"] ?? "", JSONValue.object(answers).serialized(sortedKeys: true)]
        case .log:
            _ = try required("page", fields)
            let timestamp = try required("timestamp", fields)
            try optionalMilliseconds("timestamp_in_ms", fields)
            identity = [timestamp, fields["timestamp_in_ms"] ?? "", fields["page"] ?? "", fields["event"] ?? ""]
        }
        // Each part with its length, so no two different submissions run together into one text.
        let parts = [studyId, userId, kind.rawValue, String(moduleIndex)] + identity
        let joined = parts.map { "\($0.utf8.count):\($0)" }.joined(separator: "\n")
        let key = SHA256.hash(data: Data(joined.utf8)).hexString
        return SchemaSubmission(
            kind: kind, userId: userId, studyId: studyId, moduleIndex: moduleIndex, responses: responses, fields: fields, dedupKey: key)
    }

    /// A participant or study id: 1 to 64 bytes of text without control characters.
    static func identifier(_ name: String, _ fields: [String: String]) throws(Problem) -> String {
        guard let value = fields[name], !value.isEmpty, value.utf8.count <= maxIdBytes,
            !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw Problem(field: name, message: "\(name) must be 1 to \(maxIdBytes) bytes of text") }
        return value
    }

    static func required(_ name: String, _ fields: [String: String]) throws(Problem) -> String {
        guard let value = fields[name], !value.isEmpty else { throw Problem(field: name, message: "\(name) is required") }
        return value
    }

    static func optionalMilliseconds(_ name: String, _ fields: [String: String]) throws(Problem) {
        guard let value = fields[name], !value.isEmpty else { return }
        guard Int64(value) != nil else { throw Problem(field: name, message: "\(name) must be a whole number of milliseconds") }
    }
}
