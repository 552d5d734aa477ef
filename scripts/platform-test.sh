#!/usr/bin/env bash
# The platform as a whole, the last part of make test: start the three debug executables on free
# ports against the test cluster (STUDYSTACK_TEST_DATABASE_URL, a superuser URL), seed the demo
# (scripts/seed-demo.sh), paste the quickstart walkthrough (docs/quickstart.md) command by command
# and check that the answers it submits come back, start the console and drive it in headless
# Chromium (Tests/Browser), then fuzz every app and admin API with schemathesis (scripts/fuzz.sh). The services' logs are printed when something fails.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

: "${STUDYSTACK_TEST_DATABASE_URL:?run through make test (scripts/test.sh), which starts the test cluster}"
ensure_commands curl:curl jq:jq psql:postgresql-client openssl:openssl
ensure_tools_venv
bin=.build/debug
for svc in study-metadata registration response console; do
    [ -x "$bin/$svc" ] || die "$bin/$svc is not built (swift build)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/studystack-platform.XXXXXX")
data="$work/data"
mkdir -p "$data/mail" "$data/consents" "$work/logs"
pids=()
cleanup() {
    local status=$?
    if [ "${PLATFORM_KEEP:-}" = 1 ]; then
        log "platform: PLATFORM_KEEP=1: the services stay up; logs and data in $work"
        return
    fi
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ "$status" -ne 0 ]; then
        for log in "$work"/logs/*.log; do
            printf '\n--- %s\n' "$(basename "$log")" >&2
            # A crash's report, from its first line; otherwise the last lines.
            if grep -q -m1 -E '^(Fatal error|.*Crash|💣)' "$log"; then
                grep -m1 -A60 -E '^(Fatal error|.*Crash|💣)' "$log" >&2
            else
                tail -n 15 "$log" >&2
            fi
        done
    fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# --- databases: made by deploy/postgres-init.sh, as the compose deployment makes them ---------------
prefix="platform_$(random_hex 4)"
create_run_databases "$prefix"
trap 'cleanup; [ "${PLATFORM_KEEP:-}" = 1 ] || drop_run_databases "$prefix"' EXIT INT TERM

# --- the three services, each knowing where the others are -------------------------------------
key() { head -c 32 /dev/urandom | base64 | tr -d '\n'; }
declare -A port signing
for svc in study-metadata registration response; do port[$svc]=$(free_port); signing[$svc]=$(key); done
encryption_key=$(key)
export STUDY_METADATA_INTERNAL_KEY=${signing[study-metadata]} REGISTRATION_INTERNAL_KEY=${signing[registration]} \
    RESPONSE_INTERNAL_KEY=${signing[response]}
admin_password="Platform-$(head -c 9 /dev/urandom | base64 | tr -d '/+=')-1a"
cat >"$data/secrets.env" <<SECRETS
STUDYSTACK_ADMIN_EMAIL=admin@platform.test
STUDYSTACK_ADMIN_PASSWORD=$admin_password
SECRETS
export STUDY_METADATA_URL="http://127.0.0.1:${port[study-metadata]}"
export REGISTRATION_URL="http://127.0.0.1:${port[registration]}"
export RESPONSE_URL="http://127.0.0.1:${port[response]}"
declare -A database=([study-metadata]=metadata [registration]=registration [response]=response)
for svc in study-metadata registration response; do
    env HTTP_HOST=127.0.0.1 HTTP_PORT="${port[$svc]}" \
        DATABASE_URL="postgres://${prefix}_${database[$svc]}:${db_password[${database[$svc]}]}@$hostport/${prefix}_${database[$svc]}?sslmode=disable" \
        DATABASE_MAX_CONNECTIONS=8 \
        INTERNAL_SIGNING_KEY="${signing[$svc]}" INTERNAL_CALLER_KEYS="$(python3 scripts/internal-keys.py callers "$svc")" \
        STUDYSTACK_ENCRYPTION_KEY="$encryption_key" \
        STUDYSTACK_ADMIN_EMAIL=admin@platform.test STUDYSTACK_ADMIN_PASSWORD="$admin_password" \
        MAIL_DIRECTORY="$data/mail" CONSENT_DIRECTORY="$data/consents" \
        QUERY_DATABASE_URL="postgres://${prefix}_query:${db_password[query]}@$hostport/${prefix}_response?sslmode=disable" \
        RATE_LIMIT_PER_MINUTE=100000 LOG_FORMAT=json \
        "$bin/$svc" >"$work/logs/$svc.log" 2>&1 &
    pids+=($!)
done
for svc in study-metadata registration response; do
    wait_ready "http://127.0.0.1:${port[$svc]}" || die "$svc did not become ready"
done
# The compose file's healthcheck (the run image has no curl), run against each real service; and
# against a port nothing listens on, where it must fail.
healthcheck=$("$tools_venv/bin/python" -c '
import yaml
print(yaml.safe_load(open("deploy/compose.yaml"))["services"]["registration"]["healthcheck"]["test"][-1])' |
    sed 's/\$\$/$/g')
for svc in study-metadata registration response; do
    HTTP_PORT=${port[$svc]} bash -c "$healthcheck" || die "the compose healthcheck fails against a ready $svc"
done
HTTP_PORT=$(free_port) bash -c "$healthcheck" 2>/dev/null && die "the compose healthcheck passes with no service"
log "platform: the three services run on ports ${port[study-metadata]}, ${port[registration]}, ${port[response]}"

# --- the demo seed, as make run does it ---------------------------------------------------------
export STUDYSTACK_DATA="$data"
scripts/seed-demo.sh
[ "$(wc -l <"$data/demo-tokens.txt")" -eq 20 ] || die "the seed did not write 20 tokens"
grep -q '^DEMO_IOS_CREDENTIAL=ios-' "$data/secrets.env" || die "the seed did not write DEMO_IOS_CREDENTIAL"
grep -q '^DEMO_ANDROID_CREDENTIAL=android-' "$data/secrets.env" || die "the seed did not write DEMO_ANDROID_CREDENTIAL"
scripts/seed-demo.sh # a second run changes nothing
[ "$(grep -c '^DEMO_IOS_CREDENTIAL=' "$data/secrets.env")" -eq 1 ] || die "a second seed wrote the credentials again"
# The demo participant joined with the seed and sent one check-in; a run of the script sends another.
[ "$(jq .runs "$data/demo-participant.json")" = 1 ] || die "the seed did not enroll the demo participant"
scripts/demo-participant.sh | grep -q "check-in 2 sent" || die "the demo participant's second check-in failed"
# What the seed and the demo participant wrote (a password, an app token, the tokens) is the
# owner's alone.
for file in demo-tokens.txt demo-participant.json; do
    mode=$(stat -c %a "$data/$file")
    [ "$mode" = 600 ] || die "$data/$file is mode $mode: other local users can read it"
done

# --- a researcher's script, as docs/researcher-data.md has it ------------------------------------
# The key made with the page's commands, then its Python script with the real labkey client, against
# the demo study: two check-ins (the seed's and the one above), their activities, one participant.
log "platform: the researcher's script of docs/researcher-data.md"
# doc_block FILE NAME: the code of the fenced block between <!-- NAME --> and <!-- end of NAME -->.
doc_block() { awk -v start="<!-- $2 -->" -v end="<!-- end of $2 -->" '$0 == start {on = 1} $0 == end {on = 0}
              on && /^```/ {block = !block; next} on && block' "$1"; }
block() { doc_block docs/researcher-data.md "$1"; }
{
    echo "set -euo pipefail"
    block "researcher key" | sed -e "s#http://127.0.0.1:8081#$STUDY_METADATA_URL#g" -e "s#\.data/#$data/#g"
    echo '[ "${STUDYSTACK_API_KEY#ssk_}" != "$STUDYSTACK_API_KEY" ] || { echo "no API key was made" >&2; exit 1; }'
    echo "STUDYSTACK_RESPONSE=${RESPONSE_URL#http://} \"$tools_venv/bin/python\" \"$work/researcher.py\""
} >"$work/researcher.sh"
block "researcher script" >"$work/researcher.py"
(cd "$PWD" && STUDYSTACK_RESPONSE="${RESPONSE_URL#http://}" bash "$work/researcher.sh" >"$work/logs/researcher.log" 2>&1) ||
    { cat "$work/logs/researcher.log" >&2; die "the researcher's script failed"; }
grep -Eq '^2 check-ins, [0-2] with sleep quality 5 or better$' "$work/logs/researcher.log" &&
    [ "$(grep -Ec '^  check-in [0-9]+: (read|screens) \(slept [0-9.]+\)$' "$work/logs/researcher.log")" -ge 2 ] &&
    grep -Eq '^  participant [0-9]+ \(enrolled\): 2 responses$' "$work/logs/researcher.log" ||
    { cat "$work/logs/researcher.log" >&2; die "the researcher's script did not read the demo study"; }
mkdir -p .build/test-output && cp "$work/logs/researcher.log" .build/test-output/researcher.log
log "platform: the researcher's script reads the demo study (its output: .build/test-output/researcher.log)"

# --- a health system's backend service, as docs/fhir.md has it ---------------------------------
# The page's two blocks pasted: a study admin registers a client's key (openssl, curl), then the
# client signs an assertion with PyJWT, gets a token and reads the demo study as FHIR.
log "platform: the SMART Backend Services client of docs/fhir.md"
fhir_block() { doc_block docs/fhir.md "$1"; }
mkdir -p "$work/fhir-client"
{
    echo "set -euo pipefail"
    fhir_block "smart register" | sed -e "s#http://127.0.0.1:8081#$STUDY_METADATA_URL#g" \
        -e "s#http://127.0.0.1:8083#$RESPONSE_URL#g" -e "s#\.data/#$data/#g"
    echo "\"$(cd "$tools_venv" && pwd)/bin/python\" \"$work/fhir-client.py\""
} >"$work/fhir-client.sh"
fhir_block "smart script" | sed -e "s#http://127.0.0.1:8083#$RESPONSE_URL#g" >"$work/fhir-client.py"
(cd "$work/fhir-client" && bash "$work/fhir-client.sh" >"$work/logs/fhir-client.log" 2>&1) ||
    { cat "$work/logs/fhir-client.log" >&2; die "docs/fhir.md's client failed"; }
grep -q '^ResearchStudy DEMOSTUDY: active$' "$work/logs/fhir-client.log" ||
    { cat "$work/logs/fhir-client.log" >&2; die "docs/fhir.md's client did not read the demo study"; }
log "platform: docs/fhir.md's client read the demo study as FHIR"

# --- the quickstart, pasted as written (only make run's addresses and folder replaced) ------------
log "platform: the quickstart walkthrough"
{
    echo "set -euo pipefail"
    awk '/<!-- walkthrough/ {on = 1} /<!-- end of walkthrough/ {on = 0}
         on && /^```sh/ {block = 1; next} block && /^```/ {block = 0; next} block' docs/quickstart.md |
        sed -e "s#http://127.0.0.1:8081#$STUDY_METADATA_URL#g" -e "s#http://127.0.0.1:8082#$REGISTRATION_URL#g" \
            -e "s#http://127.0.0.1:8083#$RESPONSE_URL#g" -e "s#\.data/#$data/#g"
    # What the walkthrough shows must be what happened: the participant is verified and enrolled,
    # and the answers submitted come back from executeSQL.
    cat <<'CHECK'
jq -e '.verified == true' <<<"$LOGIN" >/dev/null || { echo "quickstart: login is not verified" >&2; exit 1; }
[ "${#PARTICIPANT}" -eq 32 ] || { echo "quickstart: enroll gave no app token" >&2; exit 1; }
curl -s "${SESSION[@]}" "$U/studyState.api" | jq -e --arg p "$PARTICIPANT" \
    '.studies[] | select(.studyId == "DEMOSTUDY") | .status == "inProgress" and .participantId == $p' >/dev/null ||
    { echo "quickstart: the study state is not inProgress" >&2; exit 1; }
for _ in $(seq 1 50); do
    rows=$(curl -s -G "$R/mobileappstudy-executeSQL.api" --data-urlencode "participantId=$PARTICIPANT" \
        --data-urlencode "sql=SELECT sleepQuality, energy, caffeine, notes FROM daily")
    jq -e '.rows | length == 1' <<<"$rows" >/dev/null && break
    sleep 0.2
done
jq -e '.rows[0].data | .sleepQuality.value == 7 and .energy.value == 0.8 and .caffeine.value == false
       and .notes.value == "Slept well"' <<<"$rows" >/dev/null ||
    { echo "quickstart: executeSQL did not return the answers: $rows" >&2; exit 1; }
CHECK
} >"$work/quickstart.sh"
(cd "$PWD" && bash "$work/quickstart.sh" >"$work/logs/quickstart.log" 2>&1) ||
    { cat "$work/logs/quickstart.log" >&2; die "the quickstart walkthrough failed"; }
log "platform: the quickstart walkthrough works as written"

# --- Sage's side, as docs/sage.md has it: an assessment, a sealed archive through Bridge's handshake --
log "platform: the Sage walkthrough"
{
    echo "set -euo pipefail"
    awk '/<!-- sage walkthrough -->/ {on = 1} /<!-- end of sage walkthrough -->/ {on = 0}
         on && /^```sh/ {block = 1; next} block && /^```/ {block = 0; next} block' docs/sage.md |
        sed -e "s#http://127.0.0.1:8081#$STUDY_METADATA_URL#g" -e "s#http://127.0.0.1:8083#$RESPONSE_URL#g" -e "s#\.data/#$data/#g"
    # What the walkthrough shows must be what happened: the archive came sealed, was stored and
    # processed, and its answers are in the study's table.
    cat <<'CHECK'
for _ in $(seq 1 50); do
    rows=$(curl -s -G "$R/mobileappstudy-executeSQL.api" --data-urlencode "participantId=$APP_TOKEN" \
        --data-urlencode "sql=SELECT hours, notes, nap FROM sleep")
    jq -e '.rows | length == 1' <<<"$rows" >/dev/null && break
    sleep 0.2
done
jq -e '.rows[0].data | .hours.value == 7 and .notes.value == "woke at 4" and .nap.value == 1200' <<<"$rows" >/dev/null ||
    { echo "sage: executeSQL did not return the archive's answers: $rows" >&2; exit 1; }
curl -s "${A[@]}" "$R/admin/v1/studies/DEMOSTUDY/sage/archives?limit=1" |
    jq -e '.archives[0] | .sealed == true and .status == "processed" and .assessmentId == "sleep"' >/dev/null ||
    { echo "sage: the archive is not listed as sealed and processed" >&2; exit 1; }
CHECK
} >"$work/sage.sh"
(cd "$PWD" && bash "$work/sage.sh" >"$work/logs/sage.log" 2>&1) ||
    { cat "$work/logs/sage.log" >&2; die "the Sage walkthrough failed"; }
cp "$work/logs/sage.log" .build/test-output/sage-walkthrough.log
log "platform: the Sage walkthrough works as written (its output: .build/test-output/sage-walkthrough.log)"

# --- the console, in a real browser --------------------------------------------------------------
ensure_browser
console_port=$(free_port)
env HTTP_PORT="$console_port" CONSOLE_KEY="$(key)" CONSOLE_TEMPLATE_CHECK=fail LOG_FORMAT=json "$bin/console" >"$work/logs/console.log" 2>&1 &
pids+=($!)
wait_ready "http://127.0.0.1:$console_port" || die "the console did not become ready"
# The screenshots stay after the run, under the build folder (docs/console.md shows them).
screenshots=.build/test-output/console
rm -rf "$screenshots"
log "platform: the console in headless Chromium"
APP_CREDENTIAL=$(sed -n 's/^DEMO_IOS_CREDENTIAL=//p' "$data/secrets.env")
ANDROID_CREDENTIAL=$(sed -n 's/^DEMO_ANDROID_CREDENTIAL=//p' "$data/secrets.env")
CONSOLE_URL="http://127.0.0.1:$console_port" MAIL_DIR="$data/mail" ADMIN_EMAIL=admin@platform.test ADMIN_PASSWORD="$admin_password" \
    APP_CREDENTIAL="$APP_CREDENTIAL" ANDROID_CREDENTIAL="$ANDROID_CREDENTIAL" \
    SCREENSHOTS="$screenshots" "$tools_venv/bin/python" Tests/Browser/console_journey.py >"$work/logs/browser.log" 2>&1 ||
    { cat "$work/logs/browser.log" >&2; die "the console's browser test failed"; }
log "platform: $(tail -n 1 "$work/logs/browser.log")"
export CONSOLE_URL="http://127.0.0.1:$console_port"

# --- fuzzing -------------------------------------------------------------------------------------
PLATFORM_WORK="$work" scripts/fuzz.sh
