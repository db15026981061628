#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""A small static HTTP server for the tests of the HTTP engine: the files of a
folder, with ranged GETs, on 127.0.0.1 only. Python's standard library only.

Usage: range_server.py [--port N] [--tls CERT KEY] DIR

Prints "PORT\\n" on standard output once it listens (--port 0, the default,
picks a free port), then serves until killed; HTTPS with --tls.

  GET /PATH, HEAD /PATH  the file DIR/PATH: 200 with its bytes, or 206 for a
                         "Range: bytes=A-B" (or "A-"), with Content-Range;
                         416 for a range that starts past the end; an ETag
                         (size and mtime); HTTP/1.1 keep-alive.
  PUT /PATH              writes the body to DIR/PATH (replaces an object).
  missing file           404 with an S3-style XML error body (NoSuchKey).
  GET /__stats__         JSON: {"requests": N, "by_path": {"/PATH": N, ...},
                         "connections": N}: the requests and connections seen
                         so far (this request not counted).
  GET /__reset__         sets the counts back to zero.
"""

import argparse
import http.server
import json
import os
import re
import ssl
import sys
import threading

RANGE = re.compile(r'^bytes=(\d+)-(\d*)$')


def error_body(code, message, resource):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
            f'<Message>{message}</Message><Resource>{resource}</Resource></Error>').encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    root = '.'
    lock = threading.Lock()
    counts = {}

    def log_message(self, *args):
        pass

    connections = 0

    def setup(self):
        super().setup()
        with Handler.lock:
            Handler.connections += 1

    def count(self):
        with Handler.lock:
            Handler.counts[self.path] = Handler.counts.get(self.path, 0) + 1

    def send_bytes(self, status, body, headers=(), head_only=False):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def file_path(self):
        path = self.path.split('?', 1)[0]
        rel = os.path.normpath(path.lstrip('/'))
        if rel.startswith('..'):
            return None
        return os.path.join(self.root, rel)

    def do_GET(self, head_only=False):
        if self.path == '/__stats__':
            with Handler.lock:
                stats = {'requests': sum(Handler.counts.values()), 'by_path': dict(Handler.counts),
                         'connections': Handler.connections - 1}
            self.send_bytes(200, json.dumps(stats).encode(), [('Content-Type', 'application/json')])
            return
        if self.path == '/__reset__':
            with Handler.lock:
                Handler.counts.clear()
                Handler.connections = 0
            self.send_bytes(200, b'ok\n')
            return
        self.count()
        path = self.file_path()
        if path is None or not os.path.isfile(path):
            self.send_bytes(404, error_body('NoSuchKey', 'The specified key does not exist.',
                                            self.path), [('Content-Type', 'application/xml')],
                            head_only)
            return
        with open(path, 'rb') as f:
            st = os.fstat(f.fileno())
            size = st.st_size
            etag = f'"{size:x}-{st.st_mtime_ns:x}"'
            headers = [('ETag', etag), ('Accept-Ranges', 'bytes')]
            first, last, status = 0, size - 1, 200
            wanted = self.headers.get('Range')
            if wanted:
                m = RANGE.match(wanted.strip())
                if not m:
                    self.send_bytes(400, error_body('InvalidArgument', 'Bad range', self.path),
                                    head_only=head_only)
                    return
                first = int(m.group(1))
                last = min(int(m.group(2)) if m.group(2) else size - 1, size - 1)
                if first >= size:
                    self.send_bytes(416, error_body('InvalidRange',
                                                    'The requested range is not satisfiable',
                                                    self.path),
                                    headers + [('Content-Range', f'bytes */{size}')], head_only)
                    return
                status = 206
                headers.append(('Content-Range', f'bytes {first}-{last}/{size}'))
            self.send_file(status, f, first, last + 1 - first, headers, head_only)

    def send_file(self, status, f, first, length, headers, head_only):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Content-Length', str(length))
        self.end_headers()
        if head_only:
            return
        f.seek(first)
        while length > 0:
            piece = f.read(min(length, 1 << 20))
            if not piece:
                break
            self.wfile.write(piece)
            length -= len(piece)

    def do_HEAD(self):
        self.do_GET(head_only=True)

    def do_PUT(self):
        self.count()
        length = int(self.headers.get('Content-Length', '0'))
        body = self.rfile.read(length)
        path = self.file_path()
        if path is None:
            self.send_bytes(400, b'bad path')
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + '.tmp'
        with open(tmp, 'wb') as f:
            f.write(body)
        os.replace(tmp, path)
        self.send_bytes(200, b'')


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that cut its connection (as the engine does when it has
        # read enough, or times out) is no error of the server's.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument('--tls', nargs=2, metavar=('CERT', 'KEY'),
                        help='serve HTTPS with this certificate and key (PEM files)')
    parser.add_argument('dir')
    args = parser.parse_args()
    Handler.root = args.dir
    server = Server(('127.0.0.1', args.port), Handler)
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*args.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == '__main__':
    sys.exit(main())
