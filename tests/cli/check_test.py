#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# tfdist check on the issue threads it answers, each driven as a user would
# (data from tfdist gen): the finding kind and what TensorFlow does, exit 6
# for an error, and the fix it prints, applied literally (the flags given
# again, the pipeline edited, tfdist reshard run), making check pass.
# - fewer files than workers (tensorflow#36846): too_few_files, the FILE
#   sharding error; --policy DATA, or reshard into W files, passes; with an
#   unseeded shuffle the reshard leads, and DATA comes with its seeds;
# - uneven files with next() and a fixed step count (#25254): StopIteration
#   past the longest worker; uneven steps in between (a hang before 2.3);
# - an infinite dataset under fit without steps_per_epoch: Keras 2's
#   ValueError at 2.15, an endless epoch under Keras 3;
# - OFF over several workers, given explicitly: asked for, so no error here;
# - an unseeded shuffle before DATA sharding (#47583): duplicates and misses,
#   expected fractions and a draw; the seeded shuffle passes;
# - a TPU job with partial batches: dynamic_batch_shape, drop_remainder=True;
# - steps_per_epoch larger than the data: an error under next() and Keras 2,
#   a warning under Keras 3;
# - a clean pipeline exits 0 with nothing above info; combinations
#   TensorFlow cannot run are usage errors (exit 2).
# Usage: check_test.py TFDIST
import os
import shlex
import subprocess
import sys
import tempfile

import checks
from checks import FINDING_EXIT, check, finding, run_check, with_flags


def nothing_above_info(out, what):
    above = [(f["kind"], f["severity"]) for f in out["findings"] if f["severity"] != "info"]
    check(out["result"] == "ok" and not above, f"{what}: result {out['result']}, {above}")


def too_few_files(tmp):
    checks.tfdist("gen", "-o", f"{tmp}/two", "--files", "2", "--records", "40", "--size", "16",
                  "--no-fsync")
    pipeline = f'list_files("{tmp}/two-*", shuffle=False).interleave(tfrecord).batch(8)'
    args = ["--workers", "4", pipeline]
    out = run_check(args, FINDING_EXIT)
    check(out["result"] == "fail", f"too few files: {out['result']}")
    f = finding(out, "too_few_files")
    check(f["severity"] == "error", f"too_few_files: {f['severity']}")
    check("InvalidArgumentError: Could not apply FILE based sharding: the dataset only has"
          in f["tensorflow"], f"too_few_files: {f['tensorflow']}")
    check("UnavailableError" in f["tensorflow"] and "workers 2, 3" in f["tensorflow"],
          f"the workers without a file wait, then fail: {f['tensorflow']}")
    check("There aren't enough elements" in f["other_versions"], f"before 2.4: {f}")
    check(f["fix_flags"][:1] == ["--policy DATA"] and "AutoShardPolicy.DATA" in f["fix"],
          f"too_few_files fix: {f['fix']} / {f['fix_flags']}")
    # Before 2.4: the old message, and a hang.
    old = finding(run_check(["--tf-version", "2.3", *args], FINDING_EXIT), "too_few_files")
    check("# elems = 1, # shards = 4" in old["tensorflow"] and "hang" in old["tensorflow"],
          f"TF 2.3: {old['tensorflow']}")
    # The text form: the verdict first, the finding with its fix.
    text = subprocess.run([checks.TFDIST, "check", *args], capture_output=True, text=True)
    check(text.returncode == FINDING_EXIT, f"text: exit {text.returncode}")
    check(text.stdout.startswith("check: fail: ") and "\nerror: too_few_files\n" in text.stdout
          and "  fix here: --policy DATA;" in text.stdout, f"text form:\n{text.stdout}")
    # Fix 1 applied: --policy DATA.
    fixed = run_check(with_flags(args, f["fix_flags"][0]), 0)
    check(fixed["result"] == "warn" and not [x for x in fixed["findings"]
                                            if x["severity"] == "error"],
          f"--policy DATA: {fixed}")
    # Fix 2 applied: the input rewritten into 4 files, FILE kept.
    reshard = [x for x in f["fix_flags"] if x.startswith("tfdist reshard")]
    check(len(reshard) == 1, f"a reshard fix: {f['fix_flags']}")
    if reshard:
        count = shlex.split(reshard[0])[3]
        checks.tfdist("reshard", f"{tmp}/two-*", "-o", f"{tmp}/four", "--num-shards", count)
        nothing_above_info(
            run_check(["--workers", "4", f'list_files("{tmp}/four-*", shuffle=False)'
                       '.interleave(tfrecord).batch(8)'], 0), "resharded into 4")


