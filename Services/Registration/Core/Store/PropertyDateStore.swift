import Foundation
import Logging
import PostgresNIO
import StudyModels

/// Participants' date properties as the response service sends them
/// (`participant_property_dates`), for schedules anchored to a property.
package struct PropertyDateStore: Sendable {
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Keeps each participant's dates unless what is kept is newer, and marks those registration
    /// knows (enrolled, by the hash) to be counted again. Returns how many were kept.
    package func record(_ message: PropertyDates, studyId: String) async throws -> Int {
        guard !message.participants.isEmpty else { return 0 }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let hashes = message.participants.map(\.participantTokenSHA256)
        let dates = try message.participants.map { String(decoding: try encoder.encode($0.dates), as: UTF8.self) }
        let rows = try await client.query(
            """
            WITH input AS (
                SELECT DISTINCT ON (hash) hash, dates::jsonb AS dates
                FROM unnest(\(hashes)::text[], \(dates)::text[]) AS t(hash, dates)
            ), kept AS (
                INSERT INTO participant_property_dates (study_id, participant_token_hash, dates, as_of)
                SELECT \(studyId), hash, dates, \(message.asOf) FROM input
                ON CONFLICT (study_id, participant_token_hash) DO UPDATE SET dates = excluded.dates, as_of = excluded.as_of
                WHERE participant_property_dates.as_of <= excluded.as_of
                RETURNING participant_token_hash
            ), recounted AS (
                INSERT INTO participant_run_ledgers (user_id, study_id, recount_at)
                SELECT ps.user_id, ps.study_id, now()
                FROM kept k JOIN participant_studies ps
                    ON ps.study_id = \(studyId) AND ps.participant_token_hash = k.participant_token_hash
                WHERE ps.enrolled_at IS NOT NULL
                ON CONFLICT (user_id, study_id) DO UPDATE SET recount_at = least(participant_run_ledgers.recount_at, now())
            )
            SELECT count(*)::int FROM kept
            """, logger: logger)
        var kept = 0
        for try await count in rows.decode(Int.self) { kept = count }
        return kept
    }
}
