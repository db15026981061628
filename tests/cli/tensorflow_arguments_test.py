#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Argument values TensorFlow accepts lay out, as a user pastes them: a TPU
# reference model's map(num_parallel_calls=batch_size) of 1024 and an
# interleave asking for 1024 reading threads (tfdist reads with fewer, says
# so in the layout header, the run report and their JSON, and keeps
# TensorFlow's order); values TensorFlow refuses are refused with its rule,
# at the line that wrote them.
# Usage: tensorflow_arguments_test.py TFDIST
import json
import os
import shutil
import subprocess
import sys
import tempfile

import checks
from checks import check

TPU_MODEL = """\
import tensorflow as tf


def input_fn(params):
    batch_size = params["batch_size"]
    files = tf.data.Dataset.list_files("data/*", shuffle=False)
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=2048, block_length=1,
                          num_parallel_calls=1024)
    ds = ds.map(lambda r: r, num_parallel_calls=batch_size)
    return ds.batch(batch_size // 256)
"""

REFUSED = """\
import tensorflow as tf


def input_fn():
    files = tf.data.Dataset.list_files("data/*", shuffle=False)
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=2,
                          num_parallel_calls=4)
    return ds.batch(4)
"""

NOTE = ("interleave(num_parallel_calls=1024): read by 256 threads (tfdist's limit); the order "
        "is TensorFlow's, which does not depend on them")


def run(*args):
    return subprocess.run([checks.TFDIST, *args], capture_output=True, text=True, timeout=300)


def write(name, text):
    with open(name, "w") as f:
        f.write(text)
    return name


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="tfdist-tf-arguments-")
    try:
        os.chdir(tmp)
        os.mkdir("data")
        subprocess.run([checks.TFDIST, "gen", "-o", "data/train", "--files", "3", "--records",
                        "7", "--size", "10-20"], check=True, capture_output=True)
        model = ("--python", write("tpu.py", TPU_MODEL), "--define", 'params={"batch_size": 1024}')
        # What the stand-in writes, as a chain: the same order.
        chain = ('list_files("data/*", shuffle=False).interleave(tfrecord, cycle_length=3)'
                 '.batch(4)')

        proc = run("layout", "--workers", "1", *model)
        check(proc.returncode == 0, f"layout --python: exit {proc.returncode}\n{proc.stderr}")
        check(f"note:     {NOTE}\n" in proc.stdout, f"the header lacks the thread note:\n{proc.stdout}")

        out = run("layout", "--format", "json", "--workers", "1", *model)
        check(out.returncode == 0, f"layout --format json: exit {out.returncode}\n{out.stderr}")
        want = run("layout", "--format", "json", "--workers", "1", chain)
        if out.returncode == 0 and want.returncode == 0:
            got, expected = json.loads(out.stdout), json.loads(want.stdout)
            check(got.get("notes") == [NOTE], f"JSON notes: {got.get('notes')}")
            check(got.get("steps") == expected.get("steps"),
                  f"the order differs from the chain's:\n{got.get('steps')}\n"
                  f"{expected.get('steps')}")

        proc = run("run", "--device", "cpu", "--json", "--workers", "1", *model)
        check(proc.returncode == 0, f"run --json: exit {proc.returncode}\n{proc.stderr}")
        if proc.returncode == 0:
            check(NOTE in json.loads(proc.stdout).get("notes", []),
                  f"run's notes lack the thread note: {proc.stdout[:400]}")

        # TensorFlow's own refusal: its rule, the file and the line.
        proc = run("layout", "--workers", "1", "--python", write("refused.py", REFUSED))
        check(proc.returncode == 2, f"num_parallel_calls > cycle_length: exit {proc.returncode}")
        check("refused.py:6" in proc.stderr and
              "if cycle_length is set to a fixed value, num_parallel_calls must be either "
              "AUTOTUNE or a value less than or equal to cycle_length; got num_parallel_calls 4 "
              "and cycle_length 2" in proc.stderr, f"the refusal:\n{proc.stderr}")
    finally:
        os.chdir("/")
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
