import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels
import Synchronization

/// Stores the schema app's POSTs (docs/schema-protocols.md, Receiving data). The app sends no
/// credential and no idempotency key, so a participant is known by the id their phone made, and a
/// POST by its deduplication key: the first POST from an id makes the participant and gives them
/// an arm; every POST is queued as a response of its module (or of the `SchemaLog` list) unless
/// the same one is stored already. Either way the app is answered 200, and the processing worker
/// puts new ones into the study's tables.
package struct SchemaReceiver: Sendable {
    package enum Outcome: Sendable, Equatable {
        case stored(new: Bool, participantId: Int64)
        /// No launched schema study by that id collects data now.
        case unknownStudy
        case notCollecting
        case refused(SchemaSubmission.Problem)
    }

    package let client: PostgresClient
    package let audit: AuditLog
    package let stored: WakeSignal
    package let logger: Logger
    private let studies: StudyEventCache

    package init(client: PostgresClient, audit: AuditLog, stored: WakeSignal, logger: Logger) {
        self.client = client
        self.audit = audit
        self.stored = stored
        self.logger = logger
        studies = StudyEventCache()
    }

    package func receive(_ submission: SchemaSubmission, studyId: String) async throws -> Outcome {
        let studyKey = studyId.uppercased()
        guard let study = try await study(studyKey), study.event.source?.format == .schema else { return .unknownStudy }
        guard [.active, .paused].contains(study.event.status) else { return .unknownStudy }
        guard study.collecting, study.event.status == .active else { return .notCollecting }
        let reception: SchemaReception
        do {
            reception = try SchemaReception.make(submission, study: study.event)
        } catch {
            return .refused(error)
        }
        let arms = study.event.arms
        let (participant, new) = try await client.withTransaction(logger: logger) { connection in
            let participant = try await participantId(
                studyKey: studyKey, externalId: submission.userId, arms: arms, on: connection)
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
            return (participant, new)
        }
        if new { stored.signal() }
        return .stored(new: new, participantId: participant)
    }

    /// The participant `externalId` of the study, made (with their arm) when first seen.
    private func participantId(
        studyKey: String, externalId: String, arms: StudyArms?, on connection: PostgresConnection
    ) async throws -> Int64 {
        if let id = try await existing(studyKey: studyKey, externalId: externalId, on: connection) { return id }
        // The counter's row stays locked until this transaction ends: whoever made the same
        // participant meanwhile has committed by now, and the second look finds them.
        let counted = try await connection.query(
            """
            INSERT INTO arm_counters AS c (study_key, assigned) VALUES (\(studyKey), 1)
            ON CONFLICT (study_key) DO UPDATE SET assigned = c.assigned + 1 RETURNING c.assigned - 1
            """, logger: logger)
        var ordinal = 0
        for try await value in counted.decode(Int.self) { ordinal = value }
        if let id = try await existing(studyKey: studyKey, externalId: externalId, on: connection) {
            try await connection.query("UPDATE arm_counters SET assigned = assigned - 1 WHERE study_key = \(studyKey)", logger: logger)
            return id
        }
        let arm = arms.flatMap { arms in
            SchemaConditions.assign(
                conditions: arms.names, method: arms.assignment, studyKey: studyKey, participantId: externalId, ordinal: ordinal)
        }
        let rows = try await connection.query(
            """
            INSERT INTO participants (study_key, external_id, status, allow_data_sharing, arm, arm_ordinal)
            VALUES (\(studyKey), \(externalId), 'enrolled', 'NA', \(arm), \(arm == nil ? nil : ordinal)) RETURNING id
            """, logger: logger)
        var id: Int64 = 0
        for try await value in rows.decode(Int64.self) { id = value }
        try await audit.record(
            actor: "schema-app", action: "participant.enrolled", studyId: studyKey,
            details: ["participantId": "\(id)", "externalId": externalId, "arm": arm ?? "", "ordinal": "\(ordinal)"],
            on: connection)
        return id
    }

    private func existing(studyKey: String, externalId: String, on connection: PostgresConnection) async throws -> Int64? {
        let rows = try await connection.query(
            "SELECT id FROM participants WHERE study_key = \(studyKey) AND external_id = \(externalId)", logger: logger)
        for try await id in rows.decode(Int64.self) { return id }
        return nil
    }

    /// The app logs withdrawal on its settings page and enrolment on its home page; a
    /// participant who withdrew and enrols again keeps their id, so both are followed.
    private func followStatus(_ submission: SchemaSubmission, participant: Int64, on connection: PostgresConnection) async throws {
        switch (submission.fields["page"], submission.fields["event"]) {
        case ("settings"?, "withdraw"?):
            try await connection.query(
                """
                UPDATE participants SET status = 'withdrawn', withdrawn_at = now()
                WHERE id = \(participant) AND status <> 'withdrawn'
                """, logger: logger)
        case ("home"?, "enrol"?):
            try await connection.query(
                "UPDATE participants SET status = 'enrolled', withdrawn_at = NULL WHERE id = \(participant) AND status = 'withdrawn'",
                logger: logger)
        default:
            break
        }
    }

    private struct Study: Sendable {
        var event: StudyEvent
        var collecting: Bool
    }

    /// The study as the last event told it. Read at most once a second per study and replica: the
    /// app retries what it could not deliver, so a status a second old is harmless, and a burst of
    /// POSTs costs no extra round trip each.
    private func study(_ studyKey: String) async throws -> Study? {
        if let cached = studies.get(studyKey) { return cached.value }
        let rows = try await client.query(
            "SELECT event::text, collection_enabled FROM studies WHERE study_key = \(studyKey)", logger: logger)
        var found: Study?
        for try await (event, collecting) in rows.decode((String, Bool).self) {
            // Stored as `StudyCatalog.apply` writes it, dates in ISO 8601.
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            found = Study(event: try decoder.decode(StudyEvent.self, from: Data(event.utf8)), collecting: collecting)
        }
        studies.put(studyKey, found)
        return found
    }

    private final class StudyEventCache: Sendable {
        struct Entry { var value: Study?; var at: ContinuousClock.Instant }
        private let entries = Mutex<[String: Entry]>([:])
        static let lifetime = Duration.seconds(1)

        func get(_ key: String) -> Entry? {
            entries.withLock { entries in
                guard let entry = entries[key], entry.at.duration(to: .now) < Self.lifetime else { return nil }
                return entry
            }
        }

        func put(_ key: String, _ value: Study?) {
            entries.withLock { entries in
                if entries.count > 10_000 { entries.removeAll() }
                entries[key] = Entry(value: value, at: .now)
            }
        }
    }
}
