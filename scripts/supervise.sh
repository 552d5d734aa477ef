#!/usr/bin/env bash
# supervise.sh NAME LOG STATE [--env-file FILE] -- COMMAND...: runs COMMAND, with the settings
# FILE holds (VAR=value lines, as scripts/services.sh's write_env writes them) in its
# environment, and starts it again whenever it exits by itself, as `make run` keeps its services
# up. The waits between starts double from 1 s to
# 30 s, and fall back to 1 s once a start has stayed up for a minute. Each restart is logged in
# LOG (the service's own log, after what the service wrote as it died: the Swift runtime's
# backtrace of a crash) and counted in STATE/NAME.restarts; STATE/NAME.child holds the running
# service's pid. SIGTERM or SIGINT to the supervisor is passed to the service, which is waited
# for, and ends the supervisor too: `make stop` stops a supervised service as it stopped a bare one.
set -uo pipefail
name=$1 logfile=$2 state=$3
shift 3
counter="$state/$name.restarts"
if [ "${1:-}" = --env-file ]; then
    # Read into the environment, which only the owner can read (/proc/<pid>/environ), so no
    # setting is ever an argument any local user can read.
    set -a
    # shellcheck disable=SC1090
    . "$2"
    set +a
    shift 2
fi
[ "${1:-}" = -- ] && shift

child=
stopping=
stop() {
    stopping=1
    [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
}
trap stop TERM INT

note() { printf '%s supervisor: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$logfile"; }

wait_seconds=1
restarts=$(cat "$counter" 2>/dev/null || echo 0)
while :; do
    started=$(date +%s)
    "$@" >>"$logfile" 2>&1 </dev/null &
    child=$!
    echo "$child" >"$state/$name.child"
    # `wait` returns early when a trapped signal arrives: wait again until the child is gone.
    status=
    while kill -0 "$child" 2>/dev/null; do wait "$child"; status=$?; done
    if [ -z "$status" ]; then wait "$child"; status=$?; fi
    [ -n "$stopping" ] && exit 0
    # 78 (EX_CONFIG) is a service's word that its settings are wrong: starting it again cannot
    # help (systemd's RestartPreventExitStatus=78 in deploy/systemd does the same).
    if [ "$status" = 78 ]; then
        note "$name exited with status 78 (its configuration is wrong; its log says which setting): not started again"
        exit 78
    fi
    if [ $(($(date +%s) - started)) -ge 60 ]; then wait_seconds=1; fi
    restarts=$((restarts + 1))
    echo "$restarts" >"$counter"
    case $status in
    13[0-9] | 14[0-9] | 15[0-9]) how="was ended by signal $((status - 128))" ;;
    *) how="exited with status $status" ;;
    esac
    note "$name $how; starting it again in ${wait_seconds} s (restart $restarts)"
    sleep "$wait_seconds" & wait $!
    [ -n "$stopping" ] && exit 0
    wait_seconds=$((wait_seconds * 2 > 30 ? 30 : wait_seconds * 2))
done
