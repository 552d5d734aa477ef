import ServiceKit

/// The registration service's own schema changes, applied after ServiceKit's. Append only: an
/// applied migration must never change (its checksum is checked at every start).
package enum RegistrationMigrations {
    package static let all: [Migration] = [
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
        Migration(
            component: "registration", version: 16, name: "participant_run_completions",
            statements: [
                // Each run a participant completed, by where the word came from: their app
                // (`updateActivityState`, kept by the trigger below) or a response that arrived.
                // A run can have both; the runs endpoint and the console show each.
                """
                CREATE TABLE participant_run_completions (
                    user_id uuid NOT NULL REFERENCES participants (user_id) ON DELETE CASCADE,
                    study_id text NOT NULL,
                    activity_id text NOT NULL,
                    run_id integer NOT NULL CHECK (run_id > 0),
                    source text NOT NULL CHECK (source IN ('app', 'response')),
                    completed_at timestamptz NOT NULL,
                    PRIMARY KEY (user_id, study_id, activity_id, run_id, source)
                )
                """,
                // The activity-state writes (one upsert, or many merged in one statement) stay as
                // they are: a row that becomes `completed` for a numbered run records it here.
                """
                CREATE FUNCTION record_app_run_completion() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO participant_run_completions (user_id, study_id, activity_id, run_id, source, completed_at)
                    VALUES (NEW.user_id, NEW.study_id, NEW.activity_id, NEW.activity_run_id::integer, 'app', NEW.updated_at)
                    ON CONFLICT DO NOTHING;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_activities_completed
                AFTER INSERT OR UPDATE OF activity_state, activity_run_id ON participant_activities
                FOR EACH ROW WHEN (NEW.activity_state = 'completed' AND NEW.activity_run_id ~ '^0*[1-9][0-9]{0,8}$')
                EXECUTE FUNCTION record_app_run_completion()
                """,
            ]
        ),
        Migration(
            component: "registration", version: 17, name: "run_ledgers",
            statements: [
                // The responses that arrived are kept apart from now on (`response_arrivals`):
                // `participant_run_completions` holds the runs the apps reported completed.
                "DELETE FROM participant_run_completions WHERE source <> 'app'",
                "ALTER TABLE participant_run_completions DROP CONSTRAINT participant_run_completions_pkey",
                "ALTER TABLE participant_run_completions DROP COLUMN source",
                "ALTER TABLE participant_run_completions ADD PRIMARY KEY (user_id, study_id, activity_id, run_id)",
                """
                CREATE OR REPLACE FUNCTION record_app_run_completion() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO participant_run_completions (user_id, study_id, activity_id, run_id, completed_at)
                    VALUES (NEW.user_id, NEW.study_id, NEW.activity_id, NEW.activity_run_id::integer, NEW.updated_at)
                    ON CONFLICT DO NOTHING;
                    RETURN NULL;
                END
                $$
                """,
                // The responses that arrived, read from the response service's feed (docs/schedules.md,
                // What arrived): a participant is named by their app token's hash, as the response
                // service knows them; registration may learn the hash after the first arrives.
                """
                CREATE TABLE response_arrivals (
                    response_id bigint PRIMARY KEY,
                    study_id text NOT NULL,
                    participant_token_hash text NOT NULL,
                    activity_id text NOT NULL,
                    run_id integer CHECK (run_id > 0),
                    received_at timestamptz NOT NULL,
                    finished_at timestamptz,
                    offset_minutes integer CHECK (offset_minutes BETWEEN -1080 AND 1080)
                )
                """,
                """
                CREATE INDEX response_arrivals_participant
                ON response_arrivals (study_id, participant_token_hash, received_at)
                """,
                // Where the feed is read on from: one row, locked by the replica reading it.
                """
                CREATE TABLE response_feed_position (
                    feed text PRIMARY KEY CHECK (feed = 'responses'),
                    settled_through bigint NOT NULL CHECK (settled_through >= 0),
                    read_at timestamptz
                )
                """,
                "INSERT INTO response_feed_position (feed, settled_through) VALUES ('responses', 0)",
                // One per participant and study they enrolled in: when their standings are to be
                // counted again (a run opens or closes, data arrives, they withdraw) and the zone
                // they were last counted in.
                """
                CREATE TABLE participant_run_ledgers (
                    user_id uuid NOT NULL REFERENCES participants (user_id) ON DELETE CASCADE,
                    study_id text NOT NULL,
                    recount_at timestamptz NOT NULL,
                    counted_at timestamptz,
                    time_zone text,
                    time_zone_source text,
                    PRIMARY KEY (user_id, study_id)
                )
                """,
                "CREATE INDEX participant_run_ledgers_recount ON participant_run_ledgers (recount_at)",
                // How each participant stands in each activity, as last counted.
                """
                CREATE TABLE participant_activity_standings (
                    user_id uuid NOT NULL,
                    study_id text NOT NULL,
                    activity_id text NOT NULL,
                    runs_opened integer NOT NULL,
                    runs_completed integer NOT NULL,
                    runs_missed integer NOT NULL,
                    runs_expired integer NOT NULL,
                    missed_in_a_row integer NOT NULL,
                    due_run_id integer,
                    due_since timestamptz,
                    due_until timestamptz,
                    next_run_at timestamptz,
                    last_completed_at timestamptz,
                    PRIMARY KEY (user_id, study_id, activity_id),
                    FOREIGN KEY (user_id, study_id) REFERENCES participant_run_ledgers ON DELETE CASCADE
                )
                """,
                """
                CREATE INDEX participant_activity_standings_behind
                ON participant_activity_standings (study_id, missed_in_a_row DESC) WHERE missed_in_a_row > 0
                """,
                // Each participant's runs per calendar week (Monday, in their zone), per activity.
                """
                CREATE TABLE participant_run_weeks (
                    user_id uuid NOT NULL,
                    study_id text NOT NULL,
                    activity_id text NOT NULL,
                    week date NOT NULL,
                    runs_opened integer NOT NULL,
                    runs_completed integer NOT NULL,
                    runs_missed integer NOT NULL,
                    runs_expired integer NOT NULL,
                    PRIMARY KEY (user_id, study_id, activity_id, week),
                    FOREIGN KEY (user_id, study_id) REFERENCES participant_run_ledgers ON DELETE CASCADE
                )
                """,
                // The same summed over a study's participants, kept by the trigger below as
                // theirs change (a deleted participant's weeks leave the sums with them), so a
                // study's rates read a row per week and activity.
                """
                CREATE TABLE study_run_weeks (
                    study_id text NOT NULL,
                    activity_id text NOT NULL,
                    week date NOT NULL,
                    runs_opened integer NOT NULL,
                    runs_completed integer NOT NULL,
                    runs_missed integer NOT NULL,
                    runs_expired integer NOT NULL,
                    PRIMARY KEY (study_id, activity_id, week)
                )
                """,
                """
                CREATE FUNCTION sum_study_run_weeks() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP IN ('UPDATE', 'DELETE') THEN
                        UPDATE study_run_weeks SET runs_opened = runs_opened - OLD.runs_opened,
                            runs_completed = runs_completed - OLD.runs_completed, runs_missed = runs_missed - OLD.runs_missed,
                            runs_expired = runs_expired - OLD.runs_expired
                        WHERE study_id = OLD.study_id AND activity_id = OLD.activity_id AND week = OLD.week;
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') THEN
                        INSERT INTO study_run_weeks (study_id, activity_id, week, runs_opened, runs_completed, runs_missed, runs_expired)
                        VALUES (NEW.study_id, NEW.activity_id, NEW.week, NEW.runs_opened, NEW.runs_completed, NEW.runs_missed,
                                NEW.runs_expired)
                        ON CONFLICT (study_id, activity_id, week) DO UPDATE SET
                            runs_opened = study_run_weeks.runs_opened + EXCLUDED.runs_opened,
                            runs_completed = study_run_weeks.runs_completed + EXCLUDED.runs_completed,
                            runs_missed = study_run_weeks.runs_missed + EXCLUDED.runs_missed,
                            runs_expired = study_run_weeks.runs_expired + EXCLUDED.runs_expired;
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_run_weeks_summed
                AFTER INSERT OR UPDATE OR DELETE ON participant_run_weeks
                FOR EACH ROW EXECUTE FUNCTION sum_study_run_weeks()
                """,
                // What makes a participant's standings change ahead of the clock: they enrol or
                // withdraw, their app reports a run completed, a response of theirs arrives.
                """
                CREATE FUNCTION recount_participant_runs(participant uuid, study text) RETURNS void LANGUAGE sql AS $$
                    INSERT INTO participant_run_ledgers (user_id, study_id, recount_at) VALUES (participant, study, now())
                    ON CONFLICT (user_id, study_id) DO UPDATE SET recount_at = least(participant_run_ledgers.recount_at, now())
                $$
                """,
                """
                CREATE FUNCTION participant_study_changed() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM recount_participant_runs(NEW.user_id, NEW.study_id);
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_studies_enrolled
                AFTER INSERT ON participant_studies
                FOR EACH ROW WHEN (NEW.enrolled_at IS NOT NULL) EXECUTE FUNCTION participant_study_changed()
                """,
                """
                CREATE TRIGGER participant_studies_changed
                AFTER UPDATE OF enrolled_at, withdrawn_at, status, participant_token_hash ON participant_studies
                FOR EACH ROW WHEN (NEW.enrolled_at IS NOT NULL AND (
                    OLD.enrolled_at IS DISTINCT FROM NEW.enrolled_at OR OLD.withdrawn_at IS DISTINCT FROM NEW.withdrawn_at
                    OR OLD.status IS DISTINCT FROM NEW.status OR OLD.participant_token_hash IS DISTINCT FROM NEW.participant_token_hash))
                EXECUTE FUNCTION participant_study_changed()
                """,
                """
                CREATE TRIGGER participant_run_completions_recounted
                AFTER INSERT ON participant_run_completions
                FOR EACH ROW EXECUTE FUNCTION participant_study_changed()
                """,
                // A participant's row leaving (their account deleted, a test run's rows cleared)
                // takes what arrived from them.
                """
                CREATE FUNCTION forget_response_arrivals() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    DELETE FROM response_arrivals
                    WHERE study_id = OLD.study_id AND participant_token_hash = OLD.participant_token_hash;
                    DELETE FROM participant_run_ledgers WHERE user_id = OLD.user_id AND study_id = OLD.study_id;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_studies_forgotten
                AFTER DELETE ON participant_studies
                FOR EACH ROW EXECUTE FUNCTION forget_response_arrivals()
                """,
                // Everyone enrolled already is counted on the first sweep.
                """
                INSERT INTO participant_run_ledgers (user_id, study_id, recount_at)
                SELECT user_id, study_id, now() FROM participant_studies WHERE enrolled_at IS NOT NULL
                """,
            ]
        ),
        Migration(
            component: "registration", version: 18, name: "run_reminders",
            statements: [
                // When the run due now is to be reminded of (none: no reminder set, done, or
                // reminded already), read by the reminder sweep through the index.
                "ALTER TABLE participant_activity_standings ADD COLUMN remind_at timestamptz",
                "ALTER TABLE participant_activity_standings ADD COLUMN remind_run_id integer",
                """
                CREATE INDEX participant_activity_standings_remind ON participant_activity_standings (remind_at)
                WHERE remind_at IS NOT NULL
                """,
                // One decision per run: pushed to their devices, or not, and why. `local_day` is
                // the participant's day it was decided on (the daily limit counts them);
                // `run_week` the Monday of the run's week in their zone (the study's weeks count them).
                """
                CREATE TABLE run_reminders (
                    id bigserial PRIMARY KEY,
                    user_id uuid NOT NULL REFERENCES participants (user_id) ON DELETE CASCADE,
                    study_id text NOT NULL,
                    activity_id text NOT NULL,
                    run_id integer NOT NULL,
                    run_week date NOT NULL,
                    local_day date NOT NULL,
                    planned_at timestamptz NOT NULL,
                    decided_at timestamptz NOT NULL DEFAULT now(),
                    outcome text NOT NULL CHECK (outcome IN ('queued', 'opted_out', 'no_device', 'daily_limit')),
                    devices integer NOT NULL,
                    message jsonb CHECK (outcome <> 'queued' OR message IS NOT NULL),
                    UNIQUE (user_id, study_id, activity_id, run_id)
                )
                """,
                "CREATE INDEX run_reminders_study ON run_reminders (study_id, run_week)",
                "CREATE INDEX run_reminders_day ON run_reminders (user_id, study_id, activity_id, local_day)",
                // A push is of a notification from study-metadata or of a reminder.
                "ALTER TABLE push_outbox ALTER COLUMN notification_id DROP NOT NULL",
                "ALTER TABLE push_outbox ADD COLUMN reminder_id bigint REFERENCES run_reminders (id) ON DELETE CASCADE",
                "CREATE INDEX push_outbox_reminder ON push_outbox (reminder_id) WHERE reminder_id IS NOT NULL",
                """
                ALTER TABLE push_outbox ADD CONSTRAINT push_outbox_one_source
                CHECK ((notification_id IS NULL) <> (reminder_id IS NULL))
                """,
            ]
        ),
    ]
}
