"""make bench: a Bulk Data export of a study's responses, timed from the kick-off to the last line
of its files, each file read back line by line.

Registers a SMART Backend Services client on STUDY (keys made in KEYDIR), gets a token with a
signed assertion (scripts/smart-backend-client.py), kicks off Group/{study}/$export with
_type=QuestionnaireResponse, polls the status as the IG asks (Retry-After), and reads every file,
counting lines and checking each names a QuestionnaireResponse. Prints one JSON object: the
export's seconds, resources, bytes and files, the manifest's counts and transactionTime, and a
fresh token with a response id and its subject for the read and search measurements.

python scripts/bench_fhir.py RESPONSE_BASE ADMIN_TOKEN STUDY KEYDIR
"""
import importlib.util
import json
import os
import sys
import time

import requests

base, admin_token, study, keydir = sys.argv[1:5]
here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("smart_backend_client", os.path.join(here, "smart-backend-client.py"))
smart = importlib.util.module_from_spec(spec)
spec.loader.exec_module(smart)

os.makedirs(keydir, exist_ok=True)
# keygen prints the JWK Set; capture it.
import contextlib
import io
buffer = io.StringIO()
with contextlib.redirect_stdout(buffer):
    smart.keygen(keydir)
jwks = json.loads(buffer.getvalue())
registered = requests.post(f"{base}/admin/v1/studies/{study}/fhir-clients", timeout=30,
                           headers={"Authorization": f"Bearer {admin_token}"}, json={"name": "make bench", "jwks": jwks})
registered.raise_for_status()
client_id, token_url = registered.json()["clientId"], registered.json()["tokenURL"]
fhir = token_url.rsplit("/auth/token", 1)[0]
pem = os.path.join(keydir, "es384.pem")


def token():
    reply = smart.request_token(token_url, client_id, pem, "es384-1", "ES384", "system/*.rs", {})
    if reply["status"] != 200:
        sys.exit(f"token refused: {reply}")
    return reply["body"]["access_token"]


session = requests.Session()
session.headers["Authorization"] = f"Bearer {token()}"
group = study.replace("_", ".")
started = time.monotonic()
kickoff = session.get(f"{fhir}/Group/{group}/$export", params={"_type": "QuestionnaireResponse"},
                      headers={"Prefer": "respond-async", "Accept": "application/fhir+json"}, timeout=30)
if kickoff.status_code != 202:
    sys.exit(f"the kick-off answered {kickoff.status_code}: {kickoff.text[:300]}")
status_url = kickoff.headers["Content-Location"]
polls = 0
while True:
    status = session.get(status_url, timeout=30)
    polls += 1
    if status.status_code == 200:
        break
    if status.status_code != 202:
        sys.exit(f"the status answered {status.status_code}: {status.text[:300]}")
    # The IG's client waits as Retry-After says; a tenth of it keeps the timing honest to the second.
    time.sleep(min(float(status.headers.get("Retry-After", "1")), 2) / 10)
manifest = status.json()
lines = size = 0
first = None
marker = b'{"resourceType":"QuestionnaireResponse",'
# Read a megabyte at a time and split into lines in C: requests' iter_lines splits in Python and
# took longer than the server to write the files, while export.jsonl beside it is read by curl.
for output in manifest["output"]:
    with session.get(output["url"], stream=True, timeout=300) as reply:
        reply.raise_for_status()
        rest = b""
        for block in reply.iter_content(1 << 20):
            parts = (rest + block).split(b"\n")
            rest = parts.pop()
            for line in parts:
                lines += 1
                size += len(line) + 1
                if first is None:
                    first = json.loads(line)
                elif not line.startswith(marker):
                    sys.exit(f"line {lines} is not a QuestionnaireResponse")
        if rest:
            sys.exit(f"the file ends without a newline after line {lines}")
seconds = time.monotonic() - started
counted = sum(output.get("count", 0) for output in manifest["output"])
if counted != lines:
    sys.exit(f"the manifest counts {counted} resources, the files hold {lines} lines")
print(json.dumps({
    "seconds": seconds, "resources": lines, "bytes": size, "files": len(manifest["output"]), "polls": polls,
    "transactionTime": manifest["transactionTime"], "token": token(), "fhir": fhir,
    "readId": first["id"] if first else None, "subject": first["subject"]["reference"] if first else None,
}))
