#!/usr/bin/env bash
# Validates every OpenAPI document under docs/openapi/ against the OpenAPI 3.1 specification
# with openapi-spec-validator (from PyPI, installed once into a virtual environment under .build/).
# That every route is documented, and nothing else, is checked by OpenAPICoverageTests.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_tools_venv
venv=$tools_venv
for document in docs/openapi/*.yaml; do
    if ! report=$("$venv/bin/openapi-spec-validator" "$document" 2>&1); then
        # The validator quotes the whole document after the error; its first line says what is wrong.
        printf '%s\n' "${report:0:400}" >&2
        die "$document is not a valid OpenAPI document"
    fi
    log "valid OpenAPI: $document"
done
