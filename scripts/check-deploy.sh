#!/usr/bin/env bash
# Checks the container deployment in deploy/ without a Docker engine (make test has none):
# - compose.yaml against the Compose Specification's JSON schema (check-jsonschema's copy);
# - every variable compose.yaml requires is one deploy/make-env.sh writes;
# - every path the Dockerfile copies exists, and it builds exactly the executables Package.swift
#   declares;
# - deploy/kubernetes/ against the Kubernetes API's schemas, and each Deployment's environment
#   against the settings its service reads (scripts/check-kubernetes.py).
# The healthcheck command is run against a real service by scripts/platform-test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_tools_venv
"$tools_venv/bin/check-jsonschema" --builtin-schema vendor.compose-spec deploy/compose.yaml >/dev/null ||
    die "deploy/compose.yaml does not follow the Compose Specification"

env_file=$(mktemp)
trap 'rm -f "$env_file"' EXIT
rm -f "$env_file"
ENV_FILE=$env_file deploy/make-env.sh >/dev/null
[ "$(stat -c %a "$env_file")" = 600 ] || die "deploy/make-env.sh did not write its file with mode 600"
ENV_FILE=$env_file deploy/make-env.sh >/dev/null 2>&1 && die "deploy/make-env.sh overwrote an existing file"
written=$(sed -n 's/^\([A-Z_][A-Z0-9_]*\)=.*/\1/p' "$env_file" | sort -u)
# ${NAME} and ${NAME:?...} must be written; ${NAME:-default} may be left to its default.
required=$(grep -o '\${[A-Z_][A-Z0-9_]*\(:?[^}]*\)\?}' deploy/compose.yaml | sed 's/^\${\([A-Z0-9_]*\).*/\1/' | sort -u)
missing=$(comm -23 <(echo "$required") <(echo "$written"))
[ -z "$missing" ] || die "deploy/compose.yaml needs what deploy/make-env.sh does not write: $missing"

for source in $(sed -n 's/^COPY \([^-][^ ]*\) .*/\1/p' deploy/Dockerfile); do
    [ -e "$source" ] || die "deploy/Dockerfile copies $source, which does not exist"
done
# The services: every executable target in a service's Main folder; the image's one executable,
# studystack, must be linked to by each of their names (studystack-fuzz, under Tests/, is none).
declared=$(grep -A4 '\.executableTarget(' Package.swift | grep -B3 'path: "Services/[A-Za-z]*/Main"' | sed -n 's/.*name: "\([^"]*\)".*/\1/p' | sort)
linked=$(sed -n 's/.*for service in \(.*\); do ln -s studystack.*/\1/p' deploy/Dockerfile | tr ' ' '\n' | sort)
[ "$declared" = "$linked" ] || die "deploy/Dockerfile links [$(echo $linked)] to studystack but Package.swift declares the services [$(echo $declared)]"
grep -q -- '--product studystack ' deploy/Dockerfile || die "deploy/Dockerfile does not build the studystack executable"
log "deploy/: compose.yaml follows the Compose Specification; its variables, the Dockerfile's sources and products check out"
"$tools_venv/bin/python" scripts/check-kubernetes.py "$tools_venv/bin/kubernetes-validate" >&2 ||
    die "deploy/kubernetes/ does not check out"
