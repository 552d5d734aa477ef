#!/usr/bin/env bash
# make bench, processing into tables: how fast the response processor turns a backlog of 30-answer
# responses into rows of the study's tables, with one processing replica and then with two, beside
# pgbench doing the same inserts (bench/pgbench-processing.sql) in the same run.
#
# Called by scripts/bench.sh once processResponse has left its backlog, with the stack running and
# the main response service taking submissions only (PROCESSING_ENABLED=false). The replicas are
# extra processes of the response binary with processing on, as a deployment's would be. Writes
# RESULTS.processing-{1,2,1x2} ("responses seconds errors pending-left idle-cpu-percent") and
# RESULTS.pgbench-processing. BENCH_PROCESSING_RUNS chooses the runs ("1 2 1x2" unless set) and
# BENCH_PROCESSING_PGBENCH=0 leaves pgbench out (make bench-scale measures one replica at each size).
#
# scripts/bench_processing.sh RESULTS
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

results=$1
root=$(pwd)
data="$root/.data"
# shellcheck disable=SC1091
. "$data/secrets.env"
bindir=$(swift build -c release --show-bin-path)
. scripts/services.sh
duration=${BENCH_SECONDS:-10}
# Enough for three measured runs at several thousand responses a second without running dry.
backlog=${BENCH_BACKLOG:-120000}

