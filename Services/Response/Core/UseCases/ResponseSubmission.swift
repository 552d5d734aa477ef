import Foundation
import ServiceKit
import StudyModels

/// `processResponse` (docs/response-api.md, App API): the request's rules in the original's order,
/// then the response stored and committed before this returns. When the request itself is
/// complete, its participant is looked up by the same statement that stores it (group commit),
/// and the participant's checks come from that statement's outcome; only an incomplete request
/// looks the participant up first, so its errors still come in the original's order.
package struct ResponseSubmission: Sendable {
    /// A call as it arrived: the names it carried, and what it binds.
    package struct Call: Sendable {
        package var names: [String]
        /// `participantId`: the participant's app token.
        package var appToken: String?
        /// `metadata`, when it is a JSON object.
        package var metadata: JSONObject?
        /// `metadata` as the text the app sent, when it came as JSON text.
        package var metadataText: String?
        /// `data`: the answers, as the JSON text they came as (PostgreSQL reads them, and derives
        /// the fingerprint from their canonical form).
        package var data: String?

        package init(names: [String], appToken: String?, metadata: JSONObject?, metadataText: String?, data: String?) {
            self.names = names
            self.appToken = appToken
            self.metadata = metadata
            self.metadataText = metadataText
            self.data = data
        }
    }

    /// The top-level names `processResponse` binds; `appToken` is accepted and ignored, as in the
    /// original, and anything else is a binding error.
    package static let names: Set<String> = ["type", "participantId", "metadata", "data", "appToken"]

    package let responses: any ResponseArrivals

    package init(responses: any ResponseArrivals) {
        self.responses = responses
    }

    /// Stores the call's response, or throws `LabKeyRefusal` with what is wrong.
    package func submit(_ call: Call) async throws {
        if let unknown = call.names.sorted().first(where: { !Self.names.contains($0) }) {
            throw LabKeyRefusal(problems: [LabKeyProblem(field: "form", message: "Error binding property: Unrecognized field \"\(unknown)\"")])
        }
        guard let metadata = call.metadata else { throw LabKeyRefusal(problems: [LabKeyProblem(field: "form", message: "Metadata not found")]) }
        let appToken = try Self.appToken(call.appToken)
        func text(_ key: String) -> String? {
            metadata[key]?.text.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        var problems: [LabKeyProblem] = []
        let activityId = text("activityId")
        let version = text("version")
        if activityId == nil { problems.append(LabKeyProblem(field: "activityId", message: "ActivityId not included in request")) }
        if version == nil { problems.append(LabKeyProblem(field: "version", message: "SurveyVersion not included in request")) }
        // A label no design can have (a number past every version, a character no label holds)
        // is refused now, not stored to fail in processing.
        if let version, !StudyActivity.isValidVersionLabel(version) {
            problems.append(LabKeyProblem(
                field: "version",
                message: "SurveyVersion '\(version.prefix(64))' is not a version: 1 to 32 letters, digits, dots, hyphens or underscores, a number at most 1000000"))
        }
        if call.data == nil { problems.append(LabKeyProblem(field: "data", message: "Response not included in request")) }
        // PostgreSQL text cannot hold NUL; JSON can escape it, so it is refused here.
        if [call.data, call.metadataText].contains(where: { $0.map(Self.escapesNUL) ?? false }) {
            problems.append(LabKeyProblem(field: "data", message: "The response contains a NUL character (\\u0000), which cannot be stored"))
        }
        guard problems.isEmpty, let activityId, let version, let data = call.data else {
            let participant = try await Self.participant(appToken: appToken, in: responses)
            if !participant.collectionEnabled { problems.append(Self.collectionDisabled(participant.studyKey)) }
            throw LabKeyRefusal(problems: problems)
        }
        let outcome = try await responses.store(
            ResponseIngest.Row(
                sender: .appToken(hash: SecureToken.hash(appToken)), activityId: activityId, activityVersion: version,
                activityRunId: text("activityRunId"), language: text("language"), metadata: JSONValue.object(metadata).serialized(),
                data: data))
        switch outcome {
        case .stored: return
        case .unknownParticipant: throw LabKeyRefusal(problems: [Self.unknownParticipant])
        case .withdrawn: throw LabKeyRefusal(problems: [Self.withdrawn])
        case .collectionDisabled(let studyKey): throw LabKeyRefusal(problems: [Self.collectionDisabled(studyKey)])
        }
    }

    /// The participant an app token names, still taking part, with the original's words for
    /// each failure (the participant's queries ask it too).
    package static func participant(appToken: String, in responses: any ParticipantsByToken) async throws -> ResponseStore.Participant {
        guard let participant = try await responses.participant(appToken: appToken) else {
            throw LabKeyRefusal(problems: [Self.unknownParticipant])
        }
        guard !participant.withdrawn else { throw LabKeyRefusal(problems: [Self.withdrawn]) }
        return participant
    }

    /// `participantId` (the app token), or the original's error when it is blank.
    package static func appToken(_ value: String?) throws -> String {
        guard let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else {
            throw LabKeyRefusal(problems: [LabKeyProblem(field: "participantId", message: "ParticipantId not included in request")])
        }
        return trimmed
    }

    static let unknownParticipant = LabKeyProblem(field: "participantId", message: "Unable to identify participant")
    static let withdrawn = LabKeyProblem(field: "participantId", message: "Participant has withdrawn from study")

    package static func collectionDisabled(_ studyKey: String) -> LabKeyProblem {
        LabKeyProblem(field: "form", message: "Response collection is not currently enabled for study [ \(studyKey) ]")
    }

    /// Whether JSON text holds the escape `\u0000` (an escaped backslash before `u0000` does not
    /// count), scanned byte by byte.
    package static func escapesNUL(_ json: String) -> Bool {
        let bytes = Array(json.utf8)
        let pattern = Array("u0000".utf8)
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            var run = 0
            while index < bytes.count && bytes[index] == UInt8(ascii: "\\") {
                run += 1
                index += 1
            }
            if run % 2 == 1 && index + pattern.count <= bytes.count && Array(bytes[index..<index + pattern.count]) == pattern {
                return true
            }
        }
        return false
    }
}
