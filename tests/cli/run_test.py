#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# tfdist run from the command line: per-replica records and bytes equal what
# layout plans, every byte of the dataset arrives, --verify catches a
# corrupted staging buffer (exit 3), --device cuda without a GPU is exit 2
# naming the CUDA call, nothing is printed to a pipe while it runs, and an
# interrupt ends it with 130.
# Usage: run_test.py TFDIST
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import checks
from checks import check, tfdist

TEXT = 'list_files("testdata/text-*.tfrecord", shuffle=False).interleave(tfrecord, cycle_length=2)'


def planned(pipeline, *topology):
    """(worker, replica) -> [records, bytes] from layout --format json."""
    layout = json.loads(tfdist("layout", pipeline, "--format", "json", *topology).stdout)
    out = {}
    for step in layout["steps"]:
        for b in step["batches"]:
            key = (b["worker"], b["replica"])
            out.setdefault(key, [0, 0])
            out[key][0] += len(b["elements"])
            out[key][1] += sum(len(e.encode()) for e in b["elements"])
    return out


def delivered(report):
    return {(r["worker"], r["replica"]): [r["records"], r["bytes"]] for r in report["replicas"]}


def main():
    checks.TFDIST = sys.argv[1]
    total = json.loads(tfdist("count", "testdata/text-*.tfrecord", "--json").stdout)

    # Per replica, what layout plans; in all, the dataset (W copies under OFF).
    for policy, copies in (("AUTO", 1), ("DATA", 1), ("OFF", 2)):
        for batch in (".batch(4)", ".batch(3, drop_remainder=False)"):
            pipeline = TEXT + batch
            topology = ("--workers", "2", "--replicas", "2", "--policy", policy)
            proc = tfdist("run", pipeline, *topology, "--all-workers", "--verify", "--json")
            report = json.loads(proc.stdout)
            check(delivered(report) == planned(pipeline, *topology),
                  f"{policy} {batch}: per-replica records/bytes differ from layout")
            check(report["records"] == total["records"] * copies, f"{policy}: records")
            check(report["bytes"] == total["bytes"] * copies, f"{policy}: bytes")
            check(report["verified"] is True, f"{policy}: verified")
            # Each worker's own figures: they add up to the host's records.
            per = report["per_worker"]
            check([w["worker"] for w in per] == [0, 1] and
                  sum(w["records"] for w in per) == report["records"],
                  f"{policy}: per_worker {per}")
            check(proc.stderr == "", f"{policy}: stderr not empty when piped: {proc.stderr!r}")

    # The keys of the manual's run --json contract (JSON OUTPUT).
    for key in ("device", "records", "bytes", "batches", "steps", "seconds", "records_per_s",
                "mb_per_s", "verified", "replicas", "stages"):
        check(key in report, f"run --json has {key}")
    for key in ("worker", "replica", "device", "records", "bytes", "h2d_gb_per_s"):
        check(all(key in r for r in report["replicas"]), f"run --json replicas have {key}")
    for key in ("name", "seconds", "bytes"):
        check(all(key in s for s in report["stages"]), f"run --json stages have {key}")
    check([s["name"] for s in report["stages"]][:3] == ["plan", "setup", "read"],
          "the stages start with plan, setup and read")

    # Bytes read from the files: every worker reads everything under DATA,
    # its own files under FILE, and under DATA read by index only the
    # records it keeps.
    framed = sum(f["file_bytes"] for f in total["files"])
    def bytes_read(pipeline, *flags):
        report = json.loads(tfdist("run", pipeline, "--workers", "2", "--all-workers", "--json",
                                   *flags).stdout)
        return [w["bytes"] for w in report["bytes_read"]]
    check(bytes_read(TEXT + ".batch(2)", "--policy", "DATA") == [framed, framed],
          "DATA: each worker reads every file")
    check(sum(bytes_read(TEXT + ".batch(2)", "--policy", "FILE")) == framed,
          "FILE: the workers read the files once between them")
    with tempfile.TemporaryDirectory(prefix="tfdist-run-") as tmp:
        for f in total["files"]:
            shutil.copy(f["path"], tmp)
        tfdist("index", *glob.glob(tmp + "/*.tfrecord"))
        indexed = (f'list_files("{tmp}/*.tfrecord", shuffle=False)'
                   '.interleave(tfrecord, cycle_length=2).batch(2)')
        got = bytes_read(indexed, "--policy", "DATA", "--read-by-index")
        check(sum(got) == framed and all(0 < b < framed for b in got),
              f"DATA --read-by-index: each worker reads only its records: {got}")
        check(bytes_read(indexed, "--policy", "DATA") == [framed, framed],
              "DATA without --read-by-index reads everything, as TensorFlow does")

    # One worker of two, chosen by flag or by the launcher's environment.
    one = json.loads(tfdist("run", TEXT + ".batch(4)", "--workers", "2", "--worker", "1",
                            "--json").stdout)
    check(one["workers_run"] == [1], "--worker 1 runs worker 1")
    check(one["cold"] is False, "a run reads through the page cache unless --cold")
    # The warm-up apart from the steady state; a verdict only for a simulated step.
    for key in ("first_batch_seconds", "steady", "wait_per_step_ms"):
        check(key in one, f"run --json has {key}")
    check("verdict" not in one and "keeps_up" not in one, "no step simulated, no verdict")
    long = TEXT + ".repeat(10).batch(4)"
    timed = json.loads(tfdist("run", long, "--device", "cpu", "--step-time-ms", "2",
                              "--json").stdout)
    check(timed["steady"]["steps"] == timed["steps"] - 1, f"steady steps: {timed['steady']}")
    # Which verdict depends on this machine's load: only its form is checked.
    check(isinstance(timed.get("keeps_up"), bool) and
          timed["verdict"].startswith("input keeps up" if timed["keeps_up"] else "input-bound"),
          f"a simulated step gets a verdict: {timed.get('verdict')}")
    check(timed["steady"]["steps_per_s"] <= 500, f"2 ms steps: {timed['steady']}")
    check(timed["step_ms"]["mean"] >= 2 and timed["step_ms"]["p99"] >= 2,
          f"the simulated step's measured length: {timed.get('step_ms')}")
    # The steady state is the steps after the first, each about as long as
    # the simulated step: the first step's time is not spread over them
    # (3 steps of 50 ms made 2 steady steps in 150 ms, 13 steps/s). Measured
    # against the report's own step length, so a loaded machine slows both.
    short = json.loads(tfdist("run", long, "--device", "cpu", "--step-time-ms", "50",
                              "--steps", "3", "--json").stdout)
    per_step = short["steady"]["seconds"] * 1e3 / max(short["steady"]["steps"], 1)
    check(short["steady"]["steps"] == 2 and per_step < 1.25 * short["step_ms"]["mean"],
          f"a steady step of {per_step:.1f} ms for a {short['step_ms']['mean']:.1f} ms "
          f"simulated step: {short['steady']}")
    # A missed target names its cause, whatever this machine's load: a 20 ms
    # step can never make 1000 steps/s, and no line says the input keeps up
    # and the target is missed without saying why.
    for args in (["--json"], []):
        proc = tfdist("run", long, "--device", "cpu", "--step-time-ms", "20", "--steps", "4",
                      "--target-steps-per-s", "1000", *args, expect=4)
        if args:
            slow = json.loads(proc.stdout)
            check(slow["meets_target"] is False and slow["target"]["cause"] == "step",
                  f"the step alone is the cause: {slow.get('target')}")
            continue
        target = [line for line in proc.stdout.splitlines() if line.startswith("target:")]
        check(len(target) == 1 and "misses the target of 1000" in target[0] and
              "the cause is the simulated step alone: a 20 ms step allows at most 50.0 steps/s"
              in target[0] and "--step-time-ms (below 1 ms" in target[0],
              f"the target line names the step as the cause: {proc.stdout}")
        check("simulated step: mean " in proc.stdout, f"the step's length: {proc.stdout}")
    # Without a step, a missed target is the input's or the loop's.
    proc = tfdist("run", long, "--device", "cpu", "--target-steps-per-s", "1e12", "--json",
                  expect=4)
    cause = json.loads(proc.stdout)["target"]
    check(cause["cause"] in ("input", "loop") and "the cause is the" in cause["text"],
          f"a missed target without a step: {cause}")
    # A target far below what the step allows is met.
    met = json.loads(tfdist("run", long, "--device", "cpu", "--step-time-ms", "1",
                            "--target-steps-per-s", "10", "--json").stdout)
    check(met["meets_target"] is True and met["target"]["cause"] is None and
          met["target"]["text"].startswith("meets the target of 10 global steps/s"),
          f"a reachable target: {met.get('target')}")
    cold = tfdist("run", TEXT + ".batch(4)", "--cold", "--device", "cpu")
    check("cache:    cold: each input file was evicted" in cold.stdout,
          f"run --cold says the page cache was cold: {cold.stdout}")
    proc = tfdist("verify", "--cold", "-q", "testdata/text-00000-of-00002.tfrecord")
    check("1 file checked: 1 good" in proc.stdout, f"verify --cold reads the file: {proc.stdout}")
    proc = tfdist("run", TEXT + ".batch(4)", "--workers", "2", expect=2)
    check("--all-workers" in proc.stderr, "several workers and none chosen is exit 2")

    # Verification catches a staging buffer corrupted before its copy.
    proc = tfdist("run", "tfrecord(\"testdata/one.tfrecord\").batch(4)", "--replicas", "2",
                  "--verify", "--corrupt-replica-for-testing", "1", expect=3)
    check("replica 1" in proc.stderr, f"the corruption names the replica: {proc.stderr}")

    # Out-of-range numbers are exit 2, not a sleep that overflows.
    for value in ("-1", "1e300"):
        proc = tfdist("run", "range(8).batch(2)", "--step-time-ms", value, expect=2)
        check("--step-time-ms must be" in proc.stderr, f"--step-time-ms {value}: {proc.stderr}")
    for value in ("nan", "inf"):
        proc = tfdist("run", "range(8).batch(2)", "--step-time-ms", value, expect=2)
        check("--step-time-ms: must be a finite number" in proc.stderr,
              f"--step-time-ms {value}: {proc.stderr}")
    proc = tfdist("run", "range(8).batch(2)", "--pack-threads", "-5", expect=2)
    check("--pack-threads must be" in proc.stderr, f"--pack-threads -5: {proc.stderr}")
    for value in ("0", "-1"):
        proc = tfdist("run", "range(8).batch(2)", "--epochs", value, expect=2)
        check(proc.stderr == f"tfdist: error: --epochs must be at least 1; got {value}\n",
              f"--epochs {value}: {proc.stderr}")

    # Explicit --workers with --worker (or run --all-workers) win over a
    # broken launcher environment, which is then not read at all.
    for env_extra in ({"TF_CONFIG": "{"}, {"SLURM_PROCID": "3", "SLURM_NTASKS": "2"}):
        env = dict(os.environ, **env_extra)
        for args in (["layout", "--workers", "2", "--worker", "0", "range(4).batch(2)"],
                     ["run", "--device", "cpu", "--workers", "2", "--all-workers",
                      "range(4).batch(2)"]):
            proc = subprocess.run([checks.TFDIST, *args], env=env, capture_output=True,
                                  text=True, timeout=60)
            check(proc.returncode == 0, f"{env_extra} {args}: exit {proc.returncode}: "
                                        f"{proc.stderr}")
        proc = subprocess.run([checks.TFDIST, "layout", "--workers", "2", "range(4).batch(2)"],
                              env=env, capture_output=True, text=True, timeout=60)
        check(proc.returncode == 2, f"{env_extra}: the environment still gives the worker")

    # The testing hooks name a replica that must exist.
    for hook in ("--corrupt-replica-for-testing", "--fail-pinned-for-testing"):
        for replica in ("2", "-1"):
            proc = tfdist("run", "range(8).batch(2)", "--replicas", "2", hook, replica, expect=2)
            check("no local replica" in proc.stderr, f"{hook} {replica}: {proc.stderr}")

    # --device cuda without a usable GPU: exit 2 with the CUDA call and error.
    auto = json.loads(tfdist("run", "range(8).batch(2)", "--json").stdout)
    if auto["device"] == "cpu":
        proc = tfdist("run", "range(8).batch(2)", "--device", "cuda", expect=2)
        check("cuda" in proc.stderr.lower(), f"--device cuda names CUDA: {proc.stderr}")
        check(auto["notes"] != [], "--device auto says why it fell back to the host")
    else:
        # On a GPU: a GPU that is not there, or listed twice, is exit 2.
        proc = tfdist("run", "range(8).batch(2)", "--device", "cuda", "--gpus", "99", expect=2)
        check("GPU 99 is not visible" in proc.stderr, f"--gpus 99: {proc.stderr}")
        proc = tfdist("run", "range(8).batch(2)", "--device", "cuda", "--gpus", "0,0", expect=2)
        check("listed twice" in proc.stderr, f"--gpus 0,0: {proc.stderr}")
        # A replica that cannot pin its slots goes on in pageable memory, and
        # the report says so.
        paged = json.loads(tfdist("run", TEXT + ".batch(4)", "--replicas", "2", "--verify",
                                  "--fail-pinned-for-testing", "1", "--json").stdout)
        check([r["pinned"] for r in paged["replicas"]] == [True, False],
              f"replica 1 is not pinned: {paged['replicas']}")
        check(any("replica 1: pinned allocation" in n and "pageable" in n for n in paged["notes"]),
              f"the report notes the pageable fallback: {paged['notes']}")
        check(paged["records"] == 12 and paged["verified"], "the pageable replica delivers")
    # --gpus takes one comma-separated value: the pipeline after it is not eaten.
    one = json.loads(tfdist("run", "--gpus", "0", "range(8).batch(2)", "--json").stdout)
    check(one["records"] == 8, "--gpus 0 before the pipeline leaves the pipeline alone")
    proc = tfdist("run", "range(8).batch(2)", "--device", "cpu", "--gpus", "0", expect=2)
    check("--gpus" in proc.stderr, f"--gpus with --device cpu is exit 2: {proc.stderr}")

    # A corrupt record ends the run with the file and offset (exit 3).
    proc = tfdist("run", "tfrecord(\"testdata/bad/data_crc.tfrecord\").batch(2)", expect=3)
    check("testdata/bad/data_crc.tfrecord" in proc.stderr and "63" in proc.stderr,
          f"a corrupt record names file and offset: {proc.stderr}")

    # An interrupt stops a long run with 130.
    checks.check_interrupt_stops("run", "range(1000000000).batch(64)", "--step-time-ms", "1")

    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
