import ServiceKit

/// The registration service's own schema changes, applied after ServiceKit's. Append only: an
/// applied migration must never change (its checksum is checked at every start).
package enum RegistrationMigrations {
    package static let all: [Migration] = accounts + runs + settlements + consents + moveIn + consentReminders + scale

    /// Accounts, sessions, studies' states, consents, pushes, sites and invitations.
    static let accounts: [Migration] = [
        Migration(
            component: "registration", version: 1, name: "participants_and_sessions",
            statements: [
                // One account per e-mail within an app and organisation: the same address may hold
                // separate accounts in two apps.
                """
                CREATE TABLE participants (
                    user_id uuid PRIMARY KEY,
                    app_id text NOT NULL,
                    org_id text NOT NULL,
                    email text NOT NULL,
                    email_key text NOT NULL,
                    password_hash text NOT NULL,
                    password_changed_at timestamptz NOT NULL DEFAULT now(),
                    temp_password_hash text,
                    temp_password_expires_at timestamptz,
                    verified boolean NOT NULL DEFAULT false,
                    code_hash text,
                    code_expires_at timestamptz,
                    failed_logins integer NOT NULL DEFAULT 0,
                    locked_until timestamptz,
                    first_name text NOT NULL DEFAULT '',
                    last_name text NOT NULL DEFAULT '',
                    settings jsonb NOT NULL DEFAULT '{}',
                    created_at timestamptz NOT NULL DEFAULT now(),
                    UNIQUE (app_id, org_id, email_key)
                )
                """,
                """
                CREATE TABLE password_history (
                    user_id uuid NOT NULL REFERENCES participants (user_id) ON DELETE CASCADE,
                    password_hash text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                "CREATE INDEX password_history_user ON password_history (user_id, created_at DESC)",
                // One row per signed-in device: a second phone gets its own session.
                """
                CREATE TABLE participant_sessions (
                    id uuid PRIMARY KEY,
                    user_id uuid NOT NULL REFERENCES participants (user_id) ON DELETE CASCADE,
                    auth_hash text NOT NULL UNIQUE,
                    auth_expires_at timestamptz NOT NULL,
                    refresh_hash text NOT NULL UNIQUE,
                    refresh_expires_at timestamptz NOT NULL,
                    device_token text,
                    device_os text,
                    app_version text,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    last_used_at timestamptz NOT NULL DEFAULT now(),
                    revoked_at timestamptz,
                    revoked_reason text
                )
                """,
                "CREATE INDEX participant_sessions_user ON participant_sessions (user_id)",
                // Refresh tokens already exchanged: presenting one again means it leaked.
                """
                CREATE TABLE retired_refresh_tokens (
                    refresh_hash text PRIMARY KEY,
                    session_id uuid NOT NULL REFERENCES participant_sessions (id) ON DELETE CASCADE,
                    retired_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                // Fixed one-minute windows per (action, client address).
                """
                CREATE TABLE rate_limit_windows (
                    bucket text NOT NULL,
                    window_start timestamptz NOT NULL,
                    hits integer NOT NULL,
                    PRIMARY KEY (bucket, window_start)
                )
                """,
            ]
        ),
        Migration(
            component: "registration", version: 2, name: "mail_outbox",
            statements: [
                // Bodies are AES-GCM sealed (they carry codes and temporary passwords) and wiped
                // once sent; the metadata stays for the record.
                """
                CREATE TABLE mail_outbox (
                    id bigserial PRIMARY KEY,
                    app_id text NOT NULL,
                    kind text NOT NULL,
                    recipient text NOT NULL,
                    sealed_message bytea,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    attempts integer NOT NULL DEFAULT 0,
                    next_attempt_at timestamptz NOT NULL DEFAULT now(),
                    last_error text,
                    sent_at timestamptz,
                    gave_up_at timestamptz,
                    delivered_to text
                )
                """,
                """
                CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at)
                WHERE sent_at IS NULL AND gave_up_at IS NULL
                """,
            ]
        ),
        Migration(
            component: "registration", version: 3, name: "study_and_activity_state",
            statements: [
                """
                CREATE TABLE participant_studies (
                    user_id uuid NOT NULL REFERENCES participants (user_id) ON DELETE CASCADE,
                    study_id text NOT NULL,
                    status text NOT NULL DEFAULT 'yetToJoin'
                        CHECK (status IN ('yetToJoin', 'inProgress', 'completed', 'notEligible', 'Withdrawn')),
                    participant_id text,
                    bookmarked boolean NOT NULL DEFAULT false,
                    enrolled_at timestamptz,
                    completion integer NOT NULL DEFAULT 0,
                    adherence integer NOT NULL DEFAULT 0,
                    updated_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (user_id, study_id)
                )
                """,
                """
                CREATE TABLE participant_activities (
                    user_id uuid NOT NULL REFERENCES participants (user_id) ON DELETE CASCADE,
                    study_id text NOT NULL,
                    activity_id text NOT NULL,
                    activity_version text NOT NULL DEFAULT '',
                    activity_state text NOT NULL DEFAULT 'yetToJoin'
                        CHECK (activity_state IN ('yetToJoin', 'inProgress', 'completed', 'abandoned')),
                    activity_run_id text NOT NULL DEFAULT '',
                    bookmarked boolean NOT NULL DEFAULT false,
                    runs_total integer NOT NULL DEFAULT 0,
                    runs_completed integer NOT NULL DEFAULT 0,
                    runs_missed integer NOT NULL DEFAULT 0,
                    activity_start_date text NOT NULL DEFAULT '',
                    activity_end_date text NOT NULL DEFAULT '',
                    anchor_date_version text NOT NULL DEFAULT '',
                    anchor_date_created_date text NOT NULL DEFAULT '',
                    custom_schedule_runs jsonb NOT NULL DEFAULT '[]',
                    updated_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (user_id, study_id, activity_id)
                )
                """,
            ]
        ),
        Migration(
            component: "registration", version: 4, name: "consent_records",
            statements: [
                // One row per submission, never updated: earlier versions stay as signed. Kept when
                // the account is deleted (the record that consent was given), keyed by the
                // pseudonymous user id only.
                """
                CREATE TABLE consent_records (
                    id bigserial PRIMARY KEY,
                    user_id uuid NOT NULL,
                    app_id text NOT NULL,
                    study_id text NOT NULL,
                    version text NOT NULL,
                    status text NOT NULL CHECK (status IN ('pending', 'completed')),
                    eligibility boolean,
                    sharing text NOT NULL DEFAULT '',
                    pdf_key text,
                    pdf_sha256 text,
                    pdf_bytes integer,
                    created_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                "CREATE INDEX consent_records_study ON consent_records (user_id, study_id, id DESC)",
            ]
        ),
        Migration(
            component: "registration", version: 5, name: "push_outbox",
            statements: [
                // Notifications received from study-metadata, once each (their id is unique there).
                """
                CREATE TABLE received_notifications (
                    id bigint PRIMARY KEY,
                    app_id text NOT NULL,
                    org_id text NOT NULL,
                    study_id text,
                    notification_id text NOT NULL,
                    message jsonb NOT NULL,
                    received_at timestamptz NOT NULL DEFAULT now(),
                    devices integer NOT NULL
                )
                """,
                // One row per device to push to, resolved when the notification arrives; the push
                // worker sends them.
                """
                CREATE TABLE push_outbox (
                    id bigserial PRIMARY KEY,
                    notification_id bigint NOT NULL REFERENCES received_notifications (id),
                    session_id uuid NOT NULL REFERENCES participant_sessions (id) ON DELETE CASCADE,
                    device_os text NOT NULL,
                    device_token text NOT NULL,
                    language text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    attempts integer NOT NULL DEFAULT 0,
                    next_attempt_at timestamptz NOT NULL DEFAULT now(),
                    last_error text,
                    sent_at timestamptz,
                    gave_up_at timestamptz
                )
                """,
                """
                CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at)
                WHERE sent_at IS NULL AND gave_up_at IS NULL
                """,
            ]
        ),
        Migration(
            component: "registration", version: 6, name: "app_settings",
            statements: [
                // Each app's definition as study-metadata last sent it (sender, templates, support
                // and feedback addresses, releases); `revision` keeps a late delivery from winning.
                """
                CREATE TABLE app_settings (
                    app_id text PRIMARY KEY,
                    org_id text NOT NULL,
                    revision bigint NOT NULL,
                    definition jsonb NOT NULL,
                    received_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                // Push credentials, sealed with AES-256-GCM under the service's key; `summary` is
                // what may be shown (key id, team, project, a fingerprint), never the key itself.
                """
                CREATE TABLE push_credentials (
                    app_id text NOT NULL,
                    platform text NOT NULL CHECK (platform IN ('ios', 'android')),
                    sealed bytea NOT NULL,
                    summary jsonb NOT NULL,
                    updated_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (app_id, platform)
                )
                """,
            ]
        ),
        Migration(
            component: "registration", version: 7, name: "push_delivery",
            statements: [
                // The provider's id for a delivered push (apns-id, FCM message name).
                "ALTER TABLE push_outbox ADD COLUMN provider_id text",
                // A token the provider calls unregistered gives up every row still queued for it.
                """
                CREATE INDEX push_outbox_pending_token ON push_outbox (device_token)
                WHERE sent_at IS NULL AND gave_up_at IS NULL
                """,
            ]
        ),
        Migration(
            component: "registration", version: 8, name: "session_temporary_password",
            statements: [
                // A sign-in with a temporary password moves it here: it can no longer sign in, but
                // the session it opened may still give it as the current password to changePassword
                // (what the apps' change-password screen sends), until it expires.
                "ALTER TABLE participant_sessions ADD COLUMN temp_password_hash text",
                "ALTER TABLE participant_sessions ADD COLUMN temp_password_expires_at timestamptz",
            ]
        ),
        Migration(
            component: "registration", version: 9, name: "shared_attempt_counters",
            statements: [
                // Failed sign-ins are counted in ServiceKit's attempt_counters, before the password
                // is checked; the per-row counter (read, hash, then written) could be raced.
                "ALTER TABLE participants DROP COLUMN failed_logins",
                "ALTER TABLE participants DROP COLUMN locked_until",
                // Rate limits live in ServiceKit's request_rate_windows, shared by every service.
                "DROP TABLE rate_limit_windows",
            ]
        ),
        Migration(
            component: "registration", version: 10, name: "sealed_participant_ids",
            statements: [
                // The response service's app token, sealed (RowSeal.appTokens). Rows still holding it in
                // clear are sealed, and the clear value erased, at start (StudyStateStore.sealLegacy).
                "ALTER TABLE participant_studies ADD COLUMN participant_id_sealed bytea",
            ]
        ),
        Migration(
            component: "registration", version: 11, name: "participant_admin_view",
            statements: [
                // What the admin API shows of a participant in a study: a random id of its own
                // (neither the account's id nor the response service's token, and different in
                // each study), and when they withdrew.
                "ALTER TABLE participant_studies ADD COLUMN pseudonym uuid NOT NULL DEFAULT gen_random_uuid()",
                "CREATE UNIQUE INDEX participant_studies_pseudonym ON participant_studies (study_id, pseudonym)",
                "ALTER TABLE participant_studies ADD COLUMN withdrawn_at timestamptz",
                "UPDATE participant_studies SET withdrawn_at = updated_at WHERE status = 'Withdrawn'",
            ]
        ),
        Migration(
            component: "registration", version: 12, name: "account_administration",
            statements: [
                // An admin may disable an account (it cannot sign in until enabled again); who did
                // it is in the audit log.
                "ALTER TABLE participants ADD COLUMN disabled_at timestamptz",
                // The admin API lists an app's accounts a page at a time.
                "CREATE INDEX participants_app ON participants (app_id, user_id)",
            ]
        ),
        Migration(
            component: "registration", version: 13, name: "sites_and_invitations",
            statements: [
                """
                CREATE TABLE study_sites (
                    id uuid PRIMARY KEY,
                    study_id text NOT NULL,
                    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
                    location text NOT NULL DEFAULT '',
                    target_enrollment integer CHECK (target_enrollment IS NULL OR target_enrollment > 0),
                    created_by text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    decommissioned_at timestamptz
                )
                """,
                "CREATE UNIQUE INDEX study_sites_name ON study_sites (study_id, lower(name))",
                // The token is sealed (RowSeal.invitationTokens) so a resend can e-mail it again; the
                // response service, which checks enrollments, keeps its own lookup form.
                """
                CREATE TABLE invitations (
                    id uuid PRIMARY KEY,
                    study_id text NOT NULL,
                    site_id uuid REFERENCES study_sites (id),
                    email text NOT NULL,
                    email_key text NOT NULL,
                    token_sealed bytea NOT NULL,
                    expires_at timestamptz NOT NULL,
                    created_by text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    sent_count integer NOT NULL DEFAULT 1,
                    last_sent_at timestamptz NOT NULL DEFAULT now(),
                    revoked_at timestamptz,
                    enrolled_at timestamptz,
                    participant_token_hash text,
                    user_id uuid
                )
                """,
                // One open invitation per address and study: a second is refused; resending is the way.
                """
                CREATE UNIQUE INDEX invitations_open ON invitations (study_id, email_key)
                WHERE revoked_at IS NULL AND enrolled_at IS NULL
                """,
                """
                CREATE INDEX invitations_participant ON invitations (study_id, participant_token_hash)
                WHERE participant_token_hash IS NOT NULL
                """,
                // The SHA-256 of the participant id the app reports, to meet the response service's
                // word that an invitation's token was spent for it; and the site joined through it.
                "ALTER TABLE participant_studies ADD COLUMN participant_token_hash text",
                "ALTER TABLE participant_studies ADD COLUMN site_id uuid REFERENCES study_sites (id)",
                """
                CREATE INDEX participant_studies_token_hash ON participant_studies (study_id, participant_token_hash)
                WHERE participant_token_hash IS NOT NULL
                """,
            ]
        ),
        Migration(
            component: "registration", version: 14, name: "invitation_sends",
            statements: [
                // Each invitation e-mail, by study and admin, for the limits of InvitationMailLimits;
                // rows older than a day count for nothing and are pruned as new ones come.
                """
                CREATE TABLE invitation_sends (
                    invitation_id uuid NOT NULL,
                    study_id text NOT NULL,
                    actor text NOT NULL,
                    sent_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                "CREATE INDEX invitation_sends_study ON invitation_sends (study_id, sent_at)",
                "CREATE INDEX invitation_sends_actor ON invitation_sends (actor, sent_at)",
            ]
        ),
        Migration(
            component: "registration", version: 15, name: "session_children_by_session",
            statements: [
                // Deleting an account deletes its sessions, and with each the retired refresh
                // tokens and pending pushes that name it: without these, each session deleted read
                // both tables through.
                "CREATE INDEX retired_refresh_tokens_session ON retired_refresh_tokens (session_id)",
                "CREATE INDEX push_outbox_session ON push_outbox (session_id)",
            ]
        ),
    ]
}
