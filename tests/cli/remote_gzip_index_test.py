#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# A directory index of a bucket folder of GZIP objects, against s3rver
# started here on 127.0.0.1: `index --directory s3://...` writes it into
# the local cache (never the bucket); then count, layout --format summary
# and check take every count from it, reading no object byte (tfdist talks
# to the server through tests/remote/fault_proxy.py, which then answers
# every GET of an object 404: none may come), and an object replaced since
# is scanned again, its new count given. Skipped (77) without s3rver
# (tools/setup installs it into tests/servers/node_modules).
# Usage: remote_gzip_index_test.py TFDIST
import functools
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import check  # noqa: E402

ROOT = os.getcwd()
PROXY = os.path.join(ROOT, "tests", "remote", "fault_proxy.py")
S3RVER = os.path.join(ROOT, "tests", "servers", "node_modules", "s3rver", "bin", "s3rver.js")
BUCKET = "data"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_s3rver(folder, port, log):
    # Node 20 refuses the DES cipher of s3rver's continuation tokens without
    # the legacy provider: every truncated listing would answer 500.
    env = dict(os.environ, NODE_OPTIONS="--openssl-legacy-provider")
    proc = subprocess.Popen(["node", S3RVER, "-d", folder, "-a", "127.0.0.1", "-p", str(port),
                             "--configure-bucket", BUCKET], env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("s3rver did not start")


def put(port, path, key):
    subprocess.run(["curl", "-sSf", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user",
                    "S3RVER:S3RVER", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-T", path,
                    f"http://127.0.0.1:{port}/{BUCKET}/{key}"], check=True, timeout=60,
                   stdout=subprocess.DEVNULL)


def gzip_file(src, dst):
    with open(src, "rb") as f, gzip.open(dst, "wb") as g:
        g.write(f.read())


def start_proxy(upstream_port):
    proc = subprocess.Popen([sys.executable, PROXY, f"http://127.0.0.1:{upstream_port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return proc, int(proc.stdout.readline())


def control(port, query):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/{query}", timeout=10) as r:
        return r.read().decode()


def main():
    checks.TFDIST = sys.argv[1]
    if not os.path.exists(S3RVER) or not os.path.exists(PROXY) or shutil.which("curl") is None or shutil.which("node") is None:
        print("SKIP: s3rver (tests/servers/node_modules), node or curl is not installed")
        return 77
    with tempfile.TemporaryDirectory(prefix="tfdist-remote-gzip-index-") as tmp:
        port = free_port()
        server = start_s3rver(os.path.join(tmp, "s3"), port, subprocess.DEVNULL)
        proxy, proxy_port = start_proxy(port)
        try:
            local = os.path.join(tmp, "local")
            os.mkdir(local)
            checks.tfdist("gen", "-o", os.path.join(local, "raw"), "--files", "4", "--records",
                          "20-40", "--kind", "text")
            raws = sorted(os.listdir(local))
            for i, name in enumerate(raws):
                gzip_file(os.path.join(local, name), os.path.join(local, f"train-{i}.gz"))
                os.remove(os.path.join(local, name))
                put(port, os.path.join(local, f"train-{i}.gz"), f"d/train-{i}.gz")
            env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy_port}",
                       AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER",
                       AWS_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true",
                       AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
                       XDG_CACHE_HOME=os.path.join(tmp, "cache"))
            url = f"s3://{BUCKET}/d"

            run = functools.partial(checks.tfdist, env=env)

            expected = json.loads(checks.tfdist("count", "--json", f"{local}/train-*").stdout)
            # The directory index of the bucket folder, in the local cache.
            proc = run("index", "--directory", url)
            index = os.path.join(tmp, "cache", "tfdist", "index", "s3:", BUCKET, "d",
                                 ".tfdist-index")
            check(proc.stdout.startswith(index + "  4 files"), f"index: {proc.stdout}")
            with open(index) as f:
                lines = f.read().splitlines()
            check(lines[0] == f"tfdist-object-directory-index 1 {url}", f"header: {lines[0]}")
            check(all(" GZIP " in line for line in lines[1:]), f"entries: {lines}")
            check(not any("tfdist" in f for _, _, files in os.walk(os.path.join(tmp, "s3"))
                          for f in files), "an index was written into the bucket")

            # count: every row from the index; no object read (a GET of one
            # would be answered 404, and the command fail).
            control(proxy_port, f"__fault__?kind=404&method=GET&match=/{BUCKET}/d/train&count=-1")
            proc = run("count", f"{url}/train-*")
            rows = [line for line in proc.stdout.splitlines() if "train-" in line]
            check(len(rows) == 4 and all(r.endswith("(from its folder's index)") for r in rows),
                  f"count: {proc.stdout}")
            got = json.loads(run("count", "--json", f"{url}/train-*").stdout)
            check(got["records"] == expected["records"] and got["bytes"] == expected["bytes"],
                  f"count: {got} vs the local files' {expected}")
            check(all(f["compression"] == "GZIP" and f.get("from_index") for f in got["files"]),
                  f"count --json: {got}")
            pipeline = (f"list_files('{url}/train-*', shuffle=False)"
                        ".interleave(lambda f: tfrecord(f, compression_type='GZIP'))"
                        ".batch(8)")
            proc = run("layout", "--workers", "2", "--format", "summary", pipeline)
            check("4 files from .tfdist-index, 0 from index files, 0 by scanning" in proc.stdout,
                  f"layout --format summary: {proc.stdout}")
            local_pipeline = pipeline.replace(url, local)
            want = checks.tfdist("layout", "--workers", "2", "--format", "summary",
                                 local_pipeline).stdout
            strip = [line for line in proc.stdout.splitlines() if not line.startswith("records:")]
            check(strip == [line for line in want.splitlines() if not line.startswith("records:")],
                  f"layout summary differs from the local files':\n{want}\n---\n{proc.stdout}")
            proc = subprocess.run([checks.TFDIST, "check", "--workers", "2", pipeline],
                                  capture_output=True, text=True, timeout=120, env=env)
            check(proc.returncode in (0, 6), f"check: exit {proc.returncode}: {proc.stderr}")
            faults = json.loads(control(proxy_port, "__stats__"))["faults"]
            check(faults == 0, f"indexed objects were read: {faults} GETs of them")
            # (The rule holds: reading them fails.)
            proc = subprocess.run([checks.TFDIST, "count", "--no-index", f"{url}/train-*"],
                                  capture_output=True, text=True, timeout=120, env=env)
            check(proc.returncode != 0 and "404" in proc.stderr,
                  f"count --no-index read through the rule: {proc.returncode} {proc.stderr}")
            control(proxy_port, "__fault__?clear=1")

            # A replaced object: its entry is stale, the object is read again.
            checks.tfdist("gen", "-o", os.path.join(tmp, "new"), "--files", "1", "--records",
                          "7", "--kind", "text")
            new = [n for n in os.listdir(tmp) if n.startswith("new")][0]
            gzip_file(os.path.join(tmp, new), os.path.join(tmp, "new.gz"))
            put(port, os.path.join(tmp, "new.gz"), "d/train-1.gz")
            proc = run("count", f"{url}/train-*")
            replaced = [line for line in proc.stdout.splitlines() if "train-1.gz" in line]
            check(len(replaced) == 1 and replaced[0].split()[0] == "7" and
                  "(from" not in replaced[0], f"count after a replacement: {proc.stdout}")
            others = [line for line in proc.stdout.splitlines()
                      if "train-" in line and "train-1.gz" not in line]
            check(len(others) == 3 and all("(from its folder's index)" in r for r in others),
                  f"count after a replacement: {proc.stdout}")
            check("no longer describes" in proc.stderr, f"no stale warning: {proc.stderr}")
            proc = run("layout", "--workers", "2", "--format", "summary", pipeline)
            check("3 files from .tfdist-index, 0 from index files, 1 by scanning; 1 stale "
                  ".tfdist-index entry ignored" in proc.stdout, f"layout: {proc.stdout}")
        finally:
            for p in (proxy, server):
                p.kill()
                p.wait()
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
