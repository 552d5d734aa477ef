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
    /// activity appears once any of them has reported it. Read from the counts the database keeps
    /// as states change (`study_participant_tallies`, `study_activity_tallies`): a few rows a
    /// study, however many take part.
    package func adherence(studyId: String) async throws -> ActivityAdherence {
        var participants = 0
        for try await count in try await client.query(
            "SELECT coalesce(sum(in_study), 0)::bigint FROM study_participant_tallies WHERE study_id = \(studyId)", logger: logger
        ).decode(Int.self) { participants = count }
        let rows = try await client.query(
            """
            SELECT activity_id, sum(up_to_date)::bigint, sum(behind)::bigint, sum(not_started)::bigint,
                   sum(runs_completed)::bigint, sum(runs_missed)::bigint
            FROM study_activity_tallies WHERE study_id = \(studyId)
            GROUP BY activity_id HAVING sum(up_to_date) + sum(behind) + sum(not_started) > 0
            ORDER BY activity_id
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

    /// Enrollments and withdrawals per UTC day, per site, as kept (`study_enrolment_days`); every
    /// site of the study is listed.
    package func enrollmentTimeline(studyId: String) async throws -> EnrollmentTimeline {
        var sites: [(id: UUID?, name: String)] = []
        for try await (id, name) in try await client.query(
            "SELECT id, name FROM study_sites WHERE study_id = \(studyId) ORDER BY lower(name)", logger: logger
        ).decode((UUID, String).self) { sites.append((id, name)) }
        var days: [UUID?: [String: EnrollmentTimeline.Day]] = [:]
        for try await (site, date, enrolled, withdrawn) in try await client.query(
            """
            SELECT site_id, to_char(day, 'YYYY-MM-DD'), enrolled, withdrawn FROM study_enrolment_days
            WHERE study_id = \(studyId) AND (enrolled <> 0 OR withdrawn <> 0)
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
