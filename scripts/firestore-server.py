#!/usr/bin/env python3
"""Cloud Firestore's REST API for documents, as far as reading a MyStudies 2.x deployment's
stored responses needs it, for the move-in tests (Firestore cannot be reached from here, and its
emulator is not packaged for Debian).

`GET /v1/projects/{project}/databases/{database}/documents/{collection path}?pageSize=&pageToken=`
lists a collection's documents a page at a time, as Firestore's `documents.list` answers:
`{"documents": [{name, fields, createTime, updateTime}], "nextPageToken": ...}`, the fields as
Firestore's typed values; the last page has no token. A request without the bearer token is
answered 401, and one for another project 403, with Firestore's error body. Page tokens are
opaque to the caller, as Firestore's are.

The documents come from DOCUMENTS (a JSON file: {"collection path": [document, ...]}), read once.

Usage: firestore-server.py PORT_FILE TOKEN PROJECT DOCUMENTS   (listens on 127.0.0.1, a free port
written to PORT_FILE; ends when its standard input closes)
"""
import base64
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

port_file, token, project, documents_file = sys.argv[1:5]
with open(documents_file) as source:
    collections = json.load(source)
requests = []


def error(code, status, message):
    return code, {"error": {"code": code, "message": message, "status": status}}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        parts = urlsplit(self.path)
        if parts.path == "/_requests":
            return self.reply(200, {"requests": requests})
        requests.append(self.path)
        if self.headers.get("Authorization") != f"Bearer {token}":
            return self.reply(*error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."))
        segments = [unquote(segment) for segment in parts.path.split("/")[1:]]
        if segments[:2] != ["v1", "projects"] or len(segments) < 7 or segments[3] != "databases" or segments[5] != "documents":
            return self.reply(*error(404, "NOT_FOUND", "Not found."))
        if segments[2] != project:
            return self.reply(*error(403, "PERMISSION_DENIED", "Missing or insufficient permissions."))
        collection = "/".join(segments[6:])
        query = dict(parse_qsl(parts.query))
        size = min(int(query.get("pageSize", "20")), 300)
        start = int(base64.urlsafe_b64decode(query["pageToken"]).decode()) if query.get("pageToken") else 0
        found = collections.get(collection, [])
        prefix = f"projects/{project}/databases/{segments[4]}/documents/{collection}/"
        page = [dict(document, name=prefix + document["id"]) for document in found[start:start + size]]
        for document in page:
            document.pop("id")
        body = {"documents": page} if page else {}
        if start + size < len(found):
            body["nextPageToken"] = base64.urlsafe_b64encode(str(start + size).encode()).decode()
        self.reply(200, body)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
with open(port_file + ".partial", "w") as out:
    out.write(str(server.server_address[1]))
import os
os.replace(port_file + ".partial", port_file)
sys.stdin.read()
server.shutdown()
