#!/usr/bin/env bash
# make clean-data: remove .data/ (database, secrets, logs) after asking.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d .data ] || { echo "nothing to remove"; exit 0; }
if [ "${FORCE:-}" != 1 ]; then
    [ -t 0 ] || { echo "refusing without a terminal to ask on; run FORCE=1 make clean-data" >&2; exit 1; }
    read -r -p "Remove .data/ (the local database, secrets and logs)? [y/N] " answer
    case "$answer" in y | Y | yes) ;; *) echo "kept"; exit 0 ;; esac
fi
scripts/stop.sh
rm -rf .data
echo "removed .data/"
