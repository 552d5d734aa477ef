#!/usr/bin/env bash
# make bench and make bench-scale, the database they measure on: BENCHSTUDY in its second month
# (docs/operations.md, "The benchmark's database"). A bench on a fresh database flatters, and one on
# whatever earlier runs left cannot be repeated; so each run first removes what earlier runs of the
# benchmark left and writes the seeded rows that are missing, the same rows every time (every value
# derives from a row number; nothing is random). For the first 10,000 participants:
#
#   registration  10,000 participants enrolled in BENCHSTUDY over 60 days, each with a session, 21
#                 activity states (210,000), a consent record, 15 reminder decisions of daily30's
#                 runs, and their app's participant id (so the response service names them by
#                 number); 1 in 10 joined by an e-mail invitation; 72,000 audit events (sign-ins,
#                 consents, admins reading identities). Their run ledgers, standings and weeks are
#                 counted by the registration service's own sweep from these rows.
#   response      the same 10,000 participants; 15 processed daily30 responses each (150,000; the
#                 30 answers of bench/response-30.json) with their 4,500,000 answer timings;
#                 a backlog of 5,000 pending responses; 10,000 audit events
#   study-metadata  1,000 audit events (admins signing in, saving drafts)
#
# BENCH_PARTICIPANTS (a multiple of 10,000; 10,000 unless set) grows the study past them for
# make bench-scale: participant i is a copy of participant 1 + (i - 1) % 10,000 (its template) under
# its own identity: the same enrolment day, states, consent and reminders, its template's counted
# ledger, standings and weeks (registration's and the response service's RunAdherence rows), and
# responses and audit events in the same proportion. These are written in bulk (generated rows; in
# registration with triggers off, as the sweep would have left them), with the services stopped:
# the caller starts them again. BENCH_RESPONSES_EACH (1 to 15; 15 unless set) is how many
# processed responses each participant has.
#
# The seeded rows are written once and kept (the first run on a database takes a few minutes); the
# backlog is written again whenever a run has processed or removed it. Called by scripts/bench.sh
# and scripts/bench_scale.py with the stack running and BENCHSTUDY launched, on the local
# development database only.
#
# scripts/bench_seed.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. .data/secrets.env

sql() { # database: runs standard input
    PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 55432 -U studystack "studystack_$1" >/dev/null
}
value() { PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -t -A -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 55432 -U studystack "studystack_$1" -c "$2"; }

participants=${BENCH_PARTICIPANTS:-10000}
responses_each=${BENCH_RESPONSES_EACH:-15}
[[ $participants =~ ^[1-9][0-9]*0000$ ]] || die "BENCH_PARTICIPANTS must be a multiple of 10,000 (it is $participants)"
[[ $responses_each =~ ^([1-9]|1[0-5])$ ]] || die "BENCH_RESPONSES_EACH must be from 1 to 15 (it is $responses_each)"
# A database grown further by an earlier make bench-scale is not cut down here (deleting a million
# participants' rows takes longer than starting again): it is said, with what to do.
seeded=$(value registration "SELECT count(*) FROM participants WHERE app_id = 'BENCHAPP' AND email LIKE 'seed-%@bench.invalid'")
[ "$seeded" -le "$participants" ] ||
    die "the databases hold $seeded seeded participants (an earlier make bench-scale), more than the $participants asked for: make clean-data first"

# study-metadata tells the response service about the launched study through its outbox.
for _ in $(seq 1 100); do
    [ "$(value response "SELECT count(*) FROM studies WHERE study_key = 'BENCHSTUDY'")" = 1 ] && break
    sleep 0.2
done
[ "$(value response "SELECT count(*) FROM studies WHERE study_key = 'BENCHSTUDY'")" = 1 ] ||
    die "the response service does not know BENCHSTUDY"
started=$(date +%s)

