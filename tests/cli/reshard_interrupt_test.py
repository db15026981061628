#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# A reshard or convert interrupted at random moments (SIGINT, SIGTERM, or a
# second signal that forces the exit) exits 128 + the first signal (130,
# 143) and leaves its output folder as it was: no shard, no temporary or
# spill file, in the folder or in the staging folder beside it. A run that finished before
# the signal left every shard whole. A rerun then completes.
# Usage: reshard_interrupt_test.py TFDIST
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import checks


def run(tfdist, args):
    return subprocess.run([tfdist] + args, capture_output=True, text=True, timeout=120)


def check_complete(tfdist, out, records):
    """Every output in `out` reads back whole, holding `records` in all."""
    files = sorted(os.path.join(out, f) for f in os.listdir(out))
    proc = run(tfdist, ["count", "--json", "--no-index"] + files)
    try:
        total = json.loads(proc.stdout)["records"]
    except (ValueError, KeyError):
        total = None
    if proc.returncode != 0 or total != records:
        return f"the outputs do not read back: {proc.stdout[-300:]} {proc.stderr}"
    return None


def main():
    tfdist = sys.argv[1]
    rng = random.Random(int(os.environ.get("TFDIST_TEST_SEED", time.time_ns())))
    failures = []
    with tempfile.TemporaryDirectory(prefix="tfdist-reshard-intr-") as tmp:
        data = os.path.join(tmp, "data")
        os.mkdir(data)
        raw = os.path.join(data, "in.tfrecord")
        gz = os.path.join(data, "in.tfrecord.gz")
        for args in (["-o", raw, "--records", "100000", "--size", "1k", "--kind", "random"],
                     ["-o", gz, "--records", "1000000", "--kind", "text",
                      "--output-compression", "gzip"]):
            proc = run(tfdist, ["gen", "--no-fsync"] + args)
            assert proc.returncode == 0, proc.stderr
        records = {raw: 100000, gz: 1000000}
        modes = [
            ("in order", ["reshard", raw, "--num-shards", "8"], raw),
            ("shuffled", ["reshard", raw, "--num-shards", "8", "--seed", "3"], raw),
            ("gzip out", ["reshard", raw, "--num-shards", "4", "--output-compression", "gzip", "--level", "1"], raw),
            ("gzip in", ["reshard", gz, "--num-shards", "4", "--balance", "bytes"], gz),
            ("gzip in shuffled", ["reshard", gz, "--num-shards", "4", "--seed", "9"], gz),
            ("convert", ["convert", gz, "--output-compression", "zlib", "--level", "1"], gz),
        ]
        for name, args, source in modes:
            out = os.path.join(tmp, "out")
            os.mkdir(out)
            where = ["-o", os.path.join(out, "s")] if args[0] == "reshard" else \
                ["--output-dir", out]
            # How long an uninterrupted run takes, to aim the signals inside it.
            start = time.monotonic()
            proc = run(tfdist, args + where)
            took = time.monotonic() - start
            if proc.returncode != 0:
                failures.append(f"{name}: exit {proc.returncode}: {proc.stderr}")
                continue
            for f in os.listdir(out):
                os.unlink(os.path.join(out, f))
            interrupted = 0
            for trial in range(4):
                sigs = [[signal.SIGINT], [signal.SIGTERM], [signal.SIGINT, signal.SIGINT],
                        [signal.SIGTERM, signal.SIGINT]][trial]
                # The first signal comes at once, so that one run at least is
                # interrupted however slow the build (sanitizers) or the
                # machine; the others anywhere inside the run.
                delay = 0.02 if trial == 0 else rng.uniform(0.02, max(0.05, took * 0.95))
                # Blocked across exec: a signal that comes before main() is
                # held for tfdist's handlers, not its death by the signal.
                p = subprocess.Popen([tfdist] + args + where, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True,
                                     preexec_fn=checks.block_interrupts)
                time.sleep(delay)
                for s in sigs:
                    if p.poll() is None:
                        p.send_signal(s)
                        time.sleep(0.002)
                try:
                    _, err = p.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    failures.append(f"{name} {sigs}: did not stop")
                    continue
                left = sorted(os.listdir(out))
                what = f"{name} {[s.name for s in sigs]} after {delay:.3f}s of {took:.3f}s"
                if p.returncode == 0:
                    # Finished before the signal: everything must be there.
                    problem = check_complete(tfdist, out, records[source])
                    if problem:
                        failures.append(f"{what}: {problem}")
                    if any(".tmp-" in f for f in left):
                        failures.append(f"{what}: temporary files left: {left}")
                elif p.returncode in [128 + s for s in sigs]:  # held ones come in number order
                    interrupted += 1
                    if left:
                        failures.append(f"{what}: exit {p.returncode} left {left}")
                else:
                    failures.append(f"{what}: exit {p.returncode}: {err}")
                staging = os.path.join(tmp, ".tfdist-staging.out")
                if os.path.exists(staging):
                    failures.append(f"{what}: exit {p.returncode} left {os.listdir(staging)} "
                                    "in its staging folder")
                for f in left:
                    os.unlink(os.path.join(out, f))
            if interrupted == 0:
                failures.append(f"{name}: no run was interrupted (all finished first)")
            # A rerun after the interrupts completes.
            proc = run(tfdist, args + where)
            if proc.returncode != 0:
                failures.append(f"{name}: rerun exit {proc.returncode}: {proc.stderr}")
            else:
                problem = check_complete(tfdist, out, records[source])
                if problem:
                    failures.append(f"{name}: rerun: {problem}")
            for f in os.listdir(out):
                os.unlink(os.path.join(out, f))
            os.rmdir(out)
            print(f"{name}: uninterrupted run {took:.3f}s; {interrupted} of 4 runs interrupted")
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
