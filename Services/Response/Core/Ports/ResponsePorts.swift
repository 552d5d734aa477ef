import CMSEnvelope
import Foundation
import JSONText
import SageAssessments
import ServiceKit
import StudyModels

// What the response service's use cases need of storage and of study-metadata, each as small as
// the use cases ask it. The PostgreSQL stores and the design source conform unchanged (at the
// end of this file); the tests' in-memory conformers (`Tests/InMemoryPorts`) let each use case's
// rules run without a database.

/// The participants an app token names, as the database says now.
package protocol ParticipantsByToken: Sendable {
    func participant(appToken: String) async throws -> ResponseStore.Participant?
    func participant(appTokenHash: String) async throws -> ResponseStore.Participant?
}

/// Where a participant's response is stored as it arrives: one statement for every door
/// (`ResponseIngest`), which checks the sender again as it writes.
package protocol ResponseArrivals: ParticipantsByToken {
    func store(_ row: ResponseIngest.Row) async throws -> ResponseIngest.Outcome
}

/// The schema app's studies, as the last study event told them.
package protocol SchemaStudies: Sendable {
    func schemaStudy(_ studyKey: String) async throws -> SchemaStudy?
}

/// A study as the schema app's POSTs are read against it.
package struct SchemaStudy: Sendable {
    package var event: StudyEvent
    package var collecting: Bool
    /// Nil for a study that is not a schema study.
    package var plan: SchemaReception.Study?

    package init(event: StudyEvent, collecting: Bool, plan: SchemaReception.Study?) {
        self.event = event
        self.collecting = collecting
        self.plan = plan
    }
}

/// Where the schema app's POSTs are stored: through the ingest statement every door shares, or,
/// for a participant's first POST and a log that changes their status, with the participant's row
/// in one transaction.
package protocol SchemaArrivals: Sendable {
    func store(_ row: ResponseIngest.Row) async throws -> ResponseIngest.Outcome
    /// The participant made or found and the response stored with them, or why not (a study
    /// that stopped collecting: nothing is kept).
    func storeEnrolling(_ post: SchemaEnrollingPost) async throws -> ResponseIngest.Outcome
}

/// A study's failed responses, put back in the processing queue.
package protocol FailedResponses: Sendable {
    /// The activities of the study's `error` responses among `ids`.
    func failedActivities(_ ids: [Int64], studyKey: String) async throws -> [String]
    func reprocess(_ ids: [Int64], studyKey: String, actor: String, againstVersion: String?) async throws -> ReprocessOutcome
}

/// The published activity designs the response tables are made from (study-metadata's).
package protocol ActivityDesigns: Sendable {
    /// Makes the tables hold `version` of the activity; throws `DesignSource.Unavailable` when
    /// study-metadata cannot say, `SurveySchema.DesignError` when the design cannot hold answers.
    func ensureApplied(studyKey: String, studyId: String, activityId: String, version: String) async throws
}

/// Sage archives stored with the response their answers become, and the study's key pair that
/// opens the sealed ones.
package protocol SageArchiveKeeping: Sendable {
    func keyPair(studyKey: String) async throws -> StudyKeyPair?
    func store(_ reception: SageArchiveReception, participantId: Int64, studyKey: String, appTokenHash: String) async throws
        -> SageArchiveStore.Stored
}

/// Archives refused for their content, kept as they arrived with why, and reprocessed.
package protocol RefusedArchiveKeeping: Sendable {
    /// The kept item's id; nil when the participant withdrew since they were admitted.
    @discardableResult
    func keep(
        _ content: [UInt8], sha256: String, participantId: Int64, studyKey: String, door: SageRefusalStore.Door, reason: String,
        problems: [ValidationProblem]
    ) async throws -> UUID?
    /// The kept archive `refusalId` of the study, with its participant as they are now.
    func kept(studyKey: String, refusalId: UUID) async throws -> SageRefusalStore.Kept?
    /// A reprocessing stored the kept archive as `archiveId`.
    func stored(refusalId: UUID, archiveId: UUID, studyKey: String, actor: String) async throws
    /// A reprocessing refused it again, for this reason.
    func refusedAgain(refusalId: UUID, studyKey: String, reason: String, problems: [ValidationProblem]) async throws
}

