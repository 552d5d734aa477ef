"""The benchmarks' participant who signs in: a fresh address of the benchmark app signed up through
registration's API, verified with the code registration e-mails (written under .data/mail by the local
stack), and printed, so `make bench` and `make bench-scale` time login.api with a real bcrypt hash.

python3 scripts/bench_participant.py REGISTRATION_URL PASSWORD
"""
import email
import glob
import json
import os
import re
import secrets
import sys
import time
import urllib.request

base, password = sys.argv[1], sys.argv[2]
address = f"bench-{secrets.token_hex(6)}@example.org"
headers = {"applicationId": "BENCHAPP", "orgId": "BENCHORG", "Content-Type": "application/json"}


def call(path, body):
    request = urllib.request.Request(f"{base}/{path}", data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as reply:
        return reply.read()


started = time.time()
call("register.api", {"emailId": address, "password": password})
code = None
deadline = time.time() + 30
while code is None and time.time() < deadline:
    # Only mail newer than the sign-up: .data/mail keeps every run's mail.
    for name in glob.glob(".data/mail/**/*.eml", recursive=True):
        if os.path.getmtime(name) < started - 1:
            continue
        message = email.message_from_bytes(open(name, "rb").read())
        if message["To"] != address:
            continue
        text = next(part.get_payload(decode=True).decode() for part in message.walk() if part.get_content_type() == "text/plain")
        code = re.search(r"code is (\w+)", text).group(1)
        break
    else:
        time.sleep(0.2)
if code is None:
    sys.exit(f"no verification e-mail for {address} within 30 s")
call("verify.api", {"emailId": address, "code": code})
print(address)
