import Foundation
import StudyModels

/// `enroll` and `validateEnrollmentToken`: the original's checks, in its order and words
/// (docs/response-api.md, App API). Failures accumulate as the original's did; clients read
/// the first.
package struct Enrollment: Sendable {
    package struct Request: Sendable {
        package var studyId: String?
        package var token: String?
        package var allowDataSharing: String?
        package var language: String?

        package init(studyId: String?, token: String?, allowDataSharing: String?, language: String?) {
            self.studyId = studyId
            self.token = token
            self.allowDataSharing = allowDataSharing
            self.language = language
        }
    }

    package let catalog: StudyCatalog

    /// The data-sharing choice stored at enrollment: what was sent, or "NA" when nothing was.
    package static func sharing(_ value: String?) -> String {
        let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return trimmed.isEmpty ? "NA" : trimmed
    }
    package let participants: EnrollmentStore

    package init(catalog: StudyCatalog, participants: EnrollmentStore) {
        self.catalog = catalog
        self.participants = participants
    }

    /// Steps 1-4 (and 5 when `enrolling`); an empty list means the request may go ahead.
    package func problems(_ request: Request, enrolling: Bool) async throws -> (study: StudyCatalog.Study?, problems: [LabKeyProblem]) {
        var problems: [LabKeyProblem] = []
        var study: StudyCatalog.Study?
        if let studyId = EnrollmentToken.normalized(request.studyId) {
            study = try await catalog.study(studyId)
            if let found = study, found.status != .active, found.status != .testing {
                // Not in the original (it had no study lifecycle): a study that is not running
                // takes no new participants.
                problems.append(.init(field: "studyId", message: "Study with StudyId '\(studyId)' is not enrolling participants"))
            } else if let study {
                problems += try await tokenProblems(request, study: study)
            } else {
                problems.append(.init(field: "studyId", message: "Study with StudyId '\(studyId)' does not exist"))
            }
        } else {
            problems.append(.init(field: "studyId", message: "StudyId is required"))
        }
        if enrolling {
            // Absent is "NA": the Android app (2019-2021) never sends it, and the 2021 original's
            // "allowDataSharing is required" kept it from enrolling. The participant's choice is
            // also recorded with the consent (registration's `sharing`).
            switch request.allowDataSharing?.trimmingCharacters(in: .whitespacesAndNewlines) {
            case nil, "", "true", "false", "NA":
                break
            case let value?:
                problems.append(.init(field: "allowDataSharing", message: "Invalid allowDataSharing value: '\(value)'"))
            }
        }
        return (study, problems)
    }

    /// While a study is tested, only the testers invited for it may join.
    package static let testersOnly = "Only testers invited by the study team can join this study while it is being tested"

    private func tokenProblems(_ request: Request, study: StudyCatalog.Study) async throws -> [LabKeyProblem] {
        let testing = study.status == .testing
        guard let token = EnrollmentToken.normalized(request.token) else {
            if testing { return [.init(field: "token", message: Self.testersOnly)] }
            guard try await participants.studyHasTokens(study.key) else { return [] }
            return [.init(field: "token", message: request.language?.lowercased() == "es" ? "Se requiere un token" : "Token is required")]
        }
        // A used token is reported before the checksum is looked at, as the original did.
        let state = try await participants.tokenState(token)
        if let state, state.studyKey == study.key, state.used {
            return [.init(field: "token", message: "Token already in use")]
        }
        guard EnrollmentToken.isValid(token) else { return [.init(field: "token", message: "Invalid token: '\(token)'")] }
        guard let state, state.studyKey == study.key else {
            return [.init(field: "token", message: "Unknown token: '\(token)'")]
        }
        // Not in the original (its tokens never ended): an invitation's token can be withdrawn or run out.
        if state.revoked { return [.init(field: "token", message: "Token '\(token)' has been withdrawn by the study team")] }
        if state.expired { return [.init(field: "token", message: "Token '\(token)' has expired; ask the study team to send it again")] }
        // A token made before testing is kept for the study's real participants; a tester's
        // token is removed when testing ends (this refuses one used in the moment before).
        if testing && !state.forTesting { return [.init(field: "token", message: Self.testersOnly)] }
        if !testing && state.forTesting {
            return [.init(field: "token", message: "Token '\(token)' was for testing the study and no longer works")]
        }
        return []
    }
}
