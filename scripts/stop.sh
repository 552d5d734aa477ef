#!/usr/bin/env bash
# make stop: stop the console and the three services (SIGTERM, so in-flight requests finish) and the cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
data="$(pwd)/.data"

. scripts/services.sh
# The console first, then the benchmark's extra processing replicas (scripts/bench_processing.sh),
# then the services.
extra=()
for pidfile in "$data"/run/processing-*.pid; do [ -e "$pidfile" ] && extra+=("$(basename "$pidfile" .pid)"); done
for name in console "${extra[@]}" response registration study-metadata; do stop_process "$name"; done

if [ -f "$data/postgres/data/PG_VERSION" ]; then
    bindir=$(pg_bindir)
    if as_pg "$bindir/pg_ctl" -D "$data/postgres/data" status >/dev/null 2>&1; then
        log "stopping PostgreSQL"
        as_pg "$bindir/pg_ctl" -D "$data/postgres/data" -m fast -w stop >/dev/null
    fi
fi
