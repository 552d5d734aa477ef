import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `processResponse` and `withdrawFromStudy`, dispatched by `MobileAppRoutes`.
package struct ResponseRoutes: Sendable {
    package struct Success: Encodable {
        package var success = true
    }

    /// The top-level keys `processResponse` binds; `appToken` is accepted and ignored, as in the
    /// original, and anything else is a binding error.
    package static let responseKeys: Set<String> = ["type", "participantId", "metadata", "data", "appToken"]

    package let responses: ResponseStore

    package init(responses: ResponseStore) {
        self.responses = responses
    }

    /// The original's checks in its order (docs/response-api.md, App API); the response is
    /// committed before the app is answered.
    ///
    /// When the request itself is complete, the participant is looked up by the same statement
    /// that stores the response (group commit): the participant checks then come from its
    /// outcome. Only an incomplete request looks the participant up first, so its errors still
    /// come in the original's order.
    package func processResponse(_ call: LabKeyCall) async throws -> Response {
        if let unknown = call.names.sorted().first(where: { !Self.responseKeys.contains($0) }) {
            throw LabKeyCall.invalid([.init(field: "form", message: "Error binding property: Unrecognized field \"\(unknown)\"")])
        }
        guard case .object(let metadata)? = call.json("metadata") else {
            throw LabKeyCall.invalid([.init(field: "form", message: "Metadata not found")])
        }
        let appToken = try Self.appToken(call)
        func text(_ key: String) -> String? {
            metadata[key]?.text.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        var problems: [LabKeyProblem] = []
        let activityId = text("activityId")
        let version = text("version")
        if activityId == nil { problems.append(.init(field: "activityId", message: "ActivityId not included in request")) }
        if version == nil { problems.append(.init(field: "version", message: "SurveyVersion not included in request")) }
        // A label no design can have (a number past every version, a character no label holds)
        // is refused now, not stored to fail in processing.
        if let version, !StudyActivity.isValidVersionLabel(version) {
            problems.append(.init(
                field: "version",
                message: "SurveyVersion '\(version.prefix(64))' is not a version: 1 to 32 letters, digits, dots, hyphens or underscores, a number at most 1000000"))
        }
        // The answers stay the text they came as; PostgreSQL reads them (and derives the
        // fingerprint from their canonical form).
        let data = call.compound["data"] ?? call.parameters["data"].flatMap { $0 == .null ? nil : $0.serialized() }
        if data == nil { problems.append(.init(field: "data", message: "Response not included in request")) }
        // PostgreSQL text cannot hold NUL; JSON can escape it, so it is refused here.
        if [data, call.compound["metadata"]].contains(where: { $0.map(Self.escapesNUL) ?? false }) {
            problems.append(.init(field: "data", message: "The response contains a NUL character (\\u0000), which cannot be stored"))
        }
        guard problems.isEmpty, let activityId, let version, let data else {
            let participant = try await Self.participant(call, responses: responses)
            if !participant.collectionEnabled { problems.append(Self.collectionDisabled(participant.studyKey)) }
            throw LabKeyCall.invalid(problems)
        }
        let outcome = try await responses.store(
            ResponseStore.Submission(
                activityId: activityId, activityVersion: version, activityRunId: text("activityRunId"),
                language: text("language"), metadata: JSONValue.object(metadata).serialized(), data: data),
            appToken: appToken)
        switch outcome {
        case .stored:
            return LabKeyCall.reply(bytes: LabKeyCall.success)
        case .unknownParticipant:
            throw LabKeyCall.invalid([.init(field: "participantId", message: "Unable to identify participant")])
        case .withdrawn:
            throw LabKeyCall.invalid([.init(field: "participantId", message: "Participant has withdrawn from study")])
        case .collectionDisabled(let studyKey):
            throw LabKeyCall.invalid([Self.collectionDisabled(studyKey)])
        }
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

    package static func collectionDisabled(_ studyKey: String) -> LabKeyProblem {
        LabKeyProblem(field: "form", message: "Response collection is not currently enabled for study [ \(studyKey) ]")
    }

    /// `withdrawFromStudy` (`participantId`, `delete`).
    package func withdraw(_ call: LabKeyCall) async throws -> Response {
        let appToken = try Self.appToken(call)
        let delete = ["true", "1"].contains(call.string("delete")?.lowercased() ?? "false")
        guard try await responses.withdraw(appToken: appToken, delete: delete) else {
            throw LabKeyCall.invalid([.init(field: "participantId", message: "Invalid ParticipantId.")])
        }
        return try LabKeyCall.reply(Success())
    }

    /// The participant an app token names, with the original's messages for each failure.
    package static func participant(_ call: LabKeyCall, responses: ResponseStore) async throws -> ResponseStore.Participant {
        let appToken = try Self.appToken(call)
        guard let participant = try await responses.participant(appToken: appToken) else {
            throw LabKeyCall.invalid([.init(field: "participantId", message: "Unable to identify participant")])
        }
        guard !participant.withdrawn else {
            throw LabKeyCall.invalid([.init(field: "participantId", message: "Participant has withdrawn from study")])
        }
        return participant
    }

    /// The `participantId` (app token) parameter, or the original's error when it is blank.
    package static func appToken(_ call: LabKeyCall) throws -> String {
        guard let appToken = nonBlank(call.string("participantId")) else {
            throw LabKeyCall.invalid([.init(field: "participantId", message: "ParticipantId not included in request")])
        }
        return appToken
    }

    package static func nonBlank(_ text: String?) -> String? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        return trimmed
    }
}
