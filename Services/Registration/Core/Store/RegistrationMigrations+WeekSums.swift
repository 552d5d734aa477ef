import ServiceKit

extension RegistrationMigrations {
    /// A study's weekly sums split into sixteen rows by participant (`tally_shard`), as the
    /// tallies are. Every count of a participant whose current week changed (at midnight in the
    /// study's zone, every participant's) updated the one row of that activity and week, and held
    /// it to its commit: the sweep's counts queued on it however many ran at once. A change now
    /// adds its difference to its participant's shard in one statement; the views sum the shards.
    static let runWeekShards: [Migration] = [
        Migration(
            component: "registration", version: 27, name: "run_week_shards",
            statements: [
                "ALTER TABLE study_run_weeks ADD COLUMN shard smallint NOT NULL DEFAULT 0",
                "ALTER TABLE study_run_weeks DROP CONSTRAINT study_run_weeks_pkey",
                "DELETE FROM study_run_weeks",
                """
                INSERT INTO study_run_weeks (study_id, activity_id, week, shard, runs_opened, runs_completed, runs_missed, runs_expired,
                                             runs_not_stored)
                SELECT study_id, activity_id, week, tally_shard(user_id), sum(runs_opened), sum(runs_completed), sum(runs_missed),
                       sum(runs_expired), sum(runs_not_stored)
                FROM participant_run_weeks GROUP BY 1, 2, 3, 4
                """,
                "ALTER TABLE study_run_weeks ADD PRIMARY KEY (study_id, activity_id, week, shard)",
                "ALTER TABLE study_run_weeks ALTER COLUMN shard DROP DEFAULT",
                """
                CREATE FUNCTION add_study_run_week(
                    p_study text, p_activity text, p_week date, p_shard smallint,
                    opened integer, completed integer, missed integer, expired integer, not_stored integer
                ) RETURNS void LANGUAGE sql AS $$
                    INSERT INTO study_run_weeks (study_id, activity_id, week, shard, runs_opened, runs_completed, runs_missed,
                                                 runs_expired, runs_not_stored)
                    SELECT p_study, p_activity, p_week, p_shard, opened, completed, missed, expired, not_stored
                    WHERE (opened, completed, missed, expired, not_stored) IS DISTINCT FROM (0, 0, 0, 0, 0)
                    ON CONFLICT (study_id, activity_id, week, shard) DO UPDATE SET
                        runs_opened = study_run_weeks.runs_opened + EXCLUDED.runs_opened,
                        runs_completed = study_run_weeks.runs_completed + EXCLUDED.runs_completed,
                        runs_missed = study_run_weeks.runs_missed + EXCLUDED.runs_missed,
                        runs_expired = study_run_weeks.runs_expired + EXCLUDED.runs_expired,
                        runs_not_stored = study_run_weeks.runs_not_stored + EXCLUDED.runs_not_stored
                $$
                """,
                // A row that changes in place adds its difference once; one that moves (it never
                // does today: the key is the participant, activity and week) or goes takes its old
                // counts away and adds its new ones.
                """
                CREATE OR REPLACE FUNCTION sum_study_run_weeks() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP = 'UPDATE' AND (OLD.user_id, OLD.study_id, OLD.activity_id, OLD.week)
                                            = (NEW.user_id, NEW.study_id, NEW.activity_id, NEW.week) THEN
                        PERFORM add_study_run_week(NEW.study_id, NEW.activity_id, NEW.week, tally_shard(NEW.user_id),
                            NEW.runs_opened - OLD.runs_opened, NEW.runs_completed - OLD.runs_completed,
                            NEW.runs_missed - OLD.runs_missed, NEW.runs_expired - OLD.runs_expired,
                            NEW.runs_not_stored - OLD.runs_not_stored);
                        RETURN NULL;
                    END IF;
                    IF TG_OP IN ('UPDATE', 'DELETE') THEN
                        PERFORM add_study_run_week(OLD.study_id, OLD.activity_id, OLD.week, tally_shard(OLD.user_id),
                            -OLD.runs_opened, -OLD.runs_completed, -OLD.runs_missed, -OLD.runs_expired, -OLD.runs_not_stored);
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') THEN
                        PERFORM add_study_run_week(NEW.study_id, NEW.activity_id, NEW.week, tally_shard(NEW.user_id),
                            NEW.runs_opened, NEW.runs_completed, NEW.runs_missed, NEW.runs_expired, NEW.runs_not_stored);
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
            ]
        )
    ]

    /// The reminders decided per activity and week of the runs (pushed, or not and why), kept in
    /// sixteen rows per week by participant as the runs' sums are. The study's weeks view counted
    /// them from `run_reminders` on every view: a scan of every reminder of the weeks shown, a
    /// row per participant and run. With the counts kept, nothing reads `run_reminders` by study
    /// or by day any more, and the two indexes that served those reads go: the daily limit
    /// counts a participant's reminders of one activity through the table's unique key.
    static let reminderWeeks: [Migration] = [
        Migration(
            component: "registration", version: 28, name: "reminder_week_sums",
            statements: [
                """
                CREATE TABLE study_reminder_weeks (
                    study_id text NOT NULL,
                    activity_id text NOT NULL,
                    week date NOT NULL,
                    shard smallint NOT NULL,
                    pushed integer NOT NULL,
                    not_pushed integer NOT NULL,
                    PRIMARY KEY (study_id, activity_id, week, shard)
                )
                """,
                """
                INSERT INTO study_reminder_weeks (study_id, activity_id, week, shard, pushed, not_pushed)
                SELECT study_id, activity_id, run_week, tally_shard(user_id), count(*) FILTER (WHERE outcome = 'queued'),
                       count(*) FILTER (WHERE outcome <> 'queued')
                FROM run_reminders GROUP BY 1, 2, 3, 4
                """,
                """
                CREATE FUNCTION sum_study_reminder_weeks() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP IN ('UPDATE', 'DELETE') THEN
                        INSERT INTO study_reminder_weeks AS w (study_id, activity_id, week, shard, pushed, not_pushed)
                        VALUES (OLD.study_id, OLD.activity_id, OLD.run_week, tally_shard(OLD.user_id),
                                -(OLD.outcome = 'queued')::int, -(OLD.outcome <> 'queued')::int)
                        ON CONFLICT (study_id, activity_id, week, shard) DO UPDATE SET
                            pushed = w.pushed + EXCLUDED.pushed, not_pushed = w.not_pushed + EXCLUDED.not_pushed;
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') THEN
                        INSERT INTO study_reminder_weeks AS w (study_id, activity_id, week, shard, pushed, not_pushed)
                        VALUES (NEW.study_id, NEW.activity_id, NEW.run_week, tally_shard(NEW.user_id),
                                (NEW.outcome = 'queued')::int, (NEW.outcome <> 'queued')::int)
                        ON CONFLICT (study_id, activity_id, week, shard) DO UPDATE SET
                            pushed = w.pushed + EXCLUDED.pushed, not_pushed = w.not_pushed + EXCLUDED.not_pushed;
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                // The number of devices a reminder went to is written after it; only what it
                // counts for moves it.
                """
                CREATE TRIGGER run_reminders_summed
                AFTER INSERT OR DELETE OR UPDATE OF user_id, study_id, activity_id, run_week, outcome ON run_reminders
                FOR EACH ROW EXECUTE FUNCTION sum_study_reminder_weeks()
                """,
                "DROP INDEX run_reminders_study",
                "DROP INDEX run_reminders_day",
            ]
        )
    ]
}
