import ServiceKit

extension RegistrationMigrations {
    /// How many devices a study's message sent now would reach, kept as sessions, settings and
    /// statuses change, so the messages page reads a study's few rows instead of every participant
    /// and session (docs/operations.md, Capacity).
    ///
    /// A device takes a study's pushes while its session is signed in with a push token of a
    /// platform that has one (`session_takes_pushes`), until its refresh token runs out; its
    /// participant has notifications on (`takes_notifications`) and has joined the study
    /// (`tally_counts_status`). Running out is a matter of the clock, which no trigger follows, so
    /// the devices are kept by the hour their sign-in runs out (`epoch_hour`): those of hours to
    /// come all still take pushes, and of the hour now, the few that ran out since it began are
    /// counted when asked, through an index of sessions by expiry. Hours past count for nothing and
    /// are pruned. Each hour's count is split into sixteen rows by participant (`tally_shard`), so
    /// that phones refreshing their sign-in at once do not all wait on one row, and the hours'
    /// sums are kept per study and shard (`study_audience_totals`).
    ///
    /// Three changes move a device in or out: its session's, its participant's settings, and its
    /// participant's status in a study. Each trigger takes the participant's row before it reads
    /// the other two, with locks that conflict (a session's `FOR NO KEY UPDATE`, a status's
    /// `FOR SHARE`, a settings change its own update), so two changes of one participant are counted
    /// one after the other, the second reading what the first wrote, whichever row each made.
    /// (The changes themselves are now appended and added up by a worker: `audienceChanges`.)
    static let audienceDevices: [Migration] = [
        Migration(
            component: "registration", version: 33, name: "audience_devices",
            statements: [
                """
                CREATE FUNCTION epoch_hour(at timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
                    SELECT floor(extract(epoch FROM at) / 3600)::bigint
                $$
                """,
                """
                CREATE FUNCTION takes_notifications(settings jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
                    SELECT coalesce((settings ->> 'remoteNotifications')::boolean, false)
                $$
                """,
                """
                CREATE FUNCTION session_takes_pushes(revoked_at timestamptz, device_token text, device_os text) RETURNS boolean
                LANGUAGE sql IMMUTABLE AS $$
                    SELECT revoked_at IS NULL AND device_token IS NOT NULL AND coalesce(device_os IN ('ios', 'android'), false)
                $$
                """,
                // The sessions whose sign-in ran out within the hour now are found by expiry.
                """
                CREATE INDEX participant_sessions_push_expiry ON participant_sessions (refresh_expires_at)
                WHERE session_takes_pushes(revoked_at, device_token, device_os)
                """,
                """
                CREATE TABLE study_audience_devices (
                    study_id text NOT NULL,
                    expires_hour bigint NOT NULL,
                    shard smallint NOT NULL,
                    devices integer NOT NULL,
                    PRIMARY KEY (study_id, expires_hour, shard)
                )
                """,
                "CREATE INDEX study_audience_devices_hour ON study_audience_devices (expires_hour)",
                // The sum of every hour's devices, past hours included, kept by the hours' own
                // rows as they change: a study's count is its sixteen totals less the hours past
                // that are not yet pruned (a few), not a row for every hour of a month to come.
                """
                CREATE TABLE study_audience_totals (
                    study_id text NOT NULL,
                    shard smallint NOT NULL,
                    devices integer NOT NULL,
                    PRIMARY KEY (study_id, shard)
                )
                """,
                """
                CREATE FUNCTION total_audience_devices() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO study_audience_totals AS t (study_id, shard, devices)
                    SELECT coalesce(NEW.study_id, OLD.study_id), coalesce(NEW.shard, OLD.shard),
                           coalesce(NEW.devices, 0) - coalesce(OLD.devices, 0)
                    ON CONFLICT (study_id, shard) DO UPDATE SET devices = t.devices + EXCLUDED.devices;
                    RETURN NULL;
                END
                $$
                """,
                // A row's study and shard are never changed (every writer adds to `devices`).
                """
                CREATE TRIGGER study_audience_devices_totalled
                AFTER INSERT OR DELETE OR UPDATE OF devices ON study_audience_devices
                FOR EACH ROW EXECUTE FUNCTION total_audience_devices()
                """,
                // One session of `p_user` that runs out at `p_expires`, in each study they have
                // joined; nothing for an hour already past.
                """
                CREATE FUNCTION add_audience_session(p_user uuid, p_expires timestamptz, sign integer) RETURNS void
                LANGUAGE sql AS $$
                    INSERT INTO study_audience_devices AS d (study_id, expires_hour, shard, devices)
                    SELECT ps.study_id, epoch_hour(p_expires), tally_shard(p_user), sign FROM participant_studies ps
                    WHERE ps.user_id = p_user AND tally_counts_status(ps.status) AND epoch_hour(p_expires) >= epoch_hour(now())
                    ON CONFLICT (study_id, expires_hour, shard) DO UPDATE SET devices = d.devices + EXCLUDED.devices
                $$
                """,
                // Every session of `p_user` that takes pushes, in `p_study` (its status is the
                // caller's to judge: a trigger on the study row passes the row's old or new one),
                // or in every study they have joined now when NULL.
                """
                CREATE FUNCTION add_audience_sessions(p_user uuid, p_study text, sign integer) RETURNS void
                LANGUAGE sql AS $$
                    INSERT INTO study_audience_devices AS d (study_id, expires_hour, shard, devices)
                    SELECT studies.study_id, epoch_hour(s.refresh_expires_at), tally_shard(p_user), sign * count(*)
                    FROM (SELECT p_study AS study_id WHERE p_study IS NOT NULL
                          UNION ALL
                          SELECT ps.study_id FROM participant_studies ps
                          WHERE p_study IS NULL AND ps.user_id = p_user AND tally_counts_status(ps.status)) studies
                    CROSS JOIN participant_sessions s
                    WHERE s.user_id = p_user AND session_takes_pushes(s.revoked_at, s.device_token, s.device_os)
                      AND epoch_hour(s.refresh_expires_at) >= epoch_hour(now())
                    GROUP BY 1, 2
                    ON CONFLICT (study_id, expires_hour, shard) DO UPDATE SET devices = d.devices + EXCLUDED.devices
                $$
                """,
                // A participant deleted with their account takes nothing: their studies went first
                // (`participants_untallied`), and took their devices with them.
                """
                CREATE FUNCTION count_session_audience() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    takes boolean;
                BEGIN
                    IF TG_OP IN ('UPDATE', 'DELETE') AND session_takes_pushes(OLD.revoked_at, OLD.device_token, OLD.device_os) THEN
                        SELECT takes_notifications(settings) INTO takes FROM participants WHERE user_id = OLD.user_id
                        FOR NO KEY UPDATE;
                        IF takes THEN
                            PERFORM add_audience_session(OLD.user_id, OLD.refresh_expires_at, -1);
                        END IF;
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') AND session_takes_pushes(NEW.revoked_at, NEW.device_token, NEW.device_os) THEN
                        SELECT takes_notifications(settings) INTO takes FROM participants WHERE user_id = NEW.user_id
                        FOR NO KEY UPDATE;
                        IF takes THEN
                            PERFORM add_audience_session(NEW.user_id, NEW.refresh_expires_at, 1);
                        END IF;
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_sessions_audience
                AFTER INSERT OR DELETE ON participant_sessions
                FOR EACH ROW EXECUTE FUNCTION count_session_audience()
                """,
                // A refresh moves a device to the hour its new sign-in runs out; a session without
                // a push token (most updates of most sessions) fires nothing.
                """
                CREATE TRIGGER participant_sessions_audience_moved
                AFTER UPDATE OF revoked_at, device_token, device_os, refresh_expires_at, user_id ON participant_sessions
                FOR EACH ROW WHEN ((session_takes_pushes(OLD.revoked_at, OLD.device_token, OLD.device_os)
                                    OR session_takes_pushes(NEW.revoked_at, NEW.device_token, NEW.device_os))
                                   AND (session_takes_pushes(OLD.revoked_at, OLD.device_token, OLD.device_os)
                                            IS DISTINCT FROM session_takes_pushes(NEW.revoked_at, NEW.device_token, NEW.device_os)
                                        OR epoch_hour(OLD.refresh_expires_at) <> epoch_hour(NEW.refresh_expires_at)
                                        OR OLD.user_id <> NEW.user_id))
                EXECUTE FUNCTION count_session_audience()
                """,
                """
                CREATE FUNCTION count_member_audience() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    takes boolean;
                BEGIN
                    IF TG_OP IN ('UPDATE', 'DELETE') AND tally_counts_status(OLD.status) THEN
                        SELECT takes_notifications(settings) INTO takes FROM participants WHERE user_id = OLD.user_id FOR SHARE;
                        IF takes THEN
                            PERFORM add_audience_sessions(OLD.user_id, OLD.study_id, -1);
                        END IF;
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') AND tally_counts_status(NEW.status) THEN
                        SELECT takes_notifications(settings) INTO takes FROM participants WHERE user_id = NEW.user_id FOR SHARE;
                        IF takes THEN
                            PERFORM add_audience_sessions(NEW.user_id, NEW.study_id, 1);
                        END IF;
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_studies_audience
                AFTER INSERT OR DELETE ON participant_studies
                FOR EACH ROW EXECUTE FUNCTION count_member_audience()
                """,
                """
                CREATE TRIGGER participant_studies_audience_moved
                AFTER UPDATE OF status, user_id, study_id ON participant_studies
                FOR EACH ROW WHEN (tally_counts_status(OLD.status) IS DISTINCT FROM tally_counts_status(NEW.status)
                                   OR (OLD.user_id, OLD.study_id) IS DISTINCT FROM (NEW.user_id, NEW.study_id))
                EXECUTE FUNCTION count_member_audience()
                """,
                // The row's own update holds it: the reads below come after any session or status
                // change of theirs that took it first.
                """
                CREATE FUNCTION count_settings_audience() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM add_audience_sessions(NEW.user_id, NULL, CASE WHEN takes_notifications(NEW.settings) THEN 1 ELSE -1 END);
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participants_audience
                AFTER UPDATE OF settings ON participants
                FOR EACH ROW WHEN (takes_notifications(OLD.settings) IS DISTINCT FROM takes_notifications(NEW.settings))
                EXECUTE FUNCTION count_settings_audience()
                """,
                // Made again from the rows (every study's with NULL): what is there when the counts
                // are first kept, and for rows written with the triggers off (the benchmark's seed).
                """
                CREATE FUNCTION recount_audience_devices(p_study text) RETURNS void LANGUAGE sql AS $$
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
                "SELECT recount_audience_devices(NULL)",
            ]
        )
    ]
}
