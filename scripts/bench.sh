#!/usr/bin/env bash
# make bench: start the stack, publish a realistic study (20 activities, 200 steps), bring the
# databases to that study's second month (scripts/bench_seed.sh; BENCH_SEED=0 runs on whatever is
# there, a fresh database included, and the report says which), and drive
# the study-metadata app API and /healthz of the same service with wrk in one run, and the
# console's heaviest page (an activity with every response type) beside the admin API call under it; then the
# registration service: login (bounded by bcrypt) and updateActivityState beside its /healthz, the
# admin participants list of a 10,000-participant study, and inviting 1,000 people from one CSV;
# then a 100,000-token batch on the response service and processResponse with a 30-answer
# response beside pgbench running the same database work (bench/pgbench-response.sql, and again
# with the answers as constants, as it was first written), then the
# processing rate with one and two replicas beside pgbench doing the same inserts
# (scripts/bench_processing.sh), the data grid, the exports' first byte and the LabKey API over a
# 100,000-row table; the schema app's
# receiver beside the schema project's demo_post.php; then measure the database ceiling
# with pgbench; the JSON Schema validator beside Python's jsonschema; the schedule engine
# expanding a year of runs for 100,000 participants beside PostgreSQL; and last the reminder
# sweep's read through its index beside the same read by scan. Prints requests/s,
# p50 and p99, the ratios, the main ratios before and after, and every page a person waits on at
# a team's concurrency.
# The stack is restarted with the per-address rate limit lifted: wrk sends everything from one
# address.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

# The report (what this prints) is kept in bench/results/, named by when it ran and the commit it
# measured, with the machine it ran on: the docs point there rather than quote a day's figures.
mkdir -p bench/results
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
report="bench/results/$(date -u +%Y-%m-%dT%H%MZ)-$commit.txt"
{
    echo "make bench at $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $commit$(git diff --quiet HEAD 2>/dev/null || echo ' with uncommitted changes')"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -m), $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo
} >"$report"
exec > >(tee -a "$report")
# Only a whole run's report is kept: one that stopped halfway would read as results.
finished=
trap '[ -n "$finished" ] || { rm -f "$report"; log "make bench stopped before its end: no report kept"; }' EXIT

ensure_commands wrk:wrk pgbench:postgresql-contrib python3:python3 curl:curl
. scripts/bench_stack.sh
bench_stack_start
duration=${BENCH_SECONDS:-10}
connections=${BENCH_CONNECTIONS:-64}

results=$(mktemp)

