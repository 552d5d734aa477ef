import ServiceKit

extension RegistrationMigrations {
    /// What keeps a study's pages as fast at a million participants as at a thousand
    /// (docs/operations.md, Capacity).
    static let scale = tallies + behindOrder + runWeekShards + reminderWeeks + emailSearch + signedConsents + enrolmentDays + siteCounts
        + audienceDevices + audienceChanges + queueWaiting

    /// A study's counts kept as its rows change, so the participants page and the consent
    /// reminders read a few rows instead of counting every participant (docs/operations.md,
    /// Capacity): per activity, how its participants stand from what their apps report; per set
    /// of consent versions signed, how many are in the study. Triggers keep them exact: each
    /// change adds what the row counts for now and takes away what it counted for before.
    ///
    /// Each count is split into sixteen rows by participant (`tally_shard`), so that phones
    /// reporting at once do not all wait on one row. A trigger that reads a participant's status
    /// holds their study row (`FOR SHARE`; a consent's, `FOR NO KEY UPDATE`) while it counts, as a
    /// status change does, so two changes of one participant never count their rows from different
    /// moments. What no lock can hold is a row not made yet: activity states written at the very
    /// moment their study row is first made (the apps join, then report) could be counted twice
    /// or not at all; `recount_study_tallies` makes a study's counts again from its rows.
    static let tallies: [Migration] = [
        Migration(
            component: "registration", version: 25, name: "study_tallies",
            statements: [
                """
                CREATE FUNCTION tally_shard(participant uuid) RETURNS smallint LANGUAGE sql IMMUTABLE AS $$
                    SELECT (abs(hashtext(participant::text)) % 16)::smallint
                $$
                """,
                // Whom an activity's counts take: a participant in the study now (as the app reports it).
                """
                CREATE FUNCTION tally_counts_status(status text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
                    SELECT coalesce(status IN ('inProgress', 'completed'), false)
                $$
                """,
                // How one activity state stands: behind (a run missed), up to date (a run completed
                // or started), or not started.
                """
                CREATE FUNCTION adherence_standing(state text, completed integer, missed integer) RETURNS text
                LANGUAGE sql IMMUTABLE AS $$
                    SELECT CASE WHEN missed > 0 THEN 'behind'
                                WHEN completed > 0 OR state <> 'yetToJoin' THEN 'upToDate' ELSE 'notStarted' END
                $$
                """,
                """
                CREATE TABLE study_activity_tallies (
                    study_id text NOT NULL,
                    activity_id text NOT NULL,
                    shard smallint NOT NULL,
                    up_to_date integer NOT NULL,
                    behind integer NOT NULL,
                    not_started integer NOT NULL,
                    runs_completed bigint NOT NULL,
                    runs_missed bigint NOT NULL,
                    PRIMARY KEY (study_id, activity_id, shard)
                )
                """,
                // `signed`: the consent versions the participant completed, distinct and sorted.
                """
                CREATE TABLE study_participant_tallies (
                    study_id text NOT NULL,
                    shard smallint NOT NULL,
                    signed text[] NOT NULL,
                    in_study integer NOT NULL,
                    in_progress integer NOT NULL,
                    PRIMARY KEY (study_id, shard, signed)
                )
                """,
                """
                CREATE FUNCTION add_activity_tally(
                    p_study text, p_activity text, p_user uuid, state text, completed integer, missed integer, sign integer
                ) RETURNS void LANGUAGE sql AS $$
                    INSERT INTO study_activity_tallies AS t
                        (study_id, activity_id, shard, up_to_date, behind, not_started, runs_completed, runs_missed)
                    SELECT p_study, p_activity, tally_shard(p_user), sign * (s = 'upToDate')::int, sign * (s = 'behind')::int,
                           sign * (s = 'notStarted')::int, sign * completed, sign * missed
                    FROM adherence_standing(state, completed, missed) s
                    ON CONFLICT (study_id, activity_id, shard) DO UPDATE SET
                        up_to_date = t.up_to_date + excluded.up_to_date, behind = t.behind + excluded.behind,
                        not_started = t.not_started + excluded.not_started,
                        runs_completed = t.runs_completed + excluded.runs_completed, runs_missed = t.runs_missed + excluded.runs_missed
                $$
                """,
                """
                CREATE FUNCTION add_participant_tally(p_study text, p_user uuid, p_signed text[], status text, sign integer)
                RETURNS void LANGUAGE sql AS $$
                    INSERT INTO study_participant_tallies AS t (study_id, shard, signed, in_study, in_progress)
                    VALUES (p_study, tally_shard(p_user), p_signed, sign * tally_counts_status(status)::int,
                            sign * coalesce(status = 'inProgress', false)::int)
                    ON CONFLICT (study_id, shard, signed) DO UPDATE SET
                        in_study = t.in_study + excluded.in_study, in_progress = t.in_progress + excluded.in_progress
                $$
                """,
                // The versions a participant has completed, leaving out one record (`except_id`) and
                // adding one version (`plus`): the set before the change that fired a trigger.
                """
                CREATE FUNCTION signed_consents(p_user uuid, p_study text, except_id bigint, plus text) RETURNS text[]
                LANGUAGE sql STABLE AS $$
                    SELECT coalesce(array_agg(DISTINCT v ORDER BY v), '{}') FROM (
                        SELECT version AS v FROM consent_records
                        WHERE user_id = p_user AND study_id = p_study AND status = 'completed' AND id IS DISTINCT FROM except_id
                        UNION ALL SELECT plus WHERE plus IS NOT NULL
                    ) versions
                $$
                """,
                """
                CREATE FUNCTION tally_participant_activities() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    counted boolean;
                BEGIN
                    IF TG_OP IN ('UPDATE', 'DELETE') THEN
                        SELECT tally_counts_status(status) INTO counted FROM participant_studies
                        WHERE user_id = OLD.user_id AND study_id = OLD.study_id FOR SHARE;
                        IF counted THEN
                            PERFORM add_activity_tally(OLD.study_id, OLD.activity_id, OLD.user_id, OLD.activity_state,
                                                       OLD.runs_completed, OLD.runs_missed, -1);
                        END IF;
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') THEN
                        SELECT tally_counts_status(status) INTO counted FROM participant_studies
                        WHERE user_id = NEW.user_id AND study_id = NEW.study_id FOR SHARE;
                        IF counted THEN
                            PERFORM add_activity_tally(NEW.study_id, NEW.activity_id, NEW.user_id, NEW.activity_state,
                                                       NEW.runs_completed, NEW.runs_missed, 1);
                        END IF;
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                // A state written again as it was (most reports) changes no count and writes no tally.
                """
                CREATE TRIGGER participant_activities_tallied
                AFTER INSERT OR DELETE ON participant_activities
                FOR EACH ROW EXECUTE FUNCTION tally_participant_activities()
                """,
                """
                CREATE TRIGGER participant_activities_retallied
                AFTER UPDATE OF activity_state, runs_completed, runs_missed, user_id, study_id, activity_id ON participant_activities
                FOR EACH ROW WHEN (adherence_standing(OLD.activity_state, OLD.runs_completed, OLD.runs_missed)
                                       IS DISTINCT FROM adherence_standing(NEW.activity_state, NEW.runs_completed, NEW.runs_missed)
                                   OR OLD.runs_completed IS DISTINCT FROM NEW.runs_completed
                                   OR OLD.runs_missed IS DISTINCT FROM NEW.runs_missed
                                   OR (OLD.user_id, OLD.study_id, OLD.activity_id) IS DISTINCT FROM (NEW.user_id, NEW.study_id, NEW.activity_id))
                EXECUTE FUNCTION tally_participant_activities()
                """,
                // Joining, leaving or changing status moves the participant's own count, and their
                // activities' counts when it moves them into or out of the study.
                """
                CREATE FUNCTION tally_participant_studies() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    activity record;
                BEGIN
                    IF TG_OP IN ('UPDATE', 'DELETE') THEN
                        PERFORM add_participant_tally(OLD.study_id, OLD.user_id, signed_consents(OLD.user_id, OLD.study_id, NULL, NULL),
                                                      OLD.status, -1);
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') THEN
                        PERFORM add_participant_tally(NEW.study_id, NEW.user_id, signed_consents(NEW.user_id, NEW.study_id, NULL, NULL),
                                                      NEW.status, 1);
                    END IF;
                    IF TG_OP IN ('UPDATE', 'DELETE') AND tally_counts_status(OLD.status) THEN
                        FOR activity IN SELECT * FROM participant_activities WHERE user_id = OLD.user_id AND study_id = OLD.study_id LOOP
                            PERFORM add_activity_tally(OLD.study_id, activity.activity_id, OLD.user_id, activity.activity_state,
                                                       activity.runs_completed, activity.runs_missed, -1);
                        END LOOP;
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') AND tally_counts_status(NEW.status) THEN
                        FOR activity IN SELECT * FROM participant_activities WHERE user_id = NEW.user_id AND study_id = NEW.study_id LOOP
                            PERFORM add_activity_tally(NEW.study_id, activity.activity_id, NEW.user_id, activity.activity_state,
                                                       activity.runs_completed, activity.runs_missed, 1);
                        END LOOP;
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_studies_tallied
                AFTER INSERT OR DELETE ON participant_studies
                FOR EACH ROW EXECUTE FUNCTION tally_participant_studies()
                """,
                // An account deleted takes its studies and activity states with it, and the two
                // cascades' triggers run when both are gone: neither could tell what the other
                // counted for. So its studies go first, on their own, while its activity states
                // are still there to be taken out of the counts.
                """
                CREATE FUNCTION untally_deleted_account() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    DELETE FROM participant_studies WHERE user_id = OLD.user_id;
                    RETURN OLD;
                END
                $$
                """,
                """
                CREATE TRIGGER participants_untallied
                BEFORE DELETE ON participants
                FOR EACH ROW EXECUTE FUNCTION untally_deleted_account()
                """,
                """
                CREATE TRIGGER participant_studies_retallied
                AFTER UPDATE OF status, user_id, study_id ON participant_studies
                FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status
                                   OR (OLD.user_id, OLD.study_id) IS DISTINCT FROM (NEW.user_id, NEW.study_id))
                EXECUTE FUNCTION tally_participant_studies()
                """,
                // A consent completed (or no longer) moves the participant from the set of versions
                // they had signed to the set they have now.
                """
                CREATE FUNCTION tally_consent_records() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    p_user uuid := coalesce(NEW.user_id, OLD.user_id);
                    p_study text := coalesce(NEW.study_id, OLD.study_id);
                    p_status text;
                    before text[];
                    after text[];
                BEGIN
                    -- Held to the transaction's end: a second consent of theirs written at the same
                    -- moment waits, then reads the versions with this one's among them.
                    SELECT status INTO p_status FROM participant_studies WHERE user_id = p_user AND study_id = p_study
                    FOR NO KEY UPDATE;
                    IF NOT FOUND THEN
                        RETURN NULL;
                    END IF;
                    after := signed_consents(p_user, p_study, NULL, NULL);
                    before := signed_consents(p_user, p_study, CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE NEW.id END,
                                              CASE WHEN TG_OP <> 'INSERT' AND OLD.status = 'completed' THEN OLD.version END);
                    IF before IS DISTINCT FROM after THEN
                        PERFORM add_participant_tally(p_study, p_user, before, p_status, -1);
                        PERFORM add_participant_tally(p_study, p_user, after, p_status, 1);
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER consent_records_tallied
                AFTER INSERT OR DELETE OR UPDATE OF status, version ON consent_records
                FOR EACH ROW EXECUTE FUNCTION tally_consent_records()
                """,
                // A study's counts made again from its rows (every study's with NULL): what is there
                // when the counts are first kept, and for rows written with the triggers off (the
                // benchmark's bulk seed).
                """
                CREATE FUNCTION recount_study_tallies(p_study text) RETURNS void LANGUAGE sql AS $$
                    DELETE FROM study_activity_tallies WHERE p_study IS NULL OR study_id = p_study;
                    DELETE FROM study_participant_tallies WHERE p_study IS NULL OR study_id = p_study;
                    INSERT INTO study_activity_tallies
                        (study_id, activity_id, shard, up_to_date, behind, not_started, runs_completed, runs_missed)
                    SELECT a.study_id, a.activity_id, tally_shard(a.user_id),
                           count(*) FILTER (WHERE adherence_standing(a.activity_state, a.runs_completed, a.runs_missed) = 'upToDate'),
                           count(*) FILTER (WHERE adherence_standing(a.activity_state, a.runs_completed, a.runs_missed) = 'behind'),
                           count(*) FILTER (WHERE adherence_standing(a.activity_state, a.runs_completed, a.runs_missed) = 'notStarted'),
                           sum(a.runs_completed), sum(a.runs_missed)
                    FROM participant_activities a JOIN participant_studies ps ON ps.user_id = a.user_id AND ps.study_id = a.study_id
                    WHERE tally_counts_status(ps.status) AND (p_study IS NULL OR a.study_id = p_study)
                    GROUP BY 1, 2, 3;
                    INSERT INTO study_participant_tallies (study_id, shard, signed, in_study, in_progress)
                    SELECT ps.study_id, tally_shard(ps.user_id), signed_consents(ps.user_id, ps.study_id, NULL, NULL),
                           count(*) FILTER (WHERE tally_counts_status(ps.status)), count(*) FILTER (WHERE ps.status = 'inProgress')
                    FROM participant_studies ps
                    WHERE p_study IS NULL OR ps.study_id = p_study
                    GROUP BY 1, 2, 3;
                $$
                """,
                "SELECT recount_study_tallies(NULL)",
            ]
        )
    ]

    /// Who is behind, most behind first, read in the order of an index (a page of them reads a
    /// page of the index, not every participant behind): among those equally behind, by account,
    /// then activity.
    static let behindOrder: [Migration] = [
        Migration(
            component: "registration", version: 26, name: "behind_order",
            statements: [
                """
                CREATE INDEX participant_activity_standings_behind_order
                ON participant_activity_standings (study_id, missed_in_a_row DESC, user_id, activity_id COLLATE "C")
                WHERE missed_in_a_row > 0
                """,
                """
                CREATE INDEX participant_activity_standings_behind_activity
                ON participant_activity_standings (study_id, activity_id, missed_in_a_row DESC, user_id)
                WHERE missed_in_a_row > 0
                """,
                "DROP INDEX participant_activity_standings_behind",
            ]
        )
    ]

    /// A search of a study's participants by part of an e-mail address reads a trigram index
    /// (`pg_trgm`, a trusted extension a database's owner may create) instead of every address
    /// (`ListSearch`).
    static let emailSearch: [Migration] = [
        Migration(
            component: "registration", version: 29, name: "email_trigrams",
            statements: [
                "CREATE EXTENSION IF NOT EXISTS pg_trgm",
                "CREATE INDEX participants_email_trigrams ON participants USING gin (email_key gin_trgm_ops)",
            ]
        )
    ]
}
