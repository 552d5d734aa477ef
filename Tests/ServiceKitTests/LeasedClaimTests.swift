import PostgresNIO
import ServiceKit
import Testing

/// The one leased-claim statement, as each of its users builds it: the due rows picked with
/// `SKIP LOCKED`, every key column matched, the lease and the limit bound rather than written in.
/// (That the statement claims each row once among racing replicas is `QueueSettlementTests`' and
/// the sweeps' cluster tests'.)
@Suite struct LeasedClaimTests {
    static func flat(_ sql: String) -> String {
        sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    @Test func aQueueTableClaimCountsTheAttemptAndMovesTheNextOnePastTheLease() {
        let query = QueueTable("mail_outbox", sentColumn: "sent_at").claim(returning: "q.recipient", limit: 50, lease: .seconds(45))
        #expect(Self.flat(query.sql) == Self.flat("""
            UPDATE mail_outbox q SET next_attempt_at = now() + make_interval(secs => $1), attempts = q.attempts + 1
            FROM (SELECT id FROM mail_outbox WHERE sent_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= now()
                  ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) due
            WHERE q.id = due.id
            RETURNING q.id, q.attempts, q.recipient
            """))
        #expect(query.binds.count == 2)
    }

    @Test func aSweepOverACompositeKeyMatchesEveryKeyColumnAndItsJoin() {
        let claim = LeasedClaim(
            "participant_activity_standings", key: ["user_id", "study_id", "activity_id"], due: "remind_at <= now()",
            order: "remind_at", leaseColumn: "remind_at")
        let query = claim.query(
            returning: "q.user_id, l.time_zone",
            joining: LeasedClaim.Join("participant_run_ledgers l", on: "l.user_id = q.user_id"), limit: 200, lease: .seconds(60))
        #expect(Self.flat(query.sql) == Self.flat("""
            UPDATE participant_activity_standings q SET remind_at = now() + make_interval(secs => $1)
            FROM (SELECT user_id, study_id, activity_id FROM participant_activity_standings WHERE remind_at <= now()
                  ORDER BY remind_at LIMIT $2 FOR UPDATE SKIP LOCKED) due, participant_run_ledgers l
            WHERE q.user_id = due.user_id AND q.study_id = due.study_id AND q.activity_id = due.activity_id
              AND l.user_id = q.user_id
            RETURNING q.user_id, l.time_zone
            """))
        #expect(query.binds.count == 2)
    }
}
