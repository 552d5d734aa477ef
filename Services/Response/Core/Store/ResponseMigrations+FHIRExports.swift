import ServiceKit

extension ResponseMigrations {
    /// Bulk Data exports of the FHIR API (docs/fhir.md, Bulk Data): each request, worked by any
    /// replica under a lease; the NDJSON files it wrote, one per resource type, kept in chunks of
    /// at most a mebibyte so that writing and reading a file never holds it whole, and deleted
    /// with their export (cancelled, or past its expiry).
    static let fhirExports = Migration(
        component: "response", version: 27, name: "fhir_exports",
        statements: [
            """
            CREATE TABLE fhir_exports (
                id uuid PRIMARY KEY,
                client_id text NOT NULL REFERENCES smart_clients (client_id),
                study_key text NOT NULL,
                request_url text NOT NULL,
                types text[] NOT NULL,
                since timestamptz,
                transaction_time timestamptz NOT NULL,
                status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'complete', 'failed')),
                progress text,
                error text,
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL DEFAULT now(),
                completed_at timestamptz,
                expires_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX fhir_exports_client ON fhir_exports (client_id, status)",
            "CREATE INDEX fhir_exports_due ON fhir_exports (next_attempt_at) WHERE status IN ('queued', 'running')",
            "CREATE INDEX fhir_exports_expiry ON fhir_exports (expires_at)",
            """
            CREATE TABLE fhir_export_files (
                export_id uuid NOT NULL REFERENCES fhir_exports (id) ON DELETE CASCADE,
                file_no integer NOT NULL,
                type text NOT NULL,
                resources bigint NOT NULL DEFAULT 0,
                bytes bigint NOT NULL DEFAULT 0,
                PRIMARY KEY (export_id, file_no)
            )
            """,
            """
            CREATE TABLE fhir_export_chunks (
                export_id uuid NOT NULL,
                file_no integer NOT NULL,
                chunk_no integer NOT NULL,
                data bytea NOT NULL,
                PRIMARY KEY (export_id, file_no, chunk_no),
                FOREIGN KEY (export_id, file_no) REFERENCES fhir_export_files (export_id, file_no) ON DELETE CASCADE
            )
            """,
        ]
    )

    /// A client may be registered to receive participants' data de-identified only; its exports
    /// say so, as the worker writes them after the kick-off.
    static let fhirDeidentified = Migration(
        component: "response", version: 28, name: "fhir_deidentified",
        statements: [
            "ALTER TABLE smart_clients ADD COLUMN deidentified boolean NOT NULL DEFAULT false",
            "ALTER TABLE fhir_exports ADD COLUMN deidentified boolean NOT NULL DEFAULT false",
        ]
    )

    /// A study's forwarding may send each response as a FHIR transaction to a FHIR server's base
    /// (docs/fhir.md, Forwarding); the questionnaire versions a server took are recorded, per
    /// server, so that each is sent to it once.
    static let fhirForwarding = Migration(
        component: "response", version: 29, name: "fhir_forwarding",
        statements: [
            "ALTER TABLE forwarding_settings ADD COLUMN format text NOT NULL DEFAULT 'json' CHECK (format IN ('json', 'fhir'))",
            """
            CREATE TABLE fhir_forwarded_questionnaires (
                study_key text NOT NULL REFERENCES forwarding_settings (study_key) ON DELETE CASCADE,
                activity_id text NOT NULL,
                version text NOT NULL,
                target text NOT NULL,
                forwarded_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (study_key, activity_id, version, target)
            )
            """,
        ]
    )

    /// An export's chunks are compressed with lz4 rather than PostgreSQL's own pglz, which is
    /// slower by far and held the writing of a study's files back. Where the server was built
    /// without lz4 the chunks stay as they were (pglz).
    static let fhirExportChunksLZ4 = Migration(
        component: "response", version: 30, name: "fhir_export_chunks_lz4",
        statements: [
            """
            DO $$
            BEGIN
                ALTER TABLE fhir_export_chunks ALTER COLUMN data SET COMPRESSION lz4;
            EXCEPTION WHEN feature_not_supported THEN
                RAISE NOTICE 'this PostgreSQL has no lz4: export chunks stay compressed with pglz';
            END
            $$
            """,
        ]
    )

    /// A study's responses to one activity in the order of their ids: the FHIR API's
    /// `Observation`s come from the responses to active-task activities, and a page of them is
    /// each such activity's next responses; a `QuestionnaireResponse` search by questionnaire
    /// pages the same way.
    static let responsesByActivity = Migration(
        component: "response", version: 31, name: "responses_by_activity",
        statements: [
            "CREATE INDEX responses_study_activity ON responses (study_key, activity_id, id)",
        ]
    )

    /// The responses that failed, counted per activity for the data page from their own index.
    static let failedByActivity = Migration(
        component: "response", version: 32, name: "responses_failed_by_activity",
        statements: [
            "CREATE INDEX responses_failed ON responses (study_key, activity_id) WHERE status = 'error'",
        ]
    )
}
