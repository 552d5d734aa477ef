#!/usr/bin/env bash
# make bench-scale's databases past the first 10,000 participants (scripts/bench_seed.sh): grows
# BENCHSTUDY from FROM to TO participants, participant i a copy of its template, participant
# 1 + (i - 1) % 10,000, under its own identity (account, e-mail address, session, pseudonym, app
# token): the same enrolment day, activity states, consent, invitation and reminder decisions, the
# template's ledger, standings and weeks as registration's sweep counted them, the response
# service's RunAdherence rows of the template, and RESPONSES processed daily30 responses with
# their answer timings. Registration's rows are written with its triggers off (as postgres, with
# session_replication_role = replica): with them on, each new participant's ledger would be due
# and the sweep would count a million participants again before anything could be measured; what
# the triggers would have written (completions of the runs their states report, the study's weekly
# sums and kept counts) is written here instead. The responses' arrivals are copied into
# registration as its feed reader writes them, and the feed's position moved past them.
#
# Run by scripts/bench_seed.sh with the services stopped and PostgreSQL running, once the first
# 10,000 have been counted and their weeks delivered.
#
# scripts/bench_seed_grow.sh FROM TO RESPONSES
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. .data/secrets.env
from=$1 to=$2 responses_each=$3

rsql() { PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -t -A -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 55432 -U studystack studystack_response "$@"; }
superuser() { as_pg psql -q -X -t -A -v ON_ERROR_STOP=1 -h "$PWD/.data/postgres/run" -p 55432 -U postgres -d "studystack_$1" "${@:2}"; }
started=$(date +%s)
log "growing BENCHSTUDY from $from to $to participants ($responses_each responses each)"

# --- response -----------------------------------------------------------------------------------
# The participants (numbered by the study's counter as they are written, in order), their
# responses, the responses' timings and their templates' RunAdherence weeks.
. scripts/bench_seed_responses.sh
adherence=$(rsql -c "SELECT quote_ident(s.schema_name) || '.' || quote_ident(l.sql_name) FROM response_lists l
    JOIN study_schemas s ON s.study_key = l.study_key WHERE l.study_key = 'BENCHSTUDY' AND l.name = 'RunAdherence'")
[ -n "$adherence" ] || die "BENCHSTUDY has no RunAdherence table: the first 10,000 participants' weeks were not delivered"
superuser response <<SQL
BEGIN;
CREATE TEMPORARY TABLE grown ON COMMIT DROP AS
SELECT i, 1 + (i - 1) % 10000 AS j, encode(sha256(convert_to('bench-seed-token-' || i, 'UTF8')), 'hex') AS token_hash
FROM generate_series($from + 1, $to) i;
-- Numbered here, in order after the study's last, and the study's counter moved past them once:
-- participants_number takes a number per row from the counter's one row, and a million updates
-- of one row in one transaction leave a chain of its versions that each next update walks.
SET LOCAL session_replication_role = replica;
INSERT INTO participants (study_key, app_token_hash, enrolled_token_sha256, status, allow_data_sharing, enrolled_at, number)
SELECT 'BENCHSTUDY', token_hash, token_hash, 'enrolled', CASE WHEN j % 3 = 0 THEN 'false' ELSE 'true' END,
       date_trunc('day', now()) - (j % 60 || ' days')::interval,
       (SELECT last_number FROM participant_counters WHERE study_key = 'BENCHSTUDY') + row_number() OVER (ORDER BY i)
FROM grown WHERE NOT EXISTS (SELECT 1 FROM participants p WHERE p.app_token_hash = grown.token_hash) ORDER BY i;
UPDATE participant_counters SET last_number = (SELECT max(number) FROM participants WHERE study_key = 'BENCHSTUDY')
WHERE study_key = 'BENCHSTUDY';
SET LOCAL session_replication_role = origin;
CREATE TEMPORARY TABLE grown_ids ON COMMIT DROP AS
SELECT g.i, g.j, p.id, p.number, t.number AS template_number
FROM grown g JOIN participants p ON p.app_token_hash = g.token_hash
JOIN participants t ON t.app_token_hash = encode(sha256(convert_to('bench-seed-token-' || g.j, 'UTF8')), 'hex');
$(seeded_responses_sql grown_ids "$responses_each")
INSERT INTO $adherence ("ParticipantId", "ActivityId", "Week", "RunsOpened", "RunsCompleted", "RunsMissed", "RunsExpired",
                        "RunsNotStored", "CountedAt")
SELECT g.number, a."ActivityId", a."Week", a."RunsOpened", a."RunsCompleted", a."RunsMissed", a."RunsExpired", a."RunsNotStored",
       a."CountedAt"
FROM grown_ids g JOIN $adherence a ON a."ParticipantId" = g.template_number
ON CONFLICT ("ParticipantId", "ActivityId", "Week") DO NOTHING;
INSERT INTO audit_events (at, actor, action, study_id, details)
SELECT date_trunc('day', now()) - (j % 60 || ' days')::interval, 'participant:' || id, 'participant.enrolled', 'BENCHSTUDY',
       '{"benchSeed": true}'
FROM grown_ids;
COMMIT;
SQL
log "response: grown in $(($(date +%s) - started)) s"

# The responses' arrivals, as registration's feed reader keeps them (their run ids are not numbers,
# so none names a run, and they carry no finishing time), copied into registration with the
# rest, in its transaction, and the feed's position moved past them.
arrivals=$(mktemp)
trap 'rm -f "$arrivals"' EXIT
chmod 644 "$arrivals"
rsql -c "COPY (SELECT r.id, 'BENCHSTUDY', p.app_token_hash, r.activity_id, r.received_at
    FROM generate_series($from + 1, $to) i
    JOIN participants p ON p.app_token_hash = encode(sha256(convert_to('bench-seed-token-' || i, 'UTF8')), 'hex')
    JOIN responses r ON r.participant_id = p.id AND starts_with(r.fingerprint, 'seed-')) TO STDOUT" >"$arrivals"