rsql() { PGPASSWORD=$STUDYSTACK_DB_PASSWORD psql -q -X -t -A -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pgport" -U studystack studystack_response "$@"; }
count() { rsql -c "SELECT count(*) FROM responses WHERE study_key = 'BENCHSTUDY' AND status $1"; }
now() { date +%s.%N; }
# The machine's CPU time so far, idle and in all (/proc/stat's first line): whether a run left cores
# unused, which says whether another replica had anything to add.
cpu_times() { awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
# Each measured run starts right after a checkpoint, so each writes the same full pages to the WAL
# at its start, instead of one run paying for a checkpoint that falls inside it and the next not.
checkpoint() { as_pg psql -X -q -h "$data/postgres/run" -p "$pgport" -U postgres -d postgres -c CHECKPOINT; }

# --- the backlog: processResponse's responses, topped up with copies under fresh run ids ----------
templates=$(rsql -c "SELECT count(*) FROM responses WHERE study_key = 'BENCHSTUDY' AND activity_id = 'daily30'")
[ "$templates" -gt 0 ] || die "processResponse left no daily30 responses to process"
pending=$(count "= 'pending'")
# Copies made by earlier runs are still there (processed): each run's copies are its own.
copy="copy-$(random_hex 4)"
log "processing: topping the backlog up from $pending to $backlog pending responses"
rsql -c "
    INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, language, metadata,
                           data, fingerprint)
    SELECT t.participant_id, t.study_key, t.activity_id, t.activity_version, t.activity_run_id || '-$copy-' || g,
           t.language, t.metadata, t.data, encode(sha256(convert_to(t.fingerprint || '-$copy-' || g, 'UTF8')), 'hex')
    FROM generate_series(1, ceil(greatest(0, $backlog - $pending) / least($templates, 1000)::numeric)::int) g
    CROSS JOIN (SELECT * FROM responses WHERE study_key = 'BENCHSTUDY' AND activity_id = 'daily30' ORDER BY id LIMIT 1000) t
    ON CONFLICT (participant_id, fingerprint) DO NOTHING"
rsql -c "ANALYZE responses"

# --- one replica, then two ---------------------------------------------------------------------
# Each replica starts, fetches the design and creates nothing new (the tables exist from earlier
# runs or are made by the first response); the clock starts once rows are arriving, and stops
# after the run's seconds. The backlog must outlast the run, or the rate would be of a drained queue.
replica_names=()
stop_replicas() { for name in "${replica_names[@]}"; do stop_process "$name"; done; replica_names=(); }
trap stop_replicas EXIT
# Then one replica again storing two slices at once (PROCESSING_STORES=2), for operators whose
# database has cores to spare: RESULTS.processing-1x2.
for run in ${BENCH_PROCESSING_RUNS:-1 2 1x2}; do
    replicas=${run%x*}
    stores=1
    [ "$run" = 1x2 ] && stores=2
    for i in $(seq 1 "$replicas"); do
        name="processing-$i"
        replica_names+=("$name")
        PROCESSING_ENABLED=true PROCESSING_STORES=$stores start_service "$name" response $((8093 + i))
    done
    for i in $(seq 1 "$replicas"); do
        wait_ready "http://127.0.0.1:$((8093 + i))" || die "processing replica $i is not ready; see .data/logs/processing-$i.log"
    done
    start=$(count "<> 'pending'")
    deadline=$(($(date +%s) + 60))
    while [ "$(count "<> 'pending'")" -le "$start" ]; do
        [ "$(date +%s)" -lt "$deadline" ] || die "the processing replicas stored nothing in 60 s; see .data/logs/processing-*.log"
        sleep 0.1
    done
    checkpoint
    before=$(count "<> 'pending'")
    began=$(now)
    read -r idle_before all_before < <(cpu_times)
    log "processing: $replicas replica(s), $stores slice(s) stored at once each, ${duration}s"
    sleep "$duration"
    after=$(count "<> 'pending'")
    ended=$(now)
    read -r idle_after all_after < <(cpu_times)
    left=$(count "= 'pending'")
    errors=$(count "= 'error'")
    stop_replicas
    idle=$(python3 -c "print(round(100 * ($idle_after - $idle_before) / ($all_after - $all_before)))")
    echo "$((after - before)) $(python3 -c "print($ended - $began)") $errors $left $idle" >"$results.processing-$run"
    [ "$left" -gt 0 ] || log "warning: the backlog ran out during the $run run; its rate is a lower bound"
done
rsql -c "SELECT coalesce(max(error_message), '') FROM responses WHERE study_key = 'BENCHSTUDY' AND status = 'error'" \
    >"$results.processing-error"

[ "${BENCH_PROCESSING_PGBENCH:-1}" != 0 ] || exit 0

# --- pgbench: the same database work per response, 20 clients -----------------------------------
# Each transaction locks one processed response and reads its answers, inserts its rows as the
# processor does (the daily30 row, the three choice answers' rows, the 30 timing rows) and sets
# its status. The responses it picks are this run's processed ones, by number. Twenty clients, as
# for the other pgbench figures: the database's pace with one response per transaction.
schema=$(rsql -c "SELECT schema_name FROM study_schemas WHERE study_key = 'BENCHSTUDY'")
[ -n "$schema" ] || die "BENCHSTUDY has no tables: its responses were not processed"
rsql -c "SET client_min_messages = warning; DROP TABLE IF EXISTS bench_processed;
    CREATE TABLE bench_processed AS
    SELECT (row_number() OVER (ORDER BY r.id))::int AS n, r.id, r.participant_id, p.number AS participant_number
    FROM responses r JOIN participants p ON p.id = r.participant_id
    WHERE r.study_key = 'BENCHSTUDY' AND r.status = 'processed';
    ALTER TABLE bench_processed ADD PRIMARY KEY (n)"
processed=$(rsql -c "SELECT count(*) FROM bench_processed")
[ "$processed" -gt 0 ] || die "no processed responses for pgbench to pick"
pgbench_processing() { # pgbench options...
    PGOPTIONS="-c search_path=\"$schema\",public" PGPASSWORD=$STUDYSTACK_DB_PASSWORD pgbench -n -M prepared \
        -D processed="$processed" -f bench/pgbench-processing.sql -h 127.0.0.1 -p "$pgport" -U studystack \
        studystack_response "$@"
}
# The script must insert what the processor inserts: one transaction of it, then its rows are
# compared with those of the last response the processor stored (the same answers).
top="\"$schema\".daily30"
service_key=$(rsql -c "SELECT max(\"Key\") FROM $top")
pgbench_processing -c 1 -t 1 >"$results.pgbench-processing" 2>&1 ||
    die "bench/pgbench-processing.sql fails: $(tail -n 3 "$results.pgbench-processing")"
pgbench_key=$(rsql -c "SELECT max(\"Key\") FROM $top")
same=$(rsql -c "
    WITH row_of AS (SELECT \"Key\" AS k, to_jsonb(t) - 'Key' - 'ParticipantId' - 'Created' AS answers FROM $top t
                    WHERE \"Key\" IN ($service_key, $pgbench_key)),
    choices_of AS (
        SELECT k, array_agg(choice ORDER BY choice) AS choices FROM (
            SELECT \"daily30Id\" AS k, 'q3:' || q3 AS choice FROM \"$schema\".daily30q3 UNION ALL
            SELECT \"daily30Id\", 'q13:' || q13 FROM \"$schema\".daily30q13 UNION ALL
            SELECT \"daily30Id\", 'q23:' || q23 FROM \"$schema\".daily30q23) c
        WHERE k IN ($service_key, $pgbench_key) GROUP BY k),
    timings_of AS (
        SELECT top_key AS k, array_agg(field_name || start_time || end_time || skipped ORDER BY field_name) AS timings
        FROM response_metadata WHERE list_name = 'daily30' AND top_key IN ($service_key, $pgbench_key) GROUP BY top_key)
    SELECT count(*) = 2 AND count(DISTINCT (r.answers, c.choices, t.timings)) = 1
    FROM row_of r JOIN choices_of c USING (k) JOIN timings_of t USING (k)")
[ "$service_key" != "$pgbench_key" ] && [ "$same" = t ] ||
    die "bench/pgbench-processing.sql no longer inserts what the processor inserts (rows $service_key and $pgbench_key differ)"
log "pgbench: bench/pgbench-processing.sql (the processor's inserts, one response a transaction), 20 clients, ${duration}s"
checkpoint
pgbench_processing -c 20 -j 2 -T "$duration" >"$results.pgbench-processing" 2>&1 ||
    log "pgbench of the processor's inserts failed: $(tail -n 3 "$results.pgbench-processing")"
rsql -c "DROP TABLE bench_processed"
