import ServiceKit

extension ResponseMigrations {
    /// Sage archives refused for their content, kept as they arrived (docs/sage.md, Refused
    /// archives): Sage's clients delete their copy once the upload succeeded, whatever the
    /// server answered. The same bytes from the same participant are one row, counted.
    static let refusedSageArchives = Migration(
        component: "response", version: 22, name: "sage_refused_archives",
        statements: [
            """
            CREATE TABLE sage_refused_archives (
                id bigserial PRIMARY KEY,
                refusal_id uuid NOT NULL UNIQUE,
                study_key text NOT NULL REFERENCES studies (study_key),
                participant_id bigint NOT NULL REFERENCES participants (id),
                door text NOT NULL CHECK (door IN ('archives', 'upload')),
                sha256 text NOT NULL,
                byte_count integer NOT NULL,
                content bytea NOT NULL,
                reason text NOT NULL,
                problems jsonb NOT NULL,
                times_refused integer NOT NULL DEFAULT 1,
                received_at timestamptz NOT NULL DEFAULT now(),
                last_refused_at timestamptz NOT NULL DEFAULT now(),
                archive_id uuid,
                reprocessed_at timestamptz,
                UNIQUE (participant_id, sha256)
            )
            """,
            "CREATE INDEX sage_refused_archives_study ON sage_refused_archives (study_key, id DESC)",
        ]
    )

    /// The activity version a team chose to process a failed response against, when not the one
    /// it was sent for (docs/response-api.md, Reprocessing): a response sent against a design that
    /// could not hold its answers is stored once the study is mended and published again, its
    /// answers matched to the later version's questions by their keys. The version it was sent
    /// for stays in `activity_version`, as received.
    static let reprocessingVersion = Migration(
        component: "response", version: 23, name: "responses_design_version",
        statements: ["ALTER TABLE responses ADD COLUMN design_version text"]
    )

    /// Registration's second feed (docs/response-api.md, Settlements): each response that failed
    /// processing, and each one that failed before and has been settled again, takes the next
    /// number of a sequence when its status is settled. Registration reads them in that order, so
    /// a run whose answers could not be stored is never shown as completed, and is once they are.
    /// Responses that never failed never take a number: the feed is as long as the failures.
    static let settlementFeed = Migration(
        component: "response", version: 24, name: "response_settlement_feed",
        statements: [
            "CREATE SEQUENCE response_settlement_seq",
            "ALTER TABLE responses ADD COLUMN settled_seq bigint, ADD COLUMN settled_at timestamptz",
            "CREATE INDEX responses_settled ON responses (settled_seq) WHERE settled_seq IS NOT NULL",
        ]
    )
}