def too_few_unseeded(tmp):
    # Fewer files than workers, and a shuffle without a seed before DATA's
    # cut (list_files' own, shuffle(100)): --policy DATA alone would feed
    # records twice or never. The fix leads with the reshard, which applied
    # literally passes; DATA comes with the seeds it needs.
    checks.tfdist("gen", "-o", f"{tmp}/train", "--files", "3", "--records", "192", "--size",
                  "16", "--no-fsync")
    pipeline = f'list_files("{tmp}/train-*").interleave(tfrecord).shuffle(100).batch(32)'
    args = ["--workers", "4", "--replicas", "2", pipeline]
    f = finding(run_check(args, FINDING_EXIT), "too_few_files")
    check("--policy DATA" not in f["fix_flags"], f"a bare --policy DATA: {f['fix_flags']}")
    check("`list_files(..., seed=S)`" in f["fix"] and "tf.random.set_seed(S)" in f["fix"],
          f"DATA's seeds: {f['fix']}")
    reshard = [x for x in f["fix_flags"] if x.startswith("tfdist reshard")]
    check(len(reshard) == 1 and f["fix_flags"][0] == reshard[0], f"reshard first: {f['fix_flags']}")
    if reshard:
        count = shlex.split(reshard[0])[3]
        checks.tfdist("reshard", f"{tmp}/train-*", "-o", f"{tmp}/train4", "--num-shards",
                      count)
        fixed = run_check(["--workers", "4", "--replicas", "2",
                           pipeline.replace(f"{tmp}/train-*", f"{tmp}/train4-*")], 0)
        check(not [x for x in fixed["findings"] if x["severity"] == "error"],
              f"resharded: {fixed['findings']}")
    # The other fix, applied as its text says: DATA with the shuffles seeded.
    seeded = pipeline.replace('-*")', '-*", seed=1)').replace("shuffle(100)",
                                                             "shuffle(100, seed=2)")
    fixed = run_check(["--policy", "DATA", *args[:-1], seeded], 0)
    check(not [x for x in fixed["findings"] if x["severity"] == "error"],
          f"DATA, seeded: {fixed['findings']}")


def uneven_next(tmp):
    # Files of 40 and 16 records, batch(8) over 2 workers: 4 a worker and
    # step, so 10 and 4 steps.
    checks.tfdist("gen", "-o", f"{tmp}/u40.tfrecord", "--records", "40", "--no-fsync")
    checks.tfdist("gen", "-o", f"{tmp}/u16.tfrecord", "--records", "16", "--no-fsync")
    pipeline = f'["{tmp}/u40.tfrecord", "{tmp}/u16.tfrecord"]'
    pipeline = f"from_tensor_slices({pipeline}).interleave(tfrecord).batch(8)"
    base = ["--workers", "2", "--loop", "next", pipeline]
    out = run_check(["--steps-per-epoch", "12", *base], FINDING_EXIT)
    f = finding(out, "steps_per_epoch_too_large")
    check("next() raises StopIteration at global step 11" in f["tensorflow"]
          and "every worker at the same step" in f["tensorflow"], f"next past the data: {f}")
    check((out["steps_per_epoch"] or {}).get("min") == 4 and
          (out["steps_per_epoch"] or {}).get("max") == 10,
          f"steps per epoch: {out['steps_per_epoch']}")
    check(f["fix_flags"][:1] == ["--steps-per-epoch 4"], f"fix: {f['fix_flags']}")
    fixed = run_check(with_flags(["--steps-per-epoch", "12", *base], f["fix_flags"][0]), 0)
    check(not [x for x in fixed["findings"] if x["severity"] != "info" and
               x["kind"] != "imbalance"], f"steps_per_epoch 4: {fixed['findings']}")
    # Two epochs from one iterator at 6: the data runs out in epoch 2.
    two = finding(run_check(["--steps-per-epoch", "6", "--epochs", "2", *base], FINDING_EXIT),
                  "steps_per_epoch_too_large")
    check("global step 11 (epoch 2)" in two["tensorflow"], f"two epochs: {two['tensorflow']}")
    check(two["fix_flags"][:1] == ["--steps-per-epoch 2"], f"two epochs' fix: {two['fix_flags']}")
    # Between the shortest and the longest worker: silent empty batches
    # since 2.3, a hang before.
    between = run_check(["--steps-per-epoch", "7", *base], 0)
    u = finding(between, "uneven_steps")
    check(u["severity"] == "warning" and "worker 1 runs out" in u["tensorflow"]
          and "empty (0-size) batches" in u["tensorflow"], f"uneven 2.20: {u}")
    hang = finding(run_check(["--steps-per-epoch", "7", "--tf-version", "2.2", *base],
                             FINDING_EXIT), "uneven_steps")
    check(hang["severity"] == "error" and "hang" in hang["tensorflow"], f"uneven 2.2: {hang}")


