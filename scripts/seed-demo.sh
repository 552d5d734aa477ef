#!/usr/bin/env bash
# Seeds the demo once, through the admin APIs of the running services: the gateway app DEMOAPP
# (org DEMOORG), whose iOS and Android credentials go into secrets.env as DEMO_IOS_CREDENTIAL and
# DEMO_ANDROID_CREDENTIAL; the study DEMOSTUDY (scripts/demo_study.py), launched; and a batch of
# 20 enrollment tokens in demo-tokens.txt; and the demo participant (scripts/demo_participant.py),
# enrolled with one of them, with a first response. make run calls it; the fuzzing run calls it
# against its own services.
#
# Settings (environment): STUDYSTACK_DATA (default .data) holds secrets.env, which must already
# hold STUDYSTACK_ADMIN_EMAIL and STUDYSTACK_ADMIN_PASSWORD; STUDY_METADATA_URL, REGISTRATION_URL
# and RESPONSE_URL (defaults: make run's ports). Each step checks whether it is done, so a seed cut short is
# finished by the next run; demo-seeded marks a finished seed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

data=${STUDYSTACK_DATA:-.data}
metadata=${STUDY_METADATA_URL:-http://127.0.0.1:8081}
response=${RESPONSE_URL:-http://127.0.0.1:8083}
registration=${REGISTRATION_URL:-http://127.0.0.1:8082}
secrets="$data/secrets.env"
tokens_file="$data/demo-tokens.txt"
[ -f "$data/demo-seeded" ] && exit 0
# shellcheck disable=SC1090
. "$secrets"

ensure_commands curl:curl jq:jq python3:python3
umask 077
# The admin's token goes in a header file, and the password through the environment: neither is
# ever an argument, which any local user reads in /proc/<pid>/cmdline.
headers=$(mktemp "${TMPDIR:-/tmp}/studystack-seed.XXXXXX")
trap 'rm -f "$headers"' EXIT
# -sS: quiet, but say why a call failed; the HTTP status is checked by each caller.
call() { curl -sS -H @"$headers" "$@"; }
status_of() { curl -sS -o /dev/null -w '%{http_code}' -H @"$headers" "$@"; }

export STUDYSTACK_ADMIN_EMAIL STUDYSTACK_ADMIN_PASSWORD
admin_token=$(jq -n '{email: env.STUDYSTACK_ADMIN_EMAIL, password: env.STUDYSTACK_ADMIN_PASSWORD}' |
    curl -sS -f -H 'Content-Type: application/json' "$metadata/admin/v1/login" --data-binary @- | jq -r .token) ||
    die "the demo seed could not log in as $STUDYSTACK_ADMIN_EMAIL"
printf 'Authorization: Bearer %s\nContent-Type: application/json\n' "$admin_token" >"$headers"

# --- the app: its credentials are shown once, so they are written down at once ------------------
if [ -z "${DEMO_IOS_CREDENTIAL:-}" ]; then
    log "creating the demo app DEMOAPP"
    app=$(call -w '\n%{http_code}' "$metadata/admin/v1/apps" -d @- <<'APP'
{"appId": "DEMOAPP", "orgId": "DEMOORG", "name": "StudyStack Demo", "kind": "gateway",
 "ios": {"latestVersion": "1.0", "forceUpdate": false},
 "android": {"latestVersion": "1.0", "forceUpdate": false},
 "supportEmail": "support@studystack.local", "feedbackEmail": "feedback@studystack.local"}
APP
    )
    [ "${app##*$'\n'}" = 201 ] || die "creating DEMOAPP failed (${app##*$'\n'}): ${app%$'\n'*}
(an app created by an earlier seed whose credentials were lost cannot be recovered: make clean-data)"
    app=${app%$'\n'*}
    {
        echo "DEMO_IOS_CREDENTIAL=$(jq -r .credentials.ios <<<"$app")"
        echo "DEMO_ANDROID_CREDENTIAL=$(jq -r .credentials.android <<<"$app")"
    } >>"$secrets"
fi

# --- the study: saving the draft is idempotent; launching is done once ---------------------------
log "saving the demo study DEMOSTUDY"
saved=$(python3 scripts/demo_study.py | call -w '\n%{http_code}' -X PUT "$metadata/admin/v1/studies/DEMOSTUDY/draft" --data-binary @-)
case "${saved##*$'\n'}" in
200 | 201) ;;
*) die "saving DEMOSTUDY failed (${saved##*$'\n'}): ${saved%$'\n'*}" ;;
esac
study_status=$(call "$metadata/admin/v1/studies" | jq -r '.studies[] | select(.studyId == "DEMOSTUDY") | .status')
if [ "$study_status" != active ]; then
    log "launching DEMOSTUDY"
    launched=$(call -w '\n%{http_code}' -X POST "$metadata/admin/v1/studies/DEMOSTUDY/launch")
    [ "${launched##*$'\n'}" = 200 ] || die "launching DEMOSTUDY failed (${launched##*$'\n'}): ${launched%$'\n'*}"
fi

# --- 20 enrollment tokens: the response service takes them once the launch has reached it ---------
if [ ! -s "$tokens_file" ]; then
    log "creating 20 enrollment tokens"
    batch=""
    for _ in $(seq 1 100); do
        reply=$(call -w '\n%{http_code}' "$response/admin/v1/studies/DEMOSTUDY/token-batches" -d '{"count": 20}')
        if [ "${reply##*$'\n'}" = 201 ]; then batch=$(jq -r .batchId <<<"${reply%$'\n'*}"); break; fi
        sleep 0.2
    done
    [ -n "$batch" ] || die "the response service did not take a token batch for DEMOSTUDY: ${reply%$'\n'*}"
    call -f "$response/admin/v1/studies/DEMOSTUDY/token-batches/$batch/tokens.csv" | tail -n +2 | cut -d, -f1 >"$tokens_file.new"
    [ "$(wc -l <"$tokens_file.new")" -eq 20 ] || die "the token download did not hold 20 tokens"
    mv "$tokens_file.new" "$tokens_file"
fi

# The registration service learns of the app through study-metadata's outbox: wait for it, so a
# participant can sign up the moment this returns.
for _ in $(seq 1 100); do
    [ "$(call "$metadata/admin/v1/outbox?undelivered=true" | jq '[.messages[] | select(.gaveUpAt == null)] | length')" = 0 ] && break
    sleep 0.2
done
[ "$(status_of -X POST "$metadata/admin/v1/logout")" = 204 ] || true

# --- the demo participant: signed up, enrolled, consented, and a first daily check-in -----------
if [ ! -f "$data/demo-participant.json" ]; then
    log "the demo participant signs up, enrolls, signs the consent and sends a check-in"
    STUDYSTACK_DATA="$data" STUDY_METADATA_URL="$metadata" REGISTRATION_URL="$registration" RESPONSE_URL="$response" \
        python3 scripts/demo_participant.py >/dev/null || die "the demo participant could not join DEMOSTUDY"
fi
touch "$data/demo-seeded"
log "seeded the demo: app DEMOAPP, study DEMOSTUDY (active), 20 tokens in $tokens_file, one of them the demo participant's"
