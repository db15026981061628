#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# The wording and handling of remote errors and flags, each driven as a user
# meets it (s3rver behind the fault proxy; gs:// where the emulator runs):
#   * a listing retried until it fails names the store's error code and
#     message (InternalError: ...), as a ranged read's failure does;
#   * a password in the endpoint URL (AWS_ENDPOINT_URL,
#     STORAGE_EMULATOR_HOST) is never printed, in errors or --json;
#   * an endpoint with a query is refused at once (exit 2), naming it;
#   * https:// to a plain-HTTP port fails after one attempt: TLS errors are
#     not retried;
#   * a Retry-After longer than the time left says so;
#   * a 412 (the version opened is gone) is worded as one sentence;
#   * a Cloud Storage XML error shows its code, not the XML prolog, and a
#     listing's error names the listing;
#   * --read-ahead takes the size suffixes of gen --size (16M).
# Usage: remote_messages_test.py TFDIST
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
import remote_checks as rc  # noqa: E402
from checks import check  # noqa: E402
from remote_checks import servers  # noqa: E402

PASSWORD = "Pw0rdSecret"
KEY = "data/one.tfrecord"


def says(proc, what, *words, absent=()):
    text = proc.stdout + proc.stderr
    for w in words:
        check(w in text, f"{what}: the output lacks {w!r}\n{text[-1500:]}")
    for w in absent:
        check(w not in text, f"{what}: the output shows {w!r}\n{text[-1500:]}")


def s3_cases(server, env, tmp):
    url = f"s3://{rc.BUCKET}/{KEY}"
    glob = f"s3://{rc.BUCKET}/data/*"
    # --read-ahead with a suffix, as gen --size takes it.
    p = rc.run(["count", "--read-ahead", "16M", glob], env, what="count --read-ahead 16M")
    p = rc.run(["count", "--read-ahead", "16Q", glob], env, expect=2,
               what="count --read-ahead 16Q")
    says(p, "--read-ahead 16Q", "--read-ahead", "unknown unit")

    # A password in the endpoint: refused, never shown.
    port = server.endpoint.rsplit(":", 1)[1]
    for args in (["count", url], ["count", "--json", url]):
        p = rc.run(args, dict(env, AWS_ENDPOINT_URL=f"http://user:{PASSWORD}@127.0.0.1:{port}"),
                   expect=2, what=f"{' '.join(args)} with a password in AWS_ENDPOINT_URL")
        says(p, "a password in AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL", "no user or password",
             absent=(PASSWORD,))
    # A query in the endpoint: refused at configuration.
    p = rc.run(["count", url], dict(env, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}/?x=1"),
               expect=2, what="an endpoint with a query")
    says(p, "an endpoint with a query", "AWS_ENDPOINT_URL", "no query")
    # https:// to the plain-HTTP port: one attempt, not seven.
    p = rc.run(["count", url], dict(env, AWS_ENDPOINT_URL=f"https://127.0.0.1:{port}"),
               expect=7, what="https to a plain-HTTP port")
    says(p, "https to a plain-HTTP port", "1 attempt ")

    # Every GET answered 500: the listing's error keeps the store's code.
    with servers.FaultProxy(server, ["kind=500&count=-1&method=GET"]) as proxy:
        p = rc.run(["count", "--remote-attempts", "2", glob], proxy.env(**EXTRA), expect=7,
                   what="a listing answered 500")
        says(p, "a listing answered 500", f"listing s3://{rc.BUCKET}/data/", "InternalError: ")
    # Retry-After longer than the time left.
    with servers.FaultProxy(server, ["kind=429&retry_after=30&count=-1"]) as proxy:
        p = rc.run(["count", "--remote-timeout", "5", url], proxy.env(**EXTRA), expect=7,
                   what="Retry-After 30 with 5 s")
        says(p, "Retry-After 30 with 5 s", "asked to wait 30 s (Retry-After)")
    # The version opened is gone (412 to If-Match): one clear sentence.
    with servers.FaultProxy(server, ["kind=412&count=-1&ranged=1"]) as proxy:
        p = rc.run(["take", f'tfrecord("{url}")'], proxy.env(**EXTRA), expect=3,
                   what="a ranged read answered 412")
        says(p, "a ranged read answered 412", "replaced while it was read",
             "no longer serves that version", absent=("another (",))


def gs_cases(server, env, tmp):
    glob = f"gs://{rc.BUCKET}/data/*"
    # Every request answered 503 with an XML body (the proxy's S3-style
    # error, as Cloud Storage's XML API and front ends answer).
    with servers.FaultProxy(server, ["kind=503&count=-1"]) as proxy:
        p = rc.run(["count", "--remote-attempts", "1", glob], proxy.env(**EXTRA), expect=7,
                   what="gs: a listing answered 503")
        says(p, "gs: a listing answered 503", "SlowDown", f"listing gs://{rc.BUCKET}/data/",
             absent=("<?xml",))
    # A password in STORAGE_EMULATOR_HOST: not shown (the missing object's
    # error names the credentials, the emulator's address among them).
    p = rc.run(["take", "--json", f'tfrecord("gs://{rc.BUCKET}/data/nope.tfrecord")'],
               dict(env, STORAGE_EMULATOR_HOST=server.endpoint.replace(
                   "http://", f"http://user:{PASSWORD}@")), expect=3,
               what="gs: a password in STORAGE_EMULATOR_HOST")
    says(p, "gs: a password in STORAGE_EMULATOR_HOST", "NOT_FOUND", absent=(PASSWORD,))


EXTRA = {}


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    servers.skip_unless_available("s3")
    servers.terminate_on_sigterm()
    with rc.temp_root("tfdist-remote-messages-") as tmp:
        env_plain = rc.fresh_env(os.environ, os.path.join(tmp, "home"))
        EXTRA.update(HOME=env_plain["HOME"], XDG_CACHE_HOME=env_plain["XDG_CACHE_HOME"])
        local = os.path.join(tmp, "one.tfrecord")
        rc.run(["gen", "--no-fsync", "-o", local, "--records", "20"], env_plain)
        with servers.S3Server() as server:
            server.create_bucket(rc.BUCKET)
            server.put_files(rc.BUCKET, {KEY: local})
            s3_cases(server, server.env(**EXTRA), tmp)
        if servers.missing("gs") is None:
            with servers.GcsEmulator() as server:
                server.create_bucket(rc.BUCKET)
                server.put_files(rc.BUCKET, {KEY: local})
                gs_cases(server, server.env(**EXTRA), tmp)
        else:
            print(f"note: gs:// left out: {servers.missing('gs')}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
