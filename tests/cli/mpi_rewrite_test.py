#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# reshard and convert under mpirun -n 2, 3 and 4 (--oversubscribe): the
# ranks share the scans and the outputs, and write the files one process
# writes, byte for byte, with its summary printed once by rank 0. All or
# nothing across the ranks: a rank that fails (TFDIST_COMMIT_FAULT=staged:
# fail), is killed (kill) or interrupted (sigint) when its outputs are
# staged, or SIGINT to mpirun in the middle of the job, leaves no output and
# no staged file (or, at SIGINT, the whole new set). An existing set is
# refused as one process refuses it, and an output folder that is another
# folder at another rank stops the job.
# Usage: mpi_rewrite_test.py TFDIST   (exit 77, skipped, without mpirun)
import filecmp
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import checks
from checks import check, tfdist

ENV = checks.mpi_env()
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none"]


def mpirun(n, *args, cwd=None, fault=None):
    """tfdist ARGS at n ranks; with `fault` (rank, action), that rank alone
    gets TFDIST_COMMIT_FAULT=staged:ACTION (an MPMD line of its own)."""
    command = list(MPIRUN)
    if fault is None:
        command += ["-n", str(n), checks.TFDIST, *args]
    else:
        rank, action = fault
        for r in range(n):
            if r:
                command.append(":")
            command += ["-n", "1"]
            if r == rank:
                command += ["-x", f"TFDIST_COMMIT_FAULT=staged:{action}"]
            command += [checks.TFDIST, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=ENV, cwd=cwd)


def leftovers(folder):
    """What a commit may leave beside or in `folder`: staging folders."""
    parent = os.path.dirname(os.path.abspath(folder))
    names = [n for n in os.listdir(parent) if n.startswith(".tfdist-staging")]
    names += [n for n in os.listdir(folder) if n.startswith(".")]
    return names


