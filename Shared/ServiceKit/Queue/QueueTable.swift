import PostgresNIO

/// A queue table of the shape every StudyStack outbox shares, and the SQL that works it.
///
/// The shape: `id bigserial`, `created_at`, `attempts`, `next_attempt_at`, `last_error`, a column
/// stamped when the item is done (`sentColumn`) and `gave_up_at`; the payload columns are the
/// queue's own. The internal outbox of every service, registration's mail and push outboxes are
/// such tables. The stores keep what is theirs (what they insert, what a claimed row decodes to,
/// what else a completion records); the claim, the lease, the backoff, giving up and the depth
/// for `/metrics` are written here once (docs/architecture.md, Work queues).
///
/// Table and column names are `StaticString`s: literals in the code, never text from outside,
/// so the one place they are written into SQL unbound cannot carry anything a caller sent.
public struct QueueTable: Sendable {
    public let name: StaticString
    public let sentColumn: StaticString

    public init(_ name: StaticString, sentColumn: StaticString) {
        self.name = name
        self.sentColumn = sentColumn
    }

    /// A table the claim reads alongside the queue (a payload kept in another table).
    public typealias Join = LeasedClaim.Join

    /// Claims up to `limit` due rows, oldest first, each leased for `lease` (`LeasedClaim`): its
    /// attempt counted and its next attempt moved past the lease. Each returned row is the id,
    /// the attempts (this claim included), then `columns` (the queue's row is `q`).
    public func claim(returning columns: StaticString, joining join: Join? = nil, limit: Int, lease: Duration) -> PostgresQuery {
        LeasedClaim(
            literals: "\(name)", key: ["id"], due: "\(sentColumn) IS NULL AND gave_up_at IS NULL AND next_attempt_at <= now()",
            order: "id", leaseColumn: "next_attempt_at", alsoSet: "attempts = q.attempts + 1"
        ).query(returningLiterals: "q.id, q.attempts, \(columns)", joining: join, limit: limit, lease: lease)
    }

    /// Marks row `id` done; `recording` also keeps a text the work produced (where it went),
    /// `clearing` empties payload columns no longer needed (a sealed message once sent).
    public func complete(id: Int64, recording: (column: StaticString, value: String)? = nil, clearing: [StaticString] = []) -> PostgresQuery {
        var sql = Self.sql("UPDATE \(name) SET \(sentColumn) = now(), last_error = NULL")
        if let recording {
            sql.appendLiteral(", \(recording.column) = ")
            sql.appendInterpolation(recording.value)
        }
        for column in clearing { sql.appendLiteral(", \(column) = NULL") }
        sql.appendLiteral(" WHERE id = ")
        sql.appendInterpolation(id)
        return PostgresQuery(stringInterpolation: sql)
    }

    /// Records a failed attempt at row `id`: tried again `retryAfter` from now, or, when it is
    /// nil, given up (kept with its last error for an operator; `clearing` empties payload columns
    /// that must not outlive the work).
    public func fail(id: Int64, reason: String, retryAfter: Duration?, clearing: [StaticString] = []) -> PostgresQuery {
        var sql = Self.sql("UPDATE \(name) SET last_error = ")
        sql.appendInterpolation(reason)
        if let retryAfter {
            sql.appendLiteral(", next_attempt_at = now() + make_interval(secs => ")
            sql.appendInterpolation(retryAfter.inSeconds)
            sql.appendLiteral(")")
        } else {
            sql.appendLiteral(", gave_up_at = now()")
            for column in clearing { sql.appendLiteral(", \(column) = NULL") }
        }
        sql.appendLiteral(" WHERE id = ")
        sql.appendInterpolation(id)
        return PostgresQuery(stringInterpolation: sql)
    }

    /// How many rows wait (neither done nor given up) and the age in seconds of the oldest, for
    /// `/metrics` (`ServiceEnvironment.watchQueue`).
    public var depthQuery: PostgresQuery {
        PostgresQuery(unsafeSQL: """
            SELECT count(*)::int, extract(epoch FROM now() - min(created_at))::float8
            FROM \(name) WHERE \(sentColumn) IS NULL AND gave_up_at IS NULL
            """)
    }

    /// Deletes rows done longer ago than `retention`.
    public func deleteSent(olderThan retention: Duration) -> PostgresQuery {
        var sql = Self.sql("DELETE FROM \(name) WHERE \(sentColumn) < now() - make_interval(secs => ")
        sql.appendInterpolation(retention.inSeconds)
        sql.appendLiteral(")")
        return PostgresQuery(stringInterpolation: sql)
    }

    private static func sql(_ start: String) -> PostgresQuery.StringInterpolation {
        var sql = PostgresQuery.StringInterpolation(literalCapacity: 256, interpolationCount: 4)
        sql.appendLiteral(start)
        return sql
    }
}