/// Bridge's upload sessions: opened, filled by a put, completed by the client or by the service.
package protocol SageUploadSessions: Sendable {
    func open(
        studyKey: String, participantId: Int64, appTokenHash: String, name: String, contentLength: Int, contentMD5: String,
        contentType: String, metadata: String
    ) async throws -> SageUploadStore.Opened
    func lookup(id: UUID, secret: String) async throws -> SageUploadStore.Lookup
    func put(_ bytes: [UInt8], into session: SageUploadStore.Awaiting) async throws -> SageUploadStore.Put
    func session(id: UUID, participantId: Int64) async throws -> SageUploadStore.Session?
    func complete(id: UUID, archiveId: UUID) async throws
    func close(id: UUID, as closed: SageUploadStore.Closed) async throws
    /// Sessions put more than `grace` ago and never completed, each leased to this caller.
    func claimUncompleted(grace: Duration, limit: Int) async throws -> [SageUploadStore.Uncompleted]
}

extension ResponseStore: ResponseArrivals {}
extension ResponseAdminStore: FailedResponses {}
extension DesignSource: ActivityDesigns {}
extension SageArchiveStore: SageArchiveKeeping {}
extension SageRefusalStore: RefusedArchiveKeeping {}
extension SageUploadStore: SageUploadSessions {}

/// The studies an app may enrol in, as this service knows them from study-metadata's events.
package protocol EnrollingStudies: Sendable {
    func study(_ studyId: String) async throws -> StudyCatalog.Study?
}

/// Enrollment tokens and the participants they enrol.
package protocol EnrollmentTokens: Sendable {
    func tokenState(_ token: String) async throws -> EnrollmentStore.TokenState?
    func studyHasTokens(_ studyKey: String) async throws -> Bool
    /// The new participant's app token; throws `EnrollmentStore.TokenTaken` when a concurrent
    /// enrollment spent `token` first.
    func enroll(study: StudyCatalog.Study, token: String?, allowDataSharing: String, language: String?) async throws -> String
    /// What the research team uploaded for `token` before enrollment.
    func preEnrollment(token: String, studyKey: String) async throws -> [PreEnrollmentProperty]
}

/// A participant property the research team uploaded for an enrollment token.
package struct PreEnrollmentProperty: Sendable, Equatable {
    package var propertyId: String
    package var value: JSONValue

    package init(propertyId: String, value: JSONValue) {
        self.propertyId = propertyId
        self.value = value
    }
}

extension StudyCatalog: EnrollingStudies {}
extension EnrollmentStore: EnrollmentTokens {}

/// A study's lists as the query translator sees them (nil: the study has none yet).
package protocol StudyListCatalogs: Sendable {
    func catalog(studyKey: String) async throws -> QueryTranslator.Catalog?
}

/// Where queries run: read-only, scoped to a study or a participant, bounded in rows, bytes and
/// time (`SandboxedQueries`).
package protocol QuerySandbox: Sendable {
    /// The most rows a reply carries, whatever the query asks for.
    var maxRows: Int { get }
    func run(_ translation: QueryTranslator.Translation, scope: SandboxedQueries.Scope, countTotal: Bool)
        async throws(QueryError) -> SandboxedQueries.Result
}

extension QuerySandbox {
    /// A `selectRows` page with the total of every matching row, counted in the page's snapshot
    /// (`QueryTranslator.translate(_:countTotal:)`).
    package func page(_ statement: QueryStatement, translator: QueryTranslator, scope: SandboxedQueries.Scope)
        async throws(QueryError) -> SandboxedQueries.Result
    {
        try await run(translator.translate(statement, countTotal: true), scope: scope, countTotal: true)
    }
}

extension StudyTables: StudyListCatalogs {}
extension SandboxedQueries: QuerySandbox {}
