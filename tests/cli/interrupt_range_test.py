#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Pipelines that read no file (range() and what follows it) stop at the first
# SIGINT with exit 130, however long they would run: an endless take, a skip
# that walks 2^63 elements, a layout of a billion steps.
# Usage: interrupt_range_test.py TFDIST
import signal
import subprocess
import sys
import time

import checks
from checks import check


def main():
    checks.TFDIST = sys.argv[1]
    for args in (["take", "-n", "-1", "range(5).repeat()"],
                 ["take", "-n", "5", "range(5).repeat().skip(9223372036854775807)"],
                 ["layout", "--steps", "1073741824", "range(5).repeat().batch(2)"]):
        proc = subprocess.Popen([checks.TFDIST, *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=10)
            check(proc.returncode == 130, f"{args}: exit {proc.returncode}, expected 130: {err}")
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            check(False, f"{args}: still running 10 s after SIGINT")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