# --- registration -------------------------------------------------------------------------------
# Earlier runs' own participants (the 500 with sessions for updateActivityState, the participant
# who signs up, the top-ups of runs before the seed), invitations and their e-mails, and the audit
# events of their reads go; the seeded participants are seed-NNNNN@bench.invalid.
sql registration <<'SQL'
BEGIN;
CREATE TEMPORARY TABLE leftovers ON COMMIT DROP AS
SELECT user_id FROM participants
WHERE app_id = 'BENCHAPP' AND (email LIKE '%@bench.invalid' AND email NOT LIKE 'seed-%' OR email LIKE 'bench-%@example.org');
DELETE FROM audit_events WHERE actor IN (SELECT user_id::text FROM leftovers);
DELETE FROM participants WHERE user_id IN (SELECT user_id FROM leftovers);
DELETE FROM invitation_sends WHERE study_id = 'BENCHSTUDY';
DELETE FROM invitations WHERE study_id = 'BENCHSTUDY' AND NOT starts_with(email, 'seed-');
DELETE FROM mail_outbox WHERE app_id = 'BENCHAPP' AND (recipient LIKE '%@bench.invalid' OR recipient LIKE 'bench-%@example.org');
DELETE FROM audit_events WHERE study_id = 'BENCHSTUDY' AND NOT details ? 'benchSeed';
DELETE FROM participant_activities WHERE study_id = 'BENCHSTUDY' AND user_id NOT IN
    (SELECT user_id FROM participants WHERE app_id = 'BENCHAPP' AND email LIKE 'seed-%@bench.invalid');

INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, verified, created_at)
SELECT md5('bench-seed-participant-' || i)::uuid, 'BENCHAPP', 'BENCHORG', format('seed-%s@bench.invalid', lpad(i::text, 5, '0')),
       format('seed-%s@bench.invalid', lpad(i::text, 5, '0')), 'x', true, date_trunc('day', now()) - (i % 60 || ' days')::interval
FROM generate_series(1, 10000) i
ON CONFLICT (user_id) DO NOTHING;
-- Each holds the participant id their app reported (its SHA-256, as the response service keeps it),
-- so every page names them by their number in the study.
INSERT INTO participant_studies (user_id, study_id, status, pseudonym, enrolled_at, completion, adherence, participant_token_hash)
SELECT md5('bench-seed-participant-' || i)::uuid, 'BENCHSTUDY', CASE WHEN i % 50 = 0 THEN 'Withdrawn' ELSE 'inProgress' END,
       md5('bench-seed-pseudonym-' || i)::uuid,
       date_trunc('day', now()) - (i % 60 || ' days')::interval + (i % 1440 || ' minutes')::interval, i % 101, (i * 7) % 101,
       encode(sha256(convert_to('bench-seed-token-' || i, 'UTF8')), 'hex')
FROM generate_series(1, 10000) i
ON CONFLICT (user_id, study_id) DO UPDATE SET pseudonym = excluded.pseudonym, participant_token_hash = excluded.participant_token_hash
WHERE participant_studies.pseudonym IS DISTINCT FROM excluded.pseudonym
   OR participant_studies.participant_token_hash IS DISTINCT FROM excluded.participant_token_hash;
-- The session each signed in with: its access expired an hour after, its refresh good for a month.
INSERT INTO participant_sessions (id, user_id, auth_hash, auth_expires_at, refresh_hash, refresh_expires_at, created_at, last_used_at)
SELECT md5('bench-seed-session-' || i)::uuid, md5('bench-seed-participant-' || i)::uuid,
       encode(sha256(convert_to('bench-seed-auth-' || i, 'UTF8')), 'hex'), enrolled + interval '1 hour',
       encode(sha256(convert_to('bench-seed-refresh-' || i, 'UTF8')), 'hex'), now() + interval '30 days', enrolled, enrolled
FROM generate_series(1, 10000) i
CROSS JOIN LATERAL (SELECT date_trunc('day', now()) - (i % 60 || ' days')::interval + (i % 1440 || ' minutes')::interval AS enrolled) e
ON CONFLICT (id) DO NOTHING;
-- One in ten joined through an e-mail invitation sent two days before. (Their sealed tokens are
-- not real: an invitation that has been used is never opened again.)
INSERT INTO invitations (id, study_id, email, email_key, token_sealed, expires_at, created_by, created_at, last_sent_at,
                         enrolled_at, participant_token_hash, user_id)
