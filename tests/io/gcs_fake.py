#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""A fake of what the Cloud Storage emulator lacks, for storage_gcs_test.

Serves on 127.0.0.1 (a free port; prints "READY PORT" on stdout):
  POST /token            an OAuth 2 token endpoint: the JWT bearer grant of a
                         service-account key, and the refresh_token grant
                         (client test-client / test-secret, refresh token
                         test-refresh-token; anything else is invalid_grant)
  GET  /computeMetadata/v1/instance/service-accounts/default/token
                         the metadata server (needs Metadata-Flavor: Google)
  GET  /stats            what it saw: token requests, the last assertion and
                         the Authorization header of the last storage request
  POST /replace          gives the object a new generation
  /storage/v1/b/bkt/...  one object "obj" (100 bytes, i % 251), generation 5:
                         listing, metadata, alt=media with Range; 412 when
                         ifGenerationMatch differs, 416 for a range that
                         starts past the end (the emulator does neither)
  /storage/v1/b/missing/o  404 JSON, as real Cloud Storage for a missing bucket
                         (the emulator answers 200 and an empty listing)
Every storage request needs "Authorization: Bearer ya29.*" unless
--anonymous-ok; a request without answers 401 as Cloud Storage does.
Tokens live --lifetime seconds (expires_in).
"""

import argparse
import json
import re
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DATA = bytes(i % 251 for i in range(100))
lock = threading.Lock()
state = {"generation": 5, "token_requests": 0, "last_assertion": "", "last_authorization": "",
         "storage_requests": 0}


def gcs_error(code, reason, message):
    return code, {"error": {"code": code, "message": message,
                            "errors": [{"message": message, "domain": "global",
                                        "reason": reason}]}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body, headers=(), content_type="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def token(self, prefix):
        with lock:
            state["token_requests"] += 1
            n = state["token_requests"]
        return {"access_token": f"ya29.{prefix}-{n}", "expires_in": self.server.lifetime,
                "token_type": "Bearer"}

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        form = dict(urllib.parse.parse_qsl(body))
        if url.path == "/token":
            grant = form.get("grant_type")
            if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
                with lock:
                    state["last_assertion"] = form.get("assertion", "")
                if form.get("assertion", "").count(".") != 2:
                    return self.reply(400, {"error": "invalid_grant",
                                            "error_description": "Invalid JWT"})
                return self.reply(200, self.token("sa"))
            if grant == "refresh_token":
                if (form.get("client_id"), form.get("client_secret"),
                        form.get("refresh_token")) != ("test-client", "test-secret",
                                                       "test-refresh-token"):
                    return self.reply(400, {"error": "invalid_grant",
                                            "error_description": "Bad Request"})
                return self.reply(200, self.token("user"))
            return self.reply(400, {"error": "unsupported_grant_type",
                                    "error_description": str(grant)})
        if url.path == "/replace":
            with lock:
                state["generation"] += 1
            return self.reply(200, {"generation": str(state["generation"])})
        return self.reply(404, b"not found", content_type="text/plain")

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/stats":
            with lock:
                return self.reply(200, dict(state))
        if url.path == "/computeMetadata/v1/instance/service-accounts/default/token":
            if self.headers.get("Metadata-Flavor") != "Google":
                return self.reply(403, b"Missing Metadata-Flavor:Google header.",
                                  content_type="text/plain")
            return self.reply(200, self.token("md"))
        m = re.fullmatch(r"/storage/v1/b/([^/]+)/o(?:/([^/]+))?", url.path)
        if not m:
            return self.reply(404, b"Not Found", content_type="text/html")
        auth = self.headers.get("Authorization", "")
        with lock:
            state["last_authorization"] = auth
            state["storage_requests"] += 1
            generation = state["generation"]
        bucket, name = m.group(1), m.group(2) and urllib.parse.unquote(m.group(2))
        if not auth.startswith("Bearer ya29.") and not self.server.anonymous_ok:
            return self.reply(*gcs_error(401, "required",
                                         "Anonymous caller does not have storage.objects.get "
                                         "access to the Google Cloud Storage object."))
        if bucket == "missing":
            return self.reply(*gcs_error(404, "notFound", "The specified bucket does not exist."))
        if bucket == "private":
            return self.reply(*gcs_error(403, "forbidden",
                                         "caller does not have storage.objects.list access"))
        meta = {"name": "obj", "size": str(len(DATA)), "generation": str(generation)}
        if name is None:
            prefix = query.get("prefix", "")
            return self.reply(200, {"kind": "storage#objects",
                                    "items": [meta] if "obj".startswith(prefix) else []})
        if name != "obj":
            return self.reply(*gcs_error(404, "notFound", f"No such object: {bucket}/{name}"))
        if query.get("alt") != "media":
            return self.reply(200, meta)
        match = query.get("ifGenerationMatch")
        if match is not None and match != str(generation):
            return self.reply(*gcs_error(412, "conditionNotMet",
                                         "At least one of the pre-conditions you specified did "
                                         "not hold."))
        headers = [("x-goog-generation", str(generation))]
        r = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if not r:
            return self.reply(200, DATA, headers, "application/octet-stream")
        begin = int(r.group(1))
        end = min(int(r.group(2)) if r.group(2) else len(DATA) - 1, len(DATA) - 1)
        if begin >= len(DATA):
            return self.reply(*gcs_error(416, "requestedRangeNotSatisfiable",
                                         "The requested range cannot be satisfied."),
                              headers=[("Content-Range", f"bytes */{len(DATA)}")])
        headers.append(("Content-Range", f"bytes {begin}-{end}/{len(DATA)}"))
        return self.reply(206, DATA[begin:end + 1], headers, "application/octet-stream")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lifetime", type=int, default=3600)
    parser.add_argument("--anonymous-ok", action="store_true")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.lifetime = args.lifetime
    server.anonymous_ok = args.anonymous_ok
    print(f"READY {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
