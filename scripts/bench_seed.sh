#!/usr/bin/env bash
# make bench, the database it measures on: BENCHSTUDY in its second month (docs/operations.md,
# "The benchmark's database"). A bench on a fresh database flatters, and one on whatever earlier
# runs left cannot be repeated; so each run first removes what earlier runs of the benchmark left
# and writes the seeded rows that are missing, the same rows every time (every value derives from
# a row number; nothing is random):
#
#   registration  10,000 participants enrolled in BENCHSTUDY over 60 days, each with 21 activity
#                 states (210,000) and a consent record; 72,000 audit events (sign-ins, consents,
#                 admins reading identities)
#   response      the same 10,000 participants; 150,000 processed daily30 responses (15 each, the
#                 30 answers of bench/response-30.json) with their 4,500,000 answer timings;
#                 a backlog of 5,000 pending responses; 10,000 audit events
#   study-metadata  1,000 audit events (admins signing in, saving drafts)
#
# The seeded rows are written once and kept (the first run on a database takes a few minutes); the
# backlog is written again whenever a run has processed or removed it. Called by scripts/bench.sh
# with the stack running and BENCHSTUDY launched, on the local development database only.
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
DELETE FROM invitations WHERE study_id = 'BENCHSTUDY';
DELETE FROM mail_outbox WHERE app_id = 'BENCHAPP' AND (recipient LIKE '%@bench.invalid' OR recipient LIKE 'bench-%@example.org');
DELETE FROM audit_events WHERE study_id = 'BENCHSTUDY' AND NOT details ? 'benchSeed';
DELETE FROM participant_activities WHERE study_id = 'BENCHSTUDY' AND user_id NOT IN
    (SELECT user_id FROM participants WHERE app_id = 'BENCHAPP' AND email LIKE 'seed-%@bench.invalid');

INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, verified, created_at)
SELECT md5('bench-seed-participant-' || i)::uuid, 'BENCHAPP', 'BENCHORG', format('seed-%s@bench.invalid', lpad(i::text, 5, '0')),
       format('seed-%s@bench.invalid', lpad(i::text, 5, '0')), 'x', true, date_trunc('day', now()) - (i % 60 || ' days')::interval
FROM generate_series(1, 10000) i
ON CONFLICT (user_id) DO NOTHING;
INSERT INTO participant_studies (user_id, study_id, status, pseudonym, enrolled_at, completion, adherence)
SELECT md5('bench-seed-participant-' || i)::uuid, 'BENCHSTUDY', CASE WHEN i % 50 = 0 THEN 'Withdrawn' ELSE 'inProgress' END,
       md5('bench-seed-pseudonym-' || i)::uuid,
       date_trunc('day', now()) - (i % 60 || ' days')::interval + (i % 1440 || ' minutes')::interval, i % 101, (i * 7) % 101
FROM generate_series(1, 10000) i
ON CONFLICT (user_id, study_id) DO UPDATE SET pseudonym = excluded.pseudonym
WHERE participant_studies.pseudonym IS DISTINCT FROM excluded.pseudonym;
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
answers=$(python3 -c "import json; print(json.dumps(json.load(open('bench/response-30.json')), separators=(',', ':')))")
sql response <<SQL
BEGIN;
CREATE TEMPORARY TABLE seed_participants ON COMMIT DROP AS
SELECT i, encode(sha256(convert_to('bench-seed-token-' || i, 'UTF8')), 'hex') AS token_hash FROM generate_series(1, 10000) i;
INSERT INTO participants (study_key, app_token_hash, status, allow_data_sharing, enrolled_at)
SELECT 'BENCHSTUDY', token_hash, 'enrolled', CASE WHEN i % 3 = 0 THEN 'false' ELSE 'true' END,
       date_trunc('day', now()) - (i % 60 || ' days')::interval
