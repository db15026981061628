#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# group_by_window and bucket_by_sequence_length: a layout shows the records
# each worker reads up to the grouping exactly, and its batches and steps
# as bounds (fewest..most) in the table, the summary and the JSON, never as
# exact steps; what cannot be bounded (DATA over several workers, a batch()
# after the grouping) and `run` (which would have to run the key function)
# are refused with exit 2. The same from the expression and from a Python
# input function of a translation model that batches by length.
# Usage: grouped_test.py TFDIST
import json
import os
import shutil
import subprocess
import sys
import tempfile

import checks
from checks import check

SOURCE = 'list_files("data/*", shuffle=False).interleave(tfrecord, cycle_length=2)'
BUCKETS = SOURCE + '.bucket_by_sequence_length(opaque("length"), [10, 20], [4, 2, 3])'
WINDOWS = (SOURCE + '.group_by_window(opaque("key_func"), lambda key, window: '
           'window.padded_batch(4), window_size=4)')

TRANSLATION = """\
import tensorflow as tf


def _length(src, tgt):
    return tf.maximum(tf.size(src), tf.size(tgt))


def input_fn(pattern, batch_size=4):
    ds = tf.data.Dataset.list_files(pattern, shuffle=False)
    ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=2)
    ds = ds.map(lambda r: (r, r))
    ds = ds.apply(tf.data.experimental.bucket_by_sequence_length(
        _length, bucket_boundaries=[10, 20], bucket_batch_sizes=[batch_size, 2, 3],
        padded_shapes=([None], [None])))
    return ds.prefetch(tf.data.AUTOTUNE)
"""

KEYED = """\
import tensorflow as tf


def input_fn(pattern, batch_size=4):
    ds = tf.data.Dataset.list_files(pattern, shuffle=False)
    ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=2)

    def key_func(record):
        return tf.cast(tf.strings.length(record) // 8, tf.int64)

    def reduce_func(key, window):
        return window.padded_batch(batch_size, padded_shapes=[])

    return ds.group_by_window(key_func, reduce_func, window_size=batch_size)
"""


def run(*args):
    return subprocess.run([checks.TFDIST, *args], capture_output=True, text=True, timeout=300)


def layout_json(what, *args):
    proc = run("layout", "--format", "json", *args)
    check(proc.returncode == 0, f"{what}: exit {proc.returncode}\n{proc.stderr}")
    return json.loads(proc.stdout) if proc.returncode == 0 else {}