# A team of eight, each signed in on their own: the lines at a team's concurrency that reach the
# registration and response services send each request with the next of their tokens, so the
# checks a service shares between one person's requests arriving together (docs/architecture.md,
# Admin tokens across services) are not shared across people.
team_connections=8
team_tokens=()
for _ in $(seq 1 "$team_connections"); do
    team_tokens+=("Bearer $(curl -sf "$base/admin/v1/login" -H 'Content-Type: application/json' \
        -d "{\"email\":\"$STUDYSTACK_ADMIN_EMAIL\",\"password\":\"$STUDYSTACK_ADMIN_PASSWORD\"}" | json '["token"]')")
done
# A wrk script sending each request with the next of the team's tokens: wrk's two threads take
# half of them each and go round their half request by request.
team_auth="$results.team.lua"
{
    echo 'local made = 0'
    echo 'function setup(thread) thread:set("id", made); made = made + 1 end'
    printf 'local values = {'
    printf '"%s",' "${team_tokens[@]}"
    echo '}'
    echo 'local sent = 0'
    echo 'function request()'
    echo '  local half = math.floor(#values / 2)'
    echo '  sent = sent + 1'
    echo '  return wrk.format(nil, nil, {["Authorization"] = values[(id or 0) * half + (sent % half) + 1]})'
    echo 'end'
} >"$team_auth"

# --- the database this run starts on ---------------------------------------------------------------
# A bench on a fresh database flatters, and one on whatever earlier runs left cannot be repeated:
# unless BENCH_SEED=0, the databases are first brought to BENCHSTUDY's second month
# (scripts/bench_seed.sh: the same seeded participants, responses, backlog and audit events every
# run, earlier runs' leftovers removed). Each report says which state it ran on and what it held.
seeded=false
if [ "${BENCH_SEED:-1}" != 0 ]; then
    scripts/bench_seed.sh
    seeded=true
fi
dbvalue() { PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -t -A -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 55432 -U studystack "$1" -c "$2"; }
metadata_state=$(dbvalue studystack_metadata "SELECT (SELECT count(*) FROM studies) || ' studies, '
    || (SELECT count(*) FROM audit_events) || ' audit events, ' || pg_size_pretty(pg_database_size(current_database()))")
registration_state=$(dbvalue studystack_registration "SELECT (SELECT count(*) FROM participant_studies) || ' enrolments, '
    || (SELECT count(*) FROM participant_activities) || ' activity states, ' || (SELECT count(*) FROM consent_records)
    || ' consent records, ' || (SELECT count(*) FROM audit_events) || ' audit events, '
    || pg_size_pretty(pg_database_size(current_database()))")
response_state=$(dbvalue studystack_response "SELECT (SELECT count(*) FROM responses) || ' responses ('
    || (SELECT count(*) FROM responses WHERE status = 'pending') || ' pending), ' || (SELECT count(*) FROM sage_archives)
    || ' Sage archives, ' || (SELECT count(*) FROM audit_events) || ' audit events, '
    || pg_size_pretty(pg_database_size(current_database()))")
if [ "$seeded" = true ]; then
    echo "the databases at the start: seeded, BENCHSTUDY in its second month (scripts/bench_seed.sh; docs/operations.md)"
elif [ "$(dbvalue studystack_response 'SELECT count(*) FROM responses')" = 0 ]; then
    echo "the databases at the start: fresh (BENCH_SEED=0, no response stored yet)"
else
    echo "the databases at the start: in use, not seeded (BENCH_SEED=0; earlier runs' data kept, this run adds to it)"
fi
echo "  study-metadata: $metadata_state"
echo "  registration: $registration_state"
echo "  response: $response_state"
echo
# The app API beside /healthz in three rounds, each endpoint for half the duration in turn: a
# ratio of two runs taken once each moved by a tenth or more between runs on a shared 2-core
# machine (whatever else the machine did during one of them); the report takes each round's
# ratio and prints their median and range.
app_rounds=3
run_wrk() { # name url round
    log "wrk: $1, round $3 of $app_rounds (${connections} connections, $((duration / 2))s)"
    wrk -t2 -c"$connections" -d"$((duration / 2))s" --latency "${app_headers[@]}" "$2" >"$results.$1.$3"
}
for round in $(seq 1 "$app_rounds"); do
    run_wrk healthz "$base/healthz" "$round"
    run_wrk activityList "$base/StudyMetaData/activityList?studyId=BENCHSTUDY" "$round"
    run_wrk activity "$base/StudyMetaData/activity?studyId=BENCHSTUDY&activityId=a7" "$round"
done

# --- the console: the study builder's heaviest pages, through the admin APIs ---------------------
# DEMOSTUDY's daily activity has a question of every response type and a form. Its page reads the
# study's summary (with the admin's role) from study-metadata, and the draft unless the draft at
# that revision was read before, then draws the activity's schedule and its 17 steps; the step
# page of its longest choice question draws one step whole. Every console page makes the summary
# call with the admin's token, so that call alone is measured too: it is the floor under them.
console=http://127.0.0.1:8080
jar=$(mktemp)
csrf=$(curl -s -c "$jar" -b "$jar" "$console/signin" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -n 1)
curl -s -o /dev/null -c "$jar" -b "$jar" --data-urlencode "csrf=$csrf" --data-urlencode "email=$STUDYSTACK_ADMIN_EMAIL" \
    --data-urlencode "password=$STUDYSTACK_ADMIN_PASSWORD" "$console/signin"
session=$(awk -F'\t' '$6 == "studystack_session" {print $6 "=" $7}' "$jar")
rm -f "$jar"
[ -n "$session" ] || die "could not sign in to the console"
# Each at 64 connections (the pages flat out, all sharing two cores with study-metadata and
# PostgreSQL) and at the concurrency of a team of coordinators: eight of them waiting on a page
# at the same instant, which a study team working in the console hardly reaches.
run_console() { # name path
    local page="$console$2"
    [ "$(curl -s -o "$results.$1-page" -w '%{http_code}' -H "Cookie: $session" "$page")" = 200 ] ||
        die "the console does not serve $page"
    log "wrk: console $page (${connections} connections, ${duration}s; $(wc -c <"$results.$1-page") bytes)"
    wrk -t2 -c"$connections" -d"${duration}s" --latency -H "Cookie: $session" "$page" >"$results.$1"
    log "wrk: console $page (${team_connections} connections, ${duration}s)"
    wrk -t2 -c"$team_connections" -d"${duration}s" --latency -H "Cookie: $session" "$page" >"$results.$1-team"
    wc -c <"$results.$1-page" >"$results.$1-bytes"
}
run_console console /studies/DEMOSTUDY/activities/daily
run_console console-step /studies/DEMOSTUDY/activities/daily/steps/activities
for c in "$connections" "$team_connections"; do
    log "wrk: GET /admin/v1/studies/DEMOSTUDY ($c connections, ${duration}s)"
    wrk -t2 -c"$c" -d"${duration}s" --latency -H "Authorization: Bearer $token" "$base/admin/v1/studies/DEMOSTUDY" \
        >"$results.summary$([ "$c" = "$team_connections" ] && echo -team)"
done

# --- registration: a verified participant, then login and updateActivityState ------------------
# Registration accepts sign-ups only for apps study-metadata has sent it: wait for the outbox.
for _ in $(seq 1 100); do
    [ "$(curl -sf "${auth[@]}" "$base/admin/v1/outbox?undelivered=true" | json '["messages"].__len__()')" = 0 ] && break
    sleep 0.2
done
reg=http://127.0.0.1:8082/fdahpUserRegWS
reg_headers=(-H "applicationId: BENCHAPP" -H "orgId: BENCHORG" -H "Content-Type: application/json")
email=$(python3 scripts/bench_participant.py "$reg" Bench-Passw0rd) || die "signing up the benchmark participant failed"
# The KDF alone: five sequential logins, their median time.
for _ in 1 2 3 4 5; do
    curl -s -o /dev/null -w '%{time_total}\n' "${reg_headers[@]}" "$reg/login.api" \
        -d "{\"emailId\":\"$email\",\"password\":\"Bench-Passw0rd\"}"
done | sort -n | sed -n 3p >"$results.kdf"
cat >"$results.login.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"emailId":"$email","password":"Bench-Passw0rd"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["applicationId"] = "BENCHAPP"
wrk.headers["orgId"] = "BENCHORG"
LUA
# updateActivityState from 500 participants, as a study's phones would send it: the participants and
# their sessions are written straight into the database (signing up 500 through bcrypt would take
# minutes), each with a random auth key whose SHA-256 is what the service stores.
python3 - "$results.sessions" <<'PY'
import secrets, sys, uuid
with open(sys.argv[1], "w") as out:
    for _ in range(500):
        print(uuid.uuid4(), secrets.token_urlsafe(32), file=out)
PY
{
    echo "BEGIN;"
    while read -r uid session; do
        echo "INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, verified)
              VALUES ('$uid', 'BENCHAPP', 'BENCHORG', '$uid@bench.invalid', '$uid@bench.invalid', 'x', true);
              INSERT INTO participant_sessions (id, user_id, auth_hash, auth_expires_at, refresh_hash, refresh_expires_at)
              VALUES (gen_random_uuid(), '$uid', encode(sha256(convert_to('$session', 'UTF8')), 'hex'), now() + interval '1 hour',
                      encode(sha256(convert_to('r$session', 'UTF8')), 'hex'), now() + interval '1 hour');"
    done <"$results.sessions"
    echo "COMMIT;"
} | PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 55432 -U studystack studystack_registration >/dev/null
{
    echo "local sessions = {"
    while read -r uid session; do echo "  {\"$uid\", \"$session\"},"; done <"$results.sessions"
    echo "}"
    cat <<'LUA'
local counter = 0
local body = '{"studyId":"BENCHSTUDY","activity":[{"activityId":"a1","activityRunId":"1","activityState":"inProgress","activityVersion":"1.0","activityRun":{"total":10,"completed":0,"missed":0}}]}'
request = function()
    counter = counter + 1
    local session = sessions[(counter % #sessions) + 1]
    return wrk.format("POST", nil, {["Content-Type"] = "application/json", ["applicationId"] = "BENCHAPP",
        ["orgId"] = "BENCHORG", ["userId"] = session[1], ["auth"] = session[2]}, body)
end
LUA
} >"$results.activity.lua"
# The count sweep (docs/schedules.md, Kept standings): every ledger of BENCHSTUDY's participants
# made due at once, and the time until each has been counted again, on one registration replica
# with nothing else running. Measured here, apart, so that the updateActivityState run below does
# not share the cores with a backlog of counts (the seed's writes mark them all due).
count_started=$(dbvalue studystack_registration "SELECT now()")
ledgers=$(dbvalue studystack_registration \
    "WITH due AS (UPDATE participant_run_ledgers SET recount_at = now() WHERE study_id = 'BENCHSTUDY' RETURNING 1) SELECT count(*) FROM due")
log "count sweep: $ledgers ledgers of BENCHSTUDY due at once"
count_deadline=$((SECONDS + 1200))
until [ "$(dbvalue studystack_registration "SELECT count(*) FROM participant_run_ledgers
          WHERE study_id = 'BENCHSTUDY' AND (counted_at IS NULL OR counted_at < '$count_started')")" = 0 ]; do
    [ $SECONDS -lt $count_deadline ] || die "the count sweep did not count BENCHSTUDY's $ledgers ledgers within 20 minutes"
    sleep 0.5
done
dbvalue studystack_registration "SELECT $ledgers, extract(epoch FROM max(counted_at) - '$count_started'::timestamptz),
    (SELECT count(*) FROM participant_activity_standings WHERE study_id = 'BENCHSTUDY'),
    (SELECT count(*) FROM participant_run_weeks WHERE study_id = 'BENCHSTUDY')
    FROM participant_run_ledgers WHERE study_id = 'BENCHSTUDY'" >"$results.count-sweep"
log "count sweep: $(cut -d'|' -f2 "$results.count-sweep") s"

log "wrk: registration /healthz, login (4 connections), updateActivityState (${connections} connections)"
wrk -t2 -c"$connections" -d"${duration}s" --latency "http://127.0.0.1:8082/healthz" >"$results.reg-healthz"
wrk -t2 -c4 -d"${duration}s" --latency -s "$results.login.lua" "$reg/login.api" >"$results.login"
wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$results.activity.lua" "$reg/updateActivityState.api" >"$results.updateActivityState"

# The admin API's participants list: pages of 50 of BENCHSTUDY's 10,000 (scripts/bench_seed.sh),
# read by the super-admin at 16 connections with one token and at a team's 8 with a token each
# (e-mail addresses shown, so every page also writes its audit event, and each request has its
# token checked at study-metadata).
log "wrk: registration GET /admin/v1/studies/BENCHSTUDY/participants?limit=50 (16, then ${team_connections} connections)"
wrk -t2 -c16 -d"${duration}s" --latency -H "Authorization: Bearer $token" \
    "http://127.0.0.1:8082/admin/v1/studies/BENCHSTUDY/participants?limit=50" >"$results.participants"
wrk -t2 -c"$team_connections" -d"${duration}s" --latency -s "$team_auth" \
    "http://127.0.0.1:8082/admin/v1/studies/BENCHSTUDY/participants?limit=50" >"$results.participants-team"
wrk -t2 -c"$team_connections" -d"${duration}s" --latency "http://127.0.0.1:8082/healthz" >"$results.reg-healthz-team"

# Inviting 1,000 participants from one CSV: the whole request (every line checked, 1,000 tokens
# made by the response service, the invitations stored and 1,000 e-mails with QR codes queued in
# one transaction), timed three times with fresh addresses; the median is reported.
# Earlier bench runs' e-mails would count against the day's invitation limits (10,000 a study,
# 20,000 an admin): their log is cleared first, on this development database only.
PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 55432 -U studystack studystack_registration \
    -c "DELETE FROM invitation_sends WHERE study_id = 'BENCHSTUDY'" >/dev/null
for attempt in 1 2 3; do
    csv="$results.invite$attempt.csv"
    { echo "email"; for i in $(seq 1 1000); do echo "bench-$attempt-$i-$RANDOM$RANDOM@bench.invalid"; done; } >"$csv"
    curl -s -o "$results.invite$attempt.json" -w '%{http_code} %{time_total}\n' -X POST \
        -H "Authorization: Bearer $token" -H 'Content-Type: text/csv' --data-binary @"$csv" \
        "http://127.0.0.1:8082/admin/v1/studies/BENCHSTUDY/invitations/import" >>"$results.invite"
done
log "invited 3 x 1,000 from CSV: $(tr '\n' ' ' <"$results.invite")"

# The database ceiling of updateActivityState: the service's two statements (the session lookup and
# the guarded upsert), straight from pgbench with as many clients as the service's pool (20).
{
    echo "DROP TABLE IF EXISTS bench_sessions; CREATE TABLE bench_sessions (n int PRIMARY KEY, user_id uuid, auth_hash text);"
    n=0
    while read -r uid session; do
        echo "INSERT INTO bench_sessions VALUES ($n, '$uid', encode(sha256(convert_to('$session', 'UTF8')), 'hex'));"
        n=$((n + 1))
    done <"$results.sessions"
} | PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 55432 -U studystack studystack_registration >/dev/null
cat >"$results.activity.sql" <<'SQL'
\set n random(0, 499)
SELECT s.id, s.user_id, p.app_id, p.org_id FROM participant_sessions s JOIN participants p ON p.user_id = s.user_id
WHERE s.auth_hash = (SELECT auth_hash FROM bench_sessions WHERE n = :n) AND s.revoked_at IS NULL AND s.auth_expires_at > now();
INSERT INTO participant_activities AS stored (user_id, study_id, activity_id, activity_version, activity_state,
    activity_run_id, bookmarked, runs_total, runs_completed, runs_missed, activity_start_date, activity_end_date,
    anchor_date_version, anchor_date_created_date, custom_schedule_runs, updated_at)
SELECT user_id, 'BENCHSTUDY', 'a1', '1.0', 'inProgress', '1', false, 10, 0, 0, '', '', '', '', '[]'::jsonb, now()
FROM bench_sessions WHERE n = :n
ON CONFLICT (user_id, study_id, activity_id) DO UPDATE SET activity_state = excluded.activity_state,
    activity_run_id = excluded.activity_run_id, runs_total = excluded.runs_total, updated_at = excluded.updated_at
WHERE stored.activity_run_id !~ '^[0-9]{1,18}$' OR 1 >= (CASE WHEN stored.activity_run_id ~ '^[0-9]{1,18}$' THEN stored.activity_run_id::bigint END);
SQL
log "pgbench: updateActivityState's statements, 20 clients, ${duration}s (its database ceiling)"
PGPASSWORD=$STUDYSTACK_DB_PASSWORD pgbench -n -M prepared -c 20 -j 2 -T "$duration" -f "$results.activity.sql" \
    -h 127.0.0.1 -p 55432 -U studystack studystack_registration >"$results.pgbench-activity" 2>&1
PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -h 127.0.0.1 -p 55432 -U studystack studystack_registration \
    -c "DROP TABLE bench_sessions" >/dev/null

# --- response: the schema app's receiver beside the schema project's demo_post.php under php -S --
# While the response service only takes submissions (as for processResponse below), and before the
# large batches below load the database; the run's POSTs are deleted afterwards.
token=$token STUDYSTACK_DB_PASSWORD=$STUDYSTACK_DB_PASSWORD scripts/bench_schema.sh "$results"
PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -h 127.0.0.1 -p 55432 -U studystack studystack_response \
    -c "DELETE FROM responses WHERE study_key = 'SCHEMABENCH'" >/dev/null

# --- response: a 100,000-token enrollment batch through the admin API ---------------------------
# study-metadata's outbox tells the response service about the launched study; wait for it.
for _ in $(seq 1 50); do
    status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" \
        http://127.0.0.1:8083/admin/v1/studies/BENCHSTUDY/token-batches)
    [ "$status" = 200 ] && break
    sleep 0.2
done
[ "$status" = 200 ] || die "the response service does not know BENCHSTUDY (answered $status)"
log "response: one 100,000-token batch"
curl -sf -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    http://127.0.0.1:8083/admin/v1/studies/BENCHSTUDY/token-batches -d '{"count": 100000}' >"$results.tokens" ||
    die "creating the token batch failed"

# --- response: processResponse with a 30-answer response, beside pgbench doing its database work --
# 200 enrolled participants, written straight into the database with app tokens whose SHA-256 is
# what the service stores.
python3 - "$results.apptokens" <<'PY'
import secrets, sys
with open(sys.argv[1], "w") as out:
    for _ in range(200):
        print(secrets.token_hex(16), file=out)
PY
rsql() { PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -t -A -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 55432 -U studystack studystack_response "$@"; }
# Earlier runs' responses go first (the seeded second month stays): the processing rate below is of
# this run's backlog.
rsql -c "DELETE FROM responses WHERE study_key = 'BENCHSTUDY' AND NOT starts_with(fingerprint, 'seed-')"
{
    echo "INSERT INTO participants (study_key, app_token_hash, status, allow_data_sharing) SELECT 'BENCHSTUDY',"
    echo "encode(sha256(convert_to(t, 'UTF8')), 'hex'), 'enrolled', 'true' FROM unnest(ARRAY["
    sed "s/.*/'&'/" "$results.apptokens" | paste -sd, -
    echo "]) t RETURNING id;"
} | rsql >"$results.participant-ids"
lo=$(sort -n "$results.participant-ids" | head -n 1)
hi=$(sort -n "$results.participant-ids" | tail -n 1)
# The same participants' numbers in the study: the ParticipantId of its tables.
read -r number_lo number_hi < <(rsql -F ' ' -c "SELECT min(number), max(number) FROM participants WHERE id BETWEEN $lo AND $hi")
python3 - "$results.apptokens" bench/response-30.json bench/pgbench-response.sql >"$results.respond.lua" <<'PY'
import json, sys
tokens = open(sys.argv[1]).read().split()
data = json.load(open(sys.argv[2]))
# pgbench binds the answers wrk sends (-D answers below).
assert "(:answers)::jsonb" in open(sys.argv[3]).read(), "bench/pgbench-response.sql no longer binds the answers"
print("local tokens = {" + ",".join(f'"{t}"' for t in tokens) + "}")
print("local data = [[" + json.dumps(data, separators=(",", ":")) + "]]")
print(open("bench/respond.lua").read())
PY
# The service's own pid (.data/run/response.child), not its supervisor's (response.pid): the
# supervisor is a shell of a few MB, and sampling it measured nothing of the service.
response_pid=$(cat .data/run/response.child)
log "wrk: response /healthz and processResponse (${connections} connections, ${duration}s)"
wrk -t2 -c"$connections" -d"${duration}s" --latency "http://127.0.0.1:8083/healthz" >"$results.resp-healthz"
rsql -c "SELECT count(*) FROM responses" >"$results.responses-before"
( peak=0; while kill -0 "$response_pid" 2>/dev/null; do
      rss=$(awk '/VmRSS/ {print $2}' "/proc/$response_pid/status" 2>/dev/null || echo 0)
      [ "${rss:-0}" -gt "$peak" ] && peak=$rss && echo "$peak" >"$results.rss"
      sleep 0.2
  done ) &
rss_sampler=$!
wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$results.respond.lua" \
    "http://127.0.0.1:8083/mobileappstudy-processResponse.api" >"$results.processResponse"
kill "$rss_sampler" 2>/dev/null || true
rsql -c "SELECT count(*) FROM responses" >"$results.responses-after"
# --- response: MyStudies 2.x's stored responses moved in, beside processResponse ---------------
# 5,000 responses of the same 30 answers as MyStudies 2.x's response server keeps them in
# Firestore (each step joined with its design), for the same 200 participants, sent to the move-in
# endpoint in parts of 500 (about 4 MB, under the body limit), one request at a time, as
# `studystack-import responses apply` sends them. They are the benchmark's: gone afterwards, before processing is measured.
rsql -c "UPDATE participants SET enrolled_token_sha256 = app_token_hash WHERE id BETWEEN $lo AND $hi"
mkdir -p "$results.moved"
python3 - "$results.apptokens" bench/response-30.json "$results.moved" <<'PY'
import json, sys, time
tokens = open(sys.argv[1]).read().split()
data = json.load(open(sys.argv[2]))
stamp = int(time.time() * 1000) - 86_400_000
for part in range(10):
    responses = []
    for index in range(500):
        number = part * 500 + index
        steps = [dict(step, title="", text="", options=[], destinations=[], format={}, steps=[], actvityValueGroup={"valueGroup": []})
                 for step in data["results"]]
        fields = {"studyId": "BENCHSTUDY", "studyVersion": "1.0", "activityId": "daily30", "activityRunId": f"moved-{number}",
                  "activityType": "questionnaire", "name": "daily30", "version": "1.0", "results": steps,
                  "participantId": tokens[number % len(tokens)], "siteId": "", "sharingConsent": "Provided",
                  "createdTimestamp": str(stamp + number)}
        responses.append({"studyId": "BENCHSTUDY", "document": f"projects/bench/databases/(default)/documents/BENCHSTUDY-RESPONSES/BENCHSTUDY/Activities/{stamp}-{number}",
                          "fields": fields})
    with open(f"{sys.argv[3]}/{part}.json", "w") as out:
        json.dump({"source": "make bench", "responses": responses}, out, separators=(",", ":"))
PY
log "response: 5,000 stored responses moved in, in parts of 500"
move_started=$(date +%s.%N)
for part in "$results.moved"/*.json; do
    status=$(curl -s -o "$part.reply" -w '%{http_code}' -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        "http://127.0.0.1:8083/admin/v1/studies/BENCHSTUDY/move-in/responses?dryRun=false" --data-binary @"$part")
    [ "$status" = 200 ] || die "moving stored responses in failed ($status): $(head -c 500 "$part.reply")"
done
echo "$move_started $(date +%s.%N) $(python3 -c "import json, glob; print(sum(json.load(open(f))['counts']['new'] for f in glob.glob('$results.moved/*.reply')))")" \
    >"$results.move-in"
rm -rf "$results.moved"
rsql -c "DELETE FROM responses WHERE study_key = 'BENCHSTUDY' AND status = 'pending' AND starts_with(metadata->>'activityRunId', 'moved-')"
# --- response: Sage result archives of the same answers, beside processResponse ----------------
# 3,001 distinct archives (a prime count: with 200 participants, no participant sends the same
# archive twice in 600,200 requests), each POSTed with its participant's app token; stored, not
# processed.
mkdir -p "$results.archives"
python3 scripts/bench_sage_archives.py "$results.archives" 3001
{
    echo "local tokens = {$(sed 's/.*/"&"/' "$results.apptokens" | paste -sd, -)}"
    cat <<LUA
local archives = {}
-- Each thread counts from its own start: two threads counting alike would send each archive twice.
counter = 0
local threads = 0
setup = function(thread)
    thread:set("counter", threads * 300100)
    threads = threads + 1
end
init = function(args)
    for index = 1, 3001 do
        local file = io.open("$results.archives/" .. index .. ".zip", "rb")
        archives[index] = file:read("*a")
        file:close()
    end
end
request = function()
    counter = counter + 1
    return wrk.format("POST", nil, {["Content-Type"] = "application/zip",
        ["Authorization"] = "Bearer " .. tokens[(counter % #tokens) + 1]}, archives[(counter % #archives) + 1])
end
LUA
} >"$results.archive.lua"
wc -c "$results.archives"/*.zip | tail -n 1 | awk '{print $1}' >"$results.archive-bytes"
rsql -c "SELECT count(*) FROM sage_archives" >"$results.archives-before"
log "wrk: response POST /sage/v1/studies/BENCHSTUDY/archives (${connections} connections, ${duration}s)"
wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$results.archive.lua" \
    "http://127.0.0.1:8083/sage/v1/studies/BENCHSTUDY/archives" >"$results.sage-archives"
rsql -c "SELECT count(*) FROM sage_archives" >"$results.archives-after"
# They are the benchmark's: gone before processing is measured.
rsql -c "DELETE FROM sage_archives WHERE study_key = 'BENCHSTUDY'" \
    -c "DELETE FROM responses WHERE study_key = 'BENCHSTUDY' AND metadata->>'source' = 'sage'"
rm -rf "$results.archives"
# The answers and metadata as wrk sends them, bound per transaction as the service binds them.
answers=$(python3 -c "import json; print(json.dumps(json.load(open('bench/response-30.json')), separators=(',', ':')))")
metadata='{"activityId":"daily30","version":"1.0","activityRunId":"pgbench"}'
log "pgbench: bench/pgbench-response.sql (processResponse's database work), 20 clients, ${duration}s"
PGPASSWORD=$STUDYSTACK_DB_PASSWORD pgbench -n -M prepared -c 20 -j 2 -T "$duration" -D lo="$lo" -D hi="$hi" \
    -D answers="$answers" -D metadata="$metadata" \
    -f bench/pgbench-response.sql -h 127.0.0.1 -p 55432 -U studystack studystack_response >"$results.pgbench-response" 2>&1
# The same with the answers and metadata written into the statement as constants, as this script
# did until 2026-11-26: PostgreSQL then reads and hashes them once, when it plans the statement, so
# pgbench does less than the service must. Kept for comparison with the figures measured so.
python3 - bench/pgbench-response.sql bench/response-30.json >"$results.pgbench-response-constants.sql" <<'PY'
import json, sys
script, data = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
# A space after each colon: pgbench would read `:false` as a variable.
script = script.replace("(:answers)::jsonb", "'" + json.dumps(data, sort_keys=True) + "'::jsonb")
print(script.replace("(:metadata)::jsonb", "'{\"activityId\": \"daily30\", \"version\": \"1.0\"}'::jsonb"))
PY
log "pgbench: the same with the answers as constants, 20 clients, ${duration}s"
PGPASSWORD=$STUDYSTACK_DB_PASSWORD pgbench -n -M prepared -c 20 -j 2 -T "$duration" -D lo="$lo" -D hi="$hi" \
    -f "$results.pgbench-response-constants.sql" -h 127.0.0.1 -p 55432 -U studystack studystack_response \
    >"$results.pgbench-response-constants" 2>&1
# Processing on its own (scripts/bench_processing.sh): the backlog drained by one and then by two
# processing replicas beside the ingest-only response service, then by one storing two slices at
# once, and pgbench doing the same inserts.
scripts/bench_processing.sh "$results"
# The rest of the backlog is the benchmark's, not a study's: it is not left for a worker (the seeded
# backlog is the second month's, and stays).
rsql -c "DELETE FROM responses WHERE study_key = 'BENCHSTUDY' AND status = 'pending' AND NOT starts_with(fingerprint, 'seed-')"
# Processing and that delete leave millions of dead and new rows (30 timing rows a response).
# Vacuumed now, as autovacuum would soon after: otherwise autovacuum's workers can take the CPU in the
# middle of the grid's and the LabKey API's runs below. Then a checkpoint, as before the others.
settle_started=$(date +%s)
as_pg psql -X -q -v ON_ERROR_STOP=1 -h "$PWD/.data/postgres/run" -p 55432 -U postgres -d studystack_response \
    -c "VACUUM ANALYZE" -c CHECKPOINT
log "database settled after processing: VACUUM ANALYZE and CHECKPOINT in $(($(date +%s) - settle_started)) s"

# --- response: the data grid over a table of 100,000 rows ------------------------------------------
# daily30's table cut or topped up to 100,000 rows straight in the database (its newest rows are
# kept: the processed responses' rows are among them; each run's processing adds tens of
# thousands), then pages of 50 as the console asks for them, at 16 connections: the
# first page, a page 90,000 rows in (by cursor), one participant's rows, and a page sorted by a
# question. The first sort by a question is read without an index and asks for one
# (GridSortIndexes); a researcher's next pages read it. So the sort indexes an earlier run left are
# dropped first, the first sorted page is timed alone, and wrk starts once the index is built.
grid_schema=$(rsql -c "SELECT schema_name FROM study_schemas WHERE study_key = 'BENCHSTUDY'")
[ -n "$grid_schema" ] || die "BENCHSTUDY has no tables: its responses were not processed"
rsql -c "INSERT INTO \"$grid_schema\".\"daily30\" (\"ParticipantId\", \"Created\", q0, q4, q5, q7)
    SELECT $number_lo + i % ($number_hi - $number_lo + 1), now() - (i || ' seconds')::interval, (i % 100) / 100.0, i % 2 = 0, i % 24,
           'answer ' || (i % 997)
    FROM generate_series(1, greatest(0, 100000 - (SELECT count(*) FROM \"$grid_schema\".\"daily30\"))) i"
rsql -c "DELETE FROM \"$grid_schema\".\"daily30\" WHERE \"Key\" <
    (SELECT \"Key\" FROM \"$grid_schema\".\"daily30\" ORDER BY \"Key\" DESC OFFSET 99999 LIMIT 1)"
rsql -c "SELECT count(*) FROM \"$grid_schema\".\"daily30\"" >"$results.grid-rows"
rsql -c "VACUUM ANALYZE \"$grid_schema\".\"daily30\""
grid_indexes="FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE n.nspname = '$grid_schema' AND t.relname = 'daily30' AND starts_with(c.relname, 'grid_')"
for index in $(rsql -c "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) $grid_indexes"); do
    rsql -c "DROP INDEX $index"
done
deep_key=$(rsql -c "SELECT \"Key\" FROM \"$grid_schema\".\"daily30\" ORDER BY \"Key\" OFFSET 90000 LIMIT 1")
deep_cursor=$(python3 -c 'import base64, json, sys; print(base64.urlsafe_b64encode(json.dumps(["Key", "asc", sys.argv[1], sys.argv[1]]).encode()).decode().rstrip("="))' "$deep_key")
grid="http://127.0.0.1:8083/admin/v1/studies/BENCHSTUDY/tables/daily30/rows"
for view in "grid-first:?limit=50" "grid-deep:?limit=50&after=$deep_cursor" "grid-participant:?limit=50&participant=$number_lo" \
    "grid-sorted:?limit=50&sort=q5&order=desc"; do
    name=${view%%:*}
    read -r status seconds < <(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -H "Authorization: Bearer $token" "$grid${view#*:}")
    [ "$status" = 200 ] || die "the grid ($name) answered $status"
    if [ "$name" = grid-sorted ]; then
        echo "$seconds" >"$results.grid-sorted-first"
        started=$(date +%s%N)
        for _ in $(seq 1 600); do
            [ "$(rsql -c "SELECT count(*) $grid_indexes AND i.indisvalid")" -ge 1 ] && break
            sleep 0.1
        done
        [ "$(rsql -c "SELECT count(*) $grid_indexes AND i.indisvalid")" -ge 1 ] || die "the sort index on daily30 was not built in a minute"
        echo $(( ($(date +%s%N) - started) / 1000000 )) >"$results.grid-sorted-index-ms"
    fi
    log "wrk: response $name (16, then ${team_connections} connections, ${duration}s)"
    wrk -t2 -c16 -d"${duration}s" --latency -H "Authorization: Bearer $token" "$grid${view#*:}" >"$results.$name"
    wrk -t2 -c"$team_connections" -d"${duration}s" --latency -s "$team_auth" "$grid${view#*:}" >"$results.$name-team"
done
wrk -t2 -c"$team_connections" -d"${duration}s" --latency "http://127.0.0.1:8083/healthz" >"$results.resp-healthz-team"
wrk -t2 -c2 -d"${duration}s" --latency "http://127.0.0.1:8083/healthz" >"$results.resp-healthz-2"

# --- response: the exports' first byte ---------------------------------------------------------------
# What a researcher waits on before the download starts: the export's checks, its audit event and
# the first 64 KiB chunk of the study's rows (every table, in one repeatable-read transaction).
# Each request reads the status line and the first chunk, then closes the connection, as a
# cancelled download would; the whole export is timed once beside it.
for format in zip jsonl; do
    export_url="http://127.0.0.1:8083/admin/v1/studies/BENCHSTUDY/export.$format"
    curl -s -o "$results.export-$format-body" -w '%{http_code} %{time_total} %{size_download}\n' \
        -H "Authorization: Bearer $token" "$export_url" >"$results.export-$format-whole"
    read -r status _ _ <"$results.export-$format-whole"
    [ "$status" = 200 ] || die "the export ($format) answered $status"
    rm -f "$results.export-$format-body"
    log "response: export.$format, its first byte (${team_connections} connections, ${duration}s)"
    python3 scripts/bench_first_byte.py "$export_url" "$(printf 'Authorization: %s\n' "${team_tokens[@]}")" "$team_connections" "$duration" \
        >"$results.export-$format"
done

# --- response: the LabKey API over the same 100,000 rows ------------------------------------------
# A researcher's script with an API key: getQuery (100 rows of a filter, newest first, with the
# total count the clients ask for by default) and executeSql (an aggregate over the whole table).
# Two connections: one admin runs at most two queries at once (RESEARCHER_QUERY_MAX_CONCURRENT_PER_ADMIN).
apikey=$(curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' "$base/admin/v1/api-keys" \
    -d '{"name": "bench", "expiresInDays": 1}' | json '["key"]')
labkey="http://127.0.0.1:8083/BENCHORG/BENCHAPP/BENCHSTUDY"
aggregate=$(python3 -c 'import urllib.parse; print(urllib.parse.quote("SELECT ParticipantId, count(*) AS answers, avg(q0) AS q0 FROM daily30 GROUP BY ParticipantId"))')
for call in "labkey-getQuery:query-getQuery.api?schemaName=lists&query.queryName=daily30&query.q5~gte=12&query.sort=-Key&query.maxRows=100" \
    "labkey-executeSql:query-executeSql.api?schemaName=lists&sql=$aggregate"; do
    name=${call%%:*}
    # The previous call's last queries may still be running when wrk has closed its connections,
    # and they hold the admin's two query slots until they end: wait for one to be free.
    deadline=$((SECONDS + 60))
    while status=$(curl -s -o "$results.$name.first" -w '%{http_code}' -H "apikey: $apikey" "$labkey/${call#*:}") &&
        [ "$status" != 200 ] && grep -q 'queries running' "$results.$name.first" && [ $SECONDS -lt $deadline ]; do
        sleep 0.2
    done
    [ "$status" = 200 ] || die "the LabKey API ($name) answered $status: $(head -c 300 "$results.$name.first")"
    log "wrk: response $name (2 connections, ${duration}s)"
    wrk -t2 -c2 -d"${duration}s" --latency -H "apikey: $apikey" "$labkey/${call#*:}" >"$results.$name"
done

# --- response: the FHIR API over the same responses ----------------------------------------------
# A warehouse's Bulk Data export of BENCHSTUDY's responses (scripts/bench_fhir.py: kick-off, status
# polled, every file read line by line), its count reconciled with the table; then a read and two
# searches at a team's concurrency, each with the client's token (every read and search audited).
log "FHIR: a Bulk Data export of BENCHSTUDY's responses, read back line by line"
ensure_tools_venv
fhir_keys=$(mktemp -d)
"$tools_venv/bin/python" scripts/bench_fhir.py http://127.0.0.1:8083 "$token" BENCHSTUDY "$fhir_keys" >"$results.fhir-export" ||
    die "the Bulk Data export did not complete"
rm -rf "$fhir_keys"
fhir_field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$results.fhir-export" "$1"; }
stored=$(rsql -c "SELECT count(*) FROM responses WHERE study_key = 'BENCHSTUDY' AND received_at <= '$(fhir_field transactionTime)'")
[ "$stored" = "$(fhir_field resources)" ] ||
    die "the export holds $(fhir_field resources) responses; BENCHSTUDY had $stored at its transactionTime"
echo "$stored" >"$results.fhir-export-rows"
fhir=$(fhir_field fhir)
for request in "fhir-read:QuestionnaireResponse/$(fhir_field readId)" "fhir-search-subject:QuestionnaireResponse?subject=$(fhir_field subject)&_count=50" \
    "fhir-search-patients:Patient?_count=50&_cursor=5000"; do
    log "wrk: FHIR ${request#*:} (${team_connections} connections, ${duration}s)"
    wrk -t2 -c"$team_connections" -d"${duration}s" --latency -H "Authorization: Bearer $(fhir_field token)" "$fhir/${request#*:}" \
        >"$results.${request%%:*}"
done
python3 - "$results" <<'PY'
import json, re, sys
base = sys.argv[1]
export = json.load(open(f"{base}.fhir-export"))
status, jsonl_seconds, jsonl_bytes = open(f"{base}.export-jsonl-whole").read().split()
rows = int(open(f"{base}.grid-rows").read())
bulk_rate, jsonl_rate = export["resources"] / export["seconds"], rows / float(jsonl_seconds)
print(f"\nthe FHIR API over BENCHSTUDY (SMART Backend Services token)")
print(f"{'export':<44}{'responses':>11}{'seconds':>9}{'responses/s':>13}{'bytes':>15}{'ratio':>7}")
print(f"{'export.jsonl, whole (daily30 and its children)':<44}{rows:>11,}{float(jsonl_seconds):>9.2f}{jsonl_rate:>13,.0f}{int(float(jsonl_bytes)):>15,}{1:>7.2f}")
print(f"{'Bulk Data $export, kick-off to last line':<44}{export['resources']:>11,}{export['seconds']:>9.2f}{bulk_rate:>13,.0f}{export['bytes']:>15,}{bulk_rate / jsonl_rate:>7.2f}")
print(f"(goal: ratio >= 0.5; the export's count matched the table's at its transactionTime: {int(open(f'{base}.fhir-export-rows').read()):,})")
def wrk(name):
    text = open(f"{base}.{name}").read()
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", text).group(1))
    def ms(which):
        value, unit = re.search(rf"{which}\s+([0-9.]+)(us|ms|s)", text).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return rps, ms("50%"), ms("99%"), int(errors.group(1)) if errors else 0
print(f"{'request, 8 connections':<44}{'requests/s':>12}{'p50 ms':>9}{'p99 ms':>9}{'non-2xx':>9}{'goal':>10}")
for name, label, goal in (("fhir-read", "read: a QuestionnaireResponse", 20),
                          ("fhir-search-subject", "search: a participant's responses", 100),
                          ("fhir-search-patients", "search: 50 Patients, 5,000 in", 100)):
    rps, p50, p99, errors = wrk(name)
    print(f"{label:<44}{rps:>12.1f}{p50:>9.2f}{p99:>9.2f}{errors:>9}{('p99<%d ' % goal) + ('met' if p99 < goal and not errors else 'NOT'):>10}")
PY

log "pgbench: the current-version lookup, 20 clients, ${duration}s (the database ceiling)"
cat >"$results.sql" <<'SQL'
SELECT s.status, v.version FROM studies s
JOIN LATERAL (SELECT version FROM study_versions WHERE study_id = s.study_id ORDER BY version DESC LIMIT 1) v ON true
WHERE s.app_id = 'BENCHAPP' AND s.study_id = 'BENCHSTUDY';
SQL
PGPASSWORD=$STUDYSTACK_DB_PASSWORD pgbench -n -M prepared -c 20 -j 2 -T "$duration" -f "$results.sql" \
    -h 127.0.0.1 -p 55432 -U studystack studystack_metadata >"$results.pgbench" 2>&1

APP_ROUNDS=$app_rounds python3 - "$results" "$duration" <<'PY'
import os, re, statistics, sys
base = sys.argv[1]
seconds = float(sys.argv[2])
def wrk(name):
    text = open(f"{base}.{name}").read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", text)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return rps, float(p99.group(1)) * scale, int(errors.group(1)) if errors else 0
def percentile(name, which):
    """A latency percentile of wrk run `name` (`--latency`), in ms."""
    found = re.search(which.replace("%", r"%\s+") + r"([\d.]+)(us|ms|s)", open(f"{base}.{name}").read())
    return float(found.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[found.group(2)]
app_rounds = int(os.environ["APP_ROUNDS"])
print(f"\n{'endpoint':<16}{'requests/s':>12}{'p99 ms':>10}{'non-2xx':>9}{'ratio to /healthz':>20}{'rounds':>20}")
for name in ("healthz", "activityList", "activity"):
    rounds = [wrk(f"{name}.{r}") for r in range(1, app_rounds + 1)]
    ratios = sorted(rounds[r][0] / wrk(f"healthz.{r + 1}")[0] for r in range(app_rounds))
    rps = statistics.median(x[0] for x in rounds)
    p99 = statistics.median(x[1] for x in rounds)
    errors = sum(x[2] for x in rounds)
    spread = f"{ratios[0]:.2f} to {ratios[-1]:.2f}"
    print(f"{name:<16}{rps:>12.0f}{p99:>10.2f}{errors:>9}{statistics.median(ratios):>20.2f}{spread:>20}")
print(f"(medians of {app_rounds} rounds, each endpoint in turn; the ratio is the median of the rounds' ratios; goal >= 0.8)")
print("\nconsole (the study builder's heaviest pages; goal: p99 < 50 ms at a team's 8 connections)")
print(f"{'page':<32}{'connections':>12}{'requests/s':>12}{'p50 ms':>9}{'p99 ms':>9}{'non-2xx':>9}{'ratio to the API call':>23}")
pages = [("console", "activity daily ({} KB)"), ("console-step", "its longest step ({} KB)"), ("summary", "the admin API call under each")]
for suffix, connections in (("-team", 8), ("", 64)):
    call = wrk("summary" + suffix)[0]
    for name, label in pages:
        rps, p99, errors = wrk(name + suffix)
        p50 = percentile(name + suffix, "50%")
        size = int(open(f"{base}.{name}-bytes").read()) if name != "summary" else 0
        print(f"{label.format(size // 1024):<32}{connections:>12}{rps:>12.0f}{p50:>9.2f}{p99:>9.2f}{errors:>9}{rps / call:>23.2f}")
print("(every console page reads GET /admin/v1/studies/{id} with the admin's token, so that call's own rate is the ceiling;"
      " at 64 connections the mean wait is 64 / requests per second (Little's law): a p99 under 50 ms there needs"
      " more than 1,280 pages a second)")
print("\nregistration service")
reg = wrk("reg-healthz")
print(f"{'endpoint':<20}{'requests/s':>12}{'p99 ms':>10}{'non-2xx':>9}{'ratio to /healthz':>20}")
for name, label in (("reg-healthz", "healthz"), ("login", "login (4 conns)"), ("updateActivityState", "updateActivityState"),
                    ("participants", "participants (16 conns)")):
    rps, p99, errors = wrk(name)
    print(f"{label:<20}{rps:>12.1f}{p99:>10.2f}{errors:>9}{rps / reg[0]:>20.3f}")
rps, p99, errors = wrk("participants-team")
print(f"{'participants (8)':<20}{rps:>12.1f}{p99:>10.2f}{errors:>9}{rps / wrk('reg-healthz-team')[0]:>20.3f}")
print("(participants: a page of 50 of BENCHSTUDY's 10,000, read by the super-admin, so audited; goal: p99 < 100 ms;"
      " at 8 connections beside /healthz at 8)")
invites = [line.split() for line in open(f"{base}.invite").read().splitlines() if line.strip()]
invite_seconds = sorted(float(t) for code, t in invites if code == "201")
if len(invite_seconds) == len(invites) == 3:
    print(f"invite 1,000 from one CSV (median of 3, the whole request): {invite_seconds[1]:.2f} s")
else:
    print(f"invite 1,000 from one CSV: FAILED ({invites})")
kdf = float(open(f"{base}.kdf").read().strip() or 0)
print(f"one login alone (bcrypt cost 12 plus the request): {kdf * 1000:.0f} ms")
ceiling = re.search(r"tps = ([\d.]+)", open(f"{base}.pgbench-activity").read())
if ceiling:
    rps = wrk("updateActivityState")[0]
    print(f"updateActivityState's statements straight from pgbench (20 clients): {float(ceiling.group(1)):.0f}/s;"
          f" the service reaches {rps / float(ceiling.group(1)):.2f} of that")
else:
    print("pgbench of updateActivityState's statements failed")
ledgers, seconds, standings, weeks = open(f"{base}.count-sweep").read().strip().split("|")
print(f"the count sweep, measured before the above: {int(ledgers):,} participants' ledgers counted again in {float(seconds):.1f} s,"
      f" {int(ledgers) / float(seconds):.0f} a second (one replica; each participant's schedule expanded since enrolment,"
      f" {int(standings):,} activity standings and {int(weeks):,} weeks kept)")
batch = float(open(f"{base}.tokens").read().strip() or 0)
print(f"\nresponse service: a 100,000-token batch (POST token-batches, HTTP included): {batch:.2f} s (goal < 5 s)")
tps = re.search(r"tps = ([\d.]+)", open(f"{base}.pgbench").read())
print(f"\npgbench (current-version lookup, 20 clients): {float(tps.group(1)):.0f} tps" if tps else "\npgbench failed")
print("goal: ratio >= 0.8 and p99 < 10 ms at 64 connections")

print("\nresponse service")
resp = wrk("resp-healthz")
rps, p99, errors = wrk("processResponse")
stored = int(open(f"{base}.responses-after").read()) - int(open(f"{base}.responses-before").read())
print(f"{'endpoint':<20}{'requests/s':>12}{'p99 ms':>10}{'non-2xx':>9}{'ratio to /healthz':>20}")
print(f"{'healthz':<20}{resp[0]:>12.1f}{resp[1]:>10.2f}{resp[2]:>9}{1:>20.3f}")
print(f"{'processResponse':<20}{rps:>12.1f}{p99:>10.2f}{errors:>9}{rps / resp[0]:>20.3f}")
print(f"responses stored during the run: {stored} (a 30-answer response each)")
started, ended, moved = open(f"{base}.move-in").read().split()
moved_rate = int(moved) / (float(ended) - float(started))
print(f"stored responses moved in (POST .../move-in/responses, parts of 500, one at a time): {moved_rate:.0f}/s of {int(moved):,} new;"
      f" {moved_rate / rps:.2f} of processResponse's rate")
archive_rps, archive_p99, archive_errors = wrk("sage-archives")
archives = int(open(f"{base}.archives-after").read()) - int(open(f"{base}.archives-before").read())
archive_bytes = int(open(f"{base}.archive-bytes").read()) // 3001
print(f"{'Sage archive POST':<20}{archive_rps:>12.1f}{archive_p99:>10.2f}{archive_errors:>9}{archive_rps / resp[0]:>20.3f}")
print(f"Sage archives stored during their run: {archives} (metadata.json, info.json, answers.json with the same 30 answers,"
      f" a 300-sample motion file; {archive_bytes:,} bytes zipped)")
print(f"Sage archive POST / processResponse: {archive_rps / rps:.2f} (goal >= 0.5, p99 < 100 ms)")
def pgbench_beside(name, label, goal=""):
    """The tps of pgbench run `name` and the service's share of it, printed; None when it failed."""
    tps = re.search(r"tps = ([\d.]+)", open(f"{base}.{name}").read())
    if not tps:
        print(f"pgbench ({label}) failed:\n" + open(f"{base}.{name}").read()[-500:])
        return None
    print(f"{label}: {float(tps.group(1)):.0f}/s; the service reaches {rps / float(tps.group(1)):.2f} of that{goal}")
    return tps
ceiling = pgbench_beside("pgbench-response", "bench/pgbench-response.sql straight from pgbench (20 clients, the answers bound)",
                         " (goal >= 1.0)")
constants = pgbench_beside("pgbench-response-constants",
                           "the same with the answers as constants (read and hashed once, when planned)")
try:
    print(f"response service peak resident memory during processResponse: {int(open(f'{base}.rss').read()) / 1024:.0f} MB (goal < 200 MB)")
except (FileNotFoundError, ValueError):
    print("response service resident memory: not sampled")
print("goal: processResponse >= 1.0x pgbench, p99 < 50 ms, memory < 200 MB")
now = {}
if ceiling:
    now["processResponse"] = rps / float(ceiling.group(1))
if constants:
    now["processResponse, constants"] = rps / float(constants.group(1))
activity_ceiling = re.search(r"tps = ([\d.]+)", open(f"{base}.pgbench-activity").read())
if activity_ceiling:
    now["updateActivityState"] = wrk("updateActivityState")[0] / float(activity_ceiling.group(1))
print("\nprocessing into tables: a backlog of 30-answer responses (scripts/bench_processing.sh)")
rates = {}
for run, label in ((1, "1 replica"), (2, "2 replicas"), ("1x2", "1 replica, PROCESSING_STORES=2")):
    done, elapsed, errors, left, idle = open(f"{base}.processing-{run}").read().split()
    rates[run] = int(done) / float(elapsed)
    print(f"  {label}: {rates[run]:,.0f} responses/s"
          f" ({done} in {float(elapsed):.1f} s; {errors} in error; {left} still pending after; CPU {idle}% idle)")
error = open(f"{base}.processing-error").read().strip()
if error:
    print(f"  an error: {error[:200]}")
processing_ceiling = re.search(r"tps = ([\d.]+)", open(f"{base}.pgbench-processing").read())
if processing_ceiling:
    print(f"  bench/pgbench-processing.sql straight from pgbench (20 clients, a response a transaction):"
          f" {float(processing_ceiling.group(1)):,.0f}/s")
    now["processing"] = rates[1] / float(processing_ceiling.group(1))
    now["processing, 2 stores"] = rates["1x2"] / float(processing_ceiling.group(1))
else:
    print("  pgbench of the processor's inserts failed:\n" + open(f"{base}.pgbench-processing").read()[-500:])
now["replicas"] = rates[2] / rates[1]

# Before and after: the figures of bench/baseline.json (measured by this script on the code before
# batched processing) beside this run's.
import json
baseline = json.load(open("bench/baseline.json"))
print(f"\nbefore and after (before: {baseline['measured']})")
print(f"{'ratio':<58}{'goal':>8}{'before':>9}{'now':>8}")
for key, label, goal in (("processing", "processing, 1 replica / pgbench-processing.sql", ">= 1.0"),
                         ("processing, 2 stores", "the same, PROCESSING_STORES=2", ">= 1.0"),
                         ("replicas", "processing, 2 replicas / 1 replica", "> 1.0"),
                         ("processResponse", "processResponse / pgbench-response.sql, answers bound", ">= 1.0"),
                         ("processResponse, constants", "processResponse / the same, answers as constants", ">= 1.0"),
                         ("updateActivityState", "updateActivityState / its statements in pgbench", ">= 0.8")):
    measured = f"{now[key]:.2f}" if key in now else "failed"
    before = f"{baseline['ratios'][key]:.2f}" if key in baseline["ratios"] else "-"
    print(f"{label:<58}{goal:>8}{before:>9}{measured:>8}")
php = wrk("schema-php")
ours = wrk("schema-studystack")
print(f"\nthe schema app's survey POST (multipart, a new task each), {int(open(f'{base}.schema-stored').read())} stored in PostgreSQL")
print(f"{'receiver':<34}{'requests/s':>12}{'p99 ms':>10}{'non-2xx':>9}{'ratio to demo_post.php':>24}")
print(f"{'demo_post.php under php -S':<34}{php[0]:>12.1f}{php[1]:>10.2f}{php[2]:>9}{1:>24.2f}")
print(f"{'POST /schema/{study}/data':<34}{ours[0]:>12.1f}{ours[1]:>10.2f}{ours[2]:>9}{ours[0] / php[0]:>24.2f}")
enrol = wrk("schema-enrol")
print(f"{'  the same, each a first POST':<34}{enrol[0]:>12.1f}{enrol[1]:>10.2f}{enrol[2]:>9}{enrol[0] / php[0]:>24.2f}")
print("(demo_post.php appends each field to a text file, unsynced; StudyStack stores each POST of the study's 1,000\n"
      " participants, who have posted before; goal: ratio >= 1.0, p99 < 50 ms. Then every POST from a participant never\n"
      " seen, who is enrolled by it, as on a launch day: no goal, the enrolment rate)")
rows = int(open(f"{base}.grid-rows").read())
import json as _json
def measured(name):
    """requests/s, p50, p99 (ms) and non-2xx of a wrk run or of scripts/bench_first_byte.py."""
    if name.startswith("export-"):
        found = _json.load(open(f"{base}.{name}"))
        return found["requestsPerSecond"], found["p50"], found["p99"], found["errors"]
    rps, p99, errors = wrk(name)
    return rps, percentile(name, "50%"), p99, errors
grid_pages = (("grid-first", "first page, by Key"), ("grid-deep", "90,000 rows in, by cursor"),
              ("grid-participant", "one participant's rows"), ("grid-sorted", "sorted by a question (q5)"))
print(f"\nthe data grid over daily30 ({rows:,} rows), pages of 50 (goal: p99 < 100 ms)")
print(f"{'page':<34}{'connections':>12}{'requests/s':>12}{'p50 ms':>9}{'p99 ms':>9}{'non-2xx':>9}{'ratio to /healthz':>19}")
for suffix, connections in (("", 16), ("-team", 8)):
    health = wrk("resp-healthz-team")[0] if suffix else resp[0]
    for name, label in grid_pages:
        rps, p50, p99, errors = measured(name + suffix)
        print(f"{label:<34}{connections:>12}{rps:>12.1f}{p50:>9.2f}{p99:>9.2f}{errors:>9}{rps / health:>19.3f}")
first = float(open(f"{base}.grid-sorted-first").read()) * 1000
built = int(open(f"{base}.grid-sorted-index-ms").read())
print(f"(sorted by q5: the first page, read without an index, took {first:.0f} ms alone; its index was built {built / 1000:.1f} s after;"
      f" /healthz at 64 connections beside the 16-connection rows, at 8 beside the 8)")
print(f"\nthe exports of BENCHSTUDY (every table, daily30's {rows:,} rows and its children), 8 connections")
print(f"{'export':<34}{'whole, alone':>14}{'bytes':>15}{'first byte/s':>14}{'p50 ms':>9}{'p99 ms':>9}{'failed':>8}")
for format in ("zip", "jsonl"):
    status, seconds, size = open(f"{base}.export-{format}-whole").read().split()
    rps, p50, p99, errors = measured(f"export-{format}")
    print(f"{'export.' + format:<34}{float(seconds):>12.2f} s{int(float(size)):>15,}{rps:>14.1f}{p50:>9.2f}{p99:>9.2f}{errors:>8}")
print("(first byte: the request's checks, its audit event and the first chunk of rows; each download then cancelled)")
print(f"\nthe LabKey API over daily30 ({rows:,} rows), one API key, 2 connections (an admin's limit)")
print(f"{'call':<34}{'requests/s':>12}{'p50 ms':>9}{'p99 ms':>9}{'non-2xx':>9}{'ratio to /healthz':>19}")
labkey_calls = (("labkey-getQuery", "getQuery: 100 of a filter, total"), ("labkey-executeSql", "executeSql: GROUP BY, all rows"))
for name, label in labkey_calls:
    rps, p50, p99, errors = measured(name)
    print(f"{label:<34}{rps:>12.1f}{p50:>9.2f}{p99:>9.2f}{errors:>9}{rps / wrk('resp-healthz-2')[0]:>19.3f}")
print("(/healthz at two connections beside them)")

# The pages people wait on, side by side: each at the concurrency a team produces.
print("\nevery page a person waits on, at a team's concurrency (goal: p99 < 100 ms)")
print(f"{'page':<44}{'connections':>12}{'requests/s':>12}{'p50 ms':>9}{'p99 ms':>9}{'goal':>6}{'ratio':>8}  to")
waited = [("console-team", "console: activity daily", 8, wrk("summary-team")[0], "the admin API call under it"),
          ("console-step-team", "console: its longest step", 8, wrk("summary-team")[0], "the admin API call under it"),
          ("participants-team", "registration: participants, 50 of 10,000", 8, wrk("reg-healthz-team")[0], "registration /healthz")]
waited += [(name + "-team", "grid: " + label, 8, wrk("resp-healthz-team")[0], "response /healthz") for name, label in grid_pages]
waited += [(f"export-{format}", f"export.{format}: first byte", 8, wrk("resp-healthz-team")[0], "response /healthz")
           for format in ("zip", "jsonl")]
waited += [(name, "LabKey " + label.split(":")[0], 2, wrk("resp-healthz-2")[0], "response /healthz") for name, label in labkey_calls]
for name, label, connections, beneath, what in waited:
    rps, p50, p99, errors = measured(name)
    print(f"{label:<44}{connections:>12}{rps:>12.1f}{p50:>9.2f}{p99:>9.2f}{'met' if p99 < 100 and not errors else 'NOT':>6}"
          f"{rps / beneath:>8.2f}  {what}")
PY

# --- the JSON Schema validator beside Python's jsonschema 4.26, on Sage's largest example -----
# The same document, the same schema (every schema file of Sage's v2 folder registered by its
# $id, nothing fetched), one process each, one after the other.
log "json-schema: Sage's AssessmentResultObject_0.json against AssessmentResultObject.json, ${duration}s in Swift, then in Python's jsonschema"
ensure_tools_venv
swift build -c release --product json-schema-bench >"$results.schema-build" 2>&1 || { cat "$results.schema-build" >&2; exit 1; }
sage=Tests/Fixtures/sage
schema_args=("$sage/schemas/v2" AssessmentResultObject.json "$sage/examples/v2/AssessmentResultObject/AssessmentResultObject_0.json" "$duration")
"$(swift build -c release --show-bin-path)/json-schema-bench" "${schema_args[@]}" >"$results.schema-swift"
"$tools_venv/bin/python" scripts/bench_json_schema.py "${schema_args[@]}" >"$results.schema-python"
python3 - "$results" "$(wc -c <"$sage/examples/v2/AssessmentResultObject/AssessmentResultObject_0.json")" <<'PY'
import json, sys
swift = json.load(open(f"{sys.argv[1]}.schema-swift"))
python = json.load(open(f"{sys.argv[1]}.schema-python"))
print(f"\nJSON Schema (draft-07): Sage's largest example ({int(sys.argv[2]):,} bytes), validated over and over, one core")
print(f"{'validator':<34}{'documents/s':>12}{'valid':>8}{'ratio to Python':>18}")
print(f"{'Python jsonschema ' + python['jsonschema']:<34}{python['documentsPerSecond']:>12,}{str(python['valid']):>8}{1:>18.2f}")
print(f"{'StudyStack JSONSchema':<34}{swift['documentsPerSecond']:>12,}{str(swift['valid']):>8}{swift['documentsPerSecond'] / python['documentsPerSecond']:>18.1f}")
print("(goal: ratio >= 10; both must call the document valid)")
if swift["valid"] != python["valid"]:
    sys.exit("the two validators disagree about the document")
PY

# --- the schedule engine: a year of runs for 100,000 participants, beside PostgreSQL -------------
# The same participants (enrolments through 2026, eight zones, from a fixed seed), the same two
# activities; Swift on every core, then the same expansion as one query (PostgreSQL's parallel
# workers on), three times.
log "schedules: a year of runs of a daily and a weekly activity for 100,000 participants, in Swift, then in PostgreSQL"
swift build -c release --product schedule-bench >"$results.schedule-build" 2>&1 || { cat "$results.schedule-build" >&2; exit 1; }
"$(swift build -c release --show-bin-path)/schedule-bench" 100000 >"$results.schedule-swift"
PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 55432 -U studystack studystack_registration \
    -f bench/schedule-participants.sql >/dev/null
dbvalue studystack_registration "$(cat bench/schedule-expansion.sql)" >"$results.schedule-rows"
PGPASSWORD=$STUDYSTACK_DB_PASSWORD pgbench -n -t 3 -f bench/schedule-expansion.sql \
    -h 127.0.0.1 -p 55432 -U studystack studystack_registration >"$results.schedule-pg" 2>&1
dbvalue studystack_registration "DROP TABLE bench_schedule_participants" >/dev/null
python3 - "$results" <<'PY'
import json, re, sys
swift = json.load(open(f"{sys.argv[1]}.schedule-swift"))
rows = int(open(f"{sys.argv[1]}.schedule-rows").read().strip())
latency = float(re.search(r"latency average = ([0-9.]+) ms", open(f"{sys.argv[1]}.schedule-pg").read()).group(1)) / 1000
print(f"\nSchedules: a year of a daily (two windows) and a weekly activity for 100,000 participants, every core")
print(f"{'expansion':<34}{'runs':>12}{'seconds':>10}{'runs/s':>14}{'ratio to PostgreSQL':>22}")
print(f"{'PostgreSQL, one query':<34}{rows:>12,}{latency:>10.2f}{rows / latency:>14,.0f}{1:>22.2f}")
print(f"{'StudyStack ScheduleEngine':<34}{swift['runs']:>12,}{swift['seconds']:>10.2f}{swift['runsPerSecond']:>14,}"
      f"{swift['runsPerSecond'] / (rows / latency):>22.2f}")
print("(goal: ratio >= 1: the engine is no slower than the database's own date arithmetic; both count the runs of the same year)")
PY

# --- the reminder sweep: the due reminders of 100,000 participants, by index and by scan -----------
# A copy of the standings table with its indexes, 200,000 rows, 2,000 of them due; pgbench runs
# the sweep's read through the partial index, then the same read with index scans off, each 200
# times, the latency of every one logged.
log "reminders: the sweep's read of the due reminders among 100,000 participants' standings, by index and by scan"
PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 55432 -U studystack studystack_registration \
    -f bench/reminder-standings.sql >/dev/null
for kind in sweep scan; do
    mkdir -p "$results.reminder-$kind-log"
    (cd "$results.reminder-$kind-log" && PGPASSWORD=$STUDYSTACK_DB_PASSWORD pgbench -n -t 200 -l -f "$OLDPWD/bench/reminder-$kind.sql" \
        -h 127.0.0.1 -p 55432 -U studystack studystack_registration >"$results.reminder-$kind" 2>&1)
done
# Each read's plan, with what it touched (the scan's with index scans off, as its pgbench runs it).
reminder_read=$(grep -v '^--' bench/reminder-sweep.sql)
dbvalue studystack_registration "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) $reminder_read" >"$results.reminder-sweep-plan"
dbvalue studystack_registration "SET enable_indexscan = off; SET enable_bitmapscan = off;
    EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) $reminder_read" >"$results.reminder-scan-plan"
dbvalue studystack_registration "SELECT count(*) || ' ' || count(*) FILTER (WHERE remind_at <= now()) FROM bench_reminder_standings" \
    >"$results.reminder-rows"
dbvalue studystack_registration "DROP TABLE bench_reminder_standings" >/dev/null
python3 - "$results" <<'PY'
import glob, json, sys
base = sys.argv[1]
rows, due = map(int, open(f"{base}.reminder-rows").read().split())
def plan(kind):
    text = open(f"{base}.reminder-{kind}-plan").read()
    top = json.loads(text[text.index("["):])[0]["Plan"]
    nodes, stack = [], [top]
    while stack:
        node = stack.pop()
        nodes.append(node["Node Type"] + (" using " + node["Index Name"] if "Index Name" in node else ""))
        stack += node.get("Plans", [])
    return nodes, top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0), top["Actual Rows"]
def latencies(kind):
    values = []
    for name in glob.glob(f"{base}.reminder-{kind}-log/pgbench_log.*"):
        values += [int(line.split()[2]) / 1000 for line in open(name) if line.strip()]
    values.sort()
    return values
print(f"\nReminder sweep: the due reminders among {rows:,} standings (100,000 participants, two activities), {due:,} due now")
print(f"{'read':<30}{'rows':>10}{'pages':>8}{'mean ms':>10}{'p99 ms':>9}{'ratio to scan':>15}  plan")
scan = latencies("scan")
scan_mean = sum(scan) / len(scan)
for kind, label in [("scan", "every standing (no index)"), ("sweep", "the sweep (partial index)")]:
    nodes, pages, found = plan(kind)
    values = latencies(kind)
    mean = sum(values) / len(values)
    p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
    print(f"{label:<30}{found:>10}{pages:>8}{mean:>10.2f}{p99:>9.2f}{scan_mean / mean:>15.1f}  {', '.join(nodes)}")
nodes, _, _ = plan("sweep")
if not any("remind" in node for node in nodes):
    sys.exit("the sweep's read did not use the index on remind_at")
print("(goal: the sweep reads through its index, about a page per reminder it takes rather than the whole table; its ratio to the scan grows with the study)")
PY
rm -rf "$results" "$results".*
finished=1
log "the report is in $report"
