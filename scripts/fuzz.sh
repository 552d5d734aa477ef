#!/usr/bin/env bash
# Fuzzes each service's OpenAPI documents with schemathesis against running services, with valid
# credentials so that the authenticated paths are reached: the demo app's Basic credential and
# headers (study-metadata app API), a super-admin bearer token (both admin APIs), a verified,
# logged-in participant's auth and userId (registration) and an enrolled participant's app token
# (response). The internal documents are fuzzed unsigned: every call must be refused, never fail.
# The console (CONSOLE_URL, when set) is fuzzed signed in, every form with the session's form token
# (scripts/fuzz_console_hooks.py), so the cases reach its pages' handling of what they are sent;
# it must never answer 5xx, and always with the documented content types.
#
# Checks: no 5xx, and every status, content type, header and body as the document says; methods
# a path does not document get 405 with Allow; a missing required header is refused. The admin and
# internal APIs must also refuse schema-invalid input (negative_data_rejection; 413 for a body over
# the size limit counts as refusing it). The app APIs are
# not held to that one: they read parameters as the original servers did (a number or boolean
# where text is expected is taken as its text, as Jackson coerced it, and unknown fields are
# ignored), which the real apps' traffic relies on. Not checked anywhere: positive_data_acceptance,
# which expects any schema-valid input to succeed, and a random studyId or token cannot name a
# study or token that exists.
#
# Run by scripts/platform-test.sh, which starts the services and seeds the demo; it exports
# STUDY_METADATA_URL, REGISTRATION_URL, RESPONSE_URL and STUDYSTACK_DATA. FUZZ_EXAMPLES (default
# 25) bounds the generated cases per operation and phase; FUZZ_SEED fixes the run; FUZZ_PARALLEL
# (default 2) is how many documents are fuzzed at once.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

: "${STUDYSTACK_DATA:?run through scripts/platform-test.sh}"
# shellcheck disable=SC1091
. "$STUDYSTACK_DATA/secrets.env"
work=${PLATFORM_WORK:-$(mktemp -d)}
examples=${FUZZ_EXAMPLES:-25}
seed=${FUZZ_SEED:-$(od -An -tu4 -N4 /dev/urandom | tr -d ' ')}
schemathesis="$PWD/$tools_venv/bin/schemathesis"

# --- credentials ----------------------------------------------------------------------------------
admin=$(jq -n --arg e "$STUDYSTACK_ADMIN_EMAIL" --arg p "$STUDYSTACK_ADMIN_PASSWORD" '{email: $e, password: $p}' |
    curl -sf -H 'Content-Type: application/json' "$STUDY_METADATA_URL/admin/v1/login" -d @- | jq -r .token)
app=(-H 'applicationId: DEMOAPP' -H 'orgId: DEMOORG' -H 'Content-Type: application/json')
email="fuzz-$(date +%s)@example.org"
curl -sf "${app[@]}" "$REGISTRATION_URL/fdahpUserRegWS/register.api" \
    -d "{\"emailId\": \"$email\", \"password\": \"Fuzz-Passw0rd!\"}" >/dev/null
code=$(scripts/mail-code.sh "$email")
curl -sf "${app[@]}" "$REGISTRATION_URL/fdahpUserRegWS/verify.api" -d "{\"emailId\": \"$email\", \"code\": \"$code\"}" >/dev/null
login=$(curl -sf "${app[@]}" "$REGISTRATION_URL/fdahpUserRegWS/login.api" -d "{\"emailId\": \"$email\", \"password\": \"Fuzz-Passw0rd!\"}")
user_id=$(jq -r .userId <<<"$login")
auth=$(jq -r .auth <<<"$login")
for token in $(cat "$STUDYSTACK_DATA/demo-tokens.txt"); do
    curl -sf -X POST "$RESPONSE_URL/mobileappstudy-validateEnrollmentToken.api?studyId=DEMOSTUDY&token=$token" >/dev/null && break
done
participant=$(curl -sf -X POST "$RESPONSE_URL/mobileappstudy-enroll.api?studyId=DEMOSTUDY&token=$token&allowDataSharing=true" |
    jq -r .data.appToken)
