#!/usr/bin/env bash
# make bench: start the stack, publish a realistic study (20 activities, 200 steps), and drive
# the study-metadata app API and /healthz of the same service with wrk in one run; then measure
# the database ceiling with pgbench. Prints requests/s, p99 and the ratio to /healthz.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_commands wrk:wrk pgbench:postgresql-contrib python3:python3 curl:curl
scripts/run.sh >/dev/null
. .data/secrets.env
base=http://127.0.0.1:8081
duration=${BENCH_SECONDS:-10}
connections=${BENCH_CONNECTIONS:-64}

json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
token=$(curl -sf "$base/admin/v1/login" -H 'Content-Type: application/json' \
    -d "{\"email\":\"$STUDYSTACK_ADMIN_EMAIL\",\"password\":\"$STUDYSTACK_ADMIN_PASSWORD\"}" | json '["token"]')
auth=(-H "Authorization: Bearer $token" -H 'Content-Type: application/json')

# The benchmark app's credential is shown once, so it is kept beside the other local secrets.
credential_file=.data/bench-credential
if [ ! -s "$credential_file" ]; then
    curl -sf "${auth[@]}" "$base/admin/v1/apps" \
        -d '{"appId":"BENCHAPP","orgId":"BENCHORG","name":"Benchmark","kind":"gateway"}' | json '["credentials"]["ios"]' >"$credential_file"
    chmod 600 "$credential_file"
fi
python3 scripts/bench_study.py | curl -sf -o /dev/null "${auth[@]}" -X PUT "$base/admin/v1/studies/BENCHSTUDY/draft" --data-binary @-
curl -s -o /dev/null "${auth[@]}" -X POST "$base/admin/v1/studies/BENCHSTUDY/launch" || true
basic=$(printf '%s' "$(cat "$credential_file")" | base64 -w0)
app_headers=(-H "Authorization: Basic $basic" -H "applicationId: BENCHAPP" -H "orgId: BENCHORG")
curl -sf -o /dev/null "${app_headers[@]}" "$base/StudyMetaData/activityList?studyId=BENCHSTUDY" ||
    die "the benchmark study is not served"

results=$(mktemp)
run_wrk() { # name url
    log "wrk: $1 (${connections} connections, ${duration}s)"
    wrk -t2 -c"$connections" -d"${duration}s" --latency "${app_headers[@]}" "$2" >"$results.$1"
}
run_wrk healthz "$base/healthz"
run_wrk activityList "$base/StudyMetaData/activityList?studyId=BENCHSTUDY"
run_wrk activity "$base/StudyMetaData/activity?studyId=BENCHSTUDY&activityId=a7"

log "pgbench: the current-version lookup, 20 clients, ${duration}s (the database ceiling)"
cat >"$results.sql" <<'SQL'
SELECT s.status, v.version FROM studies s
JOIN LATERAL (SELECT version FROM study_versions WHERE study_id = s.study_id ORDER BY version DESC LIMIT 1) v ON true
WHERE s.app_id = 'BENCHAPP' AND s.study_id = 'BENCHSTUDY';
SQL
PGPASSWORD=$STUDYSTACK_DB_PASSWORD pgbench -n -M prepared -c 20 -j 2 -T "$duration" -f "$results.sql" \
    -h 127.0.0.1 -p 55432 -U studystack studystack_metadata >"$results.pgbench" 2>&1

python3 - "$results" <<'PY'
import re, sys
base = sys.argv[1]
def wrk(name):
    text = open(f"{base}.{name}").read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", text)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return rps, float(p99.group(1)) * scale, int(errors.group(1)) if errors else 0
health = wrk("healthz")
print(f"\n{'endpoint':<16}{'requests/s':>12}{'p99 ms':>10}{'non-2xx':>9}{'ratio to /healthz':>20}")
for name in ("healthz", "activityList", "activity"):
    rps, p99, errors = wrk(name)
    print(f"{name:<16}{rps:>12.0f}{p99:>10.2f}{errors:>9}{rps / health[0]:>20.2f}")
tps = re.search(r"tps = ([\d.]+)", open(f"{base}.pgbench").read())
print(f"\npgbench (current-version lookup, 20 clients): {float(tps.group(1)):.0f} tps" if tps else "\npgbench failed")
print("goal: ratio >= 0.8 and p99 < 10 ms at 64 connections")
PY
rm -f "$results" "$results".*
