#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# An interrupted gen (SIGINT, SIGTERM, and a second SIGINT that forces the
# exit) exits 130 (143 for SIGTERM) and leaves no file, temporary or final,
# in its folder nor in its staging folder beside it;
# so does one writing many empty files, where no record write sees the signal.
# Usage: interrupt_test.py TFDIST
import os
import signal
import subprocess
import sys
import tempfile
import time


BIG_FILES = ["--files", "3", "--records", "1000000000", "--size", "1k"]
EMPTY_FILES = ["--files", "100000", "--records", "0"]


def staged(staging):
    """Whether a file is staged in a transaction of `staging`."""
    try:
        return any(os.listdir(os.path.join(staging, t)) for t in os.listdir(staging)
                   if t.startswith("txn-"))
    except OSError:
        return False


def run_once(tfdist, signals, sizes=BIG_FILES):
    with tempfile.TemporaryDirectory(prefix="tfdist-intr-") as tmp:
        proc = subprocess.Popen([tfdist, "gen", "-o", os.path.join(tmp, "x"), *sizes],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # Files are staged beside the folder (doc/outputs.md): wait for one.
        staging = os.path.join(os.path.dirname(tmp), ".tfdist-staging." + os.path.basename(tmp))
        deadline = time.monotonic() + 30
        while not staged(staging) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        time.sleep(0.2)  # let it write a while
        for sig in signals:
            proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            return f"{signals} {sizes}: gen did not stop"
        left = os.listdir(tmp) + ([staging] if os.path.exists(staging) else [])
        expected = 128 + signals[0]  # as a shell reports it: 130, 143
        if proc.returncode != expected or left:
            return f"{signals} {sizes}: exit {proc.returncode}, left {left[:5]}, stderr {err!r}"
    return None


def main():
    tfdist = sys.argv[1]
    failures = [f for f in (run_once(tfdist, [signal.SIGINT]),
                            run_once(tfdist, [signal.SIGTERM]),
                            run_once(tfdist, [signal.SIGINT, signal.SIGINT]),
                            run_once(tfdist, [signal.SIGINT], EMPTY_FILES),
                            run_once(tfdist, [signal.SIGINT, signal.SIGINT], EMPTY_FILES)) if f]
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
