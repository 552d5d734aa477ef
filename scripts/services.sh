# How the local stack starts a service, for `make run` and for the benchmark's extra replicas.
# Sourced after scripts/lib.sh and .data/secrets.env, with `data` (the .data folder) and `bindir`
# (the release binaries) set.

pgport=55432
services=(study-metadata registration response)
declare -A port=([study-metadata]=8081 [registration]=8082 [response]=8083)
declare -A database=([study-metadata]=studystack_metadata [registration]=studystack_registration [response]=studystack_response)

# Each service accepts only the callers it serves, by their pair keys for it (docs/internal-auth.md).
caller_keys() {
    STUDY_METADATA_INTERNAL_KEY=$STUDY_METADATA_INTERNAL_KEY REGISTRATION_INTERNAL_KEY=$REGISTRATION_INTERNAL_KEY \
        RESPONSE_INTERNAL_KEY=$RESPONSE_INTERNAL_KEY python3 scripts/internal-keys.py callers "$1"
}
signing_key() {
    case "$1" in
    study-metadata) echo "$STUDY_METADATA_INTERNAL_KEY" ;;
    registration) echo "$REGISTRATION_INTERNAL_KEY" ;;
    response) echo "$RESPONSE_INTERNAL_KEY" ;;
    esac
}
# A process of the stack runs while its pid file names a live process (its supervisor).
running() { [ -f "$data/run/$1.pid" ] && kill -0 "$(cat "$data/run/$1.pid")" 2>/dev/null; }
# Whether its supervisor has had to start it again since `make run` started it.
restarted() { [ -s "$data/run/$1.restarts" ]; }
# Settings only one service reads, one VAR=value a line: study-metadata creates the first
# super-admin, and counts sign-ins through the console by the browser's address (the console, on
# loopback, is a trusted proxy; docs/console.md); registration seals secrets at rest with the
# encryption key and writes e-mail as files under .data/mail; response seals enrollment tokens
# with the same key and runs participant queries as studystack_query.
service_env() {
    case "$1" in
    study-metadata)
        printf '%s\n' "STUDYSTACK_ADMIN_EMAIL=$STUDYSTACK_ADMIN_EMAIL" "STUDYSTACK_ADMIN_PASSWORD=$STUDYSTACK_ADMIN_PASSWORD" \
            "RATE_LIMIT_TRUSTED_PROXIES=127.0.0.1"
        ;;
    registration)
        printf '%s\n' "STUDYSTACK_ENCRYPTION_KEY=$STUDYSTACK_ENCRYPTION_KEY" "MAIL_DIRECTORY=$data/mail" "CONSENT_DIRECTORY=$data/consents"
        ;;
    response)
        printf '%s\n' "STUDYSTACK_ENCRYPTION_KEY=$STUDYSTACK_ENCRYPTION_KEY" \
            "QUERY_DATABASE_URL=postgres://studystack_query:$STUDYSTACK_QUERY_DB_PASSWORD@127.0.0.1:$pgport/${database[response]}?sslmode=disable"
        ;;
    esac
}

# write_env FILE VAR=value...: the settings a process starts with, written to FILE (mode 0600,
# each value quoted for bash), which its supervisor reads. Never on a command line: any local
# user reads every process's arguments in /proc/<pid>/cmdline, while its environment is its
# owner's alone.
write_env() {
    local file=$1 setting
    shift
    (
        umask 077
        : >"$file"
        chmod 600 "$file"
        for setting in "$@"; do printf '%s=%q\n' "${setting%%=*}" "${setting#*=}"; done >"$file"
    )
}

# supervised NAME ENVFILE COMMAND...: runs COMMAND in the background under scripts/supervise.sh,
# with the settings in ENVFILE (write_env), in a session of its own, as process NAME: the
# supervisor's pid in .data/run/NAME.pid (it leads the process group the service is in), the
# service's output and each restart in .data/logs/NAME.log, the restarts counted in
# .data/run/NAME.restarts, the service's own pid in .data/run/NAME.child. A service that exits is
# started again.
supervised() {
    local name=$1 envfile=$2
    shift 2
    rm -f "$data/run/$name.restarts" "$data/run/$name.child"
    # The Swift runtime's backtracer writes where a crash happened to the log, without a prompt.
    SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=yes,interactive=no,color=no,sanitize=yes}" \
        setsid nohup scripts/supervise.sh "$name" "$data/logs/$name.log" "$data/run" --env-file "$envfile" -- "$@" \
        >/dev/null 2>&1 </dev/null &
    echo $! >"$data/run/$name.pid"
}

# start_service NAME SERVICE PORT [VAR=value ...]: starts SERVICE's binary, supervised, as process
# NAME on PORT, with the extra settings given. Settings already in the environment
# (PROCESSING_ENABLED, say) pass on.
start_service() {
    local name=$1 svc=$2 listen=$3 extra
    shift 3
    mapfile -t extra < <(service_env "$svc")
    write_env "$data/run/$name.env" \
        DATABASE_URL="postgres://studystack:$STUDYSTACK_DB_PASSWORD@127.0.0.1:$pgport/${database[$svc]}?sslmode=disable" \
        HTTP_PORT="$listen" \
        INTERNAL_SIGNING_KEY="$(signing_key "$svc")" \
        INTERNAL_CALLER_KEYS="$(caller_keys "$svc")" \
        LOG_FORMAT="${LOG_FORMAT:-json}" \
        "${extra[@]}" "$@"
    supervised "$name" "$data/run/$name.env" "$bindir/$svc"
}

# start_console [PORT]: the console on PORT (8080), supervised, with the key its session cookies
# are sealed with; it has no database, only the services' admin APIs.
start_console() {
    write_env "$data/run/console.env" HTTP_PORT="${1:-8080}" CONSOLE_KEY="$CONSOLE_KEY" STUDY_METADATA_URL=http://127.0.0.1:8081 \
        REGISTRATION_URL=http://127.0.0.1:8082 RESPONSE_URL=http://127.0.0.1:8083 LOG_FORMAT="${LOG_FORMAT:-json}"
    supervised console "$data/run/console.env" "$bindir/console"
}

# stop_process NAME: SIGTERM to the process group (the supervisor and its service), so in-flight
# work finishes and the supervisor does not start the service again; SIGKILL after 20 s.
stop_process() {
    local pidfile="$data/run/$1.pid" pid
    [ -f "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        log "stopping $1 (pid $pid)"
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
        for _ in $(seq 1 200); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 -- "-$pid" 2>/dev/null && { log "$1 did not stop in 20 s; killing it"; kill -KILL -- "-$pid"; }
    fi
    rm -f "$pidfile" "$data/run/$1.child" "$data/run/$1.env"
}
