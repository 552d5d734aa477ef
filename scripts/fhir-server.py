#!/usr/bin/env python3
"""A FHIR R4 server on this machine, for the tests of forwarding responses as FHIR transactions.

It speaks FHIR's RESTful API as far as a forwarding target needs it: a `transaction` Bundle
POSTed to the base, processed all or nothing, with conditional creates (`ifNoneExist`) matched by
`identifier`, `url` and `version`, and `urn:uuid:` references between the entries rewritten to
the ids the server gave; reads (`GET [type]/[id]`) and searches (`GET [type]?...`, the same three
parameters) to see what it holds. Every Bundle it receives is validated first, with the same
checks the FHIR API's own tests use (scripts/fhir-validate.py: fhir.resources' R4B models and the
FHIRPath invariants with fhirpathpy); an invalid one is refused with 400 and an
OperationOutcome, and kept in the list of failures.

It asks HTTP Basic credentials, can be made to refuse the next transactions with given statuses
(`POST /_fail` with {"statuses": [503]}), and tells what it holds at `GET /_state`: the
resources by type, how many of each were created and how many matched an existing one, and
every refused Bundle's problems.

Usage: fhir-server.py PORT_FILE USER PASSWORD   (listens on 127.0.0.1, a free port written to
PORT_FILE; ends when its standard input closes)
"""
import base64
import importlib.util
import json
import os
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("fhir_validate", os.path.join(here, "fhir-validate.py"))
validate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(validate)

BASE = "/fhir"
MAX_BODY = 16 << 20
SEARCHABLE = {"identifier", "url", "version"}

lock = threading.Lock()
resources = {}  # type -> {id: resource}
failures = []  # the problems of each refused Bundle
refusals = []  # statuses to answer next, in order
counters = {"transactions": 0, "attempts": 0, "unauthorized": 0}
created, matched = {}, {}  # type -> count


def outcome(code, text):
    return {"resourceType": "OperationOutcome", "issue": [{"severity": "error", "code": code, "diagnostics": text}]}


def identifiers(resource):
    found = resource.get("identifier", [])
    return found if isinstance(found, list) else [found]


def matches(resource, params):
    for name, value in params:
        if name == "identifier":
            system, _, code = value.rpartition("|") if "|" in value else ("", "", value)
            if not any(i.get("value") == code and ("|" not in value or i.get("system") == system) for i in identifiers(resource)):
                return False
        elif name in ("url", "version"):
            if resource.get(name) != value:
                return False
        else:
            raise ValueError(f"search parameter {name} is not supported here")
    return True


def search(kind, params):
    return [r for r in resources.get(kind, {}).values() if matches(r, params)]


def rewrite(value, resolved):
    if isinstance(value, dict):
        return {k: (resolved.get(v, v) if k == "reference" and isinstance(v, str) else rewrite(v, resolved)) for k, v in value.items()}
    if isinstance(value, list):
        return [rewrite(v, resolved) for v in value]
    return value


def references(value):
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "reference" and isinstance(v, str):
                yield v
            else:
                yield from references(v)
    elif isinstance(value, list):
        for v in value:
            yield from references(v)


