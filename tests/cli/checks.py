# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# What the CLI tests share: checks that report every failure rather than
# stopping at the first, and running tfdist with an expected exit status.
import subprocess

FAILURES = []
TFDIST = "tfdist"


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print("FAIL:", what)


def tfdist(*args, expect=0):
    proc = subprocess.run([TFDIST, *args], capture_output=True, text=True, timeout=120)
    check(proc.returncode == expect,
          f"tfdist {' '.join(args)}: exit {proc.returncode}, expected {expect}\n{proc.stderr}")
    return proc


def finish():
    """The exit status of the test: 1 if any check failed."""
    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0
