#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# tfdist check as a reviewer ran it (data from tfdist gen: E, 8 files of 100
# records; U, 8 uneven files of 50 to 500): each fix it prints, applied,
# passes; the text names real workers, steps and counts.
# - no_steps: the global batch bound is the smallest worker's records;
# - too_few_files: the first failing worker's exact message, a real task
#   index, and under TF 2.2 no hang (the empty worker ends at once);
# - uneven_steps before 2.3: the workers that run out first, at their step;
# - empty_batches only where a loop feeds one (TPU pod with static shapes,
#   multi-worker before 2.3 and Estimator do not);
# - step fixes: the largest steps_per_epoch that passes, and fit without
#   steps_per_epoch where that passes;
# - filter(): counts are upper bounds, and said so;
# - from-function: fixes that change the input function, which pass.
# Usage: check_review_test.py TFDIST
import json
import os
import shlex
import subprocess
import sys
import tempfile

import checks
from checks import FINDING_EXIT, check, finding, run_check, with_flags


def kinds(out):
    return [f["kind"] for f in out["findings"]]


def passes(args, what):
    out = run_check(args)
    errors = [f["kind"] for f in out["findings"] if f["severity"] == "error"]
    check(out["exit"] == 0 and not errors, f"{what}: exit {out['exit']}, errors {errors}")
    return out


def no_steps_bound(E):
    # FILE: each of 4 workers batches its own 200 records.
    args = ["--workers", "4", "--loop", "fit", f"{E}.batch(1024, drop_remainder=True)"]
    f = finding(run_check(args, FINDING_EXIT), "no_steps")
    check("at most 200)" in f["fix"], f"no_steps bound: {f['fix']}")
    passes(args[:-1] + [f"{E}.batch(200, drop_remainder=True)"], "batch(200) over 4 workers")


def too_few_files_text(E):
    args = ["--workers", "16", "--loop", "fit", f"{E}.batch(64)"]
    f = finding(run_check(args, FINDING_EXIT), "too_few_files")
    text = f["tensorflow"] + f["other_versions"]
    check("{" not in text and "}" not in text, f"placeholders left: {text}")
    check("the dataset only has 1 file(s), which is not enough for the required 16" in text
          and "worker 7 names 8" in text and "/job:worker/replica:0/task:0 is down" in text,
          f"too_few_files, TF 2.20: {text}")
    old = finding(run_check(["--tf-version", "2.3", *args], FINDING_EXIT), "too_few_files")
    check("# elems = 1, # shards = 16" in old["tensorflow"] and "hang" in old["tensorflow"],
          f"TF 2.3: {old['tensorflow']}")
    # 2.0 to 2.2: no partial-batch handling, no all-reduce to wait in.
    tf22 = finding(run_check(["--tf-version", "2.2", *args], FINDING_EXIT), "too_few_files")
    check("OutOfRangeError at once" in tf22["tensorflow"] and "wait" not in tf22["tensorflow"]
          and "nothing hangs" in tf22["tensorflow"], f"TF 2.2: {tf22['tensorflow']}")


def first_out_steps(U):
    # Steps 24, 30, 22, 59: worker 2 runs out first, at step 23.
    out = run_check(["--workers", "4", "--loop", "fit", "--tf-version", "2.2", f"{U}.batch(64)"],
                    FINDING_EXIT)
    f = finding(out, "uneven_steps")
    check("(24, 30, 22, 59)" in f["evidence"], f"uneven data changed: {f['evidence']}")
    check(f["tensorflow"].startswith("worker 2 runs out at step 23:"),
          f"the worker that runs out first: {f['tensorflow']}")


def grammar(tmp):
    # Worker 1's file holds nothing, before a repeat(): "worker 1 sees ...
    # and raises", a verb agreeing with one worker, and a real task index.
    checks.tfdist("gen", "-o", f"{tmp}/full.tfrecord", "--records", "24", "--no-fsync")
    checks.tfdist("gen", "-o", f"{tmp}/none.tfrecord", "--records", "0", "--no-fsync")
    pipeline = f'tfrecord(["{tmp}/full.tfrecord", "{tmp}/none.tfrecord"]).batch(4).repeat()'
    out = run_check(["--workers", "2", "--loop", "fit", "--steps-per-epoch", "5", pipeline],
                    FINDING_EXIT)
    f = finding(out, "empty_shard")
    check("worker 1 sees repeat() of an empty shard and raises OutOfRangeError" in f["tensorflow"]
          and "task:1 is down" in f["tensorflow"], f"agreement: {f['tensorflow']}")