def infinite_fit(tmp):
    checks.tfdist("gen", "-o", f"{tmp}/even", "--files", "2", "--records", "32", "--no-fsync")
    pipeline = f'list_files("{tmp}/even-*", shuffle=False).interleave(tfrecord).batch(8).repeat()'
    args = ["--workers", "2", "--loop", "fit", pipeline]
    k2 = finding(run_check(["--tf-version", "2.15", *args], FINDING_EXIT),
                 "infinite_without_steps")
    check(k2["severity"] == "error" and
          "ValueError: When providing an infinite dataset, you must specify the number of steps "
          "to run" in k2["tensorflow"], f"Keras 2: {k2['tensorflow']}")
    out = run_check(args, FINDING_EXIT)
    k3 = finding(out, "infinite_without_steps")
    check("epoch 1 never ends" in k3["tensorflow"] and "ValueError" in k3["other_versions"],
          f"Keras 3: {k3}")
    check(k3["fix_flags"] == ["--steps-per-epoch 8"], f"fix: {k3['fix_flags']}")
    nothing_above_info(run_check(with_flags(args, k3["fix_flags"][0]), 0), "with steps_per_epoch")
    # A for loop of its own: never ends, but a break of the user's ends it.
    loop = finding(run_check(["--workers", "2", pipeline], 0), "infinite_without_steps")
    check(loop["severity"] == "warning", f"for loop: {loop}")


def off_asked_for(tmp):
    pipeline = f'list_files("{tmp}/even-*", shuffle=False).interleave(tfrecord).batch(8)'
    out = run_check(["--workers", "2", "--policy", "OFF", pipeline], 0)
    amp = finding(out, "read_amplification")
    check("2x" in amp["evidence"] and amp["fix_flags"] == ["--policy FILE"], f"OFF: {amp}")


def unseeded_before_data(tmp):
    """An unseeded shuffle before DATA sharding (tensorflow#47583): each
    worker cuts its own permutation; expected (3/4)^4 = 0.316 missed over 4
    workers and one draw, both errors; the seed the fix names passes."""
    source = f'list_files("{tmp}/even-*", shuffle=False).interleave(tfrecord)'
    args = ["--workers", "4", "--policy", "DATA", "--seed", "7", f"{source}.shuffle(64).batch(8)"]
    out = run_check(args, FINDING_EXIT)
    dup, missed = finding(out, "duplicate_records"), finding(out, "missed_records")
    check(dup["severity"] == "error" and missed["severity"] == "error",
          f"unseeded before DATA: {dup['severity']} / {missed['severity']}")
    check("0.316" in missed["evidence"] and "draw" in missed["evidence"],
          f"the fractions and a draw: {missed['evidence']}")
    check("TensorFlow gives no warning" in dup["tensorflow"], f"silent: {dup['tensorflow']}")
    check("`shuffle(..., seed=S)`" in dup["fix"], f"the fix names the seed: {dup['fix']}")
    # The same draw seed, the same evidence.
    again = finding(run_check(args, FINDING_EXIT), "missed_records")
    check(again["evidence"] == missed["evidence"], "a draw under --seed is repeatable")
    # The fix applied: a seed on the shuffle, every worker the same order.
    fixed = run_check(["--workers", "4", "--policy", "DATA",
                       f"{source}.shuffle(64, seed=3).batch(8)"], 0)
    check(not [f for f in fixed["findings"] if f["kind"] in
               ("duplicate_records", "missed_records", "unseeded_shuffle")],
          f"seeded: {[f['kind'] for f in fixed['findings']]}")


