#!/usr/bin/env bash
# Makes a signed internal call with curl, as a StudyStack service would: for operators checking
# keys (GET /internal/v1/whoami) and for scripting the internal API.
#
#   scripts/internal-call.sh CALLER RECEIVER URL [METHOD] [BODY]
#   scripts/internal-call.sh registration study-metadata http://127.0.0.1:8081/internal/v1/whoami
#
# The caller's key is read from INTERNAL_SIGNING_KEY, or else from .data/secrets.env
# (STUDY_METADATA_INTERNAL_KEY, ...); the call is signed with its pair key for RECEIVER.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 3 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
caller=$1 receiver=$2 url=$3 method=${4:-GET} body=${5:-}
command -v openssl >/dev/null || { echo "openssl is required" >&2; exit 1; }

key=${INTERNAL_SIGNING_KEY:-}
if [ -z "$key" ] && [ -f .data/secrets.env ]; then
    var="$(echo "$caller" | tr 'a-z-' 'A-Z_')_INTERNAL_KEY"
    key=$(sed -n "s/^$var=//p" .data/secrets.env)
fi
[ -n "$key" ] || { echo "no key for $caller: set INTERNAL_SIGNING_KEY" >&2; exit 1; }

# Split the URL into the path and query exactly as they go on the request line.
rest=${url#*://}; rest=/${rest#*/}
path=${rest%%\?*}
query=""; [ "$rest" != "$path" ] && query=${rest#*\?}

timestamp=$(date +%s)
nonce=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
body_hash=$(printf '%s' "$body" | openssl dgst -sha256 -r | cut -d' ' -f1)
hexkey=$(printf '%s' "$key" | python3 scripts/internal-keys.py pair "$caller" "$receiver" | base64 -d | od -An -tx1 | tr -d ' \n')
canonical=$(printf 'studystack-internal-v1\n%s\n%s\n%s\n%s\n%s\n%s\n%s' \
    "$caller" "$method" "$path" "$query" "$timestamp" "$nonce" "$body_hash")
signature=$(printf '%s' "$canonical" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$hexkey" -r | cut -d' ' -f1)

args=(-sS -X "$method" "$url"
    -H "X-StudyStack-Service: $caller" -H "X-StudyStack-Timestamp: $timestamp"
    -H "X-StudyStack-Nonce: $nonce" -H "X-StudyStack-Signature: $signature")
[ -n "$body" ] && args+=(-H "Content-Type: application/json" --data-binary "$body")
curl "${args[@]}"
echo
