#!/usr/bin/env python3
"""The Cloud Healthcare API's FHIR REST API, as far as reading a MyStudies 2.x deployment's
responses kept in a FHIR store needs it, for the move-in tests (the Healthcare API cannot be
reached from here).

`GET /v1/{store}/fhir/QuestionnaireResponse?_count=N[&_page_token=T]` searches a store's
QuestionnaireResponse resources a page at a time, as the API answers a search: a `Bundle` of type
`searchset` whose `entry` holds each resource with its `fullUrl`, and whose `link` holds the
search (`self`) and, while more remain, the `next` page (an opaque page token).
`GET /v1/{store}/fhir/Questionnaire/{id}/_history/{versionId}` reads one version of a
questionnaire. `{store}` is `projects/{project}/locations/{location}/datasets/{dataset}/fhirStores/{store}`.
A request without the bearer token is answered 401 and one for another project 403, with Google's
error body; an unknown store or resource 404 with an OperationOutcome.

The resources come from RESOURCES (a JSON file: {"stores": {store path: {"QuestionnaireResponse":
[resource, ...], "Questionnaire": {"id/versionId": resource}}}, "nextBase": optional base of the
next links, to test a page that sends its reader elsewhere}), read once.

Usage: fhir-store-server.py PORT_FILE TOKEN PROJECT RESOURCES   (listens on 127.0.0.1, a free port
written to PORT_FILE; ends when its standard input closes)
"""
import base64
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

port_file, token, project, resources_file = sys.argv[1:5]
with open(resources_file) as source:
    data = json.load(source)
stores = data["stores"]
requests = []


def google_error(code, status, message):
    return code, {"error": {"code": code, "message": message, "status": status}}


def outcome(code, text):
    return code, {"resourceType": "OperationOutcome",
                  "issue": [{"severity": "error", "code": "not-found", "diagnostics": text}]}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, body, kind="application/fhir+json; charset=utf-8"):
        payload = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        parts = urlsplit(self.path)
        if parts.path == "/_requests":
            return self.reply(200, {"requests": requests}, "application/json")
        requests.append(self.path)
        if self.headers.get("Authorization") != f"Bearer {token}":
            return self.reply(*google_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."), "application/json")
        segments = [unquote(segment) for segment in parts.path.split("/")[1:]]
        if len(segments) < 11 or segments[0] != "v1" or segments[1] != "projects" or segments[9] != "fhir":
            return self.reply(*outcome(404, "not found"))
        if segments[2] != project:
            return self.reply(*google_error(403, "PERMISSION_DENIED", "Permission 'healthcare.fhirResources.search' denied."), "application/json")
        store_path = "/".join(segments[1:9])
        store = stores.get(store_path)
        if store is None:
            return self.reply(*outcome(404, f"FHIR store {store_path} not found"))
        rest = segments[10:]
        if rest == ["QuestionnaireResponse"]:
            query = dict(parse_qsl(parts.query))
            size = min(int(query.get("_count", "100")), 1000)
            start = int(base64.urlsafe_b64decode(query["_page_token"]).decode()) if query.get("_page_token") else 0
            found = store.get("QuestionnaireResponse", [])
            host = f"http://127.0.0.1:{self.server.server_address[1]}"
            search = f"{host}/v1/{store_path}/fhir/QuestionnaireResponse"
            bundle = {"resourceType": "Bundle", "type": "searchset",
                      "entry": [{"fullUrl": f"{search}/{r['id']}", "resource": r, "search": {"mode": "match"}}
                                for r in found[start:start + size]],
                      "link": [{"relation": "search", "url": f"{search}?{urlencode({'_count': size})}"}]}
            if start + size < len(found):
                next_token = base64.urlsafe_b64encode(str(start + size).encode()).decode()
                next_base = data.get("nextBase", host)
                bundle["link"].append({"relation": "next",
                                       "url": f"{next_base}/v1/{store_path}/fhir/QuestionnaireResponse?{urlencode({'_count': size, '_page_token': next_token})}"})
            return self.reply(200, bundle)
        if len(rest) == 4 and rest[0] == "Questionnaire" and rest[2] == "_history":
            resource = store.get("Questionnaire", {}).get(f"{rest[1]}/{rest[3]}")
            if resource is None:
                return self.reply(*outcome(404, f"Questionnaire/{rest[1]}/_history/{rest[3]} not found"))
            return self.reply(200, resource)
        return self.reply(*outcome(404, "not found"))


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
with open(port_file + ".partial", "w") as out:
    out.write(str(server.server_address[1]))
os.replace(port_file + ".partial", port_file)
sys.stdin.read()
server.shutdown()
