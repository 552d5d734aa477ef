import ServiceKit

extension RegistrationMigrations {
    /// The consent versions each participant has signed, kept on their study row, so that who owes
    /// a signature is read through an index rather than by asking every participant's consents
    /// (docs/operations.md, Capacity). The participants list filtered to those who owe one called
    /// `owes_consent` once per participant of the study, in page order, until a page was found:
    /// when few owe, that is every participant.
    ///
    /// `signed` is what `signed_consents` reads from `consent_records` (distinct, sorted), kept by
    /// the consent trigger that already moves the participant between the tallies' sets, and set
    /// when a study row is made (a consent may be recorded before it). Owing is then a test of
    /// that array against the versions in force, one definition (`owes_consent` of the array)
    /// that the list, its filter, the count and the reminders all use.
    static let signedConsents: [Migration] = [
        Migration(
            component: "registration", version: 30, name: "signed_consents_kept",
            statements: [
                "ALTER TABLE participant_studies ADD COLUMN signed text[] NOT NULL DEFAULT '{}'",
                """
                UPDATE participant_studies ps SET signed = signed_consents(ps.user_id, ps.study_id, NULL, NULL)
                WHERE EXISTS (SELECT 1 FROM consent_records c
                              WHERE c.user_id = ps.user_id AND c.study_id = ps.study_id AND c.status = 'completed')
                """,
                // In the study (as the app reports it) with no signature of a version in force
                // (`in_force` NULL: any version is one).
                """
                CREATE FUNCTION owes_consent(signed text[], status text, in_force text[]) RETURNS boolean
                LANGUAGE sql IMMUTABLE AS $$
                    SELECT coalesce(status = 'inProgress', false)
                           AND NOT CASE WHEN in_force IS NULL THEN cardinality(signed) > 0 ELSE signed && in_force END
                $$
                """,
                // The form that reads the records themselves, kept for what calls it by account
                // (a replica not yet upgraded), now the same definition.
                """
                CREATE OR REPLACE FUNCTION owes_consent(p_user uuid, p_study text, p_status text, in_force text[])
                RETURNS boolean LANGUAGE sql STABLE AS $$
                    SELECT owes_consent(signed_consents(p_user, p_study, NULL, NULL), p_status, in_force)
                $$
                """,
                // Those in the study by the sets they signed: the owing sets (few: the tallies
                // list them) lead to their participants.
                "CREATE INDEX participant_studies_in_progress_signed ON participant_studies (study_id, signed) WHERE status = 'inProgress'",
                """
                CREATE FUNCTION sign_participant_study() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    NEW.signed := signed_consents(NEW.user_id, NEW.study_id, NULL, NULL);
                    RETURN NEW;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_studies_sign
                BEFORE INSERT OR UPDATE OF user_id, study_id ON participant_studies
                FOR EACH ROW EXECUTE FUNCTION sign_participant_study()
                """,
                // The consent trigger of migration 25, writing the set it moves the participant to.
                """
                CREATE OR REPLACE FUNCTION tally_consent_records() RETURNS trigger LANGUAGE plpgsql AS $$
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
                    UPDATE participant_studies SET signed = after
                    WHERE user_id = p_user AND study_id = p_study AND signed IS DISTINCT FROM after;
                    RETURN NULL;
                END
                $$
                """,
            ]
        )
    ]

