import ServiceKit

extension RegistrationMigrations {
    /// Participants' runs: the completions their apps report, the responses that arrived, the
    /// standings kept from them, reminders, and the dates anchored schedules count from
    /// (docs/schedules.md).
    static let runs: [Migration] = [
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
        Migration(
            component: "registration", version: 19, name: "anchor_dates",
            statements: [
                // The answers to date questions a response carried (`{key: yyyy-MM-dd}`), for
                // schedules anchored to an answer.
                """
                ALTER TABLE response_arrivals ADD COLUMN date_answers jsonb
                CHECK (date_answers IS NULL OR jsonb_typeof(date_answers) = 'object')
                """,
                // The date properties the response service holds for a participant, by their app
                // token's hash, as of the change it sent them at (deliveries may come out of order).
                """
                CREATE TABLE participant_property_dates (
                    study_id text NOT NULL,
                    participant_token_hash text NOT NULL,
                    dates jsonb NOT NULL CHECK (jsonb_typeof(dates) = 'object'),
                    as_of timestamptz NOT NULL,
                    PRIMARY KEY (study_id, participant_token_hash)
                )
                """,
                // A participant's row leaving takes their property dates too.
                """
                CREATE OR REPLACE FUNCTION forget_response_arrivals() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    DELETE FROM response_arrivals
                    WHERE study_id = OLD.study_id AND participant_token_hash = OLD.participant_token_hash;
                    DELETE FROM participant_property_dates
                    WHERE study_id = OLD.study_id AND participant_token_hash = OLD.participant_token_hash;
                    DELETE FROM participant_run_ledgers WHERE user_id = OLD.user_id AND study_id = OLD.study_id;
                    RETURN NULL;
                END
                $$
                """,
            ]
        ),
        Migration(
            component: "registration", version: 20, name: "run_adherence_sent",
            statements: [
                // The app token hash a participant's weeks were last sent to the response service
                // under: a participant whose hash registration learns later has every week sent then.
                "ALTER TABLE participant_run_ledgers ADD COLUMN weeks_sent_to text",
            ]
        ),
    ]
}
