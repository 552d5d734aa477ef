#!/usr/bin/env bash
# make test's check of scripts/supervise.sh, which keeps `make run`'s services up:
# - the console (the real executable) SIGKILLed is started again, the restart logged and counted,
#   and it answers again under a new pid;
# - a program that traps (an index out of range, as a Swift service would on a bug) leaves the
#   Swift runtime's backtrace in its log, with the function it died in, and is started again;
# - SIGTERM to the process group (what `make stop` sends) ends the service and its supervisor,
#   and starts nothing again;
# - a service that exits 78 (its settings are wrong) is not started again;
# - the console started as make run starts it carries its key in its environment, read from a
#   0600 file, never on its or its supervisor's command line.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

bin=.build/debug
[ -x "$bin/console" ] || die "$bin/console is not built (swift build)"
work=$(mktemp -d "${TMPDIR:-/tmp}/studystack-supervise.XXXXXX")
groups=()
cleanup() {
    for group in "${groups[@]}"; do kill -KILL -- "-$group" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# As scripts/services.sh starts a service: its own session, the backtracer writing to the log.
export SWIFT_BACKTRACE=enable=yes,interactive=no,color=no,sanitize=yes
supervise() {
    local name=$1
    shift
    setsid scripts/supervise.sh "$name" "$work/$name.log" "$work" -- "$@" >/dev/null 2>&1 </dev/null &
    groups+=($!)
}
# poll SECONDS COMMAND...: true once COMMAND succeeds, false when SECONDS have passed.
poll() {
    local deadline=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}
restarts() { cat "$work/$1.restarts" 2>/dev/null || echo 0; }
# The console is alive (its /readyz would wait on study-metadata, which is not here).
healthy() { [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/healthz")" = 200 ]; }
# The supervisor and its process group are both gone. The pid counts too: between the fork and
# setsid's setsid() the group does not exist yet, and a group check alone reads that as "gone".
gone() { ! kill -0 -- "-$1" 2>/dev/null && ! kill -0 "$1" 2>/dev/null; }

# --- a killed service comes back ------------------------------------------------------------------
port=$(free_port)
supervise console env HTTP_PORT="$port" CONSOLE_KEY="$(head -c 32 /dev/urandom | base64 | tr -d '\n')" \
    STUDY_METADATA_URL=http://127.0.0.1:9 REGISTRATION_URL=http://127.0.0.1:9 RESPONSE_URL=http://127.0.0.1:9 "$bin/console"
console=${groups[-1]}
poll 60 healthy "$port" || die "supervise: the console did not start"
first=$(cat "$work/console.child")
kill -KILL "$first"
back() { [ "$(restarts console)" = 1 ] && [ "$(cat "$work/console.child")" != "$first" ] && healthy "$port"; }
poll 30 back || die "supervise: the console killed with SIGKILL was not started again within 30 s"
grep -q "supervisor: console was ended by signal 9; starting it again in 1 s (restart 1)" "$work/console.log" ||
    die "supervise: the restart is not in the console's log: $(tail -n 3 "$work/console.log")"

# --- settings never on a command line: make run's own start_console -------------------------------
# Any local user reads every process's arguments in /proc/<pid>/cmdline; a process's environment
# is its owner's alone. The console is started as make run starts it (scripts/services.sh), and
# neither its supervisor nor it may carry the cookie key as an argument.
(
    data="$work/make-run" bindir=$bin
    mkdir -p "$data/logs" "$data/run"
    . scripts/services.sh
    CONSOLE_KEY=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
    cport=$(free_port)
    start_console "$cport"
    supervisor=$(cat "$data/run/console.pid")
    trap 'kill -KILL -- "-$supervisor" 2>/dev/null || true' EXIT
    poll 60 healthy "$cport" || die "supervise: the console started as make run starts it did not answer"
    child=$(cat "$data/run/console.child")
    for pid in "$supervisor" "$child"; do
        tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$CONSOLE_KEY" &&
            die "supervise: the console's key is on the command line of pid $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
    done
    tr '\0' '\n' <"/proc/$child/environ" | grep -qxF "CONSOLE_KEY=$CONSOLE_KEY" ||
        die "supervise: the console's key did not reach it through its environment"
    mode=$(stat -c %a "$data/run/console.env")
    [ "$mode" = 600 ] || die "supervise: the console's settings file is mode $mode"
    kill -TERM -- "-$supervisor"
    poll 30 gone "$supervisor" || die "supervise: the console started as make run starts it did not stop"
)

# --- make stop: the group ends, and nothing is started again ---------------------------------------
second=$(cat "$work/console.child")
kill -TERM -- "-$console"
poll 30 gone "$console" || die "supervise: the console and its supervisor did not end within 30 s of SIGTERM"
kill -0 "$second" 2>/dev/null && die "supervise: the console outlived its supervisor"
[ "$(restarts console)" = 1 ] || die "supervise: a stopped console was started again"

# --- a crash leaves a backtrace --------------------------------------------------------------------
cat >"$work/crash.swift" <<'SWIFT'
func lookUp(_ index: Int) -> Int {
    let values = [1, 2, 3]
    return values[index]
}
print(lookUp(CommandLine.arguments.count + 5))
SWIFT
swiftc -g -Onone -o "$work/crash" "$work/crash.swift" 2>"$work/swiftc.log" || { cat "$work/swiftc.log" >&2; die "supervise: swiftc failed"; }
supervise crash "$work/crash"
crash=${groups[-1]}
crashed() { [ "$(restarts crash)" -ge 1 ]; }
poll 60 crashed || die "supervise: the crashing program was not started again within 60 s"
kill -TERM -- "-$crash"
poll 30 gone "$crash" || die "supervise: the crashing program's supervisor did not end on SIGTERM"
for expected in "Fatal error: Index out of range" "Program crashed" "lookUp" "crash.swift:3" "supervisor: crash was ended by signal"; do
    grep -q -F "$expected" "$work/crash.log" || die "supervise: the crash's log has no \"$expected\": $(head -n 20 "$work/crash.log")"
done
# --- a configuration error is not retried -----------------------------------------------------------
supervise misconfigured env HTTP_PORT=not-a-port "$bin/console"
misconfigured=${groups[-1]}
refused() { grep -q "misconfigured exited with status 78 (its configuration is wrong" "$work/misconfigured.log" 2>/dev/null; }
poll 30 refused || die "supervise: the configuration error's stop is not in the log: $(tail -n 3 "$work/misconfigured.log" 2>&1)"
poll 30 gone "$misconfigured" || die "supervise: a service with a configuration error was started again and again"
[ "$(restarts misconfigured)" = 0 ] || die "supervise: a configuration error was counted as a restart"
log "supervise: a killed console came back (restart logged and counted), a crash left its backtrace, SIGTERM stopped both"
