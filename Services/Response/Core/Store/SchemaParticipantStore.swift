import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// A schema study's participants for its researchers: how many each arm has, and who is in which
/// (docs/schema-protocols.md, Conditions).
package struct SchemaParticipantStore: Sendable {
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The most participants one page lists.
    package static let maxPage = 500

    /// Arms with their counts (every arm of the study, none left out for having nobody yet), and
    /// `limit` participants in order of arrival after the one with id `after`.
    package func list(studyKey: String, arms: [String], after: Int64?, limit: Int) async throws -> SchemaParticipantList {
        var counts = Dictionary(uniqueKeysWithValues: arms.map { ($0, 0) })
        for try await (arm, count) in try await client.query(
            """
            SELECT arm, count(*)::int FROM participants
            WHERE study_key = \(studyKey) AND external_id IS NOT NULL AND arm IS NOT NULL GROUP BY arm
            """, logger: logger
        ).decode((String, Int).self) { counts[arm] = count }
        let armCounts = arms.map { SchemaParticipantList.ArmCount(arm: $0, participants: counts[$0] ?? 0) }
            + counts.keys.filter { !arms.contains($0) }.sorted().map { SchemaParticipantList.ArmCount(arm: $0, participants: counts[$0] ?? 0) }
        var participants: [SchemaParticipant] = []
        for try await (id, externalId, arm, ordinal, status, enrolled, submissions) in try await client.query(
            """
            SELECT p.number, p.external_id, p.arm, p.arm_ordinal, p.status, p.enrolled_at,
                   (SELECT count(*)::int FROM responses r WHERE r.participant_id = p.id)
            FROM participants p
            WHERE p.study_key = \(studyKey) AND p.external_id IS NOT NULL AND p.number > \(after ?? 0)
            ORDER BY p.number LIMIT \(KeysetPage<SchemaParticipant, Int64>.fetchLimit(limit))
            """, logger: logger
        ).decode((Int64, String, String?, Int?, String, Date, Int).self) {
            participants.append(SchemaParticipant(
                participantId: id, externalId: externalId, arm: arm, armOrdinal: ordinal, status: status, enrolledAt: enrolled,
                submissions: submissions))
        }
        let page = KeysetPage(participants, limit: limit, key: \.participantId)
        return SchemaParticipantList(arms: armCounts, participants: page.items, next: page.next)
    }
}
