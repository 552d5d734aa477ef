import ServiceKit

extension RegistrationMigrations {
    /// The audience's changes written as rows of their own, and added to the kept counts by one
    /// worker at a time (`fold_audience_changes`), instead of each change adding to them itself.
    ///
    /// A refresh moves a device from the hour its old sign-in ran out to the new one's, in every
    /// study its participant joined: it took away from one hour's row and its study's total, then
    /// added to another's. Two refreshes whose hours crossed (one from the first hour to the
    /// second, the other back) each held a row the other needed next, and PostgreSQL ended one of
    /// them as a deadlock: the phone's sign-in failed for a count it never reads. Appending a row
    /// takes no lock another change waits on, so the phones' changes now wait on nothing but their
    /// own participant's row (`audience_devices`); the folding worker, one at a time through an
    /// advisory lock, adds them up and prunes the hours past. Until then the count reads them too.
    static let audienceChanges: [Migration] = [
        Migration(
            component: "registration", version: 34, name: "audience_changes",
            statements: [
                """
                CREATE TABLE study_audience_changes (
                    study_id text NOT NULL,
                    expires_hour bigint NOT NULL,
                    shard smallint NOT NULL,
                    devices integer NOT NULL
                )
                """,
                "CREATE INDEX study_audience_changes_study ON study_audience_changes (study_id, expires_hour)",
                """
                CREATE OR REPLACE FUNCTION add_audience_session(p_user uuid, p_expires timestamptz, sign integer) RETURNS void
                LANGUAGE sql AS $$
                    INSERT INTO study_audience_changes (study_id, expires_hour, shard, devices)
                    SELECT ps.study_id, epoch_hour(p_expires), tally_shard(p_user), sign FROM participant_studies ps
                    WHERE ps.user_id = p_user AND tally_counts_status(ps.status) AND epoch_hour(p_expires) >= epoch_hour(now())
                $$
                """,
                """
                CREATE OR REPLACE FUNCTION add_audience_sessions(p_user uuid, p_study text, sign integer) RETURNS void
                LANGUAGE sql AS $$
                    INSERT INTO study_audience_changes (study_id, expires_hour, shard, devices)
                    SELECT studies.study_id, epoch_hour(s.refresh_expires_at), tally_shard(p_user), sign * count(*)
                    FROM (SELECT p_study AS study_id WHERE p_study IS NOT NULL
                          UNION ALL
                          SELECT ps.study_id FROM participant_studies ps
                          WHERE p_study IS NULL AND ps.user_id = p_user AND tally_counts_status(ps.status)) studies
                    CROSS JOIN participant_sessions s
                    WHERE s.user_id = p_user AND session_takes_pushes(s.revoked_at, s.device_token, s.device_os)
                      AND epoch_hour(s.refresh_expires_at) >= epoch_hour(now())
                    GROUP BY 1, 2
                $$
                """,
                // One folder at a time (two replicas' workers included), so the kept rows and their
                // totals are only ever written in one transaction at once. The changes taken are
                // those committed when it begins; a change committed later waits for the next fold.
                // Changes of hours already past count for nothing and are dropped, as those hours'
                // kept rows are pruned.
                """
                CREATE FUNCTION fold_audience_changes() RETURNS integer LANGUAGE plpgsql AS $$
                DECLARE
                    changed integer;
                    pruned integer;
                BEGIN
                    PERFORM pg_advisory_xact_lock(hashtext('study-audience-fold'));
                    WITH taken AS (DELETE FROM study_audience_changes RETURNING study_id, expires_hour, shard, devices),
                         summed AS (
                             SELECT study_id, expires_hour, shard, sum(devices)::integer AS devices FROM taken
                             WHERE expires_hour >= epoch_hour(now())
                             GROUP BY 1, 2, 3 HAVING sum(devices) <> 0),
                         added AS (
                             INSERT INTO study_audience_devices AS d (study_id, expires_hour, shard, devices)
                             SELECT study_id, expires_hour, shard, devices FROM summed ORDER BY 1, 2, 3
                             ON CONFLICT (study_id, expires_hour, shard) DO UPDATE SET devices = d.devices + EXCLUDED.devices
                             RETURNING 1)
                    SELECT count(*) INTO changed FROM added;
                    DELETE FROM study_audience_devices WHERE expires_hour < epoch_hour(now());
                    GET DIAGNOSTICS pruned = ROW_COUNT;
                    RETURN changed + pruned;
                END
                $$
                """,
                """
                CREATE OR REPLACE FUNCTION recount_audience_devices(p_study text) RETURNS void LANGUAGE sql AS $$
                    SELECT pg_advisory_xact_lock(hashtext('study-audience-fold'));
                    DELETE FROM study_audience_changes WHERE p_study IS NULL OR study_id = p_study;
                    DELETE FROM study_audience_devices WHERE p_study IS NULL OR study_id = p_study;
                    DELETE FROM study_audience_totals WHERE p_study IS NULL OR study_id = p_study;
                    INSERT INTO study_audience_devices (study_id, expires_hour, shard, devices)
                    SELECT ps.study_id, epoch_hour(s.refresh_expires_at), tally_shard(ps.user_id), count(*)
                    FROM participant_studies ps
                    JOIN participants p ON p.user_id = ps.user_id
                    JOIN participant_sessions s ON s.user_id = ps.user_id
                    WHERE (p_study IS NULL OR ps.study_id = p_study) AND tally_counts_status(ps.status)
                      AND takes_notifications(p.settings) AND session_takes_pushes(s.revoked_at, s.device_token, s.device_os)
                      AND epoch_hour(s.refresh_expires_at) >= epoch_hour(now())
                    GROUP BY 1, 2, 3;
                $$
                """,
            ]
        )
    ]
}
