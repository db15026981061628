#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# What reading listed objects costs in requests: a listing already gave each
# object's size and ETag, so count, verify and digest of a glob of N small
# objects (each under one ranged read) make 1 listing + N GETs, no HEAD.
# Counted at the fault proxy (no fault armed) in front of s3rver.
# Usage: remote_requests_test.py TFDIST
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
import remote_checks as rc  # noqa: E402
from checks import check  # noqa: E402
from remote_checks import servers  # noqa: E402

OBJECTS = 12


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    servers.skip_unless_available("s3")
    servers.terminate_on_sigterm()
    with rc.temp_root("tfdist-remote-requests-") as tmp:
        data = os.path.join(tmp, "data")
        os.makedirs(data)
        proc = subprocess.run(
            [checks.TFDIST, "gen", "--no-fsync", "-o", os.path.join(data, "part"), "--files",
             str(OBJECTS), "--records", "20", "--kind", "text", "--seed", "5"],
            capture_output=True, text=True, timeout=300)
        check(proc.returncode == 0, f"gen: {proc.stderr}")
        objects = {f"data/{n}": os.path.join(data, n) for n in sorted(os.listdir(data))}
        check(len(objects) == OBJECTS, f"gen made {len(objects)} files, expected {OBJECTS}")
        with servers.S3Server() as s3:
            s3.create_bucket(rc.BUCKET)
            s3.put_files(rc.BUCKET, objects)
            with servers.FaultProxy(s3, []) as proxy:
                for i, command in enumerate((["count"], ["verify"], ["digest"])):
                    env = rc.fresh_env(proxy.env(), os.path.join(tmp, f"home-{i}"))
                    before = proxy.stats()["requests"]
                    rc.run(command + [f"s3://{rc.BUCKET}/data/*"], env, what=command[0])
                    got = proxy.stats()["requests"] - before
                    check(got == 1 + OBJECTS,
                          f"{command[0]} of {OBJECTS} listed objects made {got} requests, "
                          f"expected {1 + OBJECTS} (one listing, one GET each)")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
