import Foundation
import Logging
import PostgresNIO

/// Counts tries at a secret (a password, a verification code) per subject and locks the subject
/// after too many, atomically: a try is counted *before* the secret is checked, in one statement,
/// so any number of concurrent requests evaluate at most `maxAttempts` guesses per lock period.
/// Reading a counter, hashing, then writing it back would let a burst of requests all pass the
/// read before any of them wrote (the race the security review used on admin sign-in).
///
/// A success clears the subject's count. The count starts over after a lock expires.
public struct AttemptCounter: Sendable {
    public struct Policy: Sendable {
        public var maxAttempts: Int
        public var lockFor: Duration

        public init(maxAttempts: Int, lockFor: Duration) {
            self.maxAttempts = maxAttempts
            self.lockFor = lockFor
        }
    }

    public enum Admission: Sendable, Equatable {
        /// Check the secret. `isLast`: a failure now locks the subject (this try locked it in
        /// advance; a success clears that).
        case allowed(isLast: Bool)
        /// Refused without checking the secret.
        case locked(until: Date)
    }

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Counts one try at `subject`'s secret.
    public func begin(_ subject: String, policy: Policy, on connection: PostgresConnection? = nil) async throws -> Admission {
        let lockSeconds = Double(policy.lockFor.components.seconds)
        // The outer SELECT sees the row as it was before the upsert: when nothing was counted,
        // its locked_until says until when the subject is locked.
        let query: PostgresQuery = """
            WITH counted AS (
                INSERT INTO attempt_counters AS c (subject, attempts, locked_until)
                VALUES (\(subject), 1, CASE WHEN 1 >= \(policy.maxAttempts) THEN now() + make_interval(secs => \(lockSeconds)) END)
                ON CONFLICT (subject) DO UPDATE SET
                    attempts = CASE WHEN c.locked_until IS NOT NULL THEN 1 ELSE c.attempts + 1 END,
                    locked_until = CASE
                        WHEN (CASE WHEN c.locked_until IS NOT NULL THEN 1 ELSE c.attempts + 1 END) >= \(policy.maxAttempts)
                        THEN now() + make_interval(secs => \(lockSeconds)) END,
                    updated_at = now()
                WHERE c.locked_until IS NULL OR c.locked_until <= now()
                RETURNING attempts
            )
            SELECT (SELECT attempts FROM counted), (SELECT locked_until FROM attempt_counters WHERE subject = \(subject))
            """
        let rows = if let connection { try await connection.query(query, logger: logger) } else {
            try await client.query(query, logger: logger)
        }
        for try await (attempts, lockedUntil) in rows.decode((Int?, Date?).self) {
            if let attempts { return .allowed(isLast: attempts >= policy.maxAttempts) }
            return .locked(until: lockedUntil ?? Date())
        }
        return .locked(until: Date())
    }

    /// The subject proved its secret: its count starts again from nothing.
    public func succeeded(_ subject: String, on connection: PostgresConnection? = nil) async throws {
        let query: PostgresQuery = "DELETE FROM attempt_counters WHERE subject = \(subject)"
        if let connection { try await connection.query(query, logger: logger) } else { try await client.query(query, logger: logger) }
    }

    /// Until when `subject` is locked, if it is.
    public func lockedUntil(_ subject: String) async throws -> Date? {
        let rows = try await client.query(
            "SELECT locked_until FROM attempt_counters WHERE subject = \(subject) AND locked_until > now()", logger: logger)
        for try await until in rows.decode(Date.self) { return until }
        return nil
    }

    /// Forgets counters untouched for `age` that hold no lock.
    public func deleteStale(olderThan age: Duration = .seconds(30 * 86_400)) async throws {
        let seconds = Double(age.components.seconds)
        try await client.query(
            """
            DELETE FROM attempt_counters
            WHERE updated_at < now() - make_interval(secs => \(seconds)) AND (locked_until IS NULL OR locked_until < now())
            """, logger: logger)
    }
}
