#!/usr/bin/env bash
# Validates every OpenAPI document under docs/openapi/ against the OpenAPI 3.1 specification
# with openapi-spec-validator (from PyPI, installed once into a virtual environment under .build/).
# That every route is documented, and nothing else, is checked by OpenAPICoverageTests.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_commands python3:python3
venv=.build/tools-venv
if ! "$venv/bin/python" -c "import openapi_spec_validator" >/dev/null 2>&1; then
    log "installing openapi-spec-validator into $venv"
    python3 -m venv "$venv" >/dev/null 2>&1 || { apt_install python3-venv && python3 -m venv "$venv"; }
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "openapi-spec-validator>=0.7,<0.8"
fi
for document in docs/openapi/*.yaml; do
    if ! report=$("$venv/bin/openapi-spec-validator" "$document" 2>&1); then
        # The validator quotes the whole document after the error; its first line says what is wrong.
        printf '%s\n' "${report:0:400}" >&2
        die "$document is not a valid OpenAPI document"
    fi
    log "valid OpenAPI: $document"
done
