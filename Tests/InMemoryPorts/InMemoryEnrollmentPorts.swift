import Foundation
import JSONText
import ResponseCore
import StudyModels
import Synchronization

/// Studies and enrollment tokens in memory, for `Enrollment`: which studies run, which tokens
/// exist and where they stand, what was uploaded for them, and who enrolled with which. A token
/// can be set to be spent by someone else between the checks and the enrollment.
package final class InMemoryEnrollment: EnrollingStudies, EnrollmentTokens, Sendable {
    private struct State {
        var studies: [String: StudyCatalog.Study] = [:]
        var tokens: [String: EnrollmentStore.TokenState] = [:]
        var properties: [String: [PreEnrollmentProperty]] = [:]
        var spentByOthers: Set<String> = []
        var enrolled: [(studyKey: String, token: String?, sharing: String)] = []
    }

    private let state = Mutex(State())

    package init() {}

    package func add(_ study: StudyCatalog.Study) { state.withLock { $0.studies[study.key] = study } }

    package func add(token: String, _ tokenState: EnrollmentStore.TokenState, properties: [PreEnrollmentProperty] = []) {
        state.withLock { state in
            state.tokens[token] = tokenState
            state.properties[token] = properties
        }
    }

    /// Another enrollment spends `token` just before this one's insert.
    package func spendFirst(_ token: String) { state.withLock { _ = $0.spentByOthers.insert(token) } }

    package var enrolled: [(studyKey: String, token: String?, sharing: String)] { state.withLock { $0.enrolled } }

    package func study(_ studyId: String) async throws -> StudyCatalog.Study? {
        state.withLock { $0.studies[StudyCatalog.key(studyId)] }
    }

    package func tokenState(_ token: String) async throws -> EnrollmentStore.TokenState? { state.withLock { $0.tokens[token] } }

    package func studyHasTokens(_ studyKey: String) async throws -> Bool {
        state.withLock { state in state.tokens.values.contains { $0.studyKey == studyKey } }
    }

    package func enroll(study: StudyCatalog.Study, token: String?, allowDataSharing: String, language: String?) async throws -> String {
        try state.withLock { state in
            if let token {
                guard !state.spentByOthers.contains(token), state.tokens[token]?.used == false else { throw EnrollmentStore.TokenTaken() }
                state.tokens[token]?.used = true
            }
            state.enrolled.append((study.key, token, allowDataSharing))
            return "app-token-\(state.enrolled.count)"
        }
    }

    package func preEnrollment(token: String, studyKey: String) async throws -> [PreEnrollmentProperty] {
        state.withLock { state in state.tokens[token]?.studyKey == studyKey ? state.properties[token] ?? [] : [] }
    }
}
