import Foundation
import Logging
import PostgresNIO
import StudyModels

/// How a study is getting on, in counts: per activity, how its participants stand, from what
/// their apps report (`updateActivityState`): up to date, behind (a run missed), or not started;
/// and enrollments and withdrawals per day and site.
package struct AdherenceStore: Sendable {
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Participants count when they are in the study now (`inProgress` or `completed`). An
    /// activity appears once any of them has reported it.
    package func adherence(studyId: String) async throws -> ActivityAdherence {
        let totalRows = try await client.query(
            """
            SELECT count(*)::int FROM participant_studies
            WHERE study_id = \(studyId) AND status IN ('inProgress', 'completed')
            """, logger: logger)
        var participants = 0
        for try await count in totalRows.decode(Int.self) { participants = count }
        let rows = try await client.query(
            """
            SELECT a.activity_id,
                   count(*) FILTER (WHERE a.runs_missed = 0 AND (a.runs_completed > 0 OR a.activity_state <> 'yetToJoin'))::int,
                   count(*) FILTER (WHERE a.runs_missed > 0)::int,
                   count(*) FILTER (WHERE a.runs_missed = 0 AND a.runs_completed = 0 AND a.activity_state = 'yetToJoin')::int,
                   coalesce(sum(a.runs_completed), 0)::int, coalesce(sum(a.runs_missed), 0)::int
            FROM participant_activities a
            JOIN participant_studies ps ON ps.user_id = a.user_id AND ps.study_id = a.study_id
            WHERE a.study_id = \(studyId) AND ps.status IN ('inProgress', 'completed')
            GROUP BY a.activity_id ORDER BY a.activity_id
            """, logger: logger)
        var activities: [ActivityAdherence.Activity] = []
        for try await (id, upToDate, behind, reportedNotStarted, completed, missed) in rows.decode((String, Int, Int, Int, Int, Int).self) {
            let reported = upToDate + behind + reportedNotStarted
            activities.append(.init(
                activityId: id, upToDate: upToDate, behind: behind, notStarted: reportedNotStarted + max(0, participants - reported),
                runsCompleted: completed, runsMissed: missed))
        }
        return ActivityAdherence(participants: participants, activities: activities)
    }

    /// Enrollments and withdrawals per UTC day, per site; every site of the study is listed.
    package func enrollmentTimeline(studyId: String) async throws -> EnrollmentTimeline {
        var sites: [(id: UUID?, name: String)] = []
        for try await (id, name) in try await client.query(
            "SELECT id, name FROM study_sites WHERE study_id = \(studyId) ORDER BY lower(name)", logger: logger
        ).decode((UUID, String).self) { sites.append((id, name)) }
        var days: [UUID?: [String: EnrollmentTimeline.Day]] = [:]
        for try await (site, date, enrolled, withdrawn) in try await client.query(
            """
            SELECT site_id, day, sum(enrolled)::int, sum(withdrawn)::int FROM (
                SELECT site_id, to_char(enrolled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, 1 AS enrolled, 0 AS withdrawn
                FROM participant_studies WHERE study_id = \(studyId) AND enrolled_at IS NOT NULL
                UNION ALL
                SELECT site_id, to_char(withdrawn_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), 0, 1
                FROM participant_studies WHERE study_id = \(studyId) AND withdrawn_at IS NOT NULL
            ) events GROUP BY site_id, day
            """, logger: logger
        ).decode((UUID?, String, Int, Int).self) {
            days[site, default: [:]][date] = .init(date: date, enrolled: enrolled, withdrawn: withdrawn)
        }
        if days[nil] != nil { sites.append((nil, "No site")) }
        return EnrollmentTimeline(
            sites: sites.map { site in
                EnrollmentTimeline.Site(
                    siteId: site.id?.uuidString.lowercased(), name: site.name,
                    days: (days[site.id] ?? [:]).values.sorted { $0.date < $1.date })
            })
    }
}
