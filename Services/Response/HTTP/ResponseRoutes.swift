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

    package let responses: ResponseStore
    package let submission: ResponseSubmission

    package init(responses: ResponseStore, submission: ResponseSubmission) {
        self.responses = responses
        self.submission = submission
    }

    /// Parses the call for `ResponseSubmission`, whose refusals the LabKey envelope answers.
    package func processResponse(_ call: LabKeyCall) async throws -> Response {
        let metadata: JSONObject? = if case .object(let members)? = call.json("metadata") { members } else { nil }
        try await submission.submit(
            ResponseSubmission.Call(
                names: Array(call.names), appToken: call.string("participantId"), metadata: metadata,
                metadataText: call.compound["metadata"],
                data: call.compound["data"] ?? call.parameters["data"].flatMap { $0 == .null ? nil : $0.serialized() }))
        return LabKeyCall.reply(bytes: LabKeyCall.success)
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
        try await ResponseSubmission.participant(appToken: try appToken(call), in: responses)
    }

    /// The `participantId` (app token) parameter, or the original's error when it is blank.
    package static func appToken(_ call: LabKeyCall) throws -> String {
        try ResponseSubmission.appToken(call.string("participantId"))
    }

    package static func nonBlank(_ text: String?) -> String? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        return trimmed
    }
}