def empty_batches_where_fed(E, U):
    # A TPU pod with static shapes ends the epoch at the first host's end.
    tpu = run_check(["--workers", "4", "--replicas", "8", "--strategy", "tpu",
                     f"{U}.batch(64, drop_remainder=True)"], FINDING_EXIT)
    check("uneven_steps" in kinds(tpu) and "empty_batches" not in kinds(tpu),
          f"TPU pod, static shapes: {kinds(tpu)}")
    # Multi-worker before 2.3: no partial-batch handling, no padding.
    old = run_check(["--workers", "4", "--loop", "fit", "--tf-version", "2.2", f"{U}.batch(64)"],
                    FINDING_EXIT)
    check("uneven_steps" in kinds(old) and "empty_batches" not in kinds(old),
          f"multi-worker, TF 2.2: {kinds(old)}")
    new = run_check(["--workers", "4", "--loop", "fit", "--tf-version", "2.3", f"{U}.batch(64)"])
    check("empty_batches" in kinds(new), f"multi-worker, TF 2.3: {kinds(new)}")
    # Estimator (graph mode): the partial step ends the input; fit feeds it.
    args = ["--replicas", "64", f"{E}.batch(64)"]
    est = run_check(["--loop", "estimator", "--tf-version", "2.15", *args])
    check("empty_batches" not in kinds(est), f"estimator: {kinds(est)}")
    fit = run_check(["--loop", "fit", *args])
    check("empty_batches" in kinds(fit), f"fit: {kinds(fit)}")


def largest_steps(E, U):
    # 22, 30, 24, 59 steps from one iterator over 3 epochs: 19 (59 // 3)
    # runs, though workers run out before it (a warning since 2.3).
    args = ["--workers", "4", "--loop", "next", "--steps-per-epoch", "22", "--epochs", "3",
            f"{U}.batch(64)"]
    f = finding(run_check(args, FINDING_EXIT), "steps_per_epoch_too_large")
    check(f["fix_flags"][:2] == ["--steps-per-epoch 7", "--steps-per-epoch 19"],
          f"in full, and the largest that runs: {f}")
    for flags in f["fix_flags"]:
        passes(with_flags(args, flags), flags)
    too_far = run_check(with_flags(args, "--steps-per-epoch 20"), FINDING_EXIT)
    check("steps_per_epoch_too_large" in kinds(too_far), f"20 does not run: {kinds(too_far)}")
    # Before 2.3 the first worker's end fails the step: 22 // 3.
    old = finding(run_check(["--tf-version", "2.2", *args], FINDING_EXIT),
                  "steps_per_epoch_too_large")
    check(old["fix_flags"][:1] == ["--steps-per-epoch 7"], f"TF 2.2: {old['fix_flags']}")
    passes(with_flags(["--tf-version", "2.2", *args], old["fix_flags"][0]), "TF 2.2, 7 steps")
    # fit under Keras 2: without steps_per_epoch each epoch is a new
    # iterator over 13 steps.
    fit = ["--loop", "fit", "--steps-per-epoch", "10", "--epochs", "3", "--tf-version", "2.15",
           f"{E}.batch(64)"]
    f = finding(run_check(fit, FINDING_EXIT), "steps_per_epoch_too_large")
    check(f["fix_flags"] == ["--steps-per-epoch 4", "no --steps-per-epoch"]
          and "without steps_per_epoch" in f["fix"], f"fit fixes: {f}")
    passes(with_flags(fit, f["fix_flags"][0]), "fit, 4 steps")
    passes(fit[:2] + fit[4:], "fit without steps_per_epoch")


