#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""A fault-injecting HTTP forwarder for the tests of remote reading: it
listens on 127.0.0.1, passes each request to an upstream server (an S3 or
Cloud Storage test server, or range_server.py) and its answer back, and
breaks some of them on purpose. Python's standard library only; it never
talks to an address other than the upstream's.

Usage: fault_proxy.py [--port N] [--fault RULE]... UPSTREAM

  UPSTREAM     http://127.0.0.1:PORT (plain HTTP).
  --port N     where to listen (0, the default, picks a free port).
  --fault RULE a rule, as a query string (below); several may be given.

It prints "PORT\\n" on standard output once it listens, then serves until
killed (point the client at http://127.0.0.1:PORT). Requests keep their
method, path, query, headers (Host included, so signatures stay valid) and
body.

A RULE is KEY=VALUE pairs joined by '&':
  kind=503      answer 503 with an S3-style XML error (SlowDown), without
                asking the upstream
  kind=429      answer 429 (SlowDown) with "Retry-After: SECONDS"
                (retry_after=, default 0)
  kind=500      answer 500 (InternalError); likewise 403 (AccessDenied),
                404 (NoSuchKey), 412 (PreconditionFailed)
  kind=cut      forward, then cut the connection after `after` bytes of the
                response's body (after=, default 0: the headers only)
  kind=slow     forward, after a delay of `seconds` before the first byte
                (seconds=, default 1)
  kind=norange  forward without the Range header (the upstream answers 200
                with the whole object, as a server that ignores ranges)
  kind=widen    forward with the Range header's first byte moved `bytes`
                earlier (bytes=, default 1): a 206 that starts before the
                byte asked
  kind=cap      forward with the Range header's last byte moved so that at
                most `bytes` are asked (bytes=): a server that sends less than
                the range asked
  kind=replace  forward; once a ranged GET (one with a Range header) has
                been answered in full, run `command` (command=, a shell
                command, URL-encoded) before the next request is answered,
                so that the object is replaced between two ranges of one read
  count=N       how many requests the rule breaks (default 1; -1: all)
  skip=N        let the first N matching requests pass first (default 0)
  match=TEXT    only requests whose path (with its query) contains TEXT
  method=M      only requests with this method (GET, HEAD, ...)
  ranged=1      only requests with a Range header
Rules are looked at in the order given; the first that matches a request
(and has count left) applies to it, once.

Control requests (answered by the proxy itself, never forwarded):
  GET /__fault__?RULE    adds a rule; GET /__fault__?clear=1 removes all
  GET /__stats__         JSON: {"requests": N, "faults": N, "by_kind": {...},
                         "commands": N}: requests forwarded or broken so far
Example:
  python3 fault_proxy.py --fault 'kind=503&count=3' --fault \\
      'kind=cut&after=100000&count=2&ranged=1' http://127.0.0.1:4568
"""

import argparse
import http.client
import http.server
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from xml.sax.saxutils import escape as xml_escape

HOP_BY_HOP = {'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te',
              'trailers', 'transfer-encoding', 'upgrade'}
ERRORS = {
    503: ('SlowDown', 'Please reduce your request rate.'),
    429: ('SlowDown', 'Please reduce your request rate.'),
    500: ('InternalError', 'We encountered an internal error. Please try again.'),
    403: ('AccessDenied', 'Access Denied'),
    404: ('NoSuchKey', 'The specified key does not exist.'),
    412: ('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold'),
}
KINDS = {str(s) for s in ERRORS} | {'cut', 'slow', 'replace', 'norange', 'widen', 'cap'}


class Rule:
    def __init__(self, query):
        q = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        self.kind = q.get('kind', '')
        if self.kind not in KINDS:
            raise ValueError(f'unknown fault kind {self.kind!r}')
        self.count = int(q.get('count', '1'))
        self.skip = int(q.get('skip', '0'))
        self.match = q.get('match', '')
        self.method = q.get('method', '')
        self.ranged = q.get('ranged', '') == '1'
        self.after = int(q.get('after', '0'))
        self.bytes = int(q.get('bytes', '1'))
        self.seconds = float(q.get('seconds', '1'))
        self.retry_after = q.get('retry_after', '0')
        self.command = q.get('command', '')

    def matches(self, method, path, ranged):
        if self.count == 0:
            return False
        if self.match and self.match not in path:
            return False
        if self.method and self.method != method:
            return False
        return ranged or not self.ranged

    def take(self):
        """Whether this request is broken (count and skip spent as it says)."""
        if self.skip > 0:
            self.skip -= 1
            return False
        if self.count > 0:
            self.count -= 1
        return True


class State:
    lock = threading.Lock()
    rules = []
    requests = 0
    faults = 0
    by_kind = {}
    commands = 0
    pending_command = None  # run before the next request is answered


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    upstream = ('127.0.0.1', 80)

    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)

    def control(self):
        parsed = urllib.parse.urlsplit(self.path)
        if parsed.path == '/__stats__':
            with State.lock:
                stats = {'requests': State.requests, 'faults': State.faults,
                         'by_kind': dict(State.by_kind), 'commands': State.commands}
            self.reply(200, json.dumps(stats).encode(), [('Content-Type', 'application/json')])
            return True
        if parsed.path == '/__fault__':
            if parsed.query == 'clear=1':
                with State.lock:
                    State.rules.clear()
                self.reply(200, b'cleared\n')
                return True
            try:
                rule = Rule(parsed.query)
            except ValueError as e:
                self.reply(400, f'{e}\n'.encode())
                return True
            with State.lock:
                State.rules.append(rule)
            self.reply(200, b'added\n')
            return True
        return False

    def pick(self):
        ranged = 'Range' in self.headers
        with State.lock:
            State.requests += 1
            command, State.pending_command = State.pending_command, None
            rule = None
            for r in State.rules:
                if r.matches(self.command, self.path, ranged) and r.take():
                    rule = r
                    break
            if rule is not None:
                State.faults += 1
                State.by_kind[rule.kind] = State.by_kind.get(rule.kind, 0) + 1
        if command:
            subprocess.run(command, shell=True, check=False)
            with State.lock:
                State.commands += 1
        return rule

    def handle_any(self):
        if self.control():
            return
        length = int(self.headers.get('Content-Length', '0') or 0)
        body = self.rfile.read(length) if length > 0 else b''
        rule = self.pick()
        if rule is not None and rule.kind.isdigit():
            status = int(rule.kind)
            code, message = ERRORS[status]
            xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
                   f'<Message>{message}</Message><Resource>{xml_escape(self.path)}</Resource>'
                   '<RequestId>fault-proxy</RequestId></Error>').encode()
            headers = [('Content-Type', 'application/xml')]
            if status == 429:
                headers.append(('Retry-After', rule.retry_after))
            self.reply(status, xml, headers)
            return
        if rule is not None and rule.kind == 'slow':
            time.sleep(rule.seconds)
        self.forward(body, rule)

    def forward(self, body, rule):
        conn = http.client.HTTPConnection(*self.upstream, timeout=300)
        try:
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for name, value in self.headers.items():
                if name.lower() in HOP_BY_HOP or name.lower() == 'content-length':
                    continue
                if name.lower() == 'range' and rule is not None:
                    if rule.kind == 'norange':
                        continue
                    m = re.match(r'bytes=(\d+)-(\d*)$', value.strip())
                    if rule.kind == 'widen' and m:
                        value = f'bytes={max(0, int(m.group(1)) - rule.bytes)}-{m.group(2)}'
                    if rule.kind == 'cap' and m:
                        first = int(m.group(1))
                        last = first + rule.bytes - 1
                        if m.group(2):
                            last = min(last, int(m.group(2)))
                        value = f'bytes={first}-{last}'
                conn.putheader(name, value)
            if body or self.command in ('PUT', 'POST'):
                conn.putheader('Content-Length', str(len(body)))
            conn.endheaders(body or None)
            resp = conn.getresponse()
            self.send_response(resp.status, resp.reason)
            length = resp.getheader('Content-Length')
            data = None
            if length is None and self.command != 'HEAD':
                data = resp.read()  # chunked: sent on with its length
                length = str(len(data))
            for name, value in resp.getheaders():
                # send_response wrote the proxy's own Date and Server.
                if name.lower() not in HOP_BY_HOP | {'content-length', 'date', 'server'}:
                    self.send_header(name, value)
            if length is not None:
                self.send_header('Content-Length', length)
            self.end_headers()
            if self.command == 'HEAD':
                return
            cut = rule.after if rule is not None and rule.kind == 'cut' else None
            sent = 0
            while True:
                if data is not None:
                    piece, data = data, b''
                else:
                    piece = resp.read(65536)
                if not piece:
                    break
                if cut is not None and sent + len(piece) >= cut:
                    self.wfile.write(piece[:cut - sent])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self.wfile.write(piece)
                sent += len(piece)
            if cut is not None:  # a body shorter than `after`: cut at its end
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if (rule is not None and rule.kind == 'replace' and 'Range' in self.headers
                    and 200 <= resp.status < 300):
                with State.lock:
                    State.pending_command = rule.command
        finally:
            conn.close()

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = handle_any


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that cut its connection (as the engine does when it has
        # read enough, or times out) is no error of the server's.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument('--fault', action='append', default=[])
    parser.add_argument('upstream')
    args = parser.parse_args()
    up = urllib.parse.urlsplit(args.upstream)
    if up.scheme != 'http' or not up.hostname:
        print(f'fault_proxy: UPSTREAM must be http://HOST:PORT, not {args.upstream!r}',
              file=sys.stderr)
        return 2
    Handler.upstream = (up.hostname, up.port or 80)
    State.rules = [Rule(r) for r in args.fault]
    server = Server(('127.0.0.1', args.port), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == '__main__':
    sys.exit(main())
