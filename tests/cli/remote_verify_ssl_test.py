#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# tensorflow-io's S3_VERIFY_SSL=0 as the user meets it (doc/storage.md, TLS):
# - with an https:// endpoint the user named (a store with a self-signed
#   certificate, served by tests/remote/range_server.py --tls on 127.0.0.1),
#   the object is read unverified, and the warning that says so is printed
#   once on stderr ("tfdist: warning: S3_VERIFY_SSL=0: ...") and kept in
#   --json's "warnings"; without S3_VERIFY_SSL=0 the same read fails on the
#   certificate (exit 7);
# - the warning comes before the error too when the store is unreachable;
# - with AWS's own endpoint (none named) it is refused, exit 2;
# - over http:// there is nothing to verify: no warning.
# Usage: remote_verify_ssl_test.py TFDIST
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import check  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOOD = os.path.join(ROOT, "testdata", "one.tfrecord")
WARNING = "tfdist: warning: S3_VERIFY_SSL=0"


def base_env(tmp):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "S3_")) and k not in ("HTTPS_PROXY", "https_proxy",
                                                               "HTTP_PROXY", "http_proxy")}
    env.update({"AWS_ACCESS_KEY_ID": "TESTKEY", "AWS_SECRET_ACCESS_KEY": "TESTSECRET",
                "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": "/dev/null",
                "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "HOME": tmp,
                "XDG_CACHE_HOME": os.path.join(tmp, "cache")})
    return env


def run(args, env, expect):
    proc = subprocess.run([checks.TFDIST, *args], capture_output=True, text=True, env=env,
                          timeout=120)
    check(proc.returncode == expect,
          f"{args}: exit {proc.returncode}, expected {expect}: {proc.stderr!r}")
    check("TESTSECRET" not in proc.stdout + proc.stderr, f"{args}: the secret printed")
    return proc


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-verify-ssl-") as tmp:
        env = base_env(tmp)
        quick = ["--remote-attempts", "1", "--remote-timeout", "20"]

        # AWS's own endpoint: refused before any request.
        proc = run(["count", "s3://bucket/x.tfrecord", *quick], {**env, "S3_VERIFY_SSL": "0"}, 2)
        check("S3_VERIFY_SSL=0" in proc.stderr and "AWS_ENDPOINT_URL" in proc.stderr,
              f"the refusal does not name the variables: {proc.stderr!r}")
        check(WARNING not in proc.stderr, f"a warning as well as the refusal: {proc.stderr!r}")

        # An https:// endpoint nothing listens on: the warning, once, then
        # the store's error (exit 7).
        closed = f"https://127.0.0.1:{free_port()}"
        proc = run(["count", "s3://bucket/x.tfrecord", *quick],
                   {**env, "S3_VERIFY_SSL": "0", "AWS_ENDPOINT_URL": closed}, 7)
        check(proc.stderr.count(WARNING) == 1, f"not one warning: {proc.stderr!r}")
        check(proc.stderr.find(WARNING) < proc.stderr.find("tfdist: error:"),
              f"the warning after the error: {proc.stderr!r}")
        check("127.0.0.1" in proc.stderr.split("\n")[0] and "AWS_ENDPOINT_URL" in proc.stderr,
              f"the warning names no endpoint: {proc.stderr!r}")

        # A store with a self-signed certificate.
        cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", cert], check=True, capture_output=True)
        data = os.path.join(tmp, "data")
        os.makedirs(os.path.join(data, "bucket"))
        shutil.copy(GOOD, os.path.join(data, "bucket", "one.tfrecord"))
        server = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "remote",
                                                                "range_server.py"),
                                   "--tls", cert, key, data],
                                  stdout=subprocess.PIPE, text=True)
        try:
            port = int(server.stdout.readline())
            endpoint = {"AWS_ENDPOINT_URL": f"https://127.0.0.1:{port}"}
            local = json.loads(run(["count", "--json", GOOD], env, 0).stdout)

            # Verified (the default): the self-signed certificate is refused.
            proc = run(["count", "s3://bucket/one.tfrecord", *quick], {**env, **endpoint}, 7)
            check(WARNING not in proc.stderr, f"a warning without S3_VERIFY_SSL=0: {proc.stderr!r}")
            check("certificate" in proc.stderr.lower() or "ssl" in proc.stderr.lower(),
                  f"the refusal does not say why: {proc.stderr!r}")
            # And with the certificate as AWS_CA_BUNDLE, it is read verified.
            proc = run(["count", "s3://bucket/one.tfrecord", *quick],
                       {**env, **endpoint, "AWS_CA_BUNDLE": cert}, 0)
            check(WARNING not in proc.stderr, f"a warning for a verified read: {proc.stderr!r}")

            unverified = {**env, **endpoint, "S3_VERIFY_SSL": "0"}
            proc = run(["count", "s3://bucket/one.tfrecord", *quick], unverified, 0)
            check(proc.stderr.count(WARNING) == 1, f"not one warning: {proc.stderr!r}")
            proc = run(["count", "--json", "s3://bucket/one.tfrecord", *quick], unverified, 0)
            out = json.loads(proc.stdout)
            check(out["records"] == local["records"] and out["bytes"] == local["bytes"],
                  f"{out} vs {local}")
            warnings = [w for w in out.get("warnings", []) if w.startswith("S3_VERIFY_SSL=0")]
            check(len(warnings) == 1, f"--json warnings: {out.get('warnings')!r}")
            check(proc.stderr.count(WARNING) == 1, f"not one warning: {proc.stderr!r}")
            # A pipeline reads the store too: the warning once.
            proc = run(["take", "-n", "1", "tfrecord('s3://bucket/one.tfrecord')", *quick],
                       unverified, 0)
            check(proc.stderr.count(WARNING) == 1, f"take: not one warning: {proc.stderr!r}")
        finally:
            server.kill()
            server.wait()

        # http://: nothing to verify, nothing to warn of (the store is not
        # there: exit 7).
        proc = run(["count", "s3://bucket/x.tfrecord", *quick],
                   {**env, "S3_VERIFY_SSL": "0",
                    "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}"}, 7)
        check(WARNING not in proc.stderr, f"a warning for http://: {proc.stderr!r}")
    sys.exit(checks.finish())


if __name__ == "__main__":
    main()
