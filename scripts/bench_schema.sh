#!/usr/bin/env bash
# The schema app's receiver, measured beside the one the schema project ships: its demo_post.php
# under `php -S`, and StudyStack's POST /schema/{study}/data, driven by the same wrk script
# (bench/schema/post.lua: the app's multipart survey POST, each request a new task of one of
# 1,000 participants). Runs against a started stack (scripts/run.sh) with the admin token in
# $token; writes wrk's reports to $1.schema-php and $1.schema-studystack.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_commands php:php-cli wrk:wrk

results=$1
duration=${BENCH_SECONDS:-10}
connections=${BENCH_CONNECTIONS:-64}
base=http://127.0.0.1:8081
auth=(-H "Authorization: Bearer $token")

# The demo study's protocol, imported and launched (an earlier run's study is imported again: the
# same content publishes nothing new, and the launch answers 409).
status=$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" -X PUT \
    "$base/admin/v1/studies/SCHEMABENCH/imports/schema?appId=BENCHAPP&timeZone=Australia/Melbourne" \
    --data-binary @Tests/Fixtures/schema/demo_protocol.json)
[ "$status" = 200 ] || [ "$status" = 201 ] || die "importing the schema demo protocol answered $status"
curl -s -o /dev/null "${auth[@]}" -X POST "$base/admin/v1/studies/SCHEMABENCH/launch" || true
for _ in $(seq 1 50); do
    status=$(curl -s -o /dev/null -w '%{http_code}' -F data_type=log -F user_id=BENCH -F study_id=3ZDOGAH \
        -F module_index=-1 -F page=home -F event=entry -F timestamp=2026-11-26T09:00:00+11:00 \
        http://127.0.0.1:8083/schema/SCHEMABENCH/data)
    [ "$status" = 200 ] && break
    sleep 0.2
done
[ "$status" = 200 ] || die "the response service does not take SCHEMABENCH's data (answered $status)"

# A study in use: its 1,000 participants have posted before (the app logs each opening of its
# home page), so the timed run stores POSTs rather than enrolling people. A participant's first
# POST enrols them in a transaction of their own (their arm's counter is locked until it
# commits); a run on a new study would measure 250 enrolments at once in its first second.
python3 - <<'PY' || die "the schema study's participants could not post their first log"
import http.client
boundary = "----StudyStackBenchFirstPost"
connection = http.client.HTTPConnection("127.0.0.1", 8083, timeout=30)
for n in range(1000):
    fields = {"data_type": "log", "user_id": "U%07d" % n, "study_id": "3ZDOGAH", "module_index": "-1",
              "page": "home", "event": "entry", "timestamp": "2026-11-26T09:00:00+11:00"}
    body = "".join(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n" for k, v in fields.items())
    body += f"--{boundary}--\r\n"
    connection.request("POST", "/schema/SCHEMABENCH/data", body=body.encode(),
                       headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    reply = connection.getresponse()
    reply.read()
    if reply.status != 200:
        raise SystemExit(f"user U{n:07d}: {reply.status}")
PY

# demo_post.php as its README says to host it: php's own server, appending to data.txt beside it.
php_dir=$(mktemp -d)
cp bench/schema/demo_post.php "$php_dir/"
php_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
php -S "127.0.0.1:$php_port" -t "$php_dir" >/dev/null 2>&1 &
php_pid=$!
trap 'kill $php_pid 2>/dev/null || true; rm -rf "$php_dir"' EXIT
for _ in $(seq 1 50); do
    curl -s -o /dev/null "http://127.0.0.1:$php_port/demo_post.php" -F data_type=log && break
    sleep 0.1
done

log "wrk: demo_post.php under php -S (${connections} connections, ${duration}s)"
wrk -t2 -c"$connections" -d"${duration}s" --latency -s bench/schema/post.lua \
    "http://127.0.0.1:$php_port/demo_post.php" >"$results.schema-php"
wc -l <"$php_dir/data.txt" >"$results.schema-php-lines"
before=$(PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -t -A -h 127.0.0.1 -p 55432 -U studystack studystack_response \
    -c "SELECT count(*) FROM responses WHERE study_key = 'SCHEMABENCH'")
log "wrk: StudyStack POST /schema/SCHEMABENCH/data (${connections} connections, ${duration}s)"
wrk -t2 -c"$connections" -d"${duration}s" --latency -s bench/schema/post.lua \
    http://127.0.0.1:8083/schema/SCHEMABENCH/data >"$results.schema-studystack"
after=$(PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -t -A -h 127.0.0.1 -p 55432 -U studystack studystack_response \
    -c "SELECT count(*) FROM responses WHERE study_key = 'SCHEMABENCH'")
echo $((after - before)) >"$results.schema-stored"
# Then participants joining: every POST the first of a participant never seen (a study's launch
# day), so each enrols someone, in a transaction of its own.
log "wrk: StudyStack POST /schema/SCHEMABENCH/data, each a new participant's first (${connections} connections, ${duration}s)"
wrk -t2 -c"$connections" -d"${duration}s" --latency -s bench/schema/post.lua \
    http://127.0.0.1:8083/schema/SCHEMABENCH/data -- enrol >"$results.schema-enrol"
# The POSTs are measured, not kept: left pending, processing's own benchmark would spend its time
# on them. The participants the enrolment run made go with them, once the POSTs wrk left in flight
# have been stored (the count holds still for half a second).
schema_posts() {
    PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -t -A -h 127.0.0.1 -p 55432 -U studystack studystack_response \
        -c "SELECT count(*) FROM responses WHERE study_key = 'SCHEMABENCH'"
}
last=$(schema_posts)
settled=0
for _ in $(seq 1 60); do
    sleep 0.5
    now=$(schema_posts)
    [ "$now" = "$last" ] && { settled=1; break; }
    last=$now
done
[ "$settled" = 1 ] || die "the schema receiver was still storing POSTs 30 s after wrk ended"
PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 55432 -U studystack studystack_response \
    -c "DELETE FROM responses WHERE study_key = 'SCHEMABENCH'" \
    -c "DELETE FROM audit_events WHERE study_id = 'SCHEMABENCH' AND action = 'participant.enrolled' AND details->>'externalId' NOT LIKE 'U%'" \
    -c "DELETE FROM participants WHERE study_key = 'SCHEMABENCH' AND external_id NOT LIKE 'U%'" >/dev/null