def tpu_partial(tmp):
    pipeline = f'list_files("{tmp}/even-*", shuffle=False).interleave(tfrecord).batch(12)'
    args = ["--strategy", "tpu", "--workers", "2", "--replicas", "4"]
    out = run_check([*args, pipeline], 0)
    f = finding(out, "dynamic_batch_shape")
    check("TPUStrategy.run pads the dynamic batch dimension" in f["tensorflow"],
          f"tpu: {f['tensorflow']}")
    check(f["fix"] == "batch(12, drop_remainder=True)", f"tpu fix: {f['fix']}")
    fixed = run_check([*args, pipeline.replace("batch(12)", f["fix"])], 0)
    check(not [x for x in fixed["findings"] if x["kind"] in ("dynamic_batch_shape",
                                                               "empty_batches")],
          f"tpu fixed: {fixed['findings']}")


def steps_too_large(tmp):
    pipeline = f'list_files("{tmp}/even-*", shuffle=False).interleave(tfrecord).batch(8)'
    for version, expect, severity in (("2.15", FINDING_EXIT, "error"), ("2.16", 0, "warning")):
        args = ["--workers", "2", "--loop", "fit", "--steps-per-epoch", "50", "--tf-version",
                version, pipeline]
        f = finding(run_check(args, expect), "steps_per_epoch_too_large")
        check(f["severity"] == severity and "Your input ran out of data" in f["tensorflow"],
              f"fit at {version}: {f}")
        check(f["fix_flags"][:1] == ["--steps-per-epoch 8"], f"fix at {version}: {f['fix_flags']}")
        nothing_above_info(run_check(with_flags(args, f["fix_flags"][0]), 0),
                           f"fixed at {version}")
    k2 = finding(run_check(["--loop", "fit", "--steps-per-epoch", "50", "--tf-version", "2.15",
                            "--workers", "2", pipeline], FINDING_EXIT), "steps_per_epoch_too_large")
    check("(in this case, 50 batches)" in k2["tensorflow"], f"Keras 2's count: {k2}")


def clean_and_usage(tmp):
    pipeline = (f'list_files("{tmp}/even-*", shuffle=False).interleave(tfrecord)'
                '.batch(8, drop_remainder=True)')
    out = run_check(["--workers", "2", pipeline], 0)
    nothing_above_info(out, "clean")
    check(out["steps_per_epoch"] == {"min": 8, "max": 8, "at_min": out["steps_per_epoch"]["at_min"],
                                     "at_max": out["steps_per_epoch"]["at_max"]},
          f"clean steps: {out['steps_per_epoch']}")
    for args, words in (
            (["--workers", "2", "--strategy", "mirrored"], "--strategy multi-worker"),
            (["--strategy", "multi-worker"], "--strategy mirrored"),
            (["--workers", "2", "--strategy", "parameter-server"], "--api from-function"),
            (["--loop", "next"], "--steps-per-epoch"),
            (["--steps-per-epoch", "3"], "--loop next"),
            (["--loop", "estimator"], "removed in TF 2.16"),
            (["--tf-version", "2.99"], "--tf-version 2.99"),
            (["--tf-version", "3.0"], "--tf-version 3.0"),
            (["--workers", "2", "--strategy", "parameter-server", "--api", "from-function",
              "--loop", "fit", "--steps-per-epoch", "2", "--tf-version", "2.3"], "TF 2.4"),
            (["--workers", "2", "--strategy", "parameter-server", "--api", "from-function",
              "--loop", "fit"], "--steps-per-epoch"),
            (["--workers", "2", "--strategy", "tpu", "--loop", "estimator", "--tf-version",
              "2.15"], "TPUEstimator"),
            (["--workers", "2", "--loop", "estimator", "--tf-version", "2.15"],
             "--api from-function")):
        proc = subprocess.run([checks.TFDIST, "check", *args, pipeline], capture_output=True,
                              text=True)
        check(proc.returncode == 2 and words in proc.stderr,
              f"check {args}: exit {proc.returncode}: {proc.stderr}")


