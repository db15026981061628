#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Running out of a resource the user can free or raise is exit 5 and
# RESOURCE_EXHAUSTED, not exit 1 (a bug): a full disk (/dev/full as standard
# output), the file size limit (ulimit -f: EFBIG), too few file descriptors
# (ulimit -n) and too little memory (ulimit -v). The message says which, and
# a writer leaves no partial file behind.
# Usage: resource_exhausted_test.py TFDIST
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile

import checks


def run(args, limits=(), stdout=subprocess.PIPE, cwd=None):
    def preexec():
        for which, value in limits:
            resource.setrlimit(which, (value, value))
        # Past the file size limit, write(2) fails with EFBIG once SIGXFSZ
        # (which would kill the process) is ignored, as a shell's trap does.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return subprocess.run([checks.TFDIST, *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120, preexec_fn=preexec, cwd=cwd)


def expect(proc, what, message):
    checks.check(proc.returncode == 5, f"{what}: exit {proc.returncode}, expected 5: {proc.stderr}")
    checks.check(message in proc.stderr, f"{what}: stderr lacks {message!r}: {proc.stderr}")
    checks.check("internal error" not in proc.stderr, f"{what}: worded as a bug: {proc.stderr}")


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-resource-") as tmp:
        data = os.path.join(tmp, "data")
        os.mkdir(data)
        checks.tfdist("gen", "-o", os.path.join(data, "x"), "--files", "40", "--records", "50",
                      "--size", "1k")
        one = os.path.join(data, "x-00000-of-00040.tfrecord")

        # A full disk: standard output on /dev/full.
        with open("/dev/full", "w") as full:
            proc = run(["cat", one], stdout=full)
        expect(proc, "cat > /dev/full", "No space left on device")

        # The file size limit: the shard cannot be written; nothing is left.
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        proc = run(["reshard", one, "-o", os.path.join(out, "y"), "--num-shards", "1", "--json"],
                   limits=[(resource.RLIMIT_FSIZE, 4096)])
        expect(proc, "reshard past ulimit -f", "File too large")
        error = json.loads(proc.stdout.splitlines()[-1])["error"] if proc.stdout else {}
        checks.check(error.get("code") == "RESOURCE_EXHAUSTED", f"reshard --json: {proc.stdout}")
        checks.check(os.listdir(out) == [], f"reshard left {os.listdir(out)}")
        proc = run(["gen", "-o", os.path.join(out, "g"), "--records", "100", "--size", "1k"],
                   limits=[(resource.RLIMIT_FSIZE, 4096)])
        expect(proc, "gen past ulimit -f", "File too large")
        checks.check(os.listdir(out) == [], f"gen left {os.listdir(out)}")

        # Too few file descriptors for an interleave that opens 40 files at once.
        pipeline = (f"list_files('{data}/x-*', shuffle=False)"
                    ".interleave(tfrecord, cycle_length=40, block_length=1)")
        proc = run(["count", "--help"], limits=[(resource.RLIMIT_NOFILE, 24)])
        if proc.returncode != 0:
            print("SKIP: tfdist cannot start with 24 file descriptors")
            return 77
        proc = run(["take", "-n", "-1", pipeline], limits=[(resource.RLIMIT_NOFILE, 24)])
        expect(proc, "interleave of 40 files with ulimit -n 24", "Too many open files")

        # Too little memory: a record of 1 GiB under a 600 MiB address space
        # (not under AddressSanitizer, which reserves terabytes of it).
        if checks.SANITIZED:
            return checks.finish()
        proc = run(["gen", "-o", os.path.join(out, "big"), "--records", "1", "--size", "1G"],
                   limits=[(resource.RLIMIT_AS, 600 << 20)])
        expect(proc, "gen --size 1G with ulimit -v 600M", "out of memory")
        checks.check(os.listdir(out) == [], f"gen left {os.listdir(out)}")
        proc = run(["gen", "-o", os.path.join(out, "big"), "--records", "1", "--size", "1G",
                    "--json"], limits=[(resource.RLIMIT_AS, 600 << 20)])
        expect(proc, "gen --json with ulimit -v 600M", "out of memory")
        error = json.loads(proc.stdout.splitlines()[-1])["error"] if proc.stdout else {}
        checks.check(error.get("code") == "RESOURCE_EXHAUSTED", f"gen --json: {proc.stdout!r}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
