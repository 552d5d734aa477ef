#!/usr/bin/env bash
# make check: the fast half of the tests. It builds as make test does and runs `swift test`
# without make test's throwaway PostgreSQL cluster, so every test that needs the cluster (or the
# tools make test installs beside it) is skipped with its reason (`.needsCluster`,
# `.needsPrograms` in Tests/TestSupport/TestEnvironment.swift), and what needs nothing runs: the
# cores' use cases against their in-memory ports, the parsers, the schedule engine, the
# validator. `make test` stays the whole run. Arguments go to swift test.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_swift
ensure_build_libraries
start=$SECONDS
swift build --build-tests --explicit-target-dependency-import-check error
built=$SECONDS
mkdir -p .build/test-output
status=0
env -u STUDYSTACK_TEST_DATABASE_URL SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-3}" \
    swift test --skip-build "$@" 2>&1 | tee .build/test-output/check.log || status=$?
passed=$(grep -c '^✔ Test .* passed' .build/test-output/check.log || true)
skipped=$(grep -c '^➜ Test .* skipped' .build/test-output/check.log || true)
printf 'make check: build %d s, tests %d s (%s passed; %s skipped for the cluster, listed in .build/test-output/check.log)\n' \
    $((built - start)) $((SECONDS - built)) "$passed" "$skipped"
exit $status
