#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Issue 24, point 6: a layout's memory grows with the workers and replicas,
# never with their square (W = 65,536 within 4 GiB of address space, where
# 50-120 bytes x W^2 would need hundreds of GB); --workers stops at 65,536
# with a clear error, from the flag or a launcher; and a large layout stops
# at a real SIGINT while it plans, with exit 130 and "interrupted".
# Usage: layout_scale_test.py TFDIST
import os
import resource
import signal
import subprocess
import sys
import time

import checks
from checks import check

ADDRESS_SPACE = 4 << 30


def limited():
    # Not under AddressSanitizer (TFDIST_SANITIZED), which reserves terabytes
    # of address space: there the layouts run without the cap.
    if not checks.SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    checks.block_interrupts()


def run_limited(*args):
    return subprocess.run([checks.TFDIST, *args], capture_output=True, text=True, timeout=600,
                          preexec_fn=limited)


def main():
    checks.TFDIST = sys.argv[1]
    # 65,536 workers under DATA (range), all of them and one shown.
    for extra in ([], ["--worker", "0"]):
        proc = run_limited("layout", "--format", "summary", "--workers", "65536", *extra,
                           "range(200000).batch(4096)")
        check(proc.returncode == 0, f"layout of 65536 workers {extra}: exit {proc.returncode} "
                                    f"within {ADDRESS_SPACE >> 30} GiB: {proc.stderr[-500:]}")
        check("records: 200000 received" in proc.stdout, f"65536 workers {extra}: {proc.stdout[-800:]}")
    # Two replicas each: N = 131,072 per-replica batches a step.
    proc = run_limited("layout", "--format", "summary", "--workers", "65536", "--replicas", "2",
                       "--worker", "3", "range(300000).batch(131072)")
    check(proc.returncode == 0, f"65536 x 2: exit {proc.returncode}: {proc.stderr[-500:]}")

    # The cap, from the flag and from a launcher's environment.
    proc = checks.tfdist("layout", "--workers", "65537", "range(10).batch(2)", expect=2)
    check("at most 65536" in proc.stderr and "got 65537" in proc.stderr, proc.stderr)
    proc = checks.tfdist("layout", "--workers", "1048576", "--format", "json",
                         "range(10).batch(2)", expect=2)
    check('"INVALID_ARGUMENT"' in proc.stdout, proc.stdout)
    env = dict(os.environ, SLURM_NTASKS="100000", SLURM_PROCID="0")
    proc = subprocess.run([checks.TFDIST, "layout", "range(10).batch(2)"], capture_output=True,
                          text=True, env=env, timeout=60)
    check(proc.returncode == 2 and "at most 65536" in proc.stderr and "Slurm" in proc.stderr,
          f"SLURM_NTASKS=100000: exit {proc.returncode}: {proc.stderr}")

    # A real SIGINT while a large layout plans: exit 130, "interrupted".
    for args in (["--format", "summary", "--workers", "65536", "range(1000000000).batch(4096)"],
                 ["--workers", "4096", "--replicas", "8", "range(1000000000).batch(100)"]):
        proc = subprocess.Popen([checks.TFDIST, "layout", *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, preexec_fn=limited)
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)
            check(proc.returncode == 130 and "interrupted" in err,
                  f"layout {args}: exit {proc.returncode} after SIGINT, expected 130: {err[-500:]}")
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            check(False, f"layout {args}: still running 60 s after SIGINT")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
