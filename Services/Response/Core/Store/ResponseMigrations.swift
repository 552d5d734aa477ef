import ServiceKit

/// The response service's tables.
package enum ResponseMigrations {
    package static let all: [Migration] = throughParticipantNumbers + [
        refusedSageArchives, reprocessingVersion, settlementFeed, uploadCompletion, smartClients, fhirExports,
        fhirDeidentified, fhirForwarding, fhirExportChunksLZ4, responsesByActivity, failedByActivity, studyParticipantNumbers,
        studyResponseDays,
    ]

    static let throughParticipantNumbers: [Migration] = [
        Migration(
            component: "response", version: 1, name: "studies_tokens_participants",
            statements: [
                // Studies as study-metadata last described them. `study_key` is the upper-cased
                // id, which is how the apps' studyId is matched (the original upper-cased it).
                """
                CREATE TABLE studies (
                    study_key text PRIMARY KEY,
                    study_id text NOT NULL,
                    app_id text NOT NULL,
                    org_id text NOT NULL,
                    status text NOT NULL,
                    version integer NOT NULL,
                    event_at timestamptz NOT NULL,
                    event jsonb NOT NULL,
                    collection_enabled boolean NOT NULL DEFAULT true,
                    updated_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                """
                CREATE TABLE token_batches (
                    id uuid PRIMARY KEY,
                    study_key text NOT NULL REFERENCES studies (study_key),
                    count integer NOT NULL CHECK (count > 0),
                    created_by text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                "CREATE INDEX token_batches_study ON token_batches (study_key, created_at)",
                // One enrollment per participant: the participant's app token is stored only as
                // its SHA-256 (it is the credential every response call carries).
                """
                CREATE TABLE participants (
                    id bigserial PRIMARY KEY,
                    study_key text NOT NULL REFERENCES studies (study_key),
                    app_token_hash text UNIQUE,
                    status text NOT NULL CHECK (status IN ('enrolled', 'withdrawn')),
                    allow_data_sharing text NOT NULL CHECK (allow_data_sharing IN ('true', 'false', 'NA')),
                    language text,
                    enrolled_at timestamptz NOT NULL DEFAULT now(),
                    withdrawn_at timestamptz
                )
                """,
                // Tokens are looked up by an HMAC (a keyed hash: the 26^8 space is small enough to
                // enumerate, so a plain hash would not hide them) and kept sealed for the
                // researcher's download.
                """
                CREATE TABLE enrollment_tokens (
                    token_hmac text PRIMARY KEY,
                    batch_id uuid NOT NULL REFERENCES token_batches (id),
                    position integer NOT NULL,
                    sealed bytea NOT NULL,
                    participant_id bigint UNIQUE REFERENCES participants (id),
                    used_at timestamptz
                )
                """,
                "CREATE INDEX enrollment_tokens_batch ON enrollment_tokens (batch_id, position)",
            ]
        ),
        Migration(
            component: "response", version: 2, name: "responses",
            statements: [
                // Every submitted response, stored before the app is answered; processing into the
                // study's tables reads from here. `fingerprint` makes an offline replay of the same
                // response a no-op.
                """
                CREATE TABLE responses (
                    id bigserial PRIMARY KEY,
                    participant_id bigint NOT NULL REFERENCES participants (id),
                    study_key text NOT NULL REFERENCES studies (study_key),
                    activity_id text NOT NULL,
                    activity_version text NOT NULL,
                    activity_run_id text,
                    language text,
                    metadata jsonb NOT NULL,
                    data jsonb NOT NULL,
                    fingerprint text NOT NULL,
                    status text NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'processed', 'error', 'forwarded')),
                    error_message text,
                    received_at timestamptz NOT NULL DEFAULT now(),
                    processed_at timestamptz,
                    UNIQUE (participant_id, fingerprint)
                )
                """,
                "CREATE INDEX responses_pending ON responses (id) WHERE status = 'pending'",
                "CREATE INDEX responses_study ON responses (study_key, activity_id, status)",
            ]
        ),
        Migration(
            component: "response", version: 3, name: "study_tables",
            statements: [
                // Each study's responses live in real tables in a schema of its own; these rows
                // describe them: the names as the designs spell them (matched in any case, as the
                // original's lists were), the storage of each column, and the SQL names used.
                """
                CREATE TABLE study_schemas (
                    study_key text PRIMARY KEY REFERENCES studies (study_key),
                    schema_name text NOT NULL UNIQUE
                )
                """,
                """
                CREATE TABLE response_lists (
                    id bigserial PRIMARY KEY,
                    study_key text NOT NULL REFERENCES studies (study_key),
                    name text NOT NULL,
                    parent_id bigint REFERENCES response_lists (id),
                    sql_name text NOT NULL,
                    UNIQUE (study_key, sql_name)
                )
                """,
                "CREATE UNIQUE INDEX response_lists_name ON response_lists (study_key, lower(name))",
                """
                CREATE TABLE response_columns (
                    id bigserial PRIMARY KEY,
                    list_id bigint NOT NULL REFERENCES response_lists (id),
                    name text NOT NULL,
                    storage text NOT NULL CHECK (storage IN ('DOUBLE', 'TIMESTAMP', 'BOOLEAN', 'VARCHAR', 'INTEGER')),
                    max_length integer,
                    system boolean NOT NULL DEFAULT false,
                    sql_name text NOT NULL,
                    UNIQUE (list_id, sql_name)
                )
                """,
                "CREATE UNIQUE INDEX response_columns_name ON response_columns (list_id, lower(name))",
            ]
        ),
        Migration(
            component: "response", version: 4, name: "response_metadata",
            statements: [
                // Each stored answer's timing (the original's ResponseMetadata): the list and field,
                // the top row it belongs to, when it was started and ended, whether it was skipped.
                """
                CREATE TABLE response_metadata (
                    id bigserial PRIMARY KEY,
                    response_id bigint NOT NULL REFERENCES responses (id) ON DELETE CASCADE,
                    participant_id bigint NOT NULL REFERENCES participants (id),
                    list_name text NOT NULL,
                    top_key bigint NOT NULL,
                    field_name text NOT NULL,
                    start_time timestamptz,
                    end_time timestamptz,
                    skipped boolean NOT NULL
                )
                """,
                "CREATE INDEX response_metadata_participant ON response_metadata (participant_id)",
                // Designs as study-metadata served them, kept for good per activity version, and
                // whether the study's tables already have them.
                """
                CREATE TABLE activity_designs (
                    study_key text NOT NULL REFERENCES studies (study_key),
                    activity_id text NOT NULL,
                    version text NOT NULL,
                    design jsonb NOT NULL,
                    applied_at timestamptz,
                    fetched_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (study_key, activity_id, version)
                )
                """,
            ]
        ),
        Migration(
            component: "response", version: 5, name: "response_retries",
            statements: [
                // A response whose design cannot be fetched now waits without holding up the rest.
                "ALTER TABLE responses ADD COLUMN attempts integer NOT NULL DEFAULT 0",
                "ALTER TABLE responses ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now()",
                "DROP INDEX responses_pending",
                "CREATE INDEX responses_pending ON responses (next_attempt_at, id) WHERE status = 'pending'",
            ]
        ),
        Migration(
            component: "response", version: 6, name: "participant_query_scope",
            statements: [
                // Participant queries run as a role of their own under row-level security. The
                // policy on every study table compares "ParticipantId" with the participant this
                // function reads from a transaction setting the service signs with this key. The
                // reader role can set the setting to anything, but cannot read the key, so it
                // cannot name another participant.
                """
                CREATE TABLE query_scope_key (
                    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                    key bytea NOT NULL CHECK (length(key) = 32)
                )
                """,
                "REVOKE ALL ON query_scope_key FROM PUBLIC",
                """
                CREATE FUNCTION public.query_scope_participant() RETURNS bigint
                LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
                AS $$
                    SELECT CASE WHEN r.m[2] = encode(sha256(k.key || sha256(k.key || convert_to(r.m[1], 'UTF8'))), 'hex')
                                THEN r.m[1]::bigint END
                    FROM public.query_scope_key k,
                         regexp_match(coalesce(current_setting('studystack.query_scope', true), ''),
                                      '^([0-9]{1,18}):([0-9a-f]{64})$') AS r(m)
                $$
                """,
                "REVOKE ALL ON FUNCTION public.query_scope_participant() FROM PUBLIC",
            ]
        ),
        Migration(
            component: "response", version: 7, name: "forwarding",
            statements: [
                // Where a study's processed responses are forwarded, if anywhere. The Basic
                // password is sealed (AES-GCM, the study as associated data); nothing else here is
                // secret.
                """
                CREATE TABLE forwarding_settings (
                    study_key text PRIMARY KEY REFERENCES studies (study_key),
                    kind text NOT NULL CHECK (kind IN ('disabled', 'basic', 'oauth')),
                    url text,
                    username text,
                    sealed_password bytea,
                    token_request_url text,
                    token_field text,
                    token_header text,
                    updated_by text NOT NULL,
                    updated_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                // A processed response is due for forwarding from `forward_due_at`; a worker leases
                // it while it sends, so replicas never send one twice at once.
                "ALTER TABLE responses ADD COLUMN forward_attempts integer NOT NULL DEFAULT 0",
                "ALTER TABLE responses ADD COLUMN forward_due_at timestamptz NOT NULL DEFAULT now()",
                "ALTER TABLE responses ADD COLUMN forward_lease_until timestamptz",
                "ALTER TABLE responses ADD COLUMN forward_error text",
                "ALTER TABLE responses ADD COLUMN forwarded_at timestamptz",
                "CREATE INDEX responses_forwarding ON responses (forward_due_at, id) WHERE status = 'processed'",
            ]
        ),
        Migration(
            component: "response", version: 8, name: "response_metadata_by_response",
            statements: [
                // Deleting responses (withdrawal with delete, the benchmark's clean-up) cascades
                // to their timing rows; without this index each deleted response scanned them all.
                "CREATE INDEX response_metadata_response ON response_metadata (response_id)",
            ]
        ),
        Migration(
            component: "response", version: 9, name: "pending_responses_by_study",
            statements: [
                // The processor takes studies in turn (ResponseProcessor.processNext), so one
                // study's backlog cannot hold up the others.
                "CREATE INDEX responses_pending_by_study ON responses (study_key, id) WHERE status = 'pending'",
            ]
        ),
        Migration(
            component: "response", version: 10, name: "invitation_tokens",
            statements: [
                // Registration's invitations each get one token here, in batches of their own kind
                // (not listed with the printable batches); a token may expire and be revoked.
                "ALTER TABLE token_batches ADD COLUMN kind text NOT NULL DEFAULT 'batch' CHECK (kind IN ('batch', 'invitations'))",
                "ALTER TABLE enrollment_tokens ADD COLUMN invitation_id uuid",
                "CREATE UNIQUE INDEX enrollment_tokens_invitation ON enrollment_tokens (invitation_id) WHERE invitation_id IS NOT NULL",
                "ALTER TABLE enrollment_tokens ADD COLUMN expires_at timestamptz",
                "ALTER TABLE enrollment_tokens ADD COLUMN revoked_at timestamptz",
            ]
        ),
        Migration(
            component: "response", version: 11, name: "responses_by_participant_and_day",
            statements: [
                // A participant's responses (the console's participant page, the admin list's
                // filter) and a study's responses per day (the console's chart) without reading
                // the study's whole queue.
                "CREATE INDEX responses_participant ON responses (participant_id, id)",
                "CREATE INDEX responses_study_received ON responses (study_key, received_at)",
            ]
        ),
        Migration(
            component: "response", version: 12, name: "researcher_query_scope",
            statements: [
                // Researchers' LabKey queries run as the same reader role as the participants'
                // (migration 6), with a scope naming a study instead of a participant:
                // `s:<study key>:<MAC>`. Every study table gets a second policy that shows all its
                // rows when this function returns the table's study.
                """
                CREATE FUNCTION public.query_scope_study() RETURNS text
                LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
                AS $$
                    SELECT CASE WHEN r.m[2] = encode(sha256(k.key || sha256(k.key || convert_to(r.m[1], 'UTF8'))), 'hex')
                                THEN substr(r.m[1], 3) END
                    FROM public.query_scope_key k,
                         regexp_match(coalesce(current_setting('studystack.query_scope', true), ''),
                                      '^(s:.+):([0-9a-f]{64})$') AS r(m)
                $$
                """,
                "REVOKE ALL ON FUNCTION public.query_scope_study() FROM PUBLIC",
                // LabKey's `mobileappstudy` schema for researchers: the service's own tables seen
                // through views that show one study, the one the signed scope names, and never a
                // secret (app tokens as their hash, enrollment tokens without their text). The
                // views read as their owner, the service; the reader role only gets SELECT on them.
                "CREATE SCHEMA mobileappstudy",
                """
                CREATE VIEW mobileappstudy."Participant" WITH (security_barrier) AS
                SELECT p.id AS "ParticipantId", p.status AS "Status", p.allow_data_sharing AS "AllowDataSharing",
                       p.language AS "Language", p.enrolled_at AS "Enrolled", p.withdrawn_at AS "Withdrawn",
                       p.app_token_hash AS "AppTokenSHA256"
                FROM public.participants p WHERE p.study_key = (SELECT public.query_scope_study())
                """,
                """
                CREATE VIEW mobileappstudy."Response" WITH (security_barrier) AS
                SELECT r.id AS "RowId", r.participant_id AS "ParticipantId", r.activity_id AS "ActivityId",
                       r.activity_version AS "ActivityVersion", r.activity_run_id AS "RunId", r.language AS "Language",
                       r.status AS "Status", r.error_message AS "ErrorMessage", r.attempts AS "Attempts",
                       r.received_at AS "Received", r.processed_at AS "Processed", r.data::text AS "Response"
                FROM public.responses r WHERE r.study_key = (SELECT public.query_scope_study())
                """,
                """
                CREATE VIEW mobileappstudy."EnrollmentTokenBatch" WITH (security_barrier) AS
                SELECT b.id::text AS "RowId", b.kind AS "Kind", b.count AS "Count", b.created_by AS "CreatedBy",
                       b.created_at AS "Created"
                FROM public.token_batches b WHERE b.study_key = (SELECT public.query_scope_study())
                """,
                """
                CREATE VIEW mobileappstudy."EnrollmentToken" WITH (security_barrier) AS
                SELECT t.batch_id::text AS "BatchId", t.position AS "Position", b.kind AS "Kind",
                       t.participant_id AS "ParticipantId", t.used_at AS "Used", t.expires_at AS "Expires",
                       t.revoked_at AS "Revoked", b.created_at AS "Created"
                FROM public.enrollment_tokens t JOIN public.token_batches b ON b.id = t.batch_id
                WHERE b.study_key = (SELECT public.query_scope_study())
                """,
                """
                CREATE VIEW mobileappstudy."ResponseMetadata" WITH (security_barrier) AS
                SELECT m.id AS "RowId", m.response_id AS "ResponseId", m.participant_id AS "ParticipantId",
                       r.activity_id AS "ActivityId", m.list_name AS "ListName", m.top_key AS "ListKey",
                       m.field_name AS "FieldName", m.start_time AS "StartTime", m.end_time AS "EndTime",
                       m.skipped AS "Skipped"
                FROM public.response_metadata m JOIN public.responses r ON r.id = m.response_id
                WHERE r.study_key = (SELECT public.query_scope_study())
                """,
            ]
        ),
        Migration(
            component: "response", version: 13, name: "schema_participants_and_arms",
            statements: [
                // The schema app's participants have no app token: they are known by the id the app
                // made on the phone (`user_id`), per study. Each is given an arm by the server when
                // first seen; `arm_ordinal` is their place in the study's order of arrival, which
                // block randomisation counts in (docs/schema-protocols.md, Conditions).
                "ALTER TABLE participants ADD COLUMN external_id text",
                "ALTER TABLE participants ADD COLUMN arm text",
                "ALTER TABLE participants ADD COLUMN arm_ordinal integer",
                "CREATE UNIQUE INDEX participants_external ON participants (study_key, external_id) WHERE external_id IS NOT NULL",
                // How many participants each study has given arms to; its row is locked while one
                // is assigned, so two first POSTs at once get consecutive places.
                """
                CREATE TABLE arm_counters (
                    study_key text PRIMARY KEY REFERENCES studies (study_key),
                    assigned integer NOT NULL
                )
                """,
                """
                CREATE OR REPLACE VIEW mobileappstudy."Participant" WITH (security_barrier) AS
                SELECT p.id AS "ParticipantId", p.status AS "Status", p.allow_data_sharing AS "AllowDataSharing",
                       p.language AS "Language", p.enrolled_at AS "Enrolled", p.withdrawn_at AS "Withdrawn",
                       p.app_token_hash AS "AppTokenSHA256", p.external_id AS "ExternalId", p.arm AS "Arm",
                       p.arm_ordinal AS "ArmOrdinal"
                FROM public.participants p WHERE p.study_key = (SELECT public.query_scope_study())
                """,
            ]
        ),
        Migration(
            component: "response", version: 14, name: "pending_responses_by_due_time",
            statements: [
                // The processor claims a batch as each study's responses in the order they fell
                // due (ProcessingStore.claim): one range of this index per study, rows waiting for
                // a design later in it rather than in the way. It replaces both older indexes of
                // pending responses, which nothing reads any more.
                "DROP INDEX responses_pending_by_study",
                "DROP INDEX responses_pending",
                "CREATE INDEX responses_pending ON responses (study_key, next_attempt_at, id) WHERE status = 'pending'",
            ]
        ),
        Migration(
            component: "response", version: 15, name: "forwarding_by_study",
            statements: [
                // Forwarding reads each forwarding study's range of due responses
                // (ForwardingStore.lease), never the processed responses of studies that do not
                // forward, which stay in this index for good.
                "DROP INDEX responses_forwarding",
                "CREATE INDEX responses_forwarding ON responses (study_key, forward_due_at, id) WHERE status = 'processed'",
            ]
        ),
        Migration(
            component: "response", version: 16, name: "timing_rows_without_participant_check",
            statements: [
                // A timing row's participant is its response's (the writer copies it), and the
                // response's own foreign key already holds the participant; participants are never
                // deleted. The two foreign-key checks per row, this one and the response's, were
                // most of the time of inserting a slice's timing rows; without this one, processing
                // keeps up with pgbench doing the same inserts (make bench, "processing").
                "ALTER TABLE response_metadata DROP CONSTRAINT response_metadata_participant_id_fkey",
            ]
        ),
        Migration(
            component: "response", version: 17, name: "sage_archives",
            statements: [
                // A study's key pair for Sage's sealed archives: the certificate as DER, the
                // private key sealed (RowSeal.studyKeys, the study key as context).
                """
                CREATE TABLE sage_study_keys (
                    study_key text PRIMARY KEY REFERENCES studies (study_key),
                    certificate bytea NOT NULL,
                    sealed_private_key bytea NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                // Every archive received, as opened, with the response its answers became. A run
                // is stored once per participant (`idempotency_key`: its taskRunUUID, else the
                // archive's SHA-256).
                """
                CREATE TABLE sage_archives (
                    id bigserial PRIMARY KEY,
                    archive_id uuid NOT NULL UNIQUE,
                    study_key text NOT NULL REFERENCES studies (study_key),
                    participant_id bigint NOT NULL REFERENCES participants (id),
                    idempotency_key text NOT NULL,
                    response_id bigint REFERENCES responses (id) ON DELETE SET NULL,
                    assessment_id text NOT NULL,
                    activity_version text NOT NULL,
                    task_run_uuid text,
                    sha256 text NOT NULL,
                    byte_count integer NOT NULL,
                    sealed boolean NOT NULL,
                    files jsonb NOT NULL,
                    content bytea NOT NULL,
                    received_at timestamptz NOT NULL DEFAULT now(),
                    UNIQUE (participant_id, idempotency_key)
                )
                """,
                "CREATE INDEX sage_archives_study ON sage_archives (study_key, id DESC)",
                "CREATE INDEX sage_archives_participant ON sage_archives (participant_id, id DESC)",
                // Bridge's upload handshake: a session made by POST /v3/uploads, its bytes put to
                // its URL (whose secret is kept hashed), then completed into an archive.
                """
                CREATE TABLE sage_uploads (
                    id uuid PRIMARY KEY,
                    secret_hash text NOT NULL,
                    study_key text NOT NULL REFERENCES studies (study_key),
                    participant_id bigint NOT NULL REFERENCES participants (id),
                    name text NOT NULL,
                    content_length integer NOT NULL,
                    content_md5 text NOT NULL,
                    content_type text NOT NULL,
                    metadata jsonb NOT NULL,
                    content bytea,
                    archive_id uuid,
                    expires_at timestamptz NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                "CREATE INDEX sage_uploads_expiry ON sage_uploads (expires_at)",
                "CREATE INDEX sage_uploads_participant ON sage_uploads (participant_id)",
            ]
        ),
        Migration(
            component: "response", version: 18, name: "sage_archive_content_uncompressed",
            statements: [
                // A ZIP is compressed already (and a sealed one's ciphertext cannot be): stored
                // out of line as it is, without PostgreSQL trying, and failing, to compress it again.
                "ALTER TABLE sage_archives ALTER COLUMN content SET STORAGE EXTERNAL",
                "ALTER TABLE sage_uploads ALTER COLUMN content SET STORAGE EXTERNAL",
            ]
        ),
        Migration(
            component: "response", version: 19, name: "sage_archives_response_index",
            statements: [
                // Deleting a response sets its archive's response_id to NULL: without this index
                // every response deleted (a withdrawal's, a study's) read all the archives.
                "CREATE INDEX sage_archives_response ON sage_archives (response_id)",
            ]
        ),
        Migration(
            component: "response", version: 20, name: "testing",
            statements: [
                // What a study in testing records is its testers': their participants and the
                // batches their tokens came from are marked, and removed when testing ends.
                "ALTER TABLE participants ADD COLUMN testing boolean NOT NULL DEFAULT false",
                "ALTER TABLE token_batches ADD COLUMN testing boolean NOT NULL DEFAULT false",
                "CREATE INDEX participants_testing ON participants (study_key) WHERE testing",
                "CREATE INDEX token_batches_testing ON token_batches (study_key) WHERE testing",
            ]
        ),
        Migration(
            component: "response", version: 21, name: "participant_number_link",
            statements: [
                // The hash of the participant id an enrollment gave the app, kept when the token
                // stops working at withdrawal (app_token_hash is cleared then): it is what ties
                // the participant number to the registration service's record of the same person.
                "ALTER TABLE participants ADD COLUMN enrolled_token_sha256 text",
                "UPDATE participants SET enrolled_token_sha256 = app_token_hash WHERE app_token_hash IS NOT NULL",
                """
                CREATE INDEX participants_enrolled_token ON participants (study_key, enrolled_token_sha256)
                WHERE enrolled_token_sha256 IS NOT NULL
                """,
            ]
        ),
    ]
}
