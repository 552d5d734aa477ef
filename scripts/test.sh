#!/usr/bin/env bash
# make test: start a throwaway PostgreSQL cluster on a free port in a temporary directory,
# run the whole test suite against it (swift test, then the platform run: the three executables,
# the demo seed, the quickstart and the fuzzing, scripts/platform-test.sh; make run's supervision
# of its services, scripts/supervise-test.sh; then the container
# image built with buildah and started, scripts/image-test.sh), and stop it again whatever
# happens. Arguments go to swift test (--filter X runs only those tests); --platform-only
# runs only the platform part.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

# phase NAME COMMAND...: runs COMMAND and notes how long it took; the times are printed at the
# end (also when a phase fails) and kept in .build/test-output/phases.txt.
phases=()
phase() {
    local name=$1 start=$SECONDS
    shift
    log "$name"
    local status=0
    "$@" || status=$?
    phases+=("$(printf '%-44s %6d s%s' "$name" $((SECONDS - start)) "$([ $status -eq 0 ] || echo ' (failed)')")")
    return $status
}
print_phases() {
    [ ${#phases[@]} -gt 0 ] || return 0
    mkdir -p .build/test-output
    { printf '%s\n' "${phases[@]}"; printf '%-44s %6d s\n' "in all" "$SECONDS"; } >.build/test-output/phases.txt
    echo "make test, phase by phase:"
    cat .build/test-output/phases.txt
}

ensure_postgres
ensure_commands python3:python3 zbarimg:zbar-tools pdftoppm:poppler-utils pdftotext:poppler-utils pgbouncer:pgbouncer \
    pgrep:procps
# The zone files that Foundation and ZoneTimeTests' zoneinfo oracle read.
[ -f /usr/share/zoneinfo/Australia/Lord_Howe ] || apt_install tzdata
ensure_build_libraries
# nginx balances the replica tests' two replicas of each service (it lives in /usr/sbin, which a
# non-root PATH may lack).
[ -x /usr/sbin/nginx ] || apt_install nginx-light
# The move-in tests read a MyStudies 2.x deployment's MySQL databases from a MariaDB server of
# their own (the package's own service is not used).
[ -x /usr/sbin/mariadbd ] || apt_install mariadb-server
bindir=$(pg_bindir)
phases+=("$(printf '%-44s %6d s' "what was missing installed" "$SECONDS")")

workdir=$(mktemp -d "${TMPDIR:-/tmp}/studystack-test.XXXXXX")
hand_to_pg "$workdir"
port=$(free_port)

image_build=
cleanup() {
    [ -z "$image_build" ] || kill "$image_build" 2>/dev/null || true
    print_phases || true
    as_pg "$bindir/pg_ctl" -D "$workdir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$workdir"
}
trap cleanup EXIT INT TERM

log "starting a throwaway PostgreSQL cluster on port $port"
as_pg "$bindir/initdb" -D "$workdir/data" -U postgres -A trust -E UTF8 --no-sync >"$workdir/initdb.log" 2>&1 ||
    { cat "$workdir/initdb.log" >&2; die "initdb failed"; }
# fsync off: the cluster is thrown away, durability buys nothing here.
as_pg "$bindir/pg_ctl" -D "$workdir/data" -l "$workdir/postgres.log" -w -t 60 \
    -o "-p $port -k $workdir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=400" \
    start >/dev/null || { cat "$workdir/postgres.log" >&2; die "PostgreSQL did not start"; }

phase "OpenAPI documents checked" scripts/check-openapi.sh
phase "deployment files checked" scripts/check-deploy.sh
# The registration tests start a real SMTP server with this interpreter.
export STUDYSTACK_TEST_PYTHON="$PWD/$tools_venv/bin/python"

# The tests that start a cluster of their own (to restart it under load) use the same programs.
export STUDYSTACK_TEST_PG_BINDIR="$bindir"
export STUDYSTACK_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
# The import check makes an import a target has not declared a compile error: it is what keeps
# the services' core targets from reaching Hummingbird (docs/architecture.md, Where code goes).
phase "debug build with the tests" swift build --build-tests --explicit-target-dependency-import-check error
# At most three tests at a time: many start real services, a PostgreSQL load or a subprocess, and
# on a 2-core machine an unbounded run starves them past their HTTP timeouts.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-3}
replay_corpus() {
    mkdir -p .build/test-output
    .build/debug/studystack-fuzz replay Tests/Fuzz/Corpus 2>.build/test-output/fuzz-replay.log ||
        { tail -n 30 .build/test-output/fuzz-replay.log >&2; die "a fuzzing seed traps"; }
    .build/debug/studystack-fuzz replay Tests/Fuzz/Regressions 2>>.build/test-output/fuzz-replay.log ||
        { tail -n 30 .build/test-output/fuzz-replay.log >&2; die "a fuzzing regression input traps"; }
}
# unfinished_tests LOG: the tests a swift test log shows started and not ended, one a line.
unfinished_tests() {
    grep -a -v -e '^◇ Test case ' -e '^◇ Test run started' "$1" |
        sed -nE 's/^◇ Test (.*) started\.$/started \1/p; s/^[✔✘] Test (.*) (passed|failed) after .*/ended \1/p' |
        sed -E 's/ with [0-9]+ test cases?$//' |
        awk '{ state = $1; sub(/^[a-z]+ /, "") } state == "started" { open[$0] = 1 } state == "ended" { delete open[$0] }
             END { for (name in open) print "  " name }'
}
# end_test_runner: SIGKILL for the test runner SwiftPM started and, with its process group, the
# services and nginx it started (SwiftPM gives it a group of its own); SwiftPM then prints what
# the runner wrote and ends.
end_test_runner() {
    local runner
    for runner in $(pgrep -f 'StudyStackPackageTests.xctest' || true); do
        kill -KILL -- "-$(ps -o pgid= -p "$runner" | tr -d ' ')" 2>/dev/null || true
    done
}
# swift_tests LIMIT ARGS...: swift test, its output kept in .build/test-output/swift-test.log too,
# ended if it runs past LIMIT seconds (a test that hangs would otherwise hold CI until CI's own
# limit and leave nothing saying what hung). When it fails, the issues recorded are printed again
# last, just above the phase table, where the tail of a CI log shows them; when it ran out of
# time, the tests still running and the ends of the newest service logs.
swift_tests() {
    local limit=$1 status=0 timed_out=.build/test-output/swift-test-timed-out
    shift
    mkdir -p .build/test-output
    rm -f "$timed_out"
    (
        sleep "$limit" </dev/null >/dev/null 2>&1 &
        sleeper=$!
        trap 'kill $sleeper 2>/dev/null; exit 0' TERM
        wait $sleeper && { touch "$timed_out"; end_test_runner; }
    ) &
    local watchdog=$!
    swift test --skip-build "$@" 2>&1 | tee .build/test-output/swift-test.log || status=$?
    kill $watchdog 2>/dev/null || true
    wait $watchdog 2>/dev/null || true
    if [ -e "$timed_out" ]; then
        [ $status -ne 0 ] || status=1
        echo "swift test ran past ${limit} s and was ended; the tests still running:" >&2
        unfinished_tests .build/test-output/swift-test.log >&2
        local service_log cluster
        for service_log in $(ls -t "${TMPDIR:-/tmp}"/{study-metadata,registration,response,console}-*.log 2>/dev/null | head -n 8); do
            echo "--- the end of $service_log:" >&2
            tail -n 15 "$service_log" | cut -c1-300 >&2
        done
        # The PostgreSQL clusters tests made for themselves (pg_ctl starts them in a session of
        # their own).
        for cluster in "${TMPDIR:-/tmp}"/pg-*/data; do
            [ -f "$cluster/postmaster.pid" ] && as_pg "$bindir/pg_ctl" -D "$cluster" -m immediate stop >/dev/null 2>&1 || true
        done
    fi
    if [ $status -ne 0 ]; then
        echo "the issues the tests recorded (all of them in .build/test-output/swift-test.log):" >&2
        grep -a 'recorded an issue' .build/test-output/swift-test.log | cut -c1-300 | tail -n 12 >&2 || true
    fi
    return $status
}
if [ "${1:-}" = --platform-only ]; then
    phase "platform run" scripts/platform-test.sh
elif [ $# -gt 0 ]; then
    phase "swift test $*" swift_tests 3600 "$@" # a subset (--filter): the platform run is left out
else
    # The replica test appends its counts (and, when it fails, the replicas' logs) to these.
    rm -f .build/test-output/replicas-*.txt
    export_memory_test="FHIRBulkExportScaleTests/aStudyOf100000ResponsesExportsLineByLineInBoundedMemory"
    # The image's executable is built in release, in a build folder of its own (SwiftPM locks the
    # one it uses), beside the tests rather than after them: at the lowest CPU priority it takes
    # only what they leave idle, as they wait on PostgreSQL, services and polls much of the time,
    # and the image step finds it built.
    # In a process group of its own (setsid), so that it can be paused whole, compiler jobs and all.
    mkdir -p .build/test-output
    setsid --wait nice -n 19 swift build -c release --static-swift-stdlib --product studystack --scratch-path .build-image \
        >.build/test-output/image-build.log 2>&1 &
    image_build=$!
    wait_for_image_build() {
        local pid=$image_build
        image_build=
        wait "$pid" || { tail -n 30 .build/test-output/image-build.log >&2; die "the image's release build failed"; }
    }
    # The export's memory test measures one service's peak while it writes and serves 200 MB;
    # beside the image's build (a release build of everything), the same export's peak grew by a
    # third again and crossed its bound. The build is paused for the test's minute, not waited for.
    export_memory_alone() {
        [ -n "$image_build" ] && kill -STOP -- "-$image_build" 2>/dev/null
        local status=0
        swift_tests 900 --filter "$export_memory_test" || status=$?
        [ -n "$image_build" ] && kill -CONT -- "-$image_build" 2>/dev/null
        return $status
    }
    # The replica test runs alone afterwards: its eight processes, nginx and a load that hashes a
    # password per sign-up take both cores, and beside it other tests' clients time out.
    # The limits are about three times what a cold two-core machine takes.
    # The export's memory test runs alone afterwards too: it bounds the response service's peak
    # memory while it writes 200 MB of files, and beside the other tests (two platforms moving
    # 50,000 responses in, the image's build) the same export's peak grew by half as much again.
    phase "Swift tests (all but the replicas)" swift_tests 2700 --skip "ReplicaTests|$export_memory_test"
    # Every committed fuzzing seed and regression input through its parser (seconds; make fuzz
    # explores). A trap names the input last written to the log.
    phase "fuzzing seeds replayed" replay_corpus
    phase "export memory test" export_memory_alone
    phase "replica test" swift_tests 900 --filter ReplicaTests
    phase "platform run" scripts/platform-test.sh
    phase "supervision test" scripts/supervise-test.sh
    phase "image's release build, the part not overlapped" wait_for_image_build
    phase "image built and started" scripts/image-test.sh
fi
