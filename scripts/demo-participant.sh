#!/usr/bin/env bash
# The demo participant sends a daily check-in to DEMOSTUDY, as the MyStudies app would (signing up
# and enrolling the first time): a response to watch arrive in the console. See
# scripts/demo_participant.py.
set -euo pipefail
cd "$(dirname "$0")/.."
# Its state file holds the demo participant's password and app token: the owner's alone.
umask 077
exec python3 scripts/demo_participant.py "$@"
