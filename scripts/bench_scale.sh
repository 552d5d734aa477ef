#!/usr/bin/env bash
# make bench-scale: how every cost grows as BENCHSTUDY grows from 10,000 to 100,000 and 1,000,000
# participants (scripts/bench_scale.py; docs/operations.md, Capacity). Not part of make test or CI:
# the largest size needs about an hour and a half to two hours (its growth alone 45 minutes or more)
# and some 60 GB of disk on a 2-core machine; 10,000 and 100,000 together take about 45 minutes.
# BENCH_SCALE_SIZES chooses the sizes (multiples of 10,000), BENCH_SCALE_RESPONSES the responses
# each participant has (3 unless set), BENCH_SECONDS each measurement's length (10 unless set).
# BENCH_PACE_MS the pause between a person's pages (about 1000 ms) and BENCH_PACE_SECONDS how long each
# paced run lasts (3 times BENCH_SECONDS unless set).
#
# The report is kept in bench/results/, named scale-<when>-<commit>.txt, with the figures as JSON
# beside it. The databases are left at the largest size: make bench afterwards asks for
# make clean-data first.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

mkdir -p bench/results
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
name="bench/results/scale-$(date -u +%Y-%m-%dT%H%MZ)-$commit"
{
    echo "make bench-scale at $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $commit$(git diff --quiet HEAD 2>/dev/null || echo ' with uncommitted changes')"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -m), $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo
} >"$name.txt"
finished=
trap '[ -n "$finished" ] || { rm -f "$name.txt"; log "make bench-scale stopped before its end: no report kept (the figures so far: $name.json)"; }' EXIT

ensure_commands wrk:wrk pgbench:postgresql-contrib python3:python3 curl:curl
. scripts/bench_stack.sh
bench_stack_start
python3 scripts/bench_scale.py "$name.json" | tee -a "$name.txt"
finished=1
log "the report is in $name.txt"
