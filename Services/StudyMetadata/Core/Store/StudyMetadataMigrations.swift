import ServiceKit

/// The study-metadata service's own schema changes, applied after ServiceKit's. Append only: an
/// applied migration must never change (its checksum is checked at every start).
package enum StudyMetadataMigrations {
    package static let all: [Migration] = [
        Migration(
            component: "study-metadata", version: 1, name: "admin_accounts",
            statements: [
                """
                CREATE TABLE admins (
                    id uuid PRIMARY KEY,
                    email text NOT NULL,
                    password_hash text,
                    role text NOT NULL CHECK (role IN ('super_admin', 'admin')),
                    failed_logins integer NOT NULL DEFAULT 0,
                    locked_until timestamptz,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    disabled_at timestamptz
                )
                """,
                "CREATE UNIQUE INDEX admins_email ON admins (lower(email))",
                """
                CREATE TABLE admin_sessions (
                    token_hash text PRIMARY KEY,
                    admin_id uuid NOT NULL REFERENCES admins (id) ON DELETE CASCADE,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    expires_at timestamptz NOT NULL,
                    revoked_at timestamptz
                )
                """,
                "CREATE INDEX admin_sessions_admin ON admin_sessions (admin_id)",
                """
                CREATE TABLE admin_invitations (
                    token_hash text PRIMARY KEY,
                    admin_id uuid NOT NULL REFERENCES admins (id) ON DELETE CASCADE,
                    expires_at timestamptz NOT NULL,
                    used_at timestamptz
                )
                """,
                """
                CREATE TABLE study_roles (
                    admin_id uuid NOT NULL REFERENCES admins (id) ON DELETE CASCADE,
                    study_id text NOT NULL,
                    role text NOT NULL CHECK (role IN ('study_admin', 'editor', 'viewer')),
                    granted_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (admin_id, study_id)
                )
                """,
            ]
        ),
        Migration(
            component: "study-metadata", version: 2, name: "apps_and_study_drafts",
            statements: [
                """
                CREATE TABLE apps (
                    app_id text PRIMARY KEY,
                    org_id text NOT NULL,
                    definition jsonb NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    updated_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                """
                CREATE TABLE app_credentials (
                    key text PRIMARY KEY,
                    app_id text NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
                    platform text NOT NULL CHECK (platform IN ('ios', 'android')),
                    token_hash text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    revoked_at timestamptz
                )
                """,
                """
                CREATE TABLE studies (
                    study_id text PRIMARY KEY,
                    app_id text NOT NULL REFERENCES apps (app_id),
                    status text NOT NULL DEFAULT 'pre_launch'
                        CHECK (status IN ('pre_launch', 'upcoming', 'active', 'paused', 'deactivated')),
                    draft jsonb NOT NULL,
                    draft_updated_at timestamptz NOT NULL DEFAULT now(),
                    draft_updated_by text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    created_by text NOT NULL
                )
                """,
            ]
        ),
        Migration(
            component: "study-metadata", version: 3, name: "study_versions",
            statements: [
                "ALTER TABLE studies ADD COLUMN launched_at timestamptz",
                """
                CREATE TABLE study_versions (
                    study_id text NOT NULL REFERENCES studies (study_id),
                    version integer NOT NULL,
                    consent_version integer NOT NULL,
                    activity_versions jsonb NOT NULL,
                    changes jsonb NOT NULL,
                    document jsonb NOT NULL,
                    published_at timestamptz NOT NULL DEFAULT now(),
                    published_by text NOT NULL,
                    PRIMARY KEY (study_id, version)
                )
                """,
            ]
        ),
        Migration(
            component: "study-metadata", version: 4, name: "notifications",
            statements: [
                """
                CREATE TABLE notifications (
                    id bigserial PRIMARY KEY,
                    source text NOT NULL UNIQUE,
                    notification_id text NOT NULL,
                    app_id text NOT NULL REFERENCES apps (app_id),
                    study_id text REFERENCES studies (study_id),
                    origin text NOT NULL CHECK (origin IN ('study', 'lifecycle', 'announcement')),
                    type text NOT NULL CHECK (type IN ('Gateway', 'Study')),
                    subtype text NOT NULL,
                    title jsonb,
                    message jsonb NOT NULL,
                    activity_id text,
                    resource_id text,
                    due_at timestamptz NOT NULL,
                    sent_at timestamptz,
                    created_by text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                "CREATE INDEX notifications_due ON notifications (due_at) WHERE sent_at IS NULL",
                "CREATE INDEX notifications_sent ON notifications (app_id, sent_at DESC) WHERE sent_at IS NOT NULL",
            ]
        ),
        Migration(
            component: "study-metadata", version: 5, name: "app_revisions",
            statements: [
                // Counts changes to an app, so the registration service keeps the newest definition
                // however its copies arrive.
                "ALTER TABLE apps ADD COLUMN revision bigint NOT NULL DEFAULT 1",
            ]
        ),
        Migration(
            component: "study-metadata", version: 6, name: "case_insensitive_ids",
            statements: [
                // One identity rule for ids (docs/security.md): study and app ids are unique
                // whatever their case, because the response service and the apps' LabKey calls
                // match study ids case-insensitively. A deployment whose ids already collide stops
                // here with the index's error; rename one of the pair before upgrading.
                "CREATE UNIQUE INDEX studies_id_folded ON studies (upper(study_id))",
                "CREATE UNIQUE INDEX apps_id_folded ON apps (upper(app_id))",
            ]
        ),
        Migration(
            component: "study-metadata", version: 7, name: "shared_attempt_counters",
            statements: [
                // Failed sign-ins are counted in ServiceKit's attempt_counters, before the password
                // is checked; this per-row counter (read, hash, then written) could be raced.
                "ALTER TABLE admins DROP COLUMN failed_logins",
                "ALTER TABLE admins DROP COLUMN locked_until",
            ]
        ),
        Migration(
            component: "study-metadata", version: 8, name: "draft_revisions",
            statements: [
                // Counts changes to a draft, so an editor who saves what they read long ago is told
                // that someone changed it since (If-Match), instead of overwriting their work.
                "ALTER TABLE studies ADD COLUMN draft_revision bigint NOT NULL DEFAULT 1",
            ]
        ),
        Migration(
            component: "study-metadata", version: 9, name: "api_keys",
            statements: [
                // Researchers' scripts read study data with API keys (the LabKey clients' `apikey`):
                // each is one admin's, acts with that admin's roles at the time of use, and is kept
                // only as its SHA-256 (a 256-bit random secret needs no slow hash).
                """
                CREATE TABLE api_keys (
                    id uuid PRIMARY KEY,
                    admin_id uuid NOT NULL REFERENCES admins (id) ON DELETE CASCADE,
                    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
                    key_hash text NOT NULL UNIQUE,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    expires_at timestamptz NOT NULL,
                    revoked_at timestamptz,
                    last_used_at timestamptz
                )
                """,
                "CREATE INDEX api_keys_admin ON api_keys (admin_id, created_at)",
            ]
        ),
        Migration(
            component: "study-metadata", version: 10, name: "study_messages",
            statements: [
                // A study admin's message to the study's participants, sent at once.
                "ALTER TABLE notifications DROP CONSTRAINT notifications_origin_check",
                """
                ALTER TABLE notifications ADD CONSTRAINT notifications_origin_check
                    CHECK (origin IN ('study', 'lifecycle', 'announcement', 'message'))
                """,
                "CREATE INDEX notifications_study ON notifications (study_id, due_at DESC) WHERE study_id IS NOT NULL",
            ]
        ),
        Migration(
            component: "study-metadata", version: 11, name: "testing",
            statements: [
                // A study published for testing, and the credentials of the app's test builds:
                // only they are served studies in testing.
                "ALTER TABLE studies DROP CONSTRAINT studies_status_check",
                """
                ALTER TABLE studies ADD CONSTRAINT studies_status_check
                    CHECK (status IN ('pre_launch', 'upcoming', 'testing', 'active', 'paused', 'deactivated'))
                """,
                "ALTER TABLE app_credentials ADD COLUMN testing boolean NOT NULL DEFAULT false",
            ]
        ),
        Migration(
            component: "study-metadata", version: 12, name: "study_files",
            statements: [
                // Images and PDFs uploaded for a study, served to the apps by their random id.
                // Never deleted: a frozen version may name one.
                """
                CREATE TABLE study_files (
                    file_id uuid PRIMARY KEY,
                    study_id text NOT NULL REFERENCES studies (study_id),
                    name text NOT NULL,
                    content_type text NOT NULL
                        CHECK (content_type IN ('image/png', 'image/jpeg', 'image/gif', 'application/pdf')),
                    bytes integer NOT NULL,
                    sha256 text NOT NULL,
                    content bytea NOT NULL,
                    uploaded_by text NOT NULL,
                    uploaded_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                "ALTER TABLE study_files ALTER COLUMN content SET STORAGE EXTERNAL",
                "CREATE INDEX study_files_study ON study_files (study_id, uploaded_at DESC)",
            ]
        ),
        Migration(
            component: "study-metadata", version: 13, name: "study_checklist",
            statements: [
                // The manual check-list before launch: a row is a ticked item, with who ticked it
                // and when (unticking deletes it; the audit log keeps both).
                """
                CREATE TABLE study_checklist (
                    study_id text NOT NULL REFERENCES studies (study_id),
                    item text NOT NULL CHECK (length(item) BETWEEN 1 AND 64),
                    ticked_by text NOT NULL,
                    ticked_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (study_id, item)
                )
                """,
            ]
        ),
    ]
}