SELECT md5('bench-seed-invitation-' || i)::uuid, 'BENCHSTUDY', email, email, decode(md5('bench-seed-invitation-' || i), 'hex'),
       enrolled + interval '12 days', 'admin@studystack.local', enrolled - interval '2 days', enrolled - interval '2 days', enrolled,
       encode(sha256(convert_to('bench-seed-token-' || i, 'UTF8')), 'hex'), md5('bench-seed-participant-' || i)::uuid
FROM generate_series(10, 10000, 10) i
CROSS JOIN LATERAL (SELECT format('seed-%s@bench.invalid', lpad(i::text, 5, '0')) AS email,
                           date_trunc('day', now()) - (i % 60 || ' days')::interval + (i % 1440 || ' minutes')::interval AS enrolled) e
ON CONFLICT (id) DO NOTHING;
-- The reminders of daily30 decided for them so far: one every fourth of its runs (two a day) since
-- they enrolled, up to fifteen; they had no device that takes pushes, or had switched them off.
INSERT INTO run_reminders (user_id, study_id, activity_id, run_id, run_week, local_day, planned_at, decided_at, outcome, devices)
SELECT md5('bench-seed-participant-' || i)::uuid, 'BENCHSTUDY', 'daily30', 1 + 4 * k, date_trunc('week', planned)::date,
       planned::date, planned, planned, CASE WHEN (i + k) % 3 = 0 THEN 'opted_out' ELSE 'no_device' END, 0
FROM generate_series(1, 10000) i CROSS JOIN generate_series(0, 14) k
CROSS JOIN LATERAL (SELECT date_trunc('day', now()) - (i % 60 || ' days')::interval + (i % 1440 || ' minutes')::interval
                           + (4 * k * 12 || ' hours')::interval + interval '45 minutes' AS planned) p
WHERE planned < now()
ON CONFLICT (user_id, study_id, activity_id, run_id) DO NOTHING;
INSERT INTO participant_activities (user_id, study_id, activity_id, activity_version, activity_state, activity_run_id,
                                    runs_total, runs_completed, runs_missed, updated_at)
SELECT md5('bench-seed-participant-' || i)::uuid, 'BENCHSTUDY', activity, '1.0',
       (ARRAY['yetToJoin', 'inProgress', 'completed', 'abandoned'])[1 + (i + a) % 4], ((i + a) % 30)::text,
       30, (i + a) % 30, (i * a) % 5, date_trunc('day', now()) - ((i + a) % 30 || ' days')::interval
FROM generate_series(1, 10000) i
CROSS JOIN LATERAL (SELECT a, CASE WHEN a = 20 THEN 'daily30' ELSE 'a' || a END AS activity FROM generate_series(0, 20) a) activities
ON CONFLICT (user_id, study_id, activity_id) DO NOTHING;
INSERT INTO consent_records (user_id, app_id, study_id, version, status, eligibility, sharing, created_at)
SELECT md5('bench-seed-participant-' || i)::uuid, 'BENCHAPP', 'BENCHSTUDY', '1.0', 'completed', true,
       CASE WHEN i % 3 = 0 THEN 'Not Provided' ELSE 'Provided' END, date_trunc('day', now()) - (i % 60 || ' days')::interval
FROM generate_series(1, 10000) i
WHERE NOT EXISTS (SELECT 1 FROM consent_records c WHERE c.user_id = md5('bench-seed-participant-' || i)::uuid);
INSERT INTO audit_events (at, actor, action, study_id, details)
SELECT date_trunc('day', now()) - (n % 60 || ' days')::interval + (n % 86400 || ' seconds')::interval, actor, action, study,
       details || '{"benchSeed": true}'
FROM (
    SELECT n, md5('bench-seed-participant-' || (1 + n % 10000))::uuid::text AS actor, 'participant.login' AS action,
           NULL AS study, '{}'::jsonb AS details
    FROM generate_series(1, 60000) n
    UNION ALL
    SELECT n, md5('bench-seed-participant-' || (1 + n % 10000))::uuid::text, 'participant.consent', 'BENCHSTUDY',
           '{"version": "1.0", "status": "completed"}'
    FROM generate_series(60001, 70000) n
    UNION ALL
    SELECT n, 'admin@studystack.local', 'participants.identities_read', 'BENCHSTUDY', '{"count": "50", "search": "", "status": ""}'
    FROM generate_series(70001, 72000) n
) seeded
WHERE (SELECT count(*) FROM audit_events WHERE details ? 'benchSeed') = 0;
COMMIT;
SQL

