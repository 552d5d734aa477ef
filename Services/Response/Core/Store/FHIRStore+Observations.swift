import FHIR
import Foundation
import JSONText
import NIOCore
import PostgresNIO
import StudyModels

extension FHIRStore {
    /// The study's activities whose published designs hold an active task, with the tasks each
    /// holds: the responses `Observation`s come from. A study has a handful of designs; each is
    /// looked into where it is kept.
    package func taskActivities(studyKey: String) async throws -> [String: Set<TaskType>] {
        let rows = try await client.query(
            """
            SELECT DISTINCT d.activity_id, step->>'resultType'
            FROM activity_designs d, jsonb_path_query(d.design, 'lax $.activity.steps[*] ? (@.type == "task")') AS step
            WHERE d.study_key = \(studyKey)
            """, logger: logger)
        var found: [String: Set<TaskType>] = [:]
        for try await (activityId, resultType) in rows.decode((String, String?).self) {
            guard let task = resultType.flatMap(TaskType.init(rawValue:)) else { continue }
            found[activityId, default: []].insert(task)
        }
        return found
    }

    /// A page of the responses an Observation search reads: those to the study's task
    /// activities (narrowed to the activities of `search.code`'s task), in the order of their
    /// ids. Each activity's next responses are read through `responses_study_activity`, so a page
    /// costs the same however many other responses the study holds; a participant's through
    /// `responses_participant`.
    package func taskResponses(studyKey: String, studyId: String, search: FHIRSearch) async throws -> Page<StoredResponse> {
        let activities = Self.activities(of: try await taskActivities(studyKey: studyKey), code: search.code)
        guard !search.nothing, !activities.isEmpty, search.status == nil || search.status == "final" else {
            return Page(resources: [], nextAfter: nil)
        }
        let (from, before) = search.lastUpdatedRange
        let ids = search.ids
        let participant = search.participant
        let limit = search.count + 1
        let selected = """
            r.id, (SELECT p.number FROM participants p WHERE p.id = r.participant_id), r.activity_id, r.activity_version,
            r.activity_run_id, r.language, r.data::text, r.received_at
            """
        let after = search.after ?? 0
        // A participant's responses are few: their own index finds them. Otherwise each task
        // activity's next responses, merged. (The two share their filters, written twice: a
        // query cannot hold another.)
        let query: PostgresQuery =
            if let participant {
                """
                SELECT \(unescaped: selected) FROM responses r
                WHERE r.participant_id = (SELECT id FROM participants WHERE study_key = \(studyKey) AND number = \(participant))
                  AND r.activity_id = ANY(\(activities))
                  AND r.study_key = \(studyKey) AND r.id > \(after)
                  AND (\(ids)::bigint[] IS NULL OR r.id = ANY(\(ids)::bigint[]))
                  AND (\(from)::timestamptz IS NULL OR r.received_at >= \(from))
                  AND (\(before)::timestamptz IS NULL OR r.received_at < \(before))
                ORDER BY r.id LIMIT \(limit)
                """
            } else {
                """
                SELECT \(unescaped: selected) FROM unnest(\(activities)::text[]) AS a(activity_id)
                CROSS JOIN LATERAL (
                    SELECT r.* FROM responses r
                    WHERE r.activity_id = a.activity_id AND r.study_key = \(studyKey) AND r.id > \(after)
                      AND (\(ids)::bigint[] IS NULL OR r.id = ANY(\(ids)::bigint[]))
                      AND (\(from)::timestamptz IS NULL OR r.received_at >= \(from))
                      AND (\(before)::timestamptz IS NULL OR r.received_at < \(before))
                    ORDER BY r.id LIMIT \(limit)
                ) r
                ORDER BY r.id LIMIT \(limit)
                """
            }
        var found: [StoredResponse] = []
        for try await row in try await client.query(query, logger: logger).decode((Int64, Int64, String, String, String?, String?, ByteBuffer, Date).self) {
            let data = (try? JSONValue.parse(row.6.readableBytesView, budget: .responseAnswers)) ?? .object([:])
            found.append(StoredResponse(
                id: row.0, studyId: studyId, participantId: row.1, activityId: row.2, version: row.3, runId: row.4, data: data,
                receivedAt: row.7, design: nil, language: row.5))
        }
        guard found.count > search.count else { return Page(resources: found, nextAfter: nil) }
        let kept = Array(found.prefix(search.count))
        return Page(resources: kept, nextAfter: kept.last?.id)
    }

    /// How many Observations a search finds (`_summary=count`): the task results of the responses
    /// it reads, counted where they are stored by the rule `TaskObservations.taskResults` keeps
    /// (a task's result type, not skipped, its value a list).
    package func countTaskObservations(studyKey: String, search: FHIRSearch) async throws -> Int {
        let tasks = try await taskActivities(studyKey: studyKey)
        let activities = Self.activities(of: tasks, code: search.code)
        guard !search.nothing, !activities.isEmpty, search.status == nil || search.status == "final" else { return 0 }
        let types = search.code.map { [$0.rawValue] } ?? TaskType.allCases.map(\.rawValue)
        let (from, before) = search.lastUpdatedRange
        let ids = search.ids
        // The task types as the path's variable, never spliced into its text.
        let variables = "{\"types\": [\(types.map { "\"\($0)\"" }.joined(separator: ","))]}"
        let rows = try await client.query(
            """
            SELECT coalesce(sum(CASE WHEN jsonb_typeof(r.data->'results') = 'array' THEN jsonb_array_length(jsonb_path_query_array(
                r.data->'results',
                'lax $[*] ? (@.resultType == $types[*] && ((@.skipped == true) is unknown || !(@.skipped == true)) && @.value.type() == "array")',
                \(variables)::jsonb)) ELSE 0 END), 0)::bigint
            FROM responses r
            WHERE r.study_key = \(studyKey) AND r.activity_id = ANY(\(activities))
              AND (\(search.participant)::bigint IS NULL OR r.participant_id = (
                  SELECT id FROM participants WHERE study_key = \(studyKey) AND number = \(search.participant)))
              AND (\(ids)::bigint[] IS NULL OR r.id = ANY(\(ids)::bigint[]))
              AND (\(from)::timestamptz IS NULL OR r.received_at >= \(from))
              AND (\(before)::timestamptz IS NULL OR r.received_at < \(before))
            """, logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// The activities holding `code`'s task, or every task activity when no code is asked for.
    static func activities(of tasks: [String: Set<TaskType>], code: TaskType?) -> [String] {
        tasks.filter { code.map($0.value.contains) ?? true }.keys.sorted()
    }
}
