#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# A SIGINT that arrives while tfdist starts is an interrupt (exit 130, or 0
# when the command was done), never the death of the process by the signal.
# A program cannot catch a signal before its own code runs (the dynamic
# loader's time), so a caller that signals that early blocks SIGINT across
# exec (the mask is inherited): tfdist installs its handlers first thing in
# main(), then unblocks SIGINT and SIGTERM, and the held signal arrives.
# (Unblocked, 50 such spawns here died by the signal 37 times: the loader
# takes milliseconds on a loaded machine.)
# Usage: interrupt_early_test.py TFDIST
import os
import random
import signal
import subprocess
import sys
import time

import checks

ARGS = ["take", "-n", "3", "range(10)"]


def spawn(block, pending=False):
    def preexec():
        if block:
            checks.block_interrupts()
        if pending:  # sent before exec: held until tfdist unblocks it
            os.kill(os.getpid(), signal.SIGINT)
    return subprocess.Popen([checks.TFDIST, *ARGS], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=preexec)


def main():
    checks.TFDIST = sys.argv[1]
    # Pending before exec: always an interrupt, before the command runs.
    proc = spawn(block=True, pending=True)
    _, err = proc.communicate(timeout=60)
    checks.check(proc.returncode == 130 and "interrupted" in err,
                 f"SIGINT pending at exec: exit {proc.returncode}, expected 130: {err}")
    rng = random.Random(16)
    codes = {}
    for _ in range(50):
        proc = spawn(block=True)
        time.sleep(rng.uniform(0, 0.002))
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        codes[proc.returncode] = codes.get(proc.returncode, 0) + 1
    print(f"exit codes of 50 early interrupts: {codes}")
    checks.check(set(codes) <= {0, 130}, f"exits other than 0 or 130: {codes}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