# --- response -----------------------------------------------------------------------------------
# Earlier runs' responses go (their timings with them; SCHEMABENCH's too), and the unused tokens
# of their 100,000-token batches; the seeded participants hold the SHA-256 of bench-seed-token-N,
# and the seeded responses' fingerprints start with seed-.
. scripts/bench_seed_responses.sh
sql response <<SQL
BEGIN;
CREATE TEMPORARY TABLE seed_participants ON COMMIT DROP AS
SELECT i, encode(sha256(convert_to('bench-seed-token-' || i, 'UTF8')), 'hex') AS token_hash FROM generate_series(1, 10000) i;
INSERT INTO participants (study_key, app_token_hash, status, allow_data_sharing, enrolled_at)
SELECT 'BENCHSTUDY', token_hash, 'enrolled', CASE WHEN i % 3 = 0 THEN 'false' ELSE 'true' END,
       date_trunc('day', now()) - (i % 60 || ' days')::interval
FROM seed_participants ORDER BY i
ON CONFLICT (app_token_hash) DO NOTHING;
-- Enrolled by the app token they hold, as the service enrols (registration names them by it).
UPDATE participants SET enrolled_token_sha256 = app_token_hash
WHERE study_key = 'BENCHSTUDY' AND enrolled_token_sha256 IS NULL AND app_token_hash IN (SELECT token_hash FROM seed_participants);
CREATE TEMPORARY TABLE seeded ON COMMIT DROP AS
SELECT s.i, p.id FROM seed_participants s JOIN participants p ON p.app_token_hash = s.token_hash;
DELETE FROM responses WHERE study_key = 'BENCHSTUDY' AND NOT starts_with(fingerprint, 'seed-');
-- The schema app's benchmark study (scripts/bench_schema.sh) keeps none of its POSTs either, nor
-- the participants its enrolment run made (its 1,000 participants, U0000000 to U0000999, stay).
-- (Its tables are emptied first: a run whose processing reached its POSTs filled them.)
SET LOCAL client_min_messages = warning;
DO \$\$
DECLARE t record;
BEGIN
    FOR t IN SELECT s.schema_name, l.sql_name FROM response_lists l JOIN study_schemas s ON s.study_key = l.study_key
             WHERE l.study_key = 'SCHEMABENCH' LOOP
        EXECUTE format('TRUNCATE %I.%I CASCADE', t.schema_name, t.sql_name);
    END LOOP;
END
\$\$;
DELETE FROM responses WHERE study_key = 'SCHEMABENCH';
DELETE FROM audit_events WHERE study_id = 'SCHEMABENCH';
DELETE FROM participants WHERE study_key = 'SCHEMABENCH' AND external_id NOT LIKE 'U%';
DELETE FROM responses WHERE study_key = 'BENCHSTUDY' AND starts_with(fingerprint, 'seed-backlog-') AND status <> 'pending';
DELETE FROM enrollment_tokens WHERE participant_id IS NULL
    AND batch_id IN (SELECT id FROM token_batches WHERE study_key = 'BENCHSTUDY');
DELETE FROM audit_events WHERE study_id = 'BENCHSTUDY' AND NOT details ? 'benchSeed';
-- BENCH_RESPONSES_EACH daily30 responses a participant over the last 60 days (a run asking for
-- fewer than an earlier one removes the rest), processed, with their timings; then the backlog.
-- Timings an earlier seed gave positive keys are moved to the negated response id first.
DELETE FROM responses WHERE study_key = 'BENCHSTUDY' AND fingerprint ~ '^seed-[0-9]+\$'
    AND substr(fingerprint, 6)::bigint % 15 >= $responses_each;
UPDATE response_metadata m SET top_key = -m.top_key FROM responses r
WHERE m.response_id = r.id AND m.top_key = r.id AND m.top_key > 0 AND r.study_key = 'BENCHSTUDY'
  AND starts_with(r.fingerprint, 'seed-') AND NOT starts_with(r.fingerprint, 'seed-backlog-');
