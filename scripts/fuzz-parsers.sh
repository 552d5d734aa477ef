#!/usr/bin/env bash
# make fuzz: coverage-guided fuzzing of every parser and validator that outside bytes reach
# (Tests/Fuzz/FuzzTargets.swift), with libFuzzer and AddressSanitizer, each target for
# FUZZ_SECONDS (default 300) in turn. Each target starts from its committed seeds
# (Tests/Fuzz/Corpus/<target>) and regression inputs (Tests/Fuzz/Regressions/<target>), and keeps
# what it finds new in .build/fuzz/<target>, so a later run goes on from there. An input that
# traps is written to .build/fuzz/crashes/; once the bug is mended, copy it into
# Tests/Fuzz/Regressions/<target>/, where `make test` replays it for good.
#
# Memory is a finding too (docs/security.md, Budgets): each target runs with a ceiling on the
# process's resident memory (FUZZ_RSS_LIMIT_MB, 1536: the runtime and AddressSanitizer's shadow
# take a few hundred of it) and on any one allocation (FUZZ_MALLOC_LIMIT_MB, 256), so an input
# that makes a parser or an expansion build far more than its size fails the run as a crash does,
# and is written to .build/fuzz/crashes/ like one.
#
# FUZZ_TARGETS=a,b fuzzes only those; FUZZ_SECONDS sets the time per target. Prints a line per
# target (inputs run, coverage, corpus, crashes, peak resident memory) and writes them to
# .build/test-output/fuzz-report.txt. Exits 1 when a target trapped or passed a memory limit.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_swift
ensure_build_libraries
seconds=${FUZZ_SECONDS:-300}
rss_limit=${FUZZ_RSS_LIMIT_MB:-1536}
malloc_limit=${FUZZ_MALLOC_LIMIT_MB:-256}
scratch=.build-fuzz
flags=(--scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING)
log "fuzz: building studystack-fuzz with libFuzzer and AddressSanitizer (in $scratch; the first build takes a while)"
swift build "${flags[@]}" --product studystack-fuzz
bin="$(swift build "${flags[@]}" --show-bin-path)/studystack-fuzz"

work=.build/fuzz
mkdir -p "$work/crashes" .build/test-output
report=.build/test-output/fuzz-report.txt
targets=$("$bin" list)
[ -n "${FUZZ_TARGETS:-}" ] && targets=$(tr ',' '\n' <<<"$FUZZ_TARGETS")
printf '%-20s %8s %12s %8s %8s %8s %9s\n' target seconds inputs coverage corpus crashes "peak MiB" | tee "$report"
failed=0
for target in $targets; do
    mkdir -p "$work/$target" "Tests/Fuzz/Regressions/$target"
    before=$(find "$work/crashes" -name "$target-*" | wc -l)
    started=$(date +%s)
    # The Swift runtime's backtracer and AddressSanitizer both catch a crash; libFuzzer needs
    # ASan's report. Leak checks are off: the Swift runtime keeps its metadata for good.
    status=0
    FUZZ_TARGET=$target SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
        "$bin" "$work/$target" "Tests/Fuzz/Corpus/$target" "Tests/Fuzz/Regressions/$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb="$rss_limit" -malloc_limit_mb="$malloc_limit" -max_len=65536 \
        -print_final_stats=1 \
        -artifact_prefix="$work/crashes/$target-" >"$work/$target.log" 2>&1 || status=$?
    elapsed=$(($(date +%s) - started))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target.log" | tail -n 1)
    coverage=$(grep -o 'cov: [0-9]*' "$work/$target.log" | tail -n 1 | cut -d' ' -f2)
    corpus=$(find "$work/$target" -type f | wc -l)
    crashes=$(($(find "$work/crashes" -name "$target-*" | wc -l) - before))
    peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$work/$target.log" | tail -n 1)
    printf '%-20s %8s %12s %8s %8s %8s %9s\n' "$target" "$elapsed" "${runs:-?}" "${coverage:-?}" "$corpus" "$crashes" "${peak:-?}" |
        tee -a "$report"
    if [ "$status" -ne 0 ] || [ "$crashes" -gt 0 ]; then
        failed=1
        grep -m1 -A12 -E 'Fatal error|ERROR: (AddressSanitizer|libFuzzer)|Precondition failed|out-of-memory|malloc\(' "$work/$target.log" >&2 ||
            tail -n 20 "$work/$target.log" >&2
    fi
done
if [ "$failed" -ne 0 ]; then
    log "fuzz: inputs that trap are in $work/crashes/; replay one with: FUZZ_TARGET=<target> $bin <file>"
    exit 1
fi
log "fuzz: no target trapped; the table is in $report"
