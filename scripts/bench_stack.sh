# The benchmarks' stack (sourced by scripts/bench.sh and scripts/bench_scale.sh after scripts/lib.sh):
# bench_stack_start restarts the local stack with the per-address rate limits lifted (wrk sends
# everything from one address) and the response service taking submissions only
# (PROCESSING_ENABLED=false, as an ingest replica would; processing is measured on its own), signs in
# as the super-admin, and publishes the benchmark study BENCHSTUDY of the app BENCHAPP
# (scripts/bench_study.py). It sets base (study-metadata's address), token and auth (the admin's
# bearer token and its curl headers) and app_headers (the app's credential, as the apps send it).
# bench_quiesce brings the databases to rest between what is measured.

bench_run_stack() {
    PROCESSING_ENABLED=false RATE_LIMIT_PER_MINUTE=100000 SCHEMA_POSTS_PER_MINUTE=1000000 scripts/run.sh >/dev/null
}

json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

bench_stack_start() {
    scripts/stop.sh >/dev/null 2>&1 || true
    bench_run_stack
    . .data/secrets.env
    base=http://127.0.0.1:8081
    token=$(curl -sf "$base/admin/v1/login" -H 'Content-Type: application/json' \
        -d "{\"email\":\"$STUDYSTACK_ADMIN_EMAIL\",\"password\":\"$STUDYSTACK_ADMIN_PASSWORD\"}" | json '["token"]')
    auth=(-H "Authorization: Bearer $token" -H 'Content-Type: application/json')

    # The benchmark app's credential is shown once, so it is kept beside the other local secrets.
    local credential_file=.data/bench-credential
    if [ ! -s "$credential_file" ]; then
        curl -sf "${auth[@]}" "$base/admin/v1/apps" \
            -d '{"appId":"BENCHAPP","orgId":"BENCHORG","name":"Benchmark","kind":"gateway"}' | json '["credentials"]["ios"]' >"$credential_file"
        chmod 600 "$credential_file"
    fi
    python3 scripts/bench_study.py | curl -sf -o /dev/null "${auth[@]}" -X PUT "$base/admin/v1/studies/BENCHSTUDY/draft" --data-binary @-
    curl -s -o /dev/null "${auth[@]}" -X POST "$base/admin/v1/studies/BENCHSTUDY/launch" || true
    # Already launched by an earlier run: a changed document (daily30's dates move with the day) is
    # published as an update (409 when nothing changed).
    curl -s -o /dev/null "${auth[@]}" -X POST "$base/admin/v1/studies/BENCHSTUDY/publish-updates" || true
    local basic
    basic=$(printf '%s' "$(cat "$credential_file")" | base64 -w0)
    app_headers=(-H "Authorization: Basic $basic" -H "applicationId: BENCHAPP" -H "orgId: BENCHORG")
    curl -sf -o /dev/null "${app_headers[@]}" "$base/StudyMetaData/activityList?studyId=BENCHSTUDY" ||
        die "the benchmark study is not served"
}

# What was deleted or rewritten vacuumed and what was written counted (as autovacuum would soon
# after), the pages written back to disk, and autovacuum (woken by the rows changed) finished, so
# that none of it runs under the next measurement: a seed, a recount of every participant and a
# processing run each leave hundreds of thousands of dead rows behind, and a figure measured beside
# their vacuuming is the vacuum's.
bench_quiesce() {
    local db busy=0
    for db in registration response metadata; do
        as_pg psql -X -q -v ON_ERROR_STOP=1 -h "$PWD/.data/postgres/run" -p 55432 -U postgres -d "studystack_$db" -c "VACUUM ANALYZE"
    done
    as_pg psql -X -q -v ON_ERROR_STOP=1 -h "$PWD/.data/postgres/run" -p 55432 -U postgres -d postgres -c CHECKPOINT
    for _ in $(seq 1 600); do
        busy=$(as_pg psql -X -q -t -A -h "$PWD/.data/postgres/run" -p 55432 -U postgres -d postgres \
            -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")
        [ "$busy" = 0 ] && return 0
        sleep 0.1
    done
    log "warning: autovacuum was still running after 60 s; the next measurements share the machine with it"
}
