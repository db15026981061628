#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""Smoke test of tests/servers/gcs-emu.js, the Cloud Storage emulator launcher.

It uses firebase-tools' internal modules, which may move in any release: this
fails loudly when they do (the launcher exits 1 naming what it could not
load), and checks the contract other tests rely on: "READY PORT" on stdout,
the JSON API's upload, listing, metadata and ranged download, and SIGTERM
deleting the blobs and exiting 0. Exit 77 (skipped) when firebase-tools is
not installed in tests/servers (tools/setup installs it).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER = os.path.join(HERE, "gcs-emu.js")


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def start(launcher, tmp):
    env = dict(os.environ, TMPDIR=tmp, GCS_EMU_PORT="0")
    return subprocess.Popen(["node", launcher], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)


def main():
    if shutil.which("node") is None:
        print("SKIP: no node", file=sys.stderr)
        return 77
    if not os.path.isdir(os.path.join(HERE, "node_modules", "firebase-tools")):
        print("SKIP: firebase-tools is not installed in tests/servers", file=sys.stderr)
        return 77

    with tempfile.TemporaryDirectory() as tmp:
        # Without firebase-tools beside it, the launcher says so and exits 1.
        lone = os.path.join(tmp, "lone")
        os.mkdir(lone)
        shutil.copy(LAUNCHER, lone)
        proc = start(os.path.join(lone, "gcs-emu.js"), tmp)
        out, err = proc.communicate(timeout=60)
        if proc.returncode != 1 or "cannot load firebase-tools" not in err or out:
            fail(f"a launcher without firebase-tools: exit {proc.returncode}, {out!r}, {err!r}")

        emutmp = os.path.join(tmp, "emu")
        os.mkdir(emutmp)
        proc = start(LAUNCHER, emutmp)
        line = proc.stdout.readline()
        if not line.startswith("READY "):
            proc.kill()
            fail(f"no READY line (firebase-tools' internals moved?): {line!r} "
                 f"{proc.stderr.read()!r}")
        base = f"http://127.0.0.1:{int(line.split()[1])}"
        try:
            data = bytes(range(256)) * 4
            req = urllib.request.Request(
                f"{base}/upload/storage/v1/b/smoke/o?uploadType=media&name=d%2Fa%20b.bin",
                data=data, method="POST", headers={"Content-Type": "application/octet-stream"})
            meta = json.load(urllib.request.urlopen(req, timeout=30))
            if meta["size"] != str(len(data)) or not meta["generation"].isdigit():
                fail(f"upload answered {meta}")
            listing = json.load(urllib.request.urlopen(
                f"{base}/storage/v1/b/smoke/o?prefix=d/&maxResults=1", timeout=30))
            if [i["name"] for i in listing.get("items", [])] != ["d/a b.bin"]:
                fail(f"listing answered {listing}")
            req = urllib.request.Request(f"{base}/storage/v1/b/smoke/o/d%2Fa%20b.bin?alt=media",
                                         headers={"Range": "bytes=10-19"})
            with urllib.request.urlopen(req, timeout=30) as r:
                body = r.read()
                if (r.status != 206 or body != data[10:20]
                        or r.headers["x-goog-generation"] != meta["generation"]):
                    fail(f"ranged download: {r.status} {body!r} {dict(r.headers)}")
            if not os.listdir(os.path.join(emutmp, "firebase", "storage", "blobs")):
                fail("no blob stored under $TMPDIR/firebase/storage/blobs")
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        if proc.returncode != 0:
            fail(f"SIGTERM: exit {proc.returncode}, {proc.stderr.read()!r}")
        if os.path.exists(os.path.join(emutmp, "firebase", "storage", "blobs")):
            fail("SIGTERM left the blobs behind")
    print("ok: gcs-emu.js serves the JSON API and cleans up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
