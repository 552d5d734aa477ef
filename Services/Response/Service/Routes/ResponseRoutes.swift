import Foundation
import Hummingbird
import ServiceKit
import StudyModels

/// `processResponse` and `withdrawFromStudy`, dispatched by `MobileAppRoutes`.
struct ResponseRoutes: Sendable {
    struct Success: Encodable {
        var success = true
    }

    /// The top-level keys `processResponse` binds; `appToken` is accepted and ignored, as in the
    /// original, and anything else is a binding error.
    static let responseKeys: Set<String> = ["type", "participantId", "metadata", "data", "appToken"]

    let responses: ResponseStore

    /// The original's checks in its order (`spec/response-server.md` 2.4); the response is
    /// committed before the app is answered.
    func processResponse(_ call: LabKeyCall) async throws -> Response {
        if let unknown = call.parameters.keys.sorted().first(where: { !Self.responseKeys.contains($0) }) {
            throw LabKeyCall.invalid([.init(field: "form", message: "Error binding property: Unrecognized field \"\(unknown)\"")])
        }
        guard case .object(let metadata)? = call.parameters["metadata"] else {
            throw LabKeyCall.invalid([.init(field: "form", message: "Metadata not found")])
        }
        let participant = try await Self.participant(call, responses: responses)
        func text(_ key: String) -> String? {
            metadata[key]?.text.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        var problems: [LabKeyProblem] = []
        let activityId = text("activityId")
        let version = text("version")
        if activityId == nil { problems.append(.init(field: "activityId", message: "ActivityId not included in request")) }
        if version == nil { problems.append(.init(field: "version", message: "SurveyVersion not included in request")) }
        let data = call.parameters["data"]
        if data == nil || data == .null { problems.append(.init(field: "data", message: "Response not included in request")) }
        if !participant.collectionEnabled {
            problems.append(.init(
                field: "form",
                message: "Response collection is not currently enabled for study [ \(participant.studyKey) ]"))
        }
        guard problems.isEmpty, let activityId, let version, let data else { throw LabKeyCall.invalid(problems) }
        try await responses.store(
            ResponseStore.Submission(
                activityId: activityId, activityVersion: version, activityRunId: text("activityRunId"),
                language: text("language"), metadata: .object(metadata), data: data),
            from: participant)
        return try LabKeyCall.reply(Success())
    }

    /// `withdrawFromStudy` (`participantId`, `delete`).
    func withdraw(_ call: LabKeyCall) async throws -> Response {
        guard let appToken = Self.nonBlank(call.string("participantId")) else {
            throw LabKeyCall.invalid([.init(field: "participantId", message: "ParticipantId not included in request")])
        }
        let delete = ["true", "1"].contains(call.string("delete")?.lowercased() ?? "false")
        guard try await responses.withdraw(appToken: appToken, delete: delete) else {
            throw LabKeyCall.invalid([.init(field: "participantId", message: "Invalid ParticipantId.")])
        }
        return try LabKeyCall.reply(Success())
    }

    /// The participant an app token names, with the original's messages for each failure.
    static func participant(_ call: LabKeyCall, responses: ResponseStore) async throws -> ResponseStore.Participant {
        guard let appToken = nonBlank(call.string("participantId")) else {
            throw LabKeyCall.invalid([.init(field: "participantId", message: "ParticipantId not included in request")])
        }
        guard let participant = try await responses.participant(appToken: appToken) else {
            throw LabKeyCall.invalid([.init(field: "participantId", message: "Unable to identify participant")])
        }
        guard !participant.withdrawn else {
            throw LabKeyCall.invalid([.init(field: "participantId", message: "Participant has withdrawn from study")])
        }
        return participant
    }

    static func nonBlank(_ text: String?) -> String? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        return trimmed
    }
}