$(seeded_responses_sql seeded "$responses_each")
INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, metadata, data,
                       fingerprint, received_at)
SELECT s.id, 'BENCHSTUDY', 'daily30', '1.0', 'seed-backlog-' || s.i,
       jsonb_build_object('activityId', 'daily30', 'version', '1.0', 'activityRunId', 'seed-backlog-' || s.i), '$seed_answers'::jsonb,
       'seed-backlog-' || s.i, now() - (s.i || ' seconds')::interval
FROM seeded s WHERE s.i % 2 = 0
ON CONFLICT (participant_id, fingerprint) DO NOTHING;
INSERT INTO audit_events (at, actor, action, study_id, details)
SELECT date_trunc('day', now()) - (i % 60 || ' days')::interval, 'participant:' || id, 'participant.enrolled', 'BENCHSTUDY',
       '{"benchSeed": true}'
FROM seeded WHERE (SELECT count(*) FROM audit_events WHERE details ? 'benchSeed') = 0;
COMMIT;
SQL

# --- study-metadata -------------------------------------------------------------------------------
sql metadata <<'SQL'
INSERT INTO audit_events (at, actor, action, study_id, details)
SELECT date_trunc('day', now()) - (n % 60 || ' days')::interval + (n % 86400 || ' seconds')::interval, 'admin@studystack.local',
       CASE WHEN n % 5 = 0 THEN 'study.draft_saved' ELSE 'admin.login' END, CASE WHEN n % 5 = 0 THEN 'BENCHSTUDY' END,
       '{"benchSeed": true}'
FROM generate_series(1, 1000) n
WHERE (SELECT count(*) FROM audit_events WHERE details ? 'benchSeed') = 0;
SQL

# --- the services' own work on what was seeded -----------------------------------------------------
# The services count the seeded participants (their ledgers, standings and weeks, the weeks
# delivered to the response service) and read their responses' arrivals. That is waited for at
# every size: on a fresh database it ran under make bench's first measurements, which were the
# count's as much as their own.
pending_work() {
    echo "$(value registration "SELECT count(*) FROM participant_run_ledgers l JOIN participant_studies ps USING (user_id, study_id)
        WHERE l.study_id = 'BENCHSTUDY' AND ps.participant_token_hash IS NOT NULL
          AND (l.counted_at IS NULL OR l.weeks_sent_to IS DISTINCT FROM ps.participant_token_hash)") ledgers," \
        "$(value registration "SELECT count(*) FROM internal_outbox WHERE delivered_at IS NULL AND gave_up_at IS NULL") deliveries," \
        "$(value registration "SELECT CASE WHEN settled_through >= $(value response "SELECT coalesce(max(id), 0) FROM responses WHERE study_key = 'BENCHSTUDY'") THEN 0 ELSE 1 END FROM response_feed_position WHERE feed = 'responses'") feed"
}
if [ "$(pending_work)" != "0 ledgers, 0 deliveries, 0 feed" ]; then
    log "waiting for the services to count the seeded participants and deliver their weeks"
    deadline=$((SECONDS + 1800))
    until [ "$(pending_work)" = "0 ledgers, 0 deliveries, 0 feed" ]; do
        [ $SECONDS -lt $deadline ] || die "the seeded participants were not counted and delivered within 30 minutes ($(pending_work) to go)"
        sleep 1
    done
fi

# --- past the first 10,000 (make bench-scale) --------------------------------------------------------
# The services stop and the rest are copied from the first 10,000 (scripts/bench_seed_grow.sh);
# the caller starts the services again.
grown=$(value registration "SELECT count(*) FROM participants WHERE app_id = 'BENCHAPP' AND email LIKE 'seed-%@bench.invalid'")
if [ "$grown" -lt "$participants" ]; then
    data="$PWD/.data"
    . scripts/services.sh
    for name in console response registration study-metadata; do stop_process "$name"; done
    scripts/bench_seed_grow.sh "$grown" "$participants" "$responses_each"
fi

. scripts/bench_stack.sh
bench_quiesce
log "the database is BENCHSTUDY's second month (seeded in $(($(date +%s) - started)) s)"