    /// Enrolments and withdrawals per UTC day and site, kept as participants join and leave, so
    /// the study's summary reads a row per day and site instead of every participant (docs/
    /// operations.md, Capacity). Joining and leaving are a person's acts, a few a second at the
    /// busiest launch: one row per day and site takes them without the tallies' shards.
    static let enrolmentDays: [Migration] = [
        Migration(
            component: "registration", version: 31, name: "enrolment_days",
            statements: [
                """
                CREATE FUNCTION utc_day(at timestamptz) RETURNS date LANGUAGE sql IMMUTABLE AS $$
                    SELECT (at AT TIME ZONE 'UTC')::date
                $$
                """,
                """
                CREATE TABLE study_enrolment_days (
                    study_id text NOT NULL,
                    site_id uuid,
                    day date NOT NULL,
                    enrolled integer NOT NULL,
                    withdrawn integer NOT NULL,
                    UNIQUE NULLS NOT DISTINCT (study_id, site_id, day)
                )
                """,
                """
                CREATE FUNCTION add_enrolment_day(p_study text, p_site uuid, p_day date, enrolled integer, withdrawn integer)
                RETURNS void LANGUAGE sql AS $$
                    INSERT INTO study_enrolment_days AS d (study_id, site_id, day, enrolled, withdrawn)
                    SELECT p_study, p_site, p_day, enrolled, withdrawn WHERE p_day IS NOT NULL
                    ON CONFLICT (study_id, site_id, day) DO UPDATE SET
                        enrolled = d.enrolled + EXCLUDED.enrolled, withdrawn = d.withdrawn + EXCLUDED.withdrawn
                $$
                """,
                """
                CREATE FUNCTION recount_enrolment_days(p_study text) RETURNS void LANGUAGE sql AS $$
                    DELETE FROM study_enrolment_days WHERE p_study IS NULL OR study_id = p_study;
                    INSERT INTO study_enrolment_days (study_id, site_id, day, enrolled, withdrawn)
                    SELECT study_id, site_id, day, sum(enrolled), sum(withdrawn) FROM (
                        SELECT study_id, site_id, utc_day(enrolled_at) AS day, 1 AS enrolled, 0 AS withdrawn
                        FROM participant_studies WHERE enrolled_at IS NOT NULL AND (p_study IS NULL OR study_id = p_study)
                        UNION ALL
                        SELECT study_id, site_id, utc_day(withdrawn_at), 0, 1
                        FROM participant_studies WHERE withdrawn_at IS NOT NULL AND (p_study IS NULL OR study_id = p_study)
                    ) events GROUP BY 1, 2, 3;
                $$
                """,
                "SELECT recount_enrolment_days(NULL)",
                // A row's old days taken away, its new ones added.
                """
                CREATE FUNCTION count_enrolment_days() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP IN ('UPDATE', 'DELETE') THEN
                        PERFORM add_enrolment_day(OLD.study_id, OLD.site_id, utc_day(OLD.enrolled_at), -1, 0);
                        PERFORM add_enrolment_day(OLD.study_id, OLD.site_id, utc_day(OLD.withdrawn_at), 0, -1);
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') THEN
                        PERFORM add_enrolment_day(NEW.study_id, NEW.site_id, utc_day(NEW.enrolled_at), 1, 0);
                        PERFORM add_enrolment_day(NEW.study_id, NEW.site_id, utc_day(NEW.withdrawn_at), 0, 1);
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_studies_enrolment_days
                AFTER INSERT OR DELETE ON participant_studies
                FOR EACH ROW EXECUTE FUNCTION count_enrolment_days()
                """,
                """
                CREATE TRIGGER participant_studies_enrolment_days_moved
                AFTER UPDATE OF enrolled_at, withdrawn_at, site_id, study_id ON participant_studies
                FOR EACH ROW WHEN (utc_day(OLD.enrolled_at) IS DISTINCT FROM utc_day(NEW.enrolled_at)
                                   OR utc_day(OLD.withdrawn_at) IS DISTINCT FROM utc_day(NEW.withdrawn_at)
                                   OR (OLD.site_id, OLD.study_id) IS DISTINCT FROM (NEW.site_id, NEW.study_id))
                EXECUTE FUNCTION count_enrolment_days()
                """,
                // Every kept count made again from the rows (migration 25's, the signed sets and the
                // enrolment days), for rows written with the triggers off (the benchmark's bulk
                // seed).
                """
                CREATE OR REPLACE FUNCTION recount_study_tallies(p_study text) RETURNS void LANGUAGE sql AS $$
                    UPDATE participant_studies ps SET signed = signed_consents(ps.user_id, ps.study_id, NULL, NULL)
                    WHERE (p_study IS NULL OR ps.study_id = p_study)
                      AND ps.signed IS DISTINCT FROM signed_consents(ps.user_id, ps.study_id, NULL, NULL);
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
                    SELECT ps.study_id, tally_shard(ps.user_id), ps.signed,
                           count(*) FILTER (WHERE tally_counts_status(ps.status)), count(*) FILTER (WHERE ps.status = 'inProgress')
                    FROM participant_studies ps
                    WHERE p_study IS NULL OR ps.study_id = p_study
                    GROUP BY 1, 2, 3;
                    SELECT recount_enrolment_days(p_study);
                $$
                """,
            ]
        )
    ]
}