settled=$(rsql -c "SELECT max(id) FROM responses")

# --- registration -------------------------------------------------------------------------------
superuser registration <<SQL
BEGIN;
SET LOCAL session_replication_role = replica;
CREATE TEMPORARY TABLE grow_map ON COMMIT DROP AS
SELECT i, j, md5('bench-seed-participant-' || i)::uuid AS user_id, md5('bench-seed-participant-' || j)::uuid AS template,
       encode(sha256(convert_to('bench-seed-token-' || i, 'UTF8')), 'hex') AS token_hash,
       format('seed-%s@bench.invalid', lpad(i::text, greatest(5, length(i::text)), '0')) AS email,
       date_trunc('day', now()) - (j % 60 || ' days')::interval + (j % 1440 || ' minutes')::interval AS enrolled
FROM generate_series($from + 1, $to) i CROSS JOIN LATERAL (SELECT 1 + (i - 1) % 10000 AS j) t;
CREATE INDEX ON grow_map (template);
ANALYZE grow_map;
INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, verified, created_at)
SELECT user_id, 'BENCHAPP', 'BENCHORG', email, email, 'x', true, date_trunc('day', now()) - (j % 60 || ' days')::interval
FROM grow_map ON CONFLICT (user_id) DO NOTHING;
INSERT INTO participant_studies (user_id, study_id, status, pseudonym, enrolled_at, completion, adherence, participant_token_hash)
SELECT user_id, 'BENCHSTUDY', CASE WHEN j % 50 = 0 THEN 'Withdrawn' ELSE 'inProgress' END, md5('bench-seed-pseudonym-' || i)::uuid,
       enrolled, j % 101, (j * 7) % 101, token_hash
FROM grow_map ON CONFLICT (user_id, study_id) DO NOTHING;
INSERT INTO participant_sessions (id, user_id, auth_hash, auth_expires_at, refresh_hash, refresh_expires_at, created_at, last_used_at)
SELECT md5('bench-seed-session-' || i)::uuid, user_id, encode(sha256(convert_to('bench-seed-auth-' || i, 'UTF8')), 'hex'),
       enrolled + interval '1 hour', encode(sha256(convert_to('bench-seed-refresh-' || i, 'UTF8')), 'hex'),
       now() + interval '30 days', enrolled, enrolled
FROM grow_map ON CONFLICT (id) DO NOTHING;
-- Every column of the template's row but the participant's own (so a column added later is
-- copied too), from the template's rows matching CONDITION.
CREATE FUNCTION pg_temp.copy_from_templates(copied text, overrides jsonb, skipped text[] DEFAULT '{}', condition text DEFAULT 'true')
RETURNS void LANGUAGE plpgsql AS '
BEGIN
    EXECUTE (
        SELECT format(''INSERT INTO %I (%s) SELECT %s FROM grow_map m JOIN %I t ON t.user_id = m.template AND t.study_id = %L''
                      || '' AND %s ON CONFLICT DO NOTHING'',
                      copied, string_agg(quote_ident(column_name), '', '' ORDER BY ordinal_position),
                      string_agg(coalesce(overrides ->> column_name, ''t.'' || quote_ident(column_name)), '', '' ORDER BY ordinal_position),
                      copied, ''BENCHSTUDY'', condition)
        FROM information_schema.columns
        WHERE table_schema = ''public'' AND table_name = copied AND column_name <> ALL (skipped));
END';
SELECT pg_temp.copy_from_templates('participant_activities', '{"user_id": "m.user_id"}');
-- What participant_activities_completed would have recorded: the numbered runs reported completed.
SELECT pg_temp.copy_from_templates('participant_run_completions', '{"user_id": "m.user_id"}');
-- Linked to the participant's app, as consent_records_link links a record.
SELECT pg_temp.copy_from_templates('consent_records', '{"user_id": "m.user_id", "participant_token_hash": "m.token_hash"}', '{id}');
INSERT INTO invitations (id, study_id, email, email_key, token_sealed, expires_at, created_by, created_at, last_sent_at,
                         enrolled_at, participant_token_hash, user_id)