def transaction(bundle):
    """Processes a valid transaction Bundle whole; returns (status, body)."""
    if bundle.get("type") != "transaction":
        return 400, outcome("invalid", "only transaction Bundles are taken at the base")
    planned, resolved, answers = [], {}, []
    for index, entry in enumerate(bundle.get("entry", [])):
        request, resource = entry.get("request", {}), entry.get("resource")
        kind = request.get("url", "")
        if request.get("method") != "POST" or not resource or resource.get("resourceType") != kind:
            return 400, outcome("not-supported", f"entry {index}: only POST [type] of a resource of that type is taken here")
        if "id" in resource:
            return 400, outcome("invalid", f"entry {index}: a resource created by POST carries no id")
        existing = []
        if "ifNoneExist" in request:
            try:
                existing = search(kind, parse_qsl(request["ifNoneExist"], keep_blank_values=True))
            except ValueError as error:
                return 400, outcome("not-supported", f"entry {index}: {error}")
            if len(existing) > 1:
                return 412, outcome("multiple-matches", f"entry {index}: ifNoneExist matched {len(existing)} resources")
        if existing:
            target_id, status = existing[0]["id"], "200 OK"
        else:
            target_id, status = uuid.uuid4().hex, "201 Created"
            planned.append((kind, target_id, resource))
        if "fullUrl" in entry:
            resolved[entry["fullUrl"]] = f"{kind}/{target_id}"
        answers.append((kind, bool(existing), {"response": {"status": status, "location": f"{kind}/{target_id}/_history/1"}}))
    made = []
    for kind, target_id, resource in planned:
        stored = rewrite(resource, resolved)
        stored["id"], stored["meta"] = target_id, {"versionId": "1"}
        unresolved = [r for r in references(stored) if r.startswith("urn:")]
        if unresolved:
            return 400, outcome("invalid", f"{kind}: reference to {unresolved[0]}, which no entry of the Bundle has")
        made.append((kind, target_id, stored))
    # All or nothing: stored only once every entry could be.
    for kind, target_id, stored in made:
        resources.setdefault(kind, {})[target_id] = stored
    for kind, found, _ in answers:
        tally = matched if found else created
        tally[kind] = tally.get(kind, 0) + 1
    return 200, {"resourceType": "Bundle", "type": "transaction-response", "entry": [answer for _, _, answer in answers]}


class Handler(BaseHTTPRequestHandler):
    server_version = "studystack-test-fhir/1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type="application/fhir+json"):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def authorised(self):
        expected = "Basic " + base64.b64encode(f"{self.server.user}:{self.server.password}".encode()).decode()
        if self.headers.get("Authorization") == expected:
            return True
        with lock:
            counters["unauthorized"] += 1
        self.reply(401, outcome("login", "HTTP Basic credentials are required"))
        return False

    def do_GET(self):
        parts = urlsplit(self.path)
        if parts.path == "/_state":
            with lock:
                state = {"counts": {k: len(v) for k, v in resources.items()}, "created": created, "matched": matched,
                         "failures": failures, **counters}
            return self.reply(200, state, "application/json")
        if not self.authorised():
            return
        path = parts.path[len(BASE):].strip("/").split("/") if parts.path.startswith(BASE) else []
        with lock:
            if len(path) == 1 and path[0]:
                try:
                    found = search(path[0], parse_qsl(parts.query))
                except ValueError as error:
                    return self.reply(400, outcome("not-supported", str(error)))
                return self.reply(200, {"resourceType": "Bundle", "type": "searchset", "total": len(found),
                                        "entry": [{"resource": r, "search": {"mode": "match"}} for r in found]})
            if len(path) == 2 and path[1] in resources.get(path[0], {}):
                return self.reply(200, resources[path[0]][path[1]])
        self.reply(404, outcome("not-found", f"no {parts.path}"))

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self.reply(413, outcome("too-long", "the body is too large"))
        body = self.rfile.read(length)
        path = urlsplit(self.path).path
        if path == "/_fail":
            with lock:
                refusals.extend(json.loads(body)["statuses"])
            return self.reply(200, {}, "application/json")
        if path.rstrip("/") != BASE:
            return self.reply(404, outcome("not-found", f"no {path}"))
        with lock:
            counters["attempts"] += 1
        if not self.authorised():
            return
        if not self.headers.get("Content-Type", "").startswith("application/fhir+json"):
            return self.reply(415, outcome("not-supported", "send application/fhir+json"))
        with lock:
            if refusals:
                return self.reply(refusals.pop(0), outcome("transient", "refused as the test asked"))
        try:
            bundle = json.loads(body)
        except ValueError as error:
            return self.reply(400, outcome("structure", f"not JSON: {error}"))
        problems = validate.check(bundle)
        with lock:
            if problems:
                failures.append(problems)
                return self.reply(400, outcome("invalid", "; ".join(problems)))
            status, answer = transaction(bundle)
            if status == 200:
                counters["transactions"] += 1
            else:
                failures.append([answer["issue"][0]["diagnostics"]])
        self.reply(status, answer)


def main(port_file, user, password):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.user, server.password = user, password
    with open(port_file + ".tmp", "w") as out:
        out.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # The test that started it closes its input when it is done (or dies).
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main(*sys.argv[1:4])
