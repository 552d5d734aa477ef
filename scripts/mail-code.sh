#!/usr/bin/env bash
# Prints the newest verification code the registration service e-mailed to an address, from the
# .eml files make run writes under .data/mail/ (MAIL_DIRECTORY). Usage: scripts/mail-code.sh EMAIL
# Waits up to ten seconds for the message: mail leaves through a queue, not within the request.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: $0 EMAIL" >&2; exit 2; }
exec python3 - "$1" "${STUDYSTACK_DATA:-.data}/mail" <<'PY'
import email, email.policy, pathlib, re, sys, time

address, folder = sys.argv[1].lower(), pathlib.Path(sys.argv[2])
deadline = time.monotonic() + 10
while True:
    codes = []
    for path in folder.glob("*.eml"):
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        if address not in str(message["To"]).lower():
            continue
        body = message.get_body(preferencelist=("plain",))
        found = re.search(r"code is (\w+)", body.get_content()) if body else None
        if found:
            codes.append((path.stat().st_mtime_ns, found.group(1)))
    if codes:
        print(max(codes)[1])
        break
    if time.monotonic() > deadline:
        sys.exit(f"no verification code for {address} in {folder}")
    time.sleep(0.2)
PY
