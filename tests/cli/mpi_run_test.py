#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# run under mpirun -n 4 --oversubscribe: each rank runs its worker, rank 0
# prints one cluster report whose worker rows match the single-process
# run --all-workers of the same layout (records, batches, bytes read), with
# and without --sync; the worker made slow on purpose (its files hold
# records four thousand times larger) is named the straggler; a rank that
# fails (a corrupt file in its share) stops the job, and rank 0 names the
# rank, host and error, with that rank's exit status, with and without
# --sync, within seconds (the others stop at their next step). --sync without a job, and --all-workers in one, are exit 2.
# Usage: mpi_run_test.py TFDIST   (exit 77, skipped, without mpirun)
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import checks
from checks import check, tfdist

ENV = checks.mpi_env()
PIPELINE = 'list_files("{}/d-*", shuffle=False).interleave(tfrecord, cycle_length=2).batch(8)'


def mpirun(*args, timeout=300):
    return subprocess.run(["mpirun", "-n", "4", "--oversubscribe", "--bind-to", "none",
                           checks.TFDIST, *args],
                          capture_output=True, text=True, timeout=timeout, env=ENV)


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    if shutil.which("mpirun") is None:
        print("skipped: mpirun not found (Debian package openmpi-bin)")
        return 77
    with tempfile.TemporaryDirectory(prefix="tfdist-mpi-run-") as tmp:
        # FILE sharding over 4 workers: worker w reads files w and w + 4.
        # Worker 2's two files hold 512 KiB records, the others 128 bytes.
        tfdist("gen", "-o", f"{tmp}/d", "--files", "8", "--records", "96", "--size", "128",
               "--seed", "2")
        tfdist("gen", "-o", f"{tmp}/big", "--files", "2", "--records", "96", "--size", "512k",
               "--kind", "random", "--seed", "3")
        for i, slow in ((0, 2), (1, 6)):
            os.replace(f"{tmp}/big-0000{i}-of-00002.tfrecord", f"{tmp}/d-0000{slow}-of-00008.tfrecord")
        pipeline = PIPELINE.format(tmp)
        # 10 epochs: a steady state long enough to tell the rates apart on
        # two cores shared by four ranks.
        one = json.loads(tfdist("run", "--device", "cpu", "--all-workers", "--workers", "4",
                                "--epochs", "10", "--json", pipeline).stdout)
        records = [w["records"] for w in one["per_worker"]]
        read = [w["bytes"] for w in one["bytes_read"]]
        batches = [sum(r["batches"] for r in one["replicas"] if r["worker"] == w)
                   for w in range(4)]
        for mode in ([], ["--sync", "--allreduce-bytes", "64k"]):
            name = "run " + (" ".join(mode) or "(ranks free)")
            job = mpirun("run", "--device", "cpu", "--epochs", "10", "--json", *mode, pipeline)
            check(job.returncode == 0, f"{name}: exit {job.returncode}\n{job.stderr[-3000:]}")
            try:
                out = json.loads(job.stdout)
            except json.JSONDecodeError:
                check(False, f"{name}: not one JSON object: {job.stdout[:2000]}")
                continue
            rows = out["workers"]
            check([r["worker"] for r in rows] == [0, 1, 2, 3] and
                  [r["rank"] for r in rows] == [0, 1, 2, 3],
                  f"{name}: a row per worker, each its rank's: {rows}")
            check([r["records"] for r in rows] == records,
                  f"{name}: records per worker {[r['records'] for r in rows]}, one process "
                  f"--all-workers {records}")
            check([r["bytes_read"] for r in rows] == read,
                  f"{name}: bytes read {[r['bytes_read'] for r in rows]}, one process {read}")
            check([r["batches"] for r in rows] == batches,
                  f"{name}: batches {[r['batches'] for r in rows]}, one process {batches}")
            check(out["records"] == one["records"] and out["bytes"] == one["bytes"],
                  f"{name}: totals {out['records']} records, {out['bytes']} bytes; one process "
                  f"{one['records']}, {one['bytes']}")
            # Rates on two cores shared by four ranks are noisy: the worker made
            # slow must be named in one of three runs (a rule that picked
            # another worker fails all three).
            stragglers = [out["straggler"]]
            while stragglers[-1]["worker"] != 2 and len(stragglers) < 3:
                again = mpirun("run", "--device", "cpu", "--epochs", "10", "--json", *mode,
                               pipeline)
                stragglers.append(json.loads(again.stdout)["straggler"])
            check(stragglers[-1]["worker"] == 2,
                  f"{name}: the straggler is worker 2, made slow: {stragglers}\n{rows}")
            check(out["sync"] == bool(mode), f"{name}: sync {out['sync']}")
            if mode:
                rates = [r["steps_per_s"] for r in rows]
                check(max(rates) <= 1.5 * min(rates),
                      f"{name}: the workers step together, at one rate: {rates}")
            check(job.stderr.count("tfdist:") == 0, f"{name}: stderr {job.stderr}")

        text = mpirun("run", "--device", "cpu", "--sync", pipeline)
        check(text.returncode == 0 and text.stdout.count("\n     ") >= 4 and
              "\nstraggler: worker " in text.stdout,
              f"the text report: 4 rows and the straggler\n{text.stdout}\n{text.stderr[-2000:]}")

        # A rank that fails: worker 1 reads files 1 and 5; file 5 is corrupt.
        with open(f"{tmp}/d-00005-of-00008.tfrecord", "r+b") as f:
            f.seek(1000)
            byte = f.read(1)
            f.seek(1000)
            f.write(bytes([byte[0] ^ 0x20]))
        for mode in ([], ["--sync"]):
            name = "a failing rank, " + (" ".join(mode) or "ranks free")
            # Without the stop, the others would run 200 epochs of 24 steps
            # of 20 ms: 96 s at least. With it, the ranks' start-up is most
            # of the time (20 s under the sanitizers on 2 cores), so the
            # bound is half of that.
            start = time.monotonic()
            job = mpirun("run", "--device", "cpu", "--epochs", "200", "--step-time-ms", "20",
                         *mode, pipeline, timeout=300)
            seconds = time.monotonic() - start
            check(seconds < 48, f"{name}: the job stopped after {seconds:.1f} s")
            check(job.returncode == 3, f"{name}: exit {job.returncode}, expected 3 (that "
                                       f"rank's)\n{job.stderr[-3000:]}")
            lines = [l for l in job.stderr.splitlines() if l.startswith("tfdist:")]
            check(len(lines) == 1 and lines[0].startswith("tfdist: error: rank 1 (") and
                  "d-00005-of-00008.tfrecord" in lines[0],
                  f"{name}: one error naming rank 1 and the file: {lines}")
            job = mpirun("run", "--device", "cpu", "--json", *mode, pipeline, timeout=120)
            try:
                out = json.loads(job.stdout)
                check(out["failed"]["rank"] == 1 and out["error"]["code"] == "DATA_LOSS",
                      f"{name}: JSON names rank 1: {out}")
            except (json.JSONDecodeError, KeyError):
                check(False, f"{name}: JSON: {job.stdout[:2000]}")

        tfdist("run", "--device", "cpu", "--sync", "range(8).batch(2)", expect=2)
        job = mpirun("run", "--device", "cpu", "--all-workers", pipeline)
        check(job.returncode == 2 and "--all-workers" in job.stderr,
              f"--all-workers under mpirun: exit {job.returncode}\n{job.stderr[-2000:]}")
    print(f"{len(checks.FAILURES)} failures")
    return 1 if checks.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
