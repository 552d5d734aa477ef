import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Where the schema app's POSTs are stored and the studies they are read against (the ports of
/// `SchemaPosts`). A POST from a known participant goes to `ResponseIngest`, with group commit;
/// a participant's first POST, and a log that changes their status, take a transaction of their
/// own here.
package struct SchemaPostStore: SchemaStudies, SchemaArrivals {
    package let client: PostgresClient
    package let ingest: ResponseIngest
    package let audit: AuditLog
    package let logger: Logger
    /// A study that takes POSTs is read at most once a second per replica (see `schemaStudy`).
    private let studies: ExpiringCache<String, SchemaStudy>

    /// `ingest` is the service's one (`ResponseStore.ingest`), so that POSTs share its batches.
    package init(client: PostgresClient, ingest: ResponseIngest, audit: AuditLog, logger: Logger) {
        self.client = client
        self.ingest = ingest
        self.audit = audit
        self.logger = logger
        studies = ExpiringCache(timeToLive: .seconds(1), capacity: 10_000)
    }

    package func store(_ row: ResponseIngest.Row) async throws -> ResponseIngest.Outcome {
        try await ingest.store(row)
    }

    /// The participant made or found, and the response stored through the ingest statement every
    /// door shares, in one transaction. A study that stopped collecting since the caller looked
    /// rolls the enrolment back with the response (`.collectionDisabled`).
    package func storeEnrolling(_ post: SchemaEnrollingPost) async throws -> ResponseIngest.Outcome {
        let reception = post.reception
        let row = ResponseIngest.Row(
            sender: .external(studyKey: post.studyKey, id: post.externalId), activityId: reception.activityId,
            activityVersion: reception.activityVersion, metadata: reception.metadata, data: reception.data, replayKey: post.dedupKey)
        let outcome: ResponseIngest.Outcome
        do {
            outcome = try await client.withTransaction(logger: logger) { connection in
                let (participant, enrolled) = try await participantId(studyKey: post.studyKey, externalId: post.externalId, on: connection)
                let outcome = try await ingest.store(row, on: connection)
                guard case .stored(let new, _) = outcome else { throw NotStored(outcome: outcome) }
                if new, let change = post.statusAfter {
                    try await follow(change, participant: participant, externalId: post.externalId, on: connection)
                }
                if enrolled {
                    try await assignArm(participant, studyKey: post.studyKey, externalId: post.externalId, arms: post.arms, on: connection)
                }
                return outcome
            }
        } catch let error as PostgresTransactionError {
            // PostgresNIO wraps what the closure throws.
            guard let refusal = error.closureError as? NotStored else { throw error }
            return refusal.outcome
        }
        if case .stored(true, _) = outcome { ingest.stored.signal() }
        return outcome
    }

    /// The ingest statement did not store the response: the transaction is rolled back.
    private struct NotStored: Error {
        let outcome: ResponseIngest.Outcome
    }

    /// The participant `externalId` of the study, and whether this transaction enrolled them.
    /// Two first POSTs of one person at once: the unique index makes the second insert wait for
    /// the first's transaction, then find its row.
    private func participantId(
        studyKey: String, externalId: String, on connection: PostgresConnection
    ) async throws -> (id: Int64, enrolled: Bool) {
        if let id = try await existing(studyKey: studyKey, externalId: externalId, on: connection) { return (id, false) }
        let rows = try await connection.query(
            """
            INSERT INTO participants (study_key, external_id, status, allow_data_sharing)
            VALUES (\(studyKey), \(externalId), 'enrolled', 'NA')
            ON CONFLICT (study_key, external_id) WHERE external_id IS NOT NULL DO NOTHING RETURNING id
            """, logger: logger)
        for try await id in rows.decode(Int64.self) { return (id, true) }
        // The other transaction committed their row (a rollback would have let this insert
        // through); only a deletion since could hide it, and then the app sends the POST again.
        guard let id = try await existing(studyKey: studyKey, externalId: externalId, on: connection) else {
            throw ParticipantVanished()
        }
        return (id, false)
    }

    /// Gives a participant enrolled in this transaction their place in the study's order of
    /// arrival and the arm it gets, and records the enrolment. Last in the transaction: the
    /// study's counter row stays locked until the commit, so every enrolment of the study waits
    /// here for the one before it; what comes before (the participant's row, their POST) is done
    /// by many at once.
    private func assignArm(
        _ participant: Int64, studyKey: String, externalId: String, arms: StudyArms?, on connection: PostgresConnection
    ) async throws {
        let counted = try await connection.query(
            """
            INSERT INTO arm_counters AS c (study_key, assigned) VALUES (\(studyKey), 1)
            ON CONFLICT (study_key) DO UPDATE SET assigned = c.assigned + 1 RETURNING c.assigned - 1
            """, logger: logger)
        var ordinal = 0
        for try await value in counted.decode(Int.self) { ordinal = value }
        let arm = arms.flatMap { arms in
            SchemaConditions.assign(
                conditions: arms.names, method: arms.assignment, studyKey: studyKey, participantId: externalId, ordinal: ordinal)
        }
        if let arm {
            try await connection.query(
                "UPDATE participants SET arm = \(arm), arm_ordinal = \(ordinal) WHERE id = \(participant)", logger: logger)
        }
        try await audit.record(
            actor: "schema-app", action: "participant.enrolled", studyId: studyKey,
            details: ["participantId": "\(participant)", "externalId": externalId, "arm": arm ?? "", "ordinal": "\(ordinal)"],
            on: connection)
    }

    private func existing(studyKey: String, externalId: String, on connection: PostgresConnection) async throws -> Int64? {
        let rows = try await connection.query(
            "SELECT id FROM participants WHERE study_key = \(studyKey) AND external_id = \(externalId)", logger: logger)
        for try await id in rows.decode(Int64.self) { return id }
        return nil
    }

    private func follow(
        _ change: SchemaStatusChange, participant: Int64, externalId: String, on connection: PostgresConnection
    ) async throws {
        let changed: PostgresRowSequence
        switch change {
        case .withdrawn:
            changed = try await connection.query(
                """
                UPDATE participants SET status = 'withdrawn', withdrawn_at = now()
                WHERE id = \(participant) AND status <> 'withdrawn' RETURNING study_key
                """, logger: logger)
        case .enrolled:
            changed = try await connection.query(
                """
                UPDATE participants SET status = 'enrolled', withdrawn_at = NULL
                WHERE id = \(participant) AND status = 'withdrawn' RETURNING study_key
                """, logger: logger)
        }
        for try await studyKey in changed.decode(String.self) {
            try await audit.record(
                actor: "schema-app", action: change == .withdrawn ? "participant.withdrawn" : "participant.rejoined",
                studyId: studyKey, details: ["participantId": "\(participant)", "externalId": externalId], on: connection)
        }
    }

    struct ParticipantVanished: Error {}

    /// The study as the last event told it. A study that takes POSTs is read at most once a
    /// second per replica: the app retries what it could not deliver, so a pause seen a second
    /// late is harmless, and a burst of POSTs costs no extra round trip each.
    package func schemaStudy(_ studyKey: String) async throws -> SchemaStudy? {
        if let cached = studies.value(studyKey) { return cached }
        let readAt = ContinuousClock.now
        let rows = try await client.query(
            "SELECT event::text, collection_enabled FROM studies WHERE study_key = \(studyKey)", logger: logger)
        var found: SchemaStudy?
        for try await (event, collecting) in rows.decode((String, Bool).self) {
            // Stored as `StudyCatalog.apply` writes it, in the internal API's form.
            let decoded = try InternalCoding.decoder.decode(StudyEvent.self, from: Data(event.utf8))
            found = SchemaStudy(event: decoded, collecting: collecting, plan: SchemaReception.Study(decoded))
        }
        // Only a study that takes POSTs is remembered: one launched a moment ago is seen at once.
        if let found, found.plan != nil, found.collecting, found.event.status == .active {
            studies.keep(found, for: studyKey, readAt: readAt)
        }
        return found
    }
}
