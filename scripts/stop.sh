#!/usr/bin/env bash
# make stop: stop the console and the three services (SIGTERM, so in-flight requests finish) and the cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
data="$(pwd)/.data"

for svc in console response registration study-metadata; do
    pidfile="$data/run/$svc.pid"
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        log "stopping $svc (pid $pid)"
        kill -TERM "$pid"
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && { log "$svc did not stop in 10 s; killing it"; kill -KILL "$pid"; }
    fi
    rm -f "$pidfile"
done

if [ -f "$data/postgres/data/PG_VERSION" ]; then
    bindir=$(pg_bindir)
    if as_pg "$bindir/pg_ctl" -D "$data/postgres/data" status >/dev/null 2>&1; then
        log "stopping PostgreSQL"
        as_pg "$bindir/pg_ctl" -D "$data/postgres/data" -m fast -w stop >/dev/null
    fi
fi
