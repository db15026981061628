#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# A shuffle after a parallel interleave holds its buffer's records, not the
# 256 KiB packets they were read in: run's peak memory is bounded by the
# buffers, not by the steps run. With shuffle(1000) it grew from about 55 MB
# at 4,000 steps to 110 MB at 64,000 (and on), with shuffle(10000) from 100
# to 210 MB, when each shuffled record kept its packet alive and freed
# packets fragmented the heap; now about 40 and 55 MB whatever the steps.
# Usage: shuffle_memory_test.py TFDIST
import os
import subprocess
import sys
import tempfile

import checks
from checks import check

# Peak RSS may rise this much from the short run to the one 16 times as long
# (allocator noise, the report's histograms); the growth measured before
# was about 50 MB.
MARGIN_MB = 20
SANITIZED = checks.SANITIZED


def peak_mb(*args):
    """Runs tfdist ARGS; checks it succeeds; returns its peak RSS in MB."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([checks.TFDIST, *args], stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        err.seek(0)
        code = os.waitstatus_to_exitcode(status)
        check(code == 0, f"tfdist {' '.join(args)}: exit {code}: {err.read().decode()}")
        return usage.ru_maxrss / 1024


def main():
    checks.TFDIST = sys.argv[1]
    if SANITIZED:
        print("SKIP: a sanitizer's own allocator sets the peak")
        return 0
    with tempfile.TemporaryDirectory(prefix="tfdist-shuffle-memory-") as tmp:
        prefix = os.path.join(tmp, "part")
        checks.tfdist("gen", "--no-fsync", "--seed", "1", "-o", prefix, "--files", "8",
                      "--records", "5000", "--size", "1k", "--kind", "random")
        for buffer in (1000, 10000):
            pipeline = (f'list_files("{tmp}/part-*", shuffle=False).repeat()'
                        '.interleave(tfrecord, cycle_length=4, num_parallel_calls=2)'
                        f'.shuffle({buffer}, seed=1).batch(32)')
            peaks = [peak_mb("run", pipeline, "--device", "cpu", "--steps", str(steps))
                     for steps in (4000, 64000)]
            print(f"shuffle({buffer}): peak RSS {peaks[0]:.0f} MB at 4000 steps, "
                  f"{peaks[1]:.0f} MB at 64000 steps")
            check(peaks[1] <= peaks[0] + MARGIN_MB,
                  f"shuffle({buffer}): peak RSS grew with the steps: {peaks[0]:.0f} MB at "
                  f"4000, {peaks[1]:.0f} MB at 64000 (margin {MARGIN_MB} MB)")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