def same_files(a, b):
    names_a, names_b = sorted(os.listdir(a)), sorted(os.listdir(b))
    if names_a != names_b:
        return f"{a} holds {names_a}, {b} {names_b}"
    for name in names_a:
        if not filecmp.cmp(f"{a}/{name}", f"{b}/{name}", shallow=False):
            return f"{name}: the bytes differ"
    return ""


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    if shutil.which("mpirun") is None:
        print("skipped: mpirun not found (Debian package openmpi-bin)")
        return 77
    with tempfile.TemporaryDirectory(prefix="tfdist-mpi-rewrite-") as tmp:
        os.makedirs(f"{tmp}/in")
        # 8 uncompressed files of uneven sizes and 3 GZIP ones.
        tfdist("gen", "-o", f"{tmp}/in/d", "--files", "8", "--records", "1-500", "--size",
               "10-4000", "--seed", "3")
        tfdist("gen", "-o", f"{tmp}/in/z", "--files", "3", "--records", "100-300",
               "--output-compression", "gzip", "--seed", "4")
        inputs = f"{tmp}/in/*"
        cases = [
            (2, ["reshard", inputs, "--num-shards", "5"]),
            (3, ["reshard", inputs, "--num-shards", "7", "--seed", "11",
                 "--output-compression", "gzip"]),
            (4, ["reshard", inputs, "--records-per-shard", "300", "--balance", "bytes",
                 "--json"]),
            (3, ["reshard", f"{tmp}/in/z-*", "--num-shards", "4", "--output-compression",
                 "zlib"]),
            (3, ["convert", inputs, "--output-compression", "zlib"]),
            (2, ["convert", f"{tmp}/in/z-*", "--output-compression", "none", "--json"]),
        ]
        for i, (n, args) in enumerate(cases):
            one_dir, job_dir = f"{tmp}/one{i}", f"{tmp}/job{i}"
            os.makedirs(one_dir)
            os.makedirs(job_dir)

            def out(d):
                if args[0] == "reshard":
                    return args + ["-o", f"{os.path.basename(d)}/s"]
                return args + ["--output-dir", os.path.basename(d)]
            one = subprocess.run([checks.TFDIST, *out(one_dir)], capture_output=True, text=True,
                                 cwd=tmp, timeout=120)
            check(one.returncode == 0, f"{args}: one process exit {one.returncode}\n{one.stderr}")
            job = mpirun(n, *out(job_dir), cwd=tmp)
            what = f"mpirun -n {n} {' '.join(args)}"
            check(job.returncode == 0, f"{what}: exit {job.returncode}\n{job.stderr[-3000:]}")
            check(job.stdout == one.stdout.replace(f"one{i}/", f"job{i}/"),
                  f"{what}: rank 0 prints what one process prints\n{one.stdout}\n{job.stdout}")
            check(not job.stderr.strip(), f"{what}: nothing on stderr: {job.stderr[-2000:]}")
            diff = same_files(one_dir, job_dir)
            check(not diff, f"{what}: the job's files are not one process's: {diff}")
            check(not leftovers(job_dir), f"{what}: left {leftovers(job_dir)}")

        # An existing set: refused as one process refuses it, said once.
        args = ["reshard", inputs, "--num-shards", "5", "-o", "job0/s"]
        one = subprocess.run([checks.TFDIST, *args], capture_output=True, text=True, cwd=tmp)
        job = mpirun(3, *args, cwd=tmp)
        said = [line for line in job.stderr.splitlines() if line.startswith("tfdist:")]
        check(one.returncode == 2 and job.returncode == 2 and said == one.stderr.splitlines(),
              f"an existing set: exit {job.returncode}, said as one process says it (exit "
              f"{one.returncode}):\n{one.stderr}\n{job.stderr}")
        job = mpirun(3, "reshard", inputs, "--num-shards", "3", "-o", "job0/s", "--force",
                     cwd=tmp)
        check(job.returncode == 0 and len(os.listdir(f"{tmp}/job0")) == 3,
              f"--force replaces the set whole: exit {job.returncode}, "
              f"{sorted(os.listdir(f'{tmp}/job0'))}\n{job.stderr[-2000:]}")

        # A rank that fails or is interrupted once its outputs are staged:
        # no output and no staged file at any rank. One that is killed
        # (SIGKILL) cannot clean up: no output, and the next writer into the
        # folder removes what the job staged.
        for i, (n, rank, action) in enumerate(((3, 2, "fail"), (3, 1, "sigint"), (2, 0, "fail"),
                                               (4, 0, "sigint"), (3, 1, "kill"))):
            folder = f"{tmp}/f{i}"
            os.makedirs(folder)
            job = mpirun(n, "reshard", inputs, "--num-shards", "6", "-o", f"f{i}/s", cwd=tmp,
                         fault=(rank, action))
            what = f"mpirun -n {n}, rank {rank} {action}"
            check(job.returncode != 0, f"{what}: exit 0")
            if action == "fail":
                check(job.stderr.count("tfdist: error") == 1 and
                      ("rank 2 (" in job.stderr) == (rank == 2) and
                      "a fault injected after the commit's phase 'staged'" in job.stderr,
                      f"{what}: rank 0 says which rank failed, once:\n{job.stderr[-2000:]}")
            if action == "sigint":
                check("tfdist: error: interrupted; the outputs are as they were" in job.stderr,
                      f"{what}: rank 0 says the job was interrupted:\n{job.stderr[-2000:]}")
            check(os.listdir(folder) == [], f"{what}: left {os.listdir(folder)}")
            if action != "kill":
                check(not leftovers(folder), f"{what}: left {leftovers(folder)}")
                continue
            job = mpirun(2, "reshard", inputs, "--num-shards", "6", "-o", f"f{i}/s", cwd=tmp)
            check(job.returncode == 0 and len(os.listdir(folder)) == 6 and
                  not leftovers(folder),
                  f"the writer after a killed job: exit {job.returncode}, left "
                  f"{leftovers(folder)}\n{job.stderr[-2000:]}")

        # SIGINT to mpirun in the middle (it signals every rank): the old
        # state, or (if the commit came first) the whole new set.
        os.makedirs(f"{tmp}/big")
        tfdist("gen", "-o", f"{tmp}/big/b", "--files", "6", "--records", "1500", "--size", "8k",
               "--kind", "random")
        for delay in (0.5, 1.0):
            shutil.rmtree(f"{tmp}/g", ignore_errors=True)
            os.makedirs(f"{tmp}/g")
            proc = subprocess.Popen(
                MPIRUN + ["-n", "3", checks.TFDIST, "reshard", f"{tmp}/big/*", "--num-shards", "6",
                          "--output-compression", "gzip", "--level", "9", "-o", "g/s"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp, env=ENV,
                preexec_fn=checks.block_interrupts)
            time.sleep(delay)
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                check(False, f"SIGINT to mpirun after {delay} s: still running 60 s later")
            time.sleep(0.5)  # the launcher's last kills
            names = os.listdir(f"{tmp}/g")
            check(len(names) in (0, 6) and not leftovers(f"{tmp}/g"),
                  f"SIGINT to mpirun after {delay} s: left {names} {leftovers(f'{tmp}/g')}")
            if names:
                tfdist("verify", "-q", f"{tmp}/g/*")  # the set committed before SIGINT is whole

        # An output folder that is another folder at another rank (a relative
        # prefix from two working folders): the job stops, naming the rank.
        for d in ("wa", "wb"):
            os.makedirs(f"{tmp}/{d}/out")
        command = list(MPIRUN)
        for r, d in enumerate(("wa", "wb")):
            if r:
                command.append(":")
            command += ["-n", "1", "--wdir", f"{tmp}/{d}", checks.TFDIST, "reshard", inputs,
                        "--num-shards", "3", "-o", "out/s"]
        job = subprocess.run(command, capture_output=True, text=True, timeout=300, env=ENV)
        check(job.returncode == 2 and "rank 1 (" in job.stderr and
              "every process of the job sees" in job.stderr and
              not os.listdir(f"{tmp}/wa/out") and not os.listdir(f"{tmp}/wb/out") and
              not leftovers(f"{tmp}/wa/out"),
              f"an output folder that differs by rank: exit {job.returncode}\n{job.stderr}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
