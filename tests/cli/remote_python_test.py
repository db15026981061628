#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# URLs in --python code and in pipeline expressions, against s3rver started
# here on 127.0.0.1: list_files('s3://...') is tfdist's own listing, and
# count, layout and take of the bucket give the local files' answers (the
# paths aside); tf.io.gfile.glob of a URL is refused by the trace, not an
# empty list. Skipped (77) without s3rver (tools/setup installs it into
# tests/servers/node_modules).
# Usage: remote_python_test.py TFDIST
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import check  # noqa: E402

ROOT = os.getcwd()
S3RVER = os.path.join(ROOT, "tests", "servers", "node_modules", ".bin", "s3rver")
BUCKET = "data"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_s3rver(folder, port):
    # Node 20 refuses the DES cipher of s3rver's continuation tokens without
    # the legacy provider: every truncated listing would answer 500.
    env = dict(os.environ, NODE_OPTIONS="--openssl-legacy-provider")
    proc = subprocess.Popen([S3RVER, "-d", folder, "-a", "127.0.0.1", "-p", str(port), "--silent",
                             "--configure-bucket", BUCKET], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
                    f"http://127.0.0.1:{port}/{BUCKET}/{key}"], check=True, timeout=60)


def main():
    checks.TFDIST = sys.argv[1]
    if not os.access(S3RVER, os.X_OK) or shutil.which("curl") is None:
        print("SKIP: s3rver (tests/servers/node_modules) or curl is not installed")
        return 77
    with tempfile.TemporaryDirectory(prefix="tfdist-remote-python-") as tmp:
        port = free_port()
        server = start_s3rver(os.path.join(tmp, "s3"), port)
        try:
            local = os.path.join(tmp, "local")
            os.mkdir(local)
            checks.tfdist("gen", "-o", os.path.join(local, "train"), "--files", "3", "--records",
                          "20", "--kind", "text")
            for name in sorted(os.listdir(local)):
                put(port, os.path.join(local, name), name)
            env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
                       AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER",
                       AWS_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true",
                       AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
                       XDG_CACHE_HOME=os.path.join(tmp, "cache"))
            url = f"s3://{BUCKET}"

            def run(*args, expect=0):
                proc = subprocess.run([checks.TFDIST, *args], capture_output=True, text=True,
                                      timeout=120, env=env)
                check(proc.returncode == expect,
                      f"{args}: exit {proc.returncode}, not {expect}: {proc.stderr}")
                return proc

            def same(args_local, args_remote):
                a = run(*args_local).stdout.replace(local, "@")
                b = run(*args_remote).stdout.replace(url, "@").replace("-True.py", "-False.py")
                check(a == b, f"{args_remote}: differs from the local files:\n{a}\n---\n{b}")

            same(["count", "--json", f"{local}/train-*"], ["count", "--json", f"{url}/train-*"])
            same(["take", "-n", "50", f"list_files('{local}/train-*', shuffle=False)"
                  ".interleave(tfrecord, cycle_length=2)"],
                 ["take", "-n", "50", f"list_files('{url}/train-*', shuffle=False)"
                  ".interleave(tfrecord, cycle_length=2)"])
            for where in (local, url):
                with open(os.path.join(tmp, f"input-{where == url}.py"), "w") as f:
                    f.write("import tensorflow as tf\n"
                            "def input_fn():\n"
                            f"    files = tf.data.Dataset.list_files('{where}/train-*', shuffle=False)\n"
                            "    return files.interleave(tf.data.TFRecordDataset, cycle_length=2)"
                            ".batch(4)\n")
            same(["layout", "--workers", "2", "--python", os.path.join(tmp, "input-False.py")],
                 ["layout", "--workers", "2", "--python", os.path.join(tmp, "input-True.py")])
            # tf.io.gfile.glob of the bucket: tfdist's listing. Sorted: a local
            # folder's names come in readdir's order, a bucket's in byte order.
            for where in (local, url):
                with open(os.path.join(tmp, f"glob-{where == url}.py"), "w") as f:
                    f.write("import tensorflow as tf\n"
                            "def input_fn():\n"
                            f"    names = sorted(tf.io.gfile.glob('{where}/train-*'))\n"
                            f"    assert tf.io.gfile.exists(names[0])\n"
                            "    return tf.data.TFRecordDataset(names).batch(4)\n")
            # The same but for the note on the names' order: a bucket's are
            # in byte order, a folder's in its listing's.
            glob_remote = run("layout", "--python", os.path.join(tmp, "glob-True.py")).stdout
            store_order = "in the store's listing order, byte order of the names"
            check(store_order in glob_remote, f"glob of a bucket: no {store_order!r}:\n"
                                              f"{glob_remote}")
            check(run("layout", "--python", os.path.join(tmp, "glob-False.py")).stdout.replace(
                      local, "@") ==
                  glob_remote.replace(url, "@").replace("-True.py", "-False.py").replace(
                      store_order, "in the folder listing's order"),
                  "layout of a glob of a bucket differs from the local files")
            # Indexed objects: count reads the indexes from the local cache.
            run("index", f"{url}/train-*")
            proc = run("count", "--json", f"{url}/train-*")
            check('"from_index": true' in proc.stdout or '"from_index":true' in proc.stdout,
                  f"count of indexed objects: {proc.stdout}")
            check(not any(".idx" in f for _, _, files in os.walk(os.path.join(tmp, "s3"))
                          for f in files), "an index was written into the bucket")
        finally:
            server.kill()
            server.wait()
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
