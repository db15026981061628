#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# count, verify and digest under mpirun -n 2, 3 and 4 (--oversubscribe):
# the ranks share the files and rank 0 prints what one process prints,
# byte for byte, text and JSON, with a corrupt file among them (exit 3 on
# every rank) and with GZIP files; the other ranks print nothing. A large
# file (intact, and damaged) is read in byte ranges across the ranks. Ranks that
# find other files stop the job (exit 2) naming the rank. A command that
# does not split (cat) runs on rank 0 alone, and layout keeps each rank's
# worker (launcher_test.py).
# Usage: mpi_split_test.py TFDIST   (exit 77, skipped, without mpirun)
import os
import shutil
import subprocess
import sys
import tempfile

import checks
from checks import check, tfdist

ENV = checks.mpi_env()
# Every rank count here; under the sanitizers (as slow as they are with
# Open MPI's full unwinds) 3 alone, which splits unevenly.
RANKS = (3,) if checks.SANITIZED else (2, 3, 4)
FEWER_RANKS = (3,) if checks.SANITIZED else (2, 3)


def mpirun(n, *args, wdirs=None):
    command = ["mpirun", "-n", str(n), "--oversubscribe"]
    if wdirs:  # one rank per folder (MPMD), each started there
        command = ["mpirun", "--oversubscribe"]
        for i, d in enumerate(wdirs):
            if i:
                command.append(":")
            command += ["-n", "1", "--wdir", d, checks.TFDIST, *args]
    else:
        command += [checks.TFDIST, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=ENV)


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    if shutil.which("mpirun") is None:
        print("skipped: mpirun not found (Debian package openmpi-bin)")
        return 77
    with tempfile.TemporaryDirectory(prefix="tfdist-mpi-") as tmp:
        # 13 files of uneven sizes, 2 of them GZIP, and a corrupt one.
        tfdist("gen", "-o", f"{tmp}/d", "--files", "10", "--records", "1-400", "--size",
               "10-3000", "--seed", "5")
        tfdist("gen", "-o", f"{tmp}/z", "--files", "2", "--records", "50-90",
               "--output-compression", "gzip", "--seed", "6")
        with open(f"{tmp}/d-00003-of-00010.tfrecord", "rb") as f:
            data = bytearray(f.read())
        with open(f"{tmp}/bad.tfrecord", "wb") as f:
            data[len(data) // 2] ^= 0x40
            f.write(data)
        good = [f"{tmp}/d-*", f"{tmp}/z-*"]
        cases = [
            (["count"] + good, 0), (["count", "--json"] + good, 0),
            (["count", "--no-crc", f"{tmp}/*"], 0), (["count", "--json", f"{tmp}/*"], 3),
            (["verify", f"{tmp}/*"], 3), (["verify", "--json"] + good, 0),
            (["verify", "-q"] + good, 0),
            (["digest"] + good, 0), (["digest", "--json", f"{tmp}/*"], 3),
            (["count", f"{tmp}/none-*"], 2),
        ]
        for args, code in cases:
            one = subprocess.run([checks.TFDIST, *args], capture_output=True, text=True,
                                 timeout=120)
            check(one.returncode == code, f"{args}: one process exit {one.returncode}, "
                                          f"expected {code}\n{one.stderr}")
            for n in RANKS:
                job = mpirun(n, *args)
                what = f"mpirun -n {n} {' '.join(args)}"
                check(job.returncode == code,
                      f"{what}: exit {job.returncode}, expected {code}\n{job.stderr[-3000:]}")
                check(job.stdout == one.stdout,
                      f"{what}: the output differs from one process's\n--- one:\n{one.stdout}"
                      f"\n--- job:\n{job.stdout}")
                # Rank 0 says each error once, as one process does.
                errors = [line for line in job.stderr.splitlines() if line.startswith("tfdist:")]
                expected = [line for line in one.stderr.splitlines()
                            if line.startswith("tfdist:")]
                check(errors == expected,
                      f"{what}: stderr {errors}, expected one process's {expected}")

        # A file larger than a rank's share (and than 64 MiB) is read in byte
        # ranges, one per rank, and joined at rank 0: the same answers, the
        # same first error at the same offset in a damaged copy.
        os.makedirs(f"{tmp}/big")
        tfdist("gen", "-o", f"{tmp}/big/large.tfrecord", "--records", "9000", "--size",
               "100-16000", "--kind", "random", "--seed", "9")
        tfdist("gen", "-o", f"{tmp}/big/small", "--files", "2", "--records", "20")
        with open(f"{tmp}/big/large.tfrecord", "rb") as f:
            data = bytearray(f.read())
        check(len(data) > 64 << 20, f"the large file is {len(data)} bytes")
        data[len(data) * 3 // 5] ^= 0x08
        os.makedirs(f"{tmp}/bigbad")
        with open(f"{tmp}/bigbad/large.tfrecord", "wb") as f:
            f.write(data)
        for folder in ("big", "bigbad"):
            code = 0 if folder == "big" else 3
            for args in (["verify"], ["verify", "--json"], ["digest"], ["digest", "--json"],
                         ["count", "--no-index"], ["count", "--no-index", "--json"]):
                args = args + [f"{tmp}/{folder}/*"]
                one = subprocess.run([checks.TFDIST, *args], capture_output=True, text=True,
                                     timeout=120)
                for n in FEWER_RANKS:
                    job = mpirun(n, *args)
                    what = f"mpirun -n {n} {' '.join(args)}"
                    check(job.returncode == one.returncode == code and job.stdout == one.stdout,
                          f"{what}: exit {job.returncode}, the output differs from one "
                          f"process's (exit {one.returncode})\n{one.stdout}\n{job.stdout}\n"
                          f"{job.stderr[-2000:]}")

        # index of the large file: each rank writes the lines of its range
        # beside the index, and rank 0 joins them into one process's index.
        os.makedirs(f"{tmp}/bigidx-one")
        one = tfdist("index", "--json", "--index-dir", f"{tmp}/bigidx-one", f"{tmp}/big/*")
        for n in FEWER_RANKS:
            shutil.rmtree(f"{tmp}/bigidx-job", ignore_errors=True)
            os.makedirs(f"{tmp}/bigidx-job")
            job = mpirun(n, "index", "--json", "--index-dir", f"{tmp}/bigidx-job", f"{tmp}/big/*")
            check(job.returncode == 0 and
                  job.stdout == one.stdout.replace("bigidx-one", "bigidx-job"),
                  f"mpirun -n {n} index of a large file: exit {job.returncode}\n{one.stdout}\n"
                  f"{job.stdout}\n{job.stderr[-2000:]}")
            names = sorted(os.listdir(f"{tmp}/bigidx-one"))
            check(names == sorted(os.listdir(f"{tmp}/bigidx-job")),
                  f"mpirun -n {n} index: the files one process writes, no part left: "
                  f"{sorted(os.listdir(f'{tmp}/bigidx-job'))}")
            for name in names:
                with open(f"{tmp}/bigidx-one/{name}", "rb") as a, \
                        open(f"{tmp}/bigidx-job/{name}", "rb") as b:
                    check(a.read() == b.read(), f"mpirun -n {n} index: {name} differs")
        bad_one = subprocess.run([checks.TFDIST, "index", "--index-dir", f"{tmp}/bigidx-one",
                                  "--force", f"{tmp}/bigbad/*"], capture_output=True, text=True)
        job = mpirun(3, "index", "--index-dir", f"{tmp}/bigidx-job", "--force", f"{tmp}/bigbad/*")
        check(bad_one.returncode == job.returncode == 3 and
              [line for line in job.stderr.splitlines() if line.startswith("tfdist:")] ==
              bad_one.stderr.splitlines() and
              not [n for n in os.listdir(f"{tmp}/bigidx-job") if ".part-" in n],
              f"index of a damaged large file: exit {job.returncode}, as one process "
              f"({bad_one.returncode}):\n{bad_one.stderr}\n{job.stderr[-2000:]}")

        # index: each rank writes its share into --index-dir, which every rank
        # must see; rank 0 prints what one process prints.
        os.makedirs(f"{tmp}/idx-one")
        os.makedirs(f"{tmp}/idx-job")
        one = tfdist("index", "--json", "--index-dir", f"{tmp}/idx-one", f"{tmp}/d-*")
        for n in FEWER_RANKS:
            job = mpirun(n, "index", "--json", "--force", "--index-dir", f"{tmp}/idx-job",
                         f"{tmp}/d-*")
            check(job.returncode == 0 and
                  job.stdout == one.stdout.replace(f"{tmp}/idx-one", f"{tmp}/idx-job"),
                  f"mpirun -n {n} index: exit {job.returncode}, the output differs from one "
                  f"process's\n{one.stdout}\n{job.stdout}\n{job.stderr[-2000:]}")
        check(sorted(os.listdir(f"{tmp}/idx-one")) == sorted(os.listdir(f"{tmp}/idx-job")),
              "the job wrote the indexes one process writes, and no probe file is left")
        for name in os.listdir(f"{tmp}/idx-one"):
            with open(f"{tmp}/idx-one/{name}", "rb") as a, open(f"{tmp}/idx-job/{name}", "rb") as b:
                if name.endswith(".idx"):
                    check(a.read() == b.read(), f"index {name}: the job's differs")
        job = mpirun(2, "index", f"{tmp}/d-*")
        check(job.returncode == 2 and "give --index-dir DIR" in job.stderr and
              job.stderr.count("tfdist: error") == 1,
              f"index under mpirun without --index-dir: exit {job.returncode}\n{job.stderr}")

        # An --index-dir that is another folder on another rank (here: a
        # relative one, from two working folders) stops the job.
        for d in ("wa", "wb"):
            os.makedirs(f"{tmp}/{d}/idx")
        job = mpirun(2, "index", "--index-dir", "idx", f"{tmp}/d-*",
                     wdirs=[f"{tmp}/wa", f"{tmp}/wb"])
        check(job.returncode == 2 and "rank 1 (" in job.stderr and
              "every rank sees" in job.stderr and not os.listdir(f"{tmp}/wa/idx") and
              not os.listdir(f"{tmp}/wb/idx"),
              f"index into folders that differ by rank: exit {job.returncode}\n{job.stderr}\n"
              f"{os.listdir(f'{tmp}/wa/idx')}")

        # Ranks that see other files: the job stops, naming the rank.
        os.makedirs(f"{tmp}/a")
        os.makedirs(f"{tmp}/b")
        for d, files in (("a", 3), ("b", 2)):
            tfdist("gen", "-o", f"{tmp}/{d}/p", "--files", str(files), "--records", "5",
                   "--seed", "1")
        job = mpirun(2, "count", "p-*", wdirs=[f"{tmp}/a", f"{tmp}/b"])
        check(job.returncode == 2, f"ranks with other files: exit {job.returncode}, expected 2\n"
                                   f"{job.stdout}{job.stderr}")
        check("rank 1 (" in job.stderr and "found 2 files where rank 0" in job.stderr and
              "every rank must see the same inputs" in job.stderr,
              f"ranks with other files: the message names rank 1: {job.stderr}")
        check(job.stdout == "", f"ranks with other files: nothing on stdout: {job.stdout}")

        # A command that does not split runs once, on rank 0.
        one = tfdist("cat", "--limit", "3", f"{tmp}/d-00000-of-00010.tfrecord")
        job = mpirun(3, "cat", "--limit", "3", f"{tmp}/d-00000-of-00010.tfrecord")
        check(job.returncode == 0 and job.stdout == one.stdout,
              f"cat under mpirun -n 3: exit {job.returncode}, printed once as one process "
              f"does:\n{job.stdout}\n{job.stderr}")
    print(f"{len(checks.FAILURES)} failures")
    return 1 if checks.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