def data_too_few(tmp):
    # DATA with fewer elements at the shard than workers: TensorFlow's shard
    # fails as for files (layout refuses it; check reports it).
    out = run_check(["--workers", "4", "--policy", "DATA", "range(3)"], FINDING_EXIT)
    f = finding(out, "too_few_files")
    check("DATA sharding over 4 workers, and 3 elements reach the shard" in f["evidence"]
          and "Could not apply FILE based sharding" in f["tensorflow"], f"DATA too few: {f}")
    check(f["fix_flags"] == ["--workers 3"], f"DATA too few, fix: {f['fix_flags']}")
    # HINT's rewritten shard(SHARD_HINT, ...) requires a non-empty share too.
    hint = finding(run_check(["--workers", "3", "--policy", "HINT",
                              "range(2).shard(SHARD_HINT, 0).batch(1)"], FINDING_EXIT),
                   "too_few_files")
    check(hint["evidence"].startswith("HINT sharding over 3 workers"), f"HINT too few: {hint}")
    hint_args = ["--workers", "3", "--policy", "HINT", "range(2).shard(SHARD_HINT, 0).batch(1)"]
    check(hint["fix_flags"] == ["--workers 2"], f"HINT too few, fix: {hint['fix_flags']}")
    run_check(with_flags(hint_args, "--workers 2"), 0)


def empty_shard(tmp):
    # A worker whose files hold nothing, before a repeat(): OutOfRange at its
    # first step while its peers wait (no padding: the cardinality is
    # INFINITE).
    checks.tfdist("gen", "-o", f"{tmp}/full.tfrecord", "--records", "24", "--no-fsync")
    checks.tfdist("gen", "-o", f"{tmp}/none.tfrecord", "--records", "0", "--no-fsync")
    pipeline = (f'tfrecord(["{tmp}/full.tfrecord", "{tmp}/none.tfrecord"]).batch(4)'
                '.repeat()')
    args = ["--workers", "2", "--loop", "fit", "--steps-per-epoch", "5", pipeline]
    f = finding(run_check(args, FINDING_EXIT), "empty_shard")
    check(f["severity"] == "error" and "worker 1" in f["tensorflow"]
          and "OutOfRangeError: End of sequence at step 1" in f["tensorflow"], f"empty shard: {f}")
    check(f["fix_flags"] == ["--policy DATA"], f"empty shard, fix: {f['fix_flags']}")
    fixed = run_check(with_flags(args, f["fix_flags"][0]), 0)
    check(not [x for x in fixed["findings"] if x["severity"] == "error"],
          f"empty shard fixed: {fixed['findings']}")
    # A for loop inside a tf.function cannot leave an endless dataset.
    forever = finding(run_check(["--workers", "2", "--loop", "for-tf", "--policy", "DATA",
                                 pipeline], FINDING_EXIT), "infinite_without_steps")
    check("NotImplementedError: break and return statements are not yet supported"
          in forever["tensorflow"], f"for-tf forever: {forever}")


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-check-") as tmp:
        os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
        too_few_files(tmp)
        too_few_unseeded(tmp)
        uneven_next(tmp)
        infinite_fit(tmp)
        off_asked_for(tmp)
        unseeded_before_data(tmp)
        tpu_partial(tmp)
        steps_too_large(tmp)
        clean_and_usage(tmp)
        data_too_few(tmp)
        empty_shard(tmp)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
