import Foundation
import StudyModels

/// What the response service's admin API refuses, in words an admin reads: the study, the
/// archive, the batch or the table it names is not there, the admin lacks the role, or what was
/// asked cannot be done. The HTTP layer answers every case in one place
/// (`ResponseAdminError+API.swift`), whichever route met it. A request it cannot read at all (a
/// malformed body, a limit out of range) is the route's own 400.
package enum ResponseAdminError: Error, Sendable, Equatable {
    /// Study-metadata has not published a study by that id (this service knows studies from its events).
    case noStudy(String)
    case noRefusedArchive(studyId: String, refusalId: String)
    case noArchive(studyId: String, archiveId: String)
    case noArchiveFile(archiveId: String, name: String)
    case noTokenBatch(studyId: String)
    case noTable(String)
    /// A refused archive read again is refused again, for this reason.
    case refusedAgain(reason: String, problems: [ValidationProblem])
    /// A refused archive's participant withdrew, or its study is not collecting.
    case notAdmitted(String)
    /// Reprocessing against a version whose design cannot hold answers; nothing was put back.
    case versionCannotBeProcessed(activityId: String, version: String, reason: String)
    /// Study-metadata cannot be asked for the version now; nothing was put back.
    case designUnavailable(String)
    /// A forwarding target that cannot be used: each problem by its field.
    case forwardingInvalid([ValidationProblem])
    /// Participant property values that cannot be stored, located by CSV line or JSON row.
    case propertiesInvalid([ValidationProblem])
    /// A SMART client that cannot be registered (its name, or its key set), each problem by its field.
    case smartClientInvalid([ValidationProblem])
    /// No live SMART client of the study by that id.
    case noSMARTClient(studyId: String)

    package var message: String {
        switch self {
        case .noStudy(let studyId): "no study \(studyId) here (study-metadata has not published it)"
        case .noRefusedArchive(let studyId, let refusalId): "study \(studyId) kept no refused archive \(refusalId)"
        case .noArchive(let studyId, let archiveId): "study \(studyId) has no archive \(archiveId)"
        case .noArchiveFile(let archiveId, let name): "archive \(archiveId) has no file \(name)"
        case .noTokenBatch(let studyId): "study \(studyId) has no such batch"
        case .noTable(let name): "This study has no table \(name)"
        case .refusedAgain(let reason, _): reason
        case .notAdmitted(let reason): reason
        case .versionCannotBeProcessed(let activityId, let version, _):
            "Nothing was reprocessed: version \(version) of activity \(activityId) cannot be processed against"
        case .designUnavailable(let reason): "Nothing was reprocessed: \(reason); try again shortly"
        case .forwardingInvalid(let problems): problems.first?.message ?? "the forwarding target cannot be used"
        case .propertiesInvalid(let problems):
            problems.count == 1 ? problems[0].message : "\(problems.count) values cannot be used; nothing was stored"
        case .smartClientInvalid(let problems):
            problems.count == 1
                ? "\(problems[0].pointer): \(problems[0].message)" : "\(problems.count) problems with the client; it was not registered"
        case .noSMARTClient(let studyId): "study \(studyId) has no such FHIR client (or it was revoked already)"
        }
    }

    /// Each problem, located in the request (by JSON Pointer).
    package var problems: [ValidationProblem] {
        switch self {
        case .refusedAgain(_, let problems), .forwardingInvalid(let problems), .propertiesInvalid(let problems),
            .smartClientInvalid(let problems):
            problems
        case .versionCannotBeProcessed(let activityId, let version, let reason):
            [ValidationProblem(pointer: "/againstVersion", message: "Activity \(activityId) at version \(version): \(reason)")]
        default: []
        }
    }
}
