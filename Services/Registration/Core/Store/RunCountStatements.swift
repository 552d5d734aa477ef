import Foundation
import PostgresNIO
import ServiceKit

// The statements of the count sweep (`RunLedgerSweep`), prepared once per connection: when a run
// opens for everyone in a zone, every participant there is counted, and parsing and planning each
// statement again for each of them was about two fifths of the database's work (perf at a million
// participants, docs/operations.md). Their binding types are given: arrays bound as `int8[]` or
// `text[]` are cast in the SQL, as their unnamed forms were.

/// A ledger marked counted: its zone, and when to count it again. Something that asked for a
/// count while this one ran moved the lease's time back to its own; that earlier time is kept.
struct LedgerCountedStatement: PostgresPreparedStatement {
    static let sql = """
        UPDATE participant_run_ledgers SET counted_at = now(), time_zone = $3, time_zone_source = $4,
            recount_at = CASE WHEN recount_at > now() THEN $5 ELSE least(recount_at, $5) END
        WHERE user_id = $1 AND study_id = $2
        """
    static let bindingDataTypes: [PostgresDataType] = [.uuid, .text, .text, .text, .timestamptz]
    typealias Row = Void

    var userId: UUID
    var studyId: String
    var timeZone: String
    var timeZoneSource: String
    var recountAt: Date

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(userId)
        bindings.append(studyId)
        bindings.append(timeZone)
        bindings.append(timeZoneSource)
        bindings.append(recountAt)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}

/// The standings of the activities a count no longer has (no longer scheduled) removed.
struct DropStandingsStatement: PostgresPreparedStatement {
    static let sql = """
        DELETE FROM participant_activity_standings
        WHERE user_id = $1 AND study_id = $2 AND NOT (activity_id = ANY($3::text[]))
        """
    static let bindingDataTypes: [PostgresDataType] = [.uuid, .text, .textArray]
    typealias Row = Void

    var userId: UUID
    var studyId: String
    var activityIds: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(userId)
        bindings.append(studyId)
        bindings.append(activityIds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}

/// Where a participant's ledger's weeks were last sent (the hash of their app's id), and that hash
/// now.
struct WeeksSentToStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT ps.participant_token_hash, l.weeks_sent_to FROM participant_studies ps
        JOIN participant_run_ledgers l ON l.user_id = ps.user_id AND l.study_id = ps.study_id
        WHERE ps.user_id = $1 AND ps.study_id = $2
        """
    static let bindingDataTypes: [PostgresDataType] = [.uuid, .text]
    typealias Row = (String?, String?)

    var userId: UUID
    var studyId: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(userId)
        bindings.append(studyId)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

// A round's reads, for all its participants at once (`ParticipantRunStore.histories`), and for
// one participant as a round of one: each row starts with the 1-based position of its participant
// among those asked.

/// The participants of a round, by study and account.
struct RoundParticipantsStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT k.n, \(ParticipantRunStore.columns)
        FROM unnest($1::text[], $2::uuid[]) WITH ORDINALITY AS k(study_id, user_id, n)
        JOIN participant_studies ps ON ps.study_id = k.study_id AND ps.user_id = k.user_id
        """
    static let bindingDataTypes: [PostgresDataType] = [.textArray, .uuidArray]
    typealias Row = (Int, UUID, Date?, Date?, String?, String?)

    var studyIds: [String]
    var userIds: [UUID]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(studyIds)
        bindings.append(userIds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// The runs each participant's app reported completed since their time, oldest first, at most
/// `perParticipant` each and `limit` in all, in order of position.
struct RoundCompletionsStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT k.n, c.activity_id, c.run_id, c.completed_at
        FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) WITH ORDINALITY AS k(user_id, study_id, since, n)
        CROSS JOIN LATERAL (
            SELECT activity_id, run_id, completed_at FROM participant_run_completions
            WHERE user_id = k.user_id AND study_id = k.study_id AND completed_at >= k.since
            ORDER BY completed_at LIMIT $4) c
        ORDER BY k.n, c.completed_at
        LIMIT $5
        """
    static let bindingDataTypes: [PostgresDataType] = [.uuidArray, .textArray, .timestamptzArray, .int8, .int8]
    typealias Row = (Int, String, Int, Date)

    var userIds: [UUID]
    var studyIds: [String]
    var since: [Date]
    var perParticipant: Int
    var limit: Int

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(userIds)
        bindings.append(studyIds)
        bindings.append(since)
        bindings.append(perParticipant)
        bindings.append(limit)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// The responses of each participant that arrived since their time, newest first, each saying
/// whether its answers are stored; at most `perParticipant` each and `limit` in all.
struct RoundArrivalsStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT k.n, a.activity_id, a.run_id, a.received_at, a.finished_at, a.offset_minutes, a.stored
        FROM unnest($1::text[], $2::text[], $3::timestamptz[]) WITH ORDINALITY AS k(study_id, token_hash, since, n)
        CROSS JOIN LATERAL (
            SELECT a.activity_id, a.run_id, a.received_at, a.finished_at, a.offset_minutes, coalesce(s.stored, true) AS stored
            FROM response_arrivals a LEFT JOIN response_settlements s ON s.response_id = a.response_id
            WHERE a.study_id = k.study_id AND a.participant_token_hash = k.token_hash AND a.received_at >= k.since
            ORDER BY a.received_at DESC LIMIT $4) a
        ORDER BY k.n, a.received_at DESC
        LIMIT $5
        """
    static let bindingDataTypes: [PostgresDataType] = [.textArray, .textArray, .timestamptzArray, .int8, .int8]
    typealias Row = (Int, String, Int?, Date, Date?, Int?, Bool)

    var studyIds: [String]
    var tokenHashes: [String]
    var since: [Date]
    var perParticipant: Int
    var limit: Int

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(studyIds)
        bindings.append(tokenHashes)
        bindings.append(since)
        bindings.append(perParticipant)
        bindings.append(limit)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Each participant's newest answer to each date question of each activity (by the order
/// responses were stored), activity and key lowercased, as the response service matches them.
struct RoundAnchorAnswersStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT k.n, x.activity, x.key, x.value
        FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(study_id, token_hash, n)
        CROSS JOIN LATERAL (
            SELECT DISTINCT ON (lower(a.activity_id), lower(d.key)) lower(a.activity_id) AS activity, lower(d.key) AS key, d.value
            FROM response_arrivals a CROSS JOIN LATERAL jsonb_each_text(a.date_answers) d
            WHERE a.study_id = k.study_id AND a.participant_token_hash = k.token_hash AND a.date_answers IS NOT NULL
            ORDER BY lower(a.activity_id), lower(d.key), a.response_id DESC) x
        """
    static let bindingDataTypes: [PostgresDataType] = [.textArray, .textArray]
    typealias Row = (Int, String, String, String)

    var studyIds: [String]
    var tokenHashes: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(studyIds)
        bindings.append(tokenHashes)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Each participant's date properties the response service sent.
struct RoundAnchorPropertiesStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT k.n, d.key, d.value
        FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(study_id, token_hash, n)
        JOIN participant_property_dates p ON p.study_id = k.study_id AND p.participant_token_hash = k.token_hash
        CROSS JOIN LATERAL jsonb_each_text(p.dates) d
        """
    static let bindingDataTypes: [PostgresDataType] = [.textArray, .textArray]
    typealias Row = (Int, String, String)

    var studyIds: [String]
    var tokenHashes: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(studyIds)
        bindings.append(tokenHashes)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