def refused(what, *args, words):
    proc = run(*args)
    check(proc.returncode == 2, f"{what}: exit {proc.returncode}, expected 2\n{proc.stderr}")
    for word in words:
        check(word in proc.stderr, f"{what}: the message lacks {word!r}:\n{proc.stderr}")


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="tfdist-grouped-")
    try:
        os.chdir(tmp)
        os.mkdir("data")
        subprocess.run([checks.TFDIST, "gen", "-o", "data/train", "--files", "4", "--records",
                        "5", "--size", "20-40"], check=True, capture_output=True)
        two = ("--workers", "2")

        # FILE over 2 workers: 10 records each, exact; 3 buckets of 4, 2 and
        # 3: ceil(10/4) = 3 to 3 + floor(7/2) = 6 batches, 1 to 4 records.
        out = layout_json("buckets", BUCKETS, *two)
        check("steps" not in out, f"exact steps shown for a grouping: {list(out)}")
        check([len(w.get("elements", [])) for w in out.get("workers", [])] == [10, 10],
              f"each worker's records up to the grouping: {out.get('workers')}")
        grouped = out.get("summary", {}).get("grouped", {})
        check(grouped.get("bounds") is True and grouped.get("steps") == {"min": 3, "max": 6},
              f"the steps' bounds: {grouped}")
        check(grouped.get("records_per_batch") == {"min": 1, "max": 4},
              f"the records per batch: {grouped}")
        # One worker may end after 3 steps while the other runs 6.
        check(grouped.get("padded_steps") == {"min": 0, "max": 3},
              f"the steps with a worker out of batches: {grouped}")
        check([w.get("batches") for w in grouped.get("workers", [])] ==
              [{"min": 3, "max": 6}] * 2, f"each worker's batches: {grouped}")
        check(any("bounds" in w for w in out.get("warnings", [])),
              f"no warning says bounds: {out.get('warnings')}")
        check(out.get("policy", {}).get("applied") == "FILE", f"the policy: {out.get('policy')}")
        # The grouping batches the records: TensorFlow's rebatch gets rank-1
        # elements, so no scalar-rebatch error (it belongs to the records
        # before the grouping, not to what tf.distribute sees).
        check(not any("rebatch dataset" in str(w) for w in out.get("warnings", [])),
              f"a scalar-rebatch error for a grouped pipeline: {out.get('warnings')}")
        proc = run("check", BUCKETS, *two)
        check(proc.returncode == 0 and "scalar_rebatch" not in proc.stdout,
              f"check of a grouped pipeline: exit {proc.returncode}\n{proc.stdout}{proc.stderr}")

        # Two replicas each: the legacy split, one step per batch, pieces of
        # at most ceil(4/2) = 2 records; --steps 4 caps the most.
        out = layout_json("buckets on 2x2", BUCKETS, *two, "--replicas", "2", "--steps", "4")
        grouped = out.get("summary", {}).get("grouped", {})
        check(out.get("split") == "legacy", f"the split: {out.get('split')}")
        check(grouped.get("steps") == {"min": 3, "max": 4} and
              grouped.get("records_per_batch") == {"min": 0, "max": 2},
              f"2x2 with --steps 4: {grouped}")

        # group_by_window, any number of keys: ceil(10/4) = 3 to 10 batches;
        # with drop_remainder the fewest is 0. --epochs 2 doubles both.
        out = layout_json("windows", WINDOWS, *two, "--epochs", "2")
        grouped = out.get("summary", {}).get("grouped", {})
        check(grouped.get("steps") == {"min": 6, "max": 20}, f"windows, 2 epochs: {grouped}")
        out = layout_json("windows, drop", WINDOWS.replace("padded_batch(4)",
                                                           "padded_batch(4, drop_remainder=True)"),
                          *two)
        grouped = out.get("summary", {}).get("grouped", {})
        check(grouped.get("steps") == {"min": 0, "max": 2} and
              grouped.get("records_per_batch") == {"min": 4, "max": 4},
              f"windows with drop_remainder: {grouped}")

        # The table and the summary say bounds, never bare steps.
        for fmt_ in ("table", "summary"):
            proc = run("layout", "--format", fmt_, BUCKETS, *two)
            check(proc.returncode == 0, f"{fmt_}: exit {proc.returncode}\n{proc.stderr}")
            for line in ("steps (bounds): 3..6", "records per batch (bounds): 1..4",
                         "worker 1: 10 elements grouped, batches (bounds) 3..6"):
                check(line in proc.stdout, f"{fmt_} lacks {line!r}:\n{proc.stdout}")
            check("\nsteps: " not in proc.stdout, f"{fmt_} shows exact steps:\n{proc.stdout}")

        # A repeat() forever after the grouping needs --steps, then fills them.
        refused("repeat forever without --steps", "layout", BUCKETS + ".repeat()", *two,
                words=["repeats forever"])
        out = layout_json("repeat forever", BUCKETS + ".repeat()", *two, "--steps", "50")
        check(out.get("summary", {}).get("grouped", {}).get("steps") == {"min": 50, "max": 50},
              f"repeat forever, --steps 50: {out.get('summary', {}).get('grouped')}")

        refused("DATA over 2 workers", "layout", BUCKETS, *two, "--policy", "DATA",
                words=["bucket_by_sequence_length()", "DATA"])
        refused("batch after the grouping", "layout", BUCKETS + ".batch(2)", *two,
                words=["batch() after bucket_by_sequence_length()"])
        refused("run", "run", BUCKETS, "--steps", "2",
                words=["element_length_func(length)", "does not run"])
        refused("a reduce that does not batch", "layout",
                SOURCE + '.group_by_window(opaque("k"), opaque("r"), window_size=2)',
                words=["reduce_func that batches its window"])
        refused("TensorFlow's bucket check", "layout",
                SOURCE + '.bucket_by_sequence_length(opaque("l"), [10], [4, 2, 3])',
                words=["`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1`"])
        refused("window and window_size_func", "layout",
                SOURCE + '.group_by_window(opaque("k"), lambda k, w: w.batch(2))',
                words=["Either the `window_size` argument or the `window_size_func`"])

        # A translation model's input function: the same as its expression.
        with open("translation.py", "w") as f:
            f.write(TRANSLATION)
        out = layout_json("translation input_fn", "--python", "translation.py", "--define",
                          'pattern="data/*"', *two)
        grouped = out.get("summary", {}).get("grouped", {})
        check(grouped.get("steps") == {"min": 3, "max": 6} and "steps" not in out,
              f"the translation input_fn: {grouped}")
        text = "\n".join(out.get("assumptions", []))
        check("bucket_by_sequence_length(_length)" in text and "bounds" in text,
              f"the assumptions: {text}")
        with open("keyed.py", "w") as f:
            f.write(KEYED)
        out = layout_json("group_by_window input_fn", "--python", "keyed.py", "--define",
                          'pattern="data/*"', *two)
        grouped = out.get("summary", {}).get("grouped", {})
        check(grouped.get("steps") == {"min": 3, "max": 10}, f"the keyed input_fn: {grouped}")
    finally:
        os.chdir("/")
        shutil.rmtree(tmp)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
