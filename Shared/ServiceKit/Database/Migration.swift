import Crypto
import Foundation

/// One forward-only schema change.
///
/// A migration is a list of SQL statements run in one transaction. Statements are kept apart
/// because PostgreSQL's extended query protocol, which postgres-nio speaks, takes one statement
/// per query. The text is trusted source code, never user input; it is the only SQL ServiceKit
/// sends unbound.
public struct Migration: Sendable, Hashable {
    /// Who owns the migration: `servicekit` for the shared tables, the service name otherwise.
    public let component: String
    /// Position within the component, starting at 1 and increasing by 1.
    public let version: Int
    public let name: String
    public let statements: [String]

    public init(component: String, version: Int, name: String, statements: [String]) {
        self.component = component
        self.version = version
        self.name = name
        self.statements = statements
    }

    /// SHA-256 of the statements, recorded when applied so a later edit is caught.
    public var checksum: String {
        let text = statements.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: "\n;\n")
        return SHA256.hash(data: Data(text.utf8)).hexString
    }

    /// `component/0001_name`, as logs and readiness reports show it.
    public var label: String { "\(component)/\(String(format: "%04d", version))_\(name)" }
}

/// Tables every service has, whatever it does.
public enum ServiceKitMigrations {
    public static let all: [Migration] = [
        Migration(
            component: "servicekit", version: 1, name: "internal_request_nonces",
            statements: [
                """
                CREATE TABLE internal_request_nonces (
                    caller text NOT NULL,
                    nonce text NOT NULL,
                    expires_at timestamptz NOT NULL,
                    PRIMARY KEY (caller, nonce)
                )
                """,
                "CREATE INDEX internal_request_nonces_expires_at ON internal_request_nonces (expires_at)",
            ]
        ),
        Migration(
            component: "servicekit", version: 2, name: "audit_events",
            statements: [
                """
                CREATE TABLE audit_events (
                    id bigserial PRIMARY KEY,
                    at timestamptz NOT NULL DEFAULT now(),
                    actor text NOT NULL,
                    action text NOT NULL,
                    study_id text,
                    study_version integer,
                    details jsonb NOT NULL DEFAULT '{}'
                )
                """,
                "CREATE INDEX audit_events_study ON audit_events (study_id, id DESC)",
            ]
        ),
        Migration(
            component: "servicekit", version: 3, name: "internal_outbox",
            statements: [
                """
                CREATE TABLE internal_outbox (
                    id bigserial PRIMARY KEY,
                    peer text NOT NULL,
                    method text NOT NULL,
                    path text NOT NULL CHECK (path LIKE '/internal/%'),
                    body bytea NOT NULL,
                    request_id text,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    attempts integer NOT NULL DEFAULT 0,
                    next_attempt_at timestamptz NOT NULL DEFAULT now(),
                    last_error text,
                    delivered_at timestamptz,
                    gave_up_at timestamptz
                )
                """,
                """
                CREATE INDEX internal_outbox_due ON internal_outbox (next_attempt_at)
                WHERE delivered_at IS NULL AND gave_up_at IS NULL
                """,
            ]
        ),
        Migration(
            component: "servicekit", version: 4, name: "attempt_counters_and_rate_windows",
            statements: [
                // Tries at a secret per subject (`AttemptCounter`): counted before the secret is
                // checked, so concurrent guesses cannot outrun the lock.
                """
                CREATE TABLE attempt_counters (
                    subject text PRIMARY KEY,
                    attempts integer NOT NULL,
                    locked_until timestamptz,
                    updated_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                // One-minute request counts per (action, key) (`RateLimiter`).
                """
                CREATE TABLE request_rate_windows (
                    bucket text NOT NULL,
                    window_start timestamptz NOT NULL,
                    hits integer NOT NULL,
                    PRIMARY KEY (bucket, window_start)
                )
                """,
            ]
        ),
        // A queue's claim takes its waiting rows oldest first (`QueueTable`). Those done are kept
        // for a week, and the planner walked the primary key through all of them, in id order,
        // to reach the first waiting one: at a million participants, a week of counts' deliveries
        // was scanned by every claim. Only the waiting rows are in this index, in claim order.
        Migration(
            component: "servicekit", version: 5, name: "internal_outbox_waiting",
            statements: [
                "CREATE INDEX internal_outbox_waiting ON internal_outbox (id) WHERE delivered_at IS NULL AND gave_up_at IS NULL"
            ]
        ),
    ]
}