def filter_upper_bound(E):
    # filter() is counted as keeping everything: 13 steps at most.
    pipeline = f"{E}.filter(lambda x: False).batch(64)"
    args = ["--workers", "4", "--loop", "next", "--steps-per-epoch", "13", pipeline]
    out = run_check(args, 0)
    check((out.get("upper_bound") or "").startswith("counts are upper bounds: filter("),
          f"upper_bound: {out.get('upper_bound')}")
    spe = out["steps_per_epoch"] or {}
    check("upper bound" in spe.get("at_min", "") and "upper bound" in spe.get("at_max", ""),
          f"steps_per_epoch lines: {spe}")
    text = subprocess.run([checks.TFDIST, "check", *args], capture_output=True, text=True)
    first = text.stdout.splitlines()[0] if text.stdout else ""
    check(first.startswith("check: ok") and "counts are upper bounds: filter(" in first,
          f"verdict: {first}")
    big = finding(run_check(with_flags(args, "--steps-per-epoch 20"), FINDING_EXIT),
                  "steps_per_epoch_too_large")
    check("upper bounds" in big["evidence"] and "at most" in big["fix"], f"too large: {big}")
    # Without filter() the counts are exact, and not said to be bounds.
    exact = run_check(["--workers", "4", "--loop", "next", "--steps-per-epoch", "2",
                       f"{E}.batch(64)"], 0)
    check(exact.get("upper_bound") is None and
          "upper bound" not in json.dumps(exact["steps_per_epoch"]), f"exact: {exact}")


def from_function_fixes(tmp):
    # distribute_datasets_from_function ignores auto_shard_policy: the fixes
    # are the input function's, and each, applied, removes the finding.
    names = f'list_files("{tmp}/uneven/*.tfrecord", shuffle=False)'
    by_files = ".shard(ctx.num_input_pipelines, ctx.input_pipeline_id)"
    read = ".interleave(tfrecord, cycle_length=4)"
    for workers, kind in (("4", "imbalance"), ("16", "empty_batches")):
        args = ["--api", "from-function", "--workers", workers, "--loop", "for"]
        out = run_check([*args, f"{names}{by_files}{read}.batch(64)"])
        f = finding(out, kind)
        check("--policy" not in " ".join(f["fix_flags"]) and
              "--steps-per-epoch" not in " ".join(f["fix_flags"]) and
              "input_context.input_pipeline_id" in f["fix"], f"{workers} workers, {kind}: {f}")
        reshard = [x for x in f["fix_flags"] if x.startswith("tfdist reshard")]
        check(len(reshard) == 1, f"{kind}: a reshard: {f['fix_flags']}")
        if reshard:
            count = shlex.split(reshard[0])[3]
            prefix = f"{tmp}/even{workers}/r"
            os.makedirs(os.path.dirname(prefix))
            checks.tfdist("reshard", f"{tmp}/uneven/*.tfrecord", "-o", prefix, "--num-shards",
                          count)
            fixed = passes([*args, f'list_files("{prefix}*", shuffle=False){by_files}{read}'
                            ".batch(64)"], f"{kind}: resharded into {count}")
            check(kind not in kinds(fixed), f"{kind} after the reshard: {kinds(fixed)}")


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-check-review-") as tmp:
        os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
        os.makedirs(f"{tmp}/even")
        os.makedirs(f"{tmp}/uneven")
        checks.tfdist("gen", "-o", f"{tmp}/even/e", "--files", "8", "--records", "100",
                      "--no-fsync")
        checks.tfdist("gen", "-o", f"{tmp}/uneven/u", "--files", "8", "--records", "50-500",
                      "--seed", "3", "--no-fsync")
        E = f'list_files("{tmp}/even/*.tfrecord", shuffle=False).interleave(tfrecord, cycle_length=4)'
        U = f'list_files("{tmp}/uneven/*.tfrecord", shuffle=False).interleave(tfrecord, cycle_length=4)'
        no_steps_bound(E)
        too_few_files_text(E)
        first_out_steps(U)
        grammar(tmp)
        empty_batches_where_fed(E, U)
        largest_steps(E, U)
        filter_upper_bound(E)
        from_function_fixes(tmp)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