[ "${#participant}" -eq 32 ] || die "fuzz: could not enroll a participant"
basic=$(printf %s "$DEMO_IOS_CREDENTIAL" | base64 -w0)
# The console's session, before any fuzzing: the admin API's run tries sign-ins of its own.
if [ -n "${CONSOLE_URL:-}" ]; then
    jar="$work/console-cookies"
    page=$(curl -s -c "$jar" -b "$jar" "$CONSOLE_URL/signin")
    form_token=$(sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' <<<"$page" | head -n 1)
    reply=$(curl -s -w '\n%{http_code}' -c "$jar" -b "$jar" --data-urlencode "csrf=$form_token" \
        --data-urlencode "email=$STUDYSTACK_ADMIN_EMAIL" --data-urlencode "password=$STUDYSTACK_ADMIN_PASSWORD" "$CONSOLE_URL/signin")
    session=$(awk -F'\t' '$6 == "studystack_session" {print $6 "=" $7}' "$jar")
    [ -n "$session" ] ||
        die "fuzz: could not sign in to the console (HTTP $(tail -n 1 <<<"$reply")): $(grep -o 'role="alert">[^<]*' <<<"$reply" | head -n 1)"
    CONSOLE_CSRF=$(curl -s -b "$jar" "$CONSOLE_URL/" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -n 1)
    [ -n "$CONSOLE_CSRF" ] || die "fuzz: the console's pages carry no form token"
fi

# --- one run per document -------------------------------------------------------------------------
checks=not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance
checks=$checks,response_schema_conformance,unsupported_method,missing_required_header
strict=$checks,negative_data_rejection
summary="$work/fuzz-summary.txt"
: >"$summary"
rm -f "$work"/*.failed
# The documents are fuzzed FUZZ_PARALLEL at a time (default 2): schemathesis spends most of a run
# generating cases in Python, one core each, while the services answer in a fraction of that.
parallel=${FUZZ_PARALLEL:-2}
# fuzz_beside ARGS...: fuzz ARGS in the background, once fewer than $parallel runs are going.
fuzz_beside() {
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
    fuzz "$@" &
}
# fuzz NAME DOCUMENT BASE_URL PARAMETERS_TOML -- [schemathesis options]
fuzz() {
    local name=$1 document=$PWD/$2 base=$3 parameters=$4
    shift 5
    local config report
    # FUZZ_ONLY=name[,name]: only those runs (while working on one document).
    if [ -n "${FUZZ_ONLY:-}" ] && [[ ",$FUZZ_ONLY," != *",$name,"* ]]; then return; fi
    config="$work/$name.toml"
    # A body over the service's size limit is refused with 413 before it is read: that refuses
    # schema-invalid input too (a list past its maxItems can be larger than the limit).
    printf '%s\n\n[checks.negative_data_rejection]\nexpected-statuses = [%s]\n' "$parameters" \
        '"400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"' >"$config"
    report="$work/$name-report"
    log "fuzz: $name ($examples examples per operation, seed $seed)"
    local wanted=$checks
    case $name in *admin* | *internal*) wanted=$strict ;; esac
    # From the work folder: schemathesis keeps a cache in the folder it runs in.
    if ! (cd "$work" && "$schemathesis" --config-file "$config" run "$document" --url "$base" --checks "$wanted" \
        --phases examples,coverage,fuzzing --max-examples "$examples" --seed "$seed" --workers 1 \
        --continue-on-failure --request-timeout 20 --no-color --output-truncate true --generation-database none \
        --report ndjson --report-ndjson-path "$report.ndjson" "$@") >"$work/$name.log" 2>&1; then
        touch "$work/$name.failed"
        cat "$work/$name.log" >&2
    fi
    # The case count, from the summary line schemathesis prints ("N generated, ...").
    printf '%-26s %s\n' "$name" "$(grep -Eo '[0-9]+ generated[^.]*' "$work/$name.log" | tail -n 1)" >>"$summary"
}

fuzz_beside study-metadata-app docs/openapi/study-metadata-app.yaml "$STUDY_METADATA_URL" \
    "[parameters]
\"header.applicationId\" = \"DEMOAPP\"
\"header.orgId\" = \"DEMOORG\"" \
    -- -H "Authorization: Basic $basic"
# The admin's own logout would end the token every other operation uses.
fuzz_beside study-metadata-admin docs/openapi/study-metadata-admin.yaml "$STUDY_METADATA_URL" "" \
    -- -H "Authorization: Bearer $admin" --exclude-path /admin/v1/logout
# Logging out, changing the password and deleting the account would end the session the others use.
fuzz_beside registration-app docs/openapi/registration-app.yaml "$REGISTRATION_URL" \
    "[parameters]
\"header.applicationId\" = \"DEMOAPP\"
\"header.orgId\" = \"DEMOORG\"
\"header.auth\" = \"$auth\"
\"header.userId\" = \"$user_id\"" \
    -- --exclude-path-regex '/(logout|deactivate|changePassword)\.api$'
fuzz_beside response-app docs/openapi/response-app.yaml "$RESPONSE_URL" \
    "[parameters]
\"query.participantId\" = \"$participant\"" --
fuzz_beside response-admin docs/openapi/response-admin.yaml "$RESPONSE_URL" "" -- -H "Authorization: Bearer $admin"
fuzz_beside registration-admin docs/openapi/registration-admin.yaml "$REGISTRATION_URL" "" -- -H "Authorization: Bearer $admin"
# The researchers' LabKey API, with an API key of the super-admin's (any study may be named).
apikey=$(curl -sf -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' "$STUDY_METADATA_URL/admin/v1/api-keys" \
    -d '{"name": "fuzzing"}' | jq -r .key)
[ "${apikey#ssk_}" != "$apikey" ] || die "fuzz: could not make an API key"
fuzz_beside response-labkey docs/openapi/response-labkey.yaml "$RESPONSE_URL" "" -- -H "apikey: $apikey"
# The FHIR API as a stranger meets it: the discovery document, the token endpoint, reads without a token.
fuzz_beside response-fhir docs/openapi/response-fhir.yaml "$RESPONSE_URL" "" --
for document in study-metadata-internal registration-internal response-internal; do
    case $document in
    study-metadata*) base=$STUDY_METADATA_URL ;;
    registration*) base=$REGISTRATION_URL ;;
    *) base=$RESPONSE_URL ;;
    esac
    fuzz_beside "$document" "docs/openapi/$document.yaml" "$base" "" --
done
# The console, signed in as the super-admin. Signing out would end the session the others use;
# closing a study is left out so the demo study stays open for what follows.
if [ -n "${CONSOLE_URL:-}" ]; then
    export CONSOLE_CSRF PYTHONPATH="$PWD/scripts${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=fuzz_console_hooks
    checks_before=$checks
    checks=not_a_server_error,content_type_conformance
    fuzz_beside console docs/openapi/console.yaml "$CONSOLE_URL" "" \
        -- -H "Cookie: $session" --exclude-path /signout --exclude-path /studies/{studyId}/actions
    checks=$checks_before
    unset SCHEMATHESIS_HOOKS
fi
# The session-ending run waits for every other.
wait
# Last, the session-ending calls, with the participant's session (now they may end it).
fuzz registration-app-session-end docs/openapi/registration-app.yaml "$REGISTRATION_URL" \
    "[parameters]
\"header.applicationId\" = \"DEMOAPP\"
\"header.orgId\" = \"DEMOORG\"
\"header.auth\" = \"$auth\"
\"header.userId\" = \"$user_id\"" \
    -- --include-path-regex '/(logout|deactivate|changePassword)\.api$'

log "fuzz: generated cases per document (seed $seed)"
cat "$summary" >&2
if compgen -G "$work/*.failed" >/dev/null; then
    die "fuzzing found failures in $(basename -a -s .failed "$work"/*.failed | paste -sd ' ') (above); FUZZ_SEED=$seed reproduces the run"
fi
