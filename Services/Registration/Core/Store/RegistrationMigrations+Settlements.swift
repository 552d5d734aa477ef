import ServiceKit

extension RegistrationMigrations {
    /// What became of the responses that failed processing, read from the response service's
    /// settlement feed (docs/registration-api.md, Responses that could not be stored): the latest
    /// of each, by response id, so that a run whose answers could not be stored is shown as such,
    /// not as completed, until they are. A settlement may be read before its response's arrival;
    /// it waits here for it.
    static let settlements: [Migration] = [
        Migration(
            component: "registration", version: 21, name: "response_settlements",
            statements: [
                """
                CREATE TABLE response_settlements (
                    response_id bigint PRIMARY KEY,
                    number bigint NOT NULL,
                    stored boolean NOT NULL
                )
                """,
                "ALTER TABLE response_feed_position DROP CONSTRAINT response_feed_position_feed_check",
                "ALTER TABLE response_feed_position ADD CONSTRAINT response_feed_position_feed_check CHECK (feed IN ('responses', 'settlements'))",
                "INSERT INTO response_feed_position (feed, settled_through) VALUES ('settlements', 0)",
                // Runs done whose answers could not be stored, counted apart (`RunState.notStored`).
                "ALTER TABLE participant_activity_standings ADD COLUMN runs_not_stored integer NOT NULL DEFAULT 0",
                "ALTER TABLE participant_run_weeks ADD COLUMN runs_not_stored integer NOT NULL DEFAULT 0",
                "ALTER TABLE study_run_weeks ADD COLUMN runs_not_stored integer NOT NULL DEFAULT 0",
                """
                CREATE OR REPLACE FUNCTION sum_study_run_weeks() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP IN ('UPDATE', 'DELETE') THEN
                        UPDATE study_run_weeks SET runs_opened = runs_opened - OLD.runs_opened,
                            runs_completed = runs_completed - OLD.runs_completed, runs_missed = runs_missed - OLD.runs_missed,
                            runs_expired = runs_expired - OLD.runs_expired, runs_not_stored = runs_not_stored - OLD.runs_not_stored
                        WHERE study_id = OLD.study_id AND activity_id = OLD.activity_id AND week = OLD.week;
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') THEN
                        INSERT INTO study_run_weeks (study_id, activity_id, week, runs_opened, runs_completed, runs_missed, runs_expired,
                                                     runs_not_stored)
                        VALUES (NEW.study_id, NEW.activity_id, NEW.week, NEW.runs_opened, NEW.runs_completed, NEW.runs_missed,
                                NEW.runs_expired, NEW.runs_not_stored)
                        ON CONFLICT (study_id, activity_id, week) DO UPDATE SET
                            runs_opened = study_run_weeks.runs_opened + EXCLUDED.runs_opened,
                            runs_completed = study_run_weeks.runs_completed + EXCLUDED.runs_completed,
                            runs_missed = study_run_weeks.runs_missed + EXCLUDED.runs_missed,
                            runs_expired = study_run_weeks.runs_expired + EXCLUDED.runs_expired,
                            runs_not_stored = study_run_weeks.runs_not_stored + EXCLUDED.runs_not_stored;
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                // A participant's row leaving takes what was settled of their responses too.
                """
                CREATE OR REPLACE FUNCTION forget_response_arrivals() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    DELETE FROM response_settlements WHERE response_id IN (
                        SELECT response_id FROM response_arrivals
                        WHERE study_id = OLD.study_id AND participant_token_hash = OLD.participant_token_hash);
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
        )
    ]
}