FROM seed_participants ORDER BY i
ON CONFLICT (app_token_hash) DO NOTHING;
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
-- Fifteen daily30 responses a participant over the last 60 days, processed; then the backlog.
INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, metadata, data,
                       fingerprint, status, received_at, processed_at)
SELECT s.id, 'BENCHSTUDY', 'daily30', '1.0', 'seed-' || r,
       jsonb_build_object('activityId', 'daily30', 'version', '1.0', 'activityRunId', 'seed-' || r), '$answers'::jsonb,
       'seed-' || r, 'processed', now() - (r * 37 % 5184000 || ' seconds')::interval,
       now() - (r * 37 % 5184000 || ' seconds')::interval + interval '2 seconds'
FROM seeded s CROSS JOIN generate_series(0, 14) k CROSS JOIN LATERAL (SELECT s.i * 15 + k AS r) run
ON CONFLICT (participant_id, fingerprint) DO NOTHING;
INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, metadata, data,
                       fingerprint, received_at)
SELECT s.id, 'BENCHSTUDY', 'daily30', '1.0', 'seed-backlog-' || s.i,
       jsonb_build_object('activityId', 'daily30', 'version', '1.0', 'activityRunId', 'seed-backlog-' || s.i), '$answers'::jsonb,
       'seed-backlog-' || s.i, now() - (s.i || ' seconds')::interval
FROM seeded s WHERE s.i % 2 = 0
ON CONFLICT (participant_id, fingerprint) DO NOTHING;
-- The processed responses' answer timings, thirty each, written with their responses. Their rows
-- of daily30 are not seeded (the table is made when the first response is processed), so each
-- names the negated response id as its row: no key of a row processing writes (a key of an
-- identity column is positive), which the processing benchmark's check reads back.
-- Timings an earlier seed gave positive keys are moved there first.
UPDATE response_metadata m SET top_key = -m.top_key FROM responses r
WHERE m.response_id = r.id AND m.top_key = r.id AND m.top_key > 0 AND r.study_key = 'BENCHSTUDY'
  AND starts_with(r.fingerprint, 'seed-') AND NOT starts_with(r.fingerprint, 'seed-backlog-');
INSERT INTO response_metadata (response_id, participant_id, list_name, top_key, field_name, start_time, end_time, skipped)
SELECT r.id, r.participant_id, 'daily30', -r.id, 'q' || q, r.received_at - ((30 - q) * 20 || ' seconds')::interval,
       r.received_at - ((29 - q) * 20 || ' seconds')::interval, q % 11 = 0
FROM responses r CROSS JOIN generate_series(0, 29) q
WHERE r.study_key = 'BENCHSTUDY' AND starts_with(r.fingerprint, 'seed-') AND NOT starts_with(r.fingerprint, 'seed-backlog-')
  AND NOT EXISTS (SELECT 1 FROM response_metadata m WHERE m.response_id = r.id);
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

# What was deleted vacuumed and what was written counted, as autovacuum would soon after.
for db in registration response metadata; do
    as_pg psql -X -q -v ON_ERROR_STOP=1 -h "$PWD/.data/postgres/run" -p 55432 -U postgres -d "studystack_$db" -c "VACUUM ANALYZE"
done
# What the seed wrote is written back to disk now, and autovacuum (woken by the rows the seed
# changed) has finished, so that neither runs under the first measurements: a ratio of two wrk
# runs is only fair when the machine does the same beside both.
as_pg psql -X -q -v ON_ERROR_STOP=1 -h "$PWD/.data/postgres/run" -p 55432 -U postgres -d postgres -c CHECKPOINT
for _ in $(seq 1 600); do
    busy=$(as_pg psql -X -q -t -A -h "$PWD/.data/postgres/run" -p 55432 -U postgres -d postgres \
        -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")
    [ "$busy" = 0 ] && break
    sleep 0.1
done
[ "$busy" = 0 ] || log "warning: autovacuum was still running after 60 s; the first measurements share the machine with it"
log "the database is BENCHSTUDY's second month (seeded in $(($(date +%s) - started)) s)"
