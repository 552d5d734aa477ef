import Foundation
import StudyModels

/// `enroll`, `validateEnrollmentToken` and `resolveEnrollmentToken`: the original's checks, in
/// its order and words (docs/response-api.md, App API), then the participant enrolled or the
/// token's pre-enrollment properties read. Failures accumulate as the original's did; clients
/// read the first. Rate limits and the counting of guesses stay with the route (per address).
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

    /// What an enrollment came to: the new participant's app token, or the problems.
    package enum Enrolled: Sendable, Equatable {
        case enrolled(appToken: String)
        case refused([LabKeyProblem])
    }

    /// What validating a token came to: the properties the team uploaded for it, or the problems.
    package enum Validated: Sendable, Equatable {
        case valid(properties: [PreEnrollmentProperty])
        case refused([LabKeyProblem])
    }

    /// What resolving a token to its study came to, with the outcome counted by the route.
    package enum Resolved: Sendable, Equatable {
        case study(studyId: String)
        case invalid(LabKeyProblem)
        case unknown
    }

    package let catalog: any EnrollingStudies

    /// The data-sharing choice stored at enrollment: what was sent, or "NA" when nothing was.
    package static func sharing(_ value: String?) -> String {
        let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return trimmed.isEmpty ? "NA" : trimmed
    }
    package let participants: any EnrollmentTokens

    package init(catalog: any EnrollingStudies, participants: any EnrollmentTokens) {
        self.catalog = catalog
        self.participants = participants
    }

    /// Enrolls the sender when every check passes. A token spent by a concurrent enrollment
    /// between the checks and the insert is "Token already in use", as a used one is.
    package func enroll(_ request: Request) async throws -> Enrolled {
        let (study, problems) = try await self.problems(request, enrolling: true)
        guard problems.isEmpty, let study else { return .refused(problems) }
        do {
            let appToken = try await participants.enroll(
                study: study, token: EnrollmentToken.normalized(request.token), allowDataSharing: Self.sharing(request.allowDataSharing),
                language: request.language)
            return .enrolled(appToken: appToken)
        } catch is EnrollmentStore.TokenTaken {
            return .refused([.init(field: "token", message: "Token already in use")])
        }
    }

    /// The token's pre-enrollment properties when every check passes (none without a token).
    package func validate(_ request: Request) async throws -> Validated {
        let (study, problems) = try await self.problems(request, enrolling: false)
        guard problems.isEmpty, let study else { return .refused(problems) }
        guard let token = EnrollmentToken.normalized(request.token) else { return .valid(properties: []) }
        return .valid(properties: try await participants.preEnrollment(token: token, studyKey: study.key))
    }

    /// The study a token belongs to, for an app that was given only the token.
    package func resolve(_ token: String) async throws -> Resolved {
        // A token kept from a deployment moved in has no check letter; one the store holds is valid.
        let state = try await participants.tokenState(token)
        guard EnrollmentToken.isValid(token) || state != nil else { return .invalid(.init(field: "token", message: "Invalid token: '\(token)'")) }
        guard let state, let study = try await catalog.study(state.studyKey) else {
            return .unknown
        }
        return .study(studyId: study.studyId)
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
        // A token kept from a deployment moved in (docs/moving-in.md) has no check letter: the
        // check catches typing errors, and a token the store holds was not mistyped.
        guard EnrollmentToken.isValid(token) || state != nil else { return [.init(field: "token", message: "Invalid token: '\(token)'")] }
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