SELECT md5('bench-seed-invitation-' || i)::uuid, 'BENCHSTUDY', email, email, decode(md5('bench-seed-invitation-' || i), 'hex'),
       enrolled + interval '12 days', 'admin@studystack.local', enrolled - interval '2 days', enrolled - interval '2 days', enrolled,
       token_hash, user_id
FROM grow_map WHERE i % 10 = 0 ON CONFLICT (id) DO NOTHING;
-- Decisions without a push (a pushed one names its push).
SELECT pg_temp.copy_from_templates('run_reminders', '{"user_id": "m.user_id"}', '{id}', 't.outcome <> ''queued''');
-- The ledger's weeks were sent under the participant's own app token.
SELECT pg_temp.copy_from_templates('participant_run_ledgers', '{"user_id": "m.user_id", "weeks_sent_to": "m.token_hash"}');
SELECT pg_temp.copy_from_templates('participant_activity_standings', '{"user_id": "m.user_id"}');
SELECT pg_temp.copy_from_templates('participant_run_weeks', '{"user_id": "m.user_id"}');
-- The study's weekly sums, as participant_run_weeks_summed keeps them, counted again whole.
DELETE FROM study_run_weeks WHERE study_id = 'BENCHSTUDY';
DO \$\$
BEGIN
    EXECUTE (
        SELECT format('INSERT INTO study_run_weeks (study_id, activity_id, week, shard, %s)'
                      || ' SELECT study_id, activity_id, week, tally_shard(user_id), %s'
                      || ' FROM participant_run_weeks WHERE study_id = %L GROUP BY 1, 2, 3, 4',
                      string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position),
                      string_agg('sum(' || quote_ident(column_name) || ')', ', ' ORDER BY ordinal_position), 'BENCHSTUDY')
        FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name = 'study_run_weeks' AND column_name NOT IN ('study_id', 'activity_id', 'week', 'shard'));
END
\$\$;
-- The reminders decided per week of their runs, as run_reminders_summed keeps them.
DELETE FROM study_reminder_weeks WHERE study_id = 'BENCHSTUDY';
INSERT INTO study_reminder_weeks (study_id, activity_id, week, shard, pushed, not_pushed)
SELECT study_id, activity_id, run_week, tally_shard(user_id), count(*) FILTER (WHERE outcome = 'queued'),
       count(*) FILTER (WHERE outcome <> 'queued')
FROM run_reminders WHERE study_id = 'BENCHSTUDY' GROUP BY 1, 2, 3, 4;
-- The study's kept counts (its adherence, who owes a signature, its enrolment days, its sites'
-- invitations and members, the devices a message reaches), made again from its rows.
SELECT recount_study_tallies('BENCHSTUDY');
SELECT recount_site_counts('BENCHSTUDY');
SELECT recount_audience_devices('BENCHSTUDY');
CREATE TEMPORARY TABLE arrived (LIKE response_arrivals) ON COMMIT DROP;
\\copy arrived (response_id, study_id, participant_token_hash, activity_id, received_at) FROM '$arrivals'
-- The answers to date questions each carried, as the feed reader keeps them: the template's.
UPDATE arrived SET date_answers = (SELECT date_answers FROM response_arrivals
                                   WHERE study_id = 'BENCHSTUDY' AND activity_id = 'daily30' ORDER BY response_id LIMIT 1);
INSERT INTO response_arrivals SELECT * FROM arrived ON CONFLICT (response_id) DO NOTHING;
UPDATE response_feed_position SET settled_through = greatest(settled_through, $settled) WHERE feed = 'responses';
INSERT INTO audit_events (at, actor, action, study_id, details)
SELECT m.enrolled + (n || ' days')::interval, m.user_id::text, CASE WHEN n = 6 THEN 'participant.consent' ELSE 'participant.login' END,
       CASE WHEN n = 6 THEN 'BENCHSTUDY' END,
       CASE WHEN n = 6 THEN '{"version": "1.0", "status": "completed", "benchSeed": true}' ELSE '{"benchSeed": true}' END::jsonb
FROM grow_map m CROSS JOIN generate_series(0, 6) n
UNION ALL
SELECT m.enrolled, 'admin@studystack.local', 'participants.identities_read', 'BENCHSTUDY',
       '{"count": "50", "search": "", "status": "", "benchSeed": true}'
FROM grow_map m WHERE m.i % 5 = 0;
COMMIT;
SQL
log "registration: grown in $(($(date +%s) - started)) s"

log "BENCHSTUDY grown to $to participants in $(($(date +%s) - started)) s"
