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

    /// Bytes put to an upload session are completed by the service when the client does not
    /// complete them (docs/sage.md, The Bridge handshake): Sage's clients delete their copy once
    /// the upload succeeded, so a `complete` that was lost, or answered `busy`, must not leave the
    /// bytes to expire. The session keeps the hash of the app token that opened it (the archive's
    /// write admits the sender again by it), when its bytes came, and how its completion went.
    static let uploadCompletion = Migration(
        component: "response", version: 25, name: "sage_upload_completion",
        statements: [
            """
            ALTER TABLE sage_uploads ADD COLUMN app_token_hash text, ADD COLUMN put_at timestamptz,
                ADD COLUMN closed text CHECK (closed IN ('refused', 'not_admitted')),
                ADD COLUMN completion_attempts integer NOT NULL DEFAULT 0, ADD COLUMN next_completion_at timestamptz
            """,
            // Sessions opened before: put when opened, at the latest, by the token their
            // participant holds now.
            "UPDATE sage_uploads SET put_at = created_at WHERE content IS NOT NULL",
            """
            UPDATE sage_uploads u SET app_token_hash = p.app_token_hash FROM participants p
            WHERE p.id = u.participant_id AND u.app_token_hash IS NULL
            """,
            """
            CREATE INDEX sage_uploads_uncompleted ON sage_uploads (put_at)
            WHERE content IS NOT NULL AND archive_id IS NULL AND closed IS NULL
            """,
        ]
    )
}

extension ResponseMigrations {
    /// SMART Backend Services clients of a study's FHIR API (docs/fhir.md, Authorisation): each
    /// registered with its public keys; the assertions it used, kept until they expire so none is
    /// accepted twice; and the short-lived access tokens issued to it, as their SHA-256.
    static let smartClients = Migration(
        component: "response", version: 26, name: "smart_clients",
        statements: [
            """
            CREATE TABLE smart_clients (
                client_id text PRIMARY KEY,
                study_key text NOT NULL REFERENCES studies (study_key),
                name text NOT NULL,
                jwks jsonb NOT NULL,
                created_by text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                revoked_at timestamptz,
                revoked_by text
            )
            """,
            "CREATE INDEX smart_clients_study ON smart_clients (study_key, created_at)",
            """
            CREATE TABLE smart_assertions (
                client_id text NOT NULL REFERENCES smart_clients (client_id),
                jti text NOT NULL,
                expires_at timestamptz NOT NULL,
                PRIMARY KEY (client_id, jti)
            )
            """,
            """
            CREATE TABLE smart_access_tokens (
                token_sha256 text PRIMARY KEY,
                client_id text NOT NULL REFERENCES smart_clients (client_id),
                -- The client's study, kept with the token so a read needs one row.
                study_key text NOT NULL,
                scopes text NOT NULL,
                issued_at timestamptz NOT NULL DEFAULT now(),
                expires_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX smart_access_tokens_client ON smart_access_tokens (client_id, expires_at)",
        ]
    )
}
