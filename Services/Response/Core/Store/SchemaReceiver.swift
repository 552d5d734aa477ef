import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Stores the schema app's POSTs (docs/schema-protocols.md, Receiving data). The app sends no
/// credential and no idempotency key, so a participant is known by the id their phone made, and a
/// POST by its deduplication key: the first POST from an id makes the participant and gives them
/// an arm; every POST is queued as a response of its module (or of the `SchemaLog` list) unless
/// the same one is stored already. Either way the app is answered 200, and the processing worker
/// puts new ones into the study's tables.
///
/// A POST from a known participant is written by `ResponseIngest`, with group commit (one
/// statement for all that arrive together, processResponse's among them); a participant's first
/// POST, and a log that changes their status, take a transaction of their own.
package struct SchemaReceiver: Sendable {
    package enum Outcome: Sendable, Equatable {
        case stored(new: Bool, participantId: Int64)
        /// No launched schema study by that id collects data now.
        case unknownStudy
        case notCollecting
        case refused(SchemaSubmission.Problem)
    }

    package let client: PostgresClient
    package let ingest: ResponseIngest
    package let audit: AuditLog
    package let logger: Logger
    /// A study that takes POSTs is read at most once a second per replica (see `study`).
    private let studies: ExpiringCache<String, Study>

    /// `ingest` is the service's one (`ResponseStore.ingest`), so that POSTs share its batches.
    package init(client: PostgresClient, ingest: ResponseIngest, audit: AuditLog, logger: Logger) {
        self.client = client
        self.ingest = ingest
        self.audit = audit
        self.logger = logger
        studies = ExpiringCache(timeToLive: .seconds(1), capacity: 10_000)
    }

    package func receive(_ submission: SchemaSubmission, studyId: String) async throws -> Outcome {
        let studyKey = studyId.uppercased()
        guard let study = try await study(studyKey), let plan = study.plan else { return .unknownStudy }
        guard [.active, .paused].contains(study.event.status) else { return .unknownStudy }
        guard study.collecting, study.event.status == .active else { return .notCollecting }
        let reception: SchemaReception
        do {
            reception = try SchemaReception.make(submission, study: plan)
        } catch {
            return .refused(error)
        }
        let changesStatus = submission.kind == .log && Self.status(after: submission) != nil
        if !changesStatus {
            let row = ResponseIngest.Row(
                sender: .external(studyKey: studyKey, id: submission.userId), activityId: reception.activityId,
                activityVersion: reception.activityVersion, metadata: reception.metadata, data: reception.data,
                replayKey: submission.dedupKey)
            switch try await ingest.store(row) {
            case .stored(let new, let participantId): return .stored(new: new, participantId: participantId)
            case .collectionDisabled: return .notCollecting
            // Not known yet: made below. (`withdrawn` bars only an app token's participant.)
            case .unknownParticipant, .withdrawn: break
            }
        }
        let arms = study.event.arms
        let (participant, new) = try await client.withTransaction(logger: logger) { connection in
            let (participant, enrolled) = try await participantId(studyKey: studyKey, externalId: submission.userId, on: connection)
            let inserted = try await connection.query(
                """
                INSERT INTO responses (participant_id, study_key, activity_id, activity_version, metadata, data, fingerprint)
                VALUES (\(participant), \(studyKey), \(reception.activityId), \(reception.activityVersion),
                        \(reception.metadata)::jsonb, \(reception.data)::jsonb, \(submission.dedupKey))
                ON CONFLICT (participant_id, fingerprint) DO NOTHING RETURNING id
                """, logger: logger)
            var new = false
            for try await _ in inserted { new = true }
            if new, submission.kind == .log { try await followStatus(submission, participant: participant, on: connection) }
            if enrolled {
                try await assignArm(participant, studyKey: studyKey, externalId: submission.userId, arms: arms, on: connection)
            }
            return (participant, new)
        }
        if new { ingest.stored.signal() }
        return .stored(new: new, participantId: participant)
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

    /// The app logs withdrawal on its settings page and enrolment on its home page; a
    /// participant who withdrew and enrols again keeps their id, so both are followed.
    static func status(after submission: SchemaSubmission) -> String? {
        switch (submission.fields["page"], submission.fields["event"]) {
        case ("settings"?, "withdraw"?): "withdrawn"
        case ("home"?, "enrol"?): "enrolled"
        default: nil
        }
    }

    private func followStatus(_ submission: SchemaSubmission, participant: Int64, on connection: PostgresConnection) async throws {
        let changed: PostgresRowSequence
        switch Self.status(after: submission) {
        case "withdrawn":
            changed = try await connection.query(
                """
                UPDATE participants SET status = 'withdrawn', withdrawn_at = now()
                WHERE id = \(participant) AND status <> 'withdrawn' RETURNING study_key
                """, logger: logger)
        case "enrolled":
            changed = try await connection.query(
                """
                UPDATE participants SET status = 'enrolled', withdrawn_at = NULL
                WHERE id = \(participant) AND status = 'withdrawn' RETURNING study_key
                """, logger: logger)
        default:
            return
        }
        for try await studyKey in changed.decode(String.self) {
            try await audit.record(
                actor: "schema-app", action: submission.fields["event"] == "withdraw" ? "participant.withdrawn" : "participant.rejoined",
                studyId: studyKey, details: ["participantId": "\(participant)", "externalId": submission.userId], on: connection)
        }
    }

    struct ParticipantVanished: Error {}

    private struct Study: Sendable {
        var event: StudyEvent
        var collecting: Bool
        /// Nil for a study that is not a schema study.
        var plan: SchemaReception.Study?
    }

    /// The study as the last event told it. A study that takes POSTs is read at most once a
    /// second per replica: the app retries what it could not deliver, so a pause seen a second
    /// late is harmless, and a burst of POSTs costs no extra round trip each.
    private func study(_ studyKey: String) async throws -> Study? {
        if let cached = studies.value(studyKey) { return cached }
        let readAt = ContinuousClock.now
        let rows = try await client.query(
            "SELECT event::text, collection_enabled FROM studies WHERE study_key = \(studyKey)", logger: logger)
        var found: Study?
        for try await (event, collecting) in rows.decode((String, Bool).self) {
            // Stored as `StudyCatalog.apply` writes it, in the internal API's form.
            let decoded = try InternalCoding.decoder.decode(StudyEvent.self, from: Data(event.utf8))
            found = Study(event: decoded, collecting: collecting, plan: SchemaReception.Study(decoded))
        }
        // Only a study that takes POSTs is remembered: one launched a moment ago is seen at once.
        if let found, found.plan != nil, found.collecting, found.event.status == .active {
            studies.keep(found, for: studyKey, readAt: readAt)
        }
        return found
    }
}
