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

    /// Each site's invitations by state and its participants in the study, kept as invitations
    /// and participants change, so the sites page reads a row per site instead of every
    /// invitation and participant (docs/operations.md, Capacity). An invitation neither revoked
    /// nor used is `pending`; which of those have expired depends on the clock, and is counted
    /// when asked through an index of the pending ones by expiry. One that was used counts as
    /// withdrawn while its participant is, so a participant's change of status moves the
    /// invitations they used (found through `invitations_user`). As with the tallies, a trigger
    /// that reads a participant's status holds their study row (`FOR SHARE`) while it counts.
    static let siteCounts: [Migration] = [
        Migration(
            component: "registration", version: 32, name: "site_counts",
            statements: [
                """
                CREATE TABLE study_site_counts (
                    study_id text NOT NULL,
                    site_id uuid,
                    members integer NOT NULL,
                    pending integer NOT NULL,
                    enrolled integer NOT NULL,
                    withdrawn integer NOT NULL,
                    revoked integer NOT NULL,
                    UNIQUE NULLS NOT DISTINCT (study_id, site_id)
                )
                """,
                "CREATE INDEX invitations_user ON invitations (user_id, study_id) WHERE user_id IS NOT NULL",
                """
                CREATE INDEX invitations_pending_expiry ON invitations (study_id, expires_at)
                WHERE revoked_at IS NULL AND enrolled_at IS NULL
                """,
                """
                CREATE FUNCTION add_site_counts(
                    p_study text, p_site uuid, members integer, pending integer, enrolled integer, withdrawn integer, revoked integer
                ) RETURNS void LANGUAGE sql AS $$
                    INSERT INTO study_site_counts AS c (study_id, site_id, members, pending, enrolled, withdrawn, revoked)
                    SELECT p_study, p_site, members, pending, enrolled, withdrawn, revoked
                    WHERE (members, pending, enrolled, withdrawn, revoked) IS DISTINCT FROM (0, 0, 0, 0, 0)
                    ON CONFLICT (study_id, site_id) DO UPDATE SET
                        members = c.members + EXCLUDED.members, pending = c.pending + EXCLUDED.pending,
                        enrolled = c.enrolled + EXCLUDED.enrolled, withdrawn = c.withdrawn + EXCLUDED.withdrawn,
                        revoked = c.revoked + EXCLUDED.revoked
                $$
                """,
                // What one invitation counts for, as `InvitationStore.stateSQL` names its state
                // (expiry aside): revoked first, then used (withdrawn while its participant is),
                // else pending.
                """
                CREATE FUNCTION add_site_invitation(
                    p_study text, p_site uuid, revoked_at timestamptz, enrolled_at timestamptz, withdrawn boolean, sign integer
                ) RETURNS void LANGUAGE sql AS $$
                    SELECT add_site_counts(p_study, p_site, 0,
                        sign * (revoked_at IS NULL AND enrolled_at IS NULL)::int,
                        sign * (revoked_at IS NULL AND enrolled_at IS NOT NULL AND NOT withdrawn)::int,
                        sign * (revoked_at IS NULL AND enrolled_at IS NOT NULL AND withdrawn)::int,
                        sign * (revoked_at IS NOT NULL)::int)
                $$
                """,
                """
                CREATE FUNCTION count_site_invitations() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    withdrawn boolean;
                BEGIN
                    IF TG_OP IN ('UPDATE', 'DELETE') THEN
                        SELECT status = 'Withdrawn' INTO withdrawn FROM participant_studies
                        WHERE user_id = OLD.user_id AND study_id = OLD.study_id FOR SHARE;
                        PERFORM add_site_invitation(OLD.study_id, OLD.site_id, OLD.revoked_at, OLD.enrolled_at,
                                                    coalesce(withdrawn, false), -1);
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') THEN
                        SELECT status = 'Withdrawn' INTO withdrawn FROM participant_studies
                        WHERE user_id = NEW.user_id AND study_id = NEW.study_id FOR SHARE;
                        PERFORM add_site_invitation(NEW.study_id, NEW.site_id, NEW.revoked_at, NEW.enrolled_at,
                                                    coalesce(withdrawn, false), 1);
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER invitations_counted
                AFTER INSERT OR DELETE OR UPDATE OF revoked_at, enrolled_at, site_id, study_id, user_id ON invitations
                FOR EACH ROW EXECUTE FUNCTION count_site_invitations()
                """,
                // A participant joining, leaving or changing status: their site's members, and the
                // invitations they used when it moves them into or out of `Withdrawn`.
                """
                CREATE FUNCTION count_site_members() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    invitation record;
                    was_withdrawn boolean := TG_OP <> 'INSERT' AND OLD.status = 'Withdrawn';
                    is_withdrawn boolean := TG_OP <> 'DELETE' AND NEW.status = 'Withdrawn';
                BEGIN
                    IF TG_OP IN ('UPDATE', 'DELETE') THEN
                        PERFORM add_site_counts(OLD.study_id, OLD.site_id, -tally_counts_status(OLD.status)::int, 0, 0, 0, 0);
                        IF was_withdrawn AND (TG_OP = 'DELETE' OR NOT is_withdrawn
                                              OR (OLD.user_id, OLD.study_id) IS DISTINCT FROM (NEW.user_id, NEW.study_id)) THEN
                            FOR invitation IN SELECT site_id FROM invitations
                                WHERE user_id = OLD.user_id AND study_id = OLD.study_id AND revoked_at IS NULL AND enrolled_at IS NOT NULL
                            LOOP
                                PERFORM add_site_counts(OLD.study_id, invitation.site_id, 0, 0, 1, -1, 0);
                            END LOOP;
                        END IF;
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') THEN
                        PERFORM add_site_counts(NEW.study_id, NEW.site_id, tally_counts_status(NEW.status)::int, 0, 0, 0, 0);
                        IF is_withdrawn AND (TG_OP = 'INSERT' OR NOT was_withdrawn
                                             OR (OLD.user_id, OLD.study_id) IS DISTINCT FROM (NEW.user_id, NEW.study_id)) THEN
                            FOR invitation IN SELECT site_id FROM invitations
                                WHERE user_id = NEW.user_id AND study_id = NEW.study_id AND revoked_at IS NULL AND enrolled_at IS NOT NULL
                            LOOP
                                PERFORM add_site_counts(NEW.study_id, invitation.site_id, 0, 0, -1, 1, 0);
                            END LOOP;
                        END IF;
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_studies_site_counted
                AFTER INSERT OR DELETE ON participant_studies
                FOR EACH ROW EXECUTE FUNCTION count_site_members()
                """,
                """
                CREATE TRIGGER participant_studies_site_recounted
                AFTER UPDATE OF status, site_id, user_id, study_id ON participant_studies
                FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status
                                   OR (OLD.site_id, OLD.user_id, OLD.study_id) IS DISTINCT FROM (NEW.site_id, NEW.user_id, NEW.study_id))
                EXECUTE FUNCTION count_site_members()
                """,
                // Made again from the rows, for rows written with the triggers off (the benchmark's
                // bulk seed calls it after `recount_study_tallies`).
                """
                CREATE FUNCTION recount_site_counts(p_study text) RETURNS void LANGUAGE sql AS $$
                    DELETE FROM study_site_counts WHERE p_study IS NULL OR study_id = p_study;
                    INSERT INTO study_site_counts (study_id, site_id, members, pending, enrolled, withdrawn, revoked)
                    SELECT study_id, site_id, sum(members), sum(pending), sum(enrolled), sum(withdrawn), sum(revoked) FROM (
                        SELECT study_id, site_id, tally_counts_status(status)::int AS members, 0 AS pending, 0 AS enrolled,
                               0 AS withdrawn, 0 AS revoked
                        FROM participant_studies WHERE p_study IS NULL OR study_id = p_study
                        UNION ALL
                        SELECT i.study_id, i.site_id, 0, (i.revoked_at IS NULL AND i.enrolled_at IS NULL)::int,
                               (i.revoked_at IS NULL AND i.enrolled_at IS NOT NULL AND ps.status IS DISTINCT FROM 'Withdrawn')::int,
                               (i.revoked_at IS NULL AND i.enrolled_at IS NOT NULL AND ps.status = 'Withdrawn')::int,
                               (i.revoked_at IS NOT NULL)::int
                        FROM invitations i LEFT JOIN participant_studies ps ON ps.user_id = i.user_id AND ps.study_id = i.study_id
                        WHERE p_study IS NULL OR i.study_id = p_study
                    ) rows GROUP BY 1, 2;
                $$
                """,
                "SELECT recount_site_counts(NULL)",
            ]
        )
    ]
}
