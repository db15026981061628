#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# --python on scripts as people write them: a module that builds and
# distributes its dataset while it loads is laid out from that call, with
# the arguments the script passes (no --define); two such calls are an
# error that names them and how to pick one, and --entry still wins; a
# training loop at the top level ends the load, said, not in a bare
# StopIteration; a flag whose DEFINE default is None is None (repeat
# forever); a map function that does more than tfdist runs (decode_raw,
# cast, reshape after the parse) has the work left out named.
# Usage: python_scripts_test.py TFDIST
import json
import os
import shutil
import subprocess
import sys
import tempfile

import checks
from checks import check

# Distributed at load time, then a training loop of ten steps and one that
# never ends; the parse is followed by work tfdist does not run.
DISTRIBUTED_AT_LOAD = """\
import tensorflow as tf
from absl import flags

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_epochs", None, "Epochs; None repeats forever.")
GLOBAL_BATCH = 8


def parse(record):
    features = tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature([], tf.string)})
    image = tf.io.decode_raw(features["x"], tf.uint8)
    image = tf.cast(image, tf.float32)
    return tf.reshape(image, [-1])


def make_dataset(pattern, batch_size):
    ds = tf.data.Dataset.list_files(pattern, shuffle=False)
    ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=2)
    ds = ds.map(parse)
    ds = ds.repeat(FLAGS.num_epochs)
    return ds.batch(batch_size)


strategy = tf.distribute.MirroredStrategy(devices=["/gpu:0", "/gpu:1", "/gpu:2"])
dist_ds = strategy.experimental_distribute_dataset(make_dataset("data/*", GLOBAL_BATCH))


@tf.function
def train_step(iterator):
    return strategy.run(lambda x: x, args=(next(iterator),))


it = iter(dist_ds)
for _ in range(10):
    train_step(it)
while True:
    train_step(it)
"""

TWO_DISTRIBUTED = """\
import tensorflow as tf


def make_dataset(pattern, batch_size, training):
    ds = tf.data.Dataset.list_files(pattern, shuffle=False)
    ds = ds.flat_map(tf.data.TFRecordDataset)
    if training:
        ds = ds.repeat()
    return ds.batch(batch_size)


strategy = tf.distribute.MirroredStrategy()
train_dist = strategy.experimental_distribute_dataset(make_dataset("data/*", 8, True))
eval_dist = strategy.experimental_distribute_dataset(make_dataset("data/*", 2, False))
for batch in train_dist:
    strategy.run(lambda x: x, args=(batch,))
"""

FROM_FUNCTION_AT_LOAD = """\
import tensorflow as tf

GLOBAL_BATCH = 4
strategy = tf.distribute.MultiWorkerMirroredStrategy()


def dataset_fn(ctx):
    ds = tf.data.Dataset.list_files("data/*", shuffle=False)
    ds = ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
    ds = ds.flat_map(tf.data.TFRecordDataset)
    return ds.batch(ctx.get_per_replica_batch_size(GLOBAL_BATCH))


dist = strategy.distribute_datasets_from_function(dataset_fn)
first = next(iter(dist))
"""

KERAS_FIT = """\
import tensorflow as tf


def make_ds(pattern, batch_size):
    return tf.data.TFRecordDataset(tf.io.gfile.glob(pattern)).batch(batch_size)


ds = make_ds("data/*", 4)
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile("adam", "mse")
model.fit(ds, epochs=3)
model.evaluate(make_ds("data/*", 2))
"""

# A peek at a batch while the file loads, before the input function is
# defined: the peek ends after take(1), and the file loads on.
PEEK = """\
import tensorflow as tf

files = tf.data.Dataset.list_files("data/*", shuffle=False)
for batch in files.interleave(tf.data.TFRecordDataset).take(1).batch(2):
    print(batch)


def input_fn(batch_size=3):
    return files.interleave(tf.data.TFRecordDataset, cycle_length=2).batch(batch_size)
"""

# absl's None default for a flag marked required is no value to lay out.
REQUIRED_NONE = """\
import tensorflow as tf
from absl import flags

flags.DEFINE_string("pattern", None, "Files.")
flags.mark_flag_as_required("pattern")
FLAGS = flags.FLAGS


def input_fn():
    return tf.data.Dataset.list_files(FLAGS.pattern, shuffle=False).batch(2)
"""


def run(*args):
    return subprocess.run([checks.TFDIST, *args], capture_output=True, timeout=300)


def write(name, text):
    with open(name, "w") as f:
        f.write(text)
    return name


def layout(what, *args):
    proc = run("layout", "--format", "json", *args)
    err = proc.stderr.decode("utf-8", "replace")
    check(proc.returncode == 0, f"{what}: exit {proc.returncode}\n{err}")
    return json.loads(proc.stdout) if proc.returncode == 0 else {}


def said(what, out, *words):
    text = "\n".join(out.get("assumptions", []))
    for word in words:
        check(word in text, f"{what}: the assumptions lack {word!r}:\n{text}")


def entry(out):
    return out.get("input", {}).get("entry", "")


def chain_of(out):
    """The chain without its #@ markers."""
    lines = out.get("input", {}).get("chain", "").splitlines()
    return "".join(line.split("  #@")[0] for line in lines)


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="tfdist-scripts-")
    try:
        os.chdir(tmp)
        os.mkdir("data")
        subprocess.run([checks.TFDIST, "gen", "-o", "data/train", "--files", "2", "--records",
                        "10", "--size", "20-40"], check=True, capture_output=True)
        steps = ("--steps", "3")

        # Laid out from the module's own call: its pattern, its batch size,
        # its flag's None (forever), no --define.
        out = layout("distributed at load time", "--python",
                     write("train.py", DISTRIBUTED_AT_LOAD), "--replicas", "2", *steps)
        check(entry(out) == "experimental_distribute_dataset(...) at line 25 (dist_ds), as the "
              "file runs it", f"the entry: {entry(out)!r}")
        check(chain_of(out).endswith(".repeat().batch(8)") and 'list_files("data/*"' in
              chain_of(out), f"the chain: {chain_of(out)!r}")
        check(out.get("api") == "distribute", f"the api: {out.get('api')}")
        said("distributed at load time", out,
             "FLAGS.num_epochs = None (its DEFINE default)",
             # The strategy's three devices are not the layout's topology.
             "train.py:24: MirroredStrategy(): laid out on tfdist's topology, --workers 1 and "
             "--replicas 2",
             # The work of parse() that a run does not do.
             "map(parse): tfdist runs its parse_single_example only; left out: "
             "tf.io.decode_raw (line 11), tf.cast (line 12), tf.reshape (line 13)",
             # The endless loop: bounded and said.
             "the trace stopped running the file there")
        # The same chain, given by hand, lays out the same steps.
        direct = layout("the chain by hand", chain_of(out), "--replicas", "2", *steps)
        check(out.get("steps") == direct.get("steps") and direct.get("steps"),
              "the traced layout differs from its chain's")
        # take and run too (the header goes to stderr for take).
        proc = run("take", "--python", "train.py", "-n", "2")
        check(proc.returncode == 0 and b"left out: tf.io.decode_raw" in proc.stderr,
              f"take: exit {proc.returncode}\n{proc.stderr[-2000:]!r}")

        # The loop alone (no flag): bounded and said, not a bare StopIteration.
        write("loop.py", DISTRIBUTED_AT_LOAD.replace("repeat(FLAGS.num_epochs)", "repeat(None)"))
        proc = run("layout", "--python", "loop.py", *steps)
        check(proc.returncode == 0 and b"StopIteration" not in proc.stderr + proc.stdout and
              b"loop.py:30: a loop of the file asks a dataset's iterator for more than 100 "
              b"elements" in proc.stdout, f"the loop: exit {proc.returncode}\n{proc.stderr!r}")

        # Two distributed datasets: which ones, and how to pick one.
        write("two.py", TWO_DISTRIBUTED)
        proc = run("layout", "--python", "two.py", *steps)
        err = proc.stderr.decode("utf-8", "replace")
        check(proc.returncode == 2 and "two.py distributes 2 datasets while it loads: "
              "train_dist (experimental_distribute_dataset(...) at line 13), eval_dist "
              "(experimental_distribute_dataset(...) at line 14)" in err and
              "--entry train_dist" in err, f"two datasets: exit {proc.returncode}\n{err}")
        out = layout("--entry a global", "--python", "two.py", "--entry", "eval_dist", *steps)
        check(chain_of(out).endswith("flat_map(tfrecord).batch(2)"),
              f"--entry eval_dist: {chain_of(out)!r}")
        out = layout("--entry a line", "--python", "two.py", "--entry", "13", *steps)
        check(chain_of(out).endswith(".repeat().batch(8)"), f"--entry 13: {chain_of(out)!r}")
        # An entry function wins: its arguments are asked for.
        proc = run("layout", "--python", "two.py", "--entry", "make_dataset")
        check(proc.returncode == 2 and b"make_dataset() needs pattern, batch_size, training"
              in proc.stderr, f"--entry make_dataset: exit {proc.returncode}\n{proc.stderr!r}")
        out = layout("--entry with defines", "--python", "two.py", "--entry", "make_dataset",
                     "--define", 'pattern="data/*"', "--define", "batch_size=3",
                     "--define", "training=False")
        check(chain_of(out).endswith("batch(3)") and entry(out).startswith("make_dataset("),
              f"--entry make_dataset: {entry(out)!r} {chain_of(out)!r}")

        # distribute_datasets_from_function at the top level, then a peek.
        out = layout("from a function at load time", "--python",
                     write("fn.py", FROM_FUNCTION_AT_LOAD), "--workers", "2")
        check(out.get("api") == "from-function" and entry(out).startswith(
            "distribute_datasets_from_function(dataset_fn) at line 14 (dist)"),
            f"from-function: {out.get('api')} {entry(out)!r}")
        check(".shard(ctx.num_input_pipelines, ctx.input_pipeline_id)" in chain_of(out),
              f"from-function: {chain_of(out)!r}")

        # model.fit(ds) at the top level: the dataset fitted, not the one evaluated.
        out = layout("Keras fit at load time", "--python", write("fit.py", KERAS_FIT))
        check(entry(out) == "model.fit(...) at line 11 (ds), as the file runs it" and
              chain_of(out).endswith(".batch(4)"), f"fit: {entry(out)!r} {chain_of(out)!r}")

        # A peek: one batch, then the file loads on; a function named like
        # an input function wins over a dataset the file only iterates.
        out = layout("a peek at a batch", "--python", write("peek.py", PEEK))
        check(entry(out) == "input_fn()" and chain_of(out).endswith(".batch(3)"),
              f"a peek: {entry(out)!r} {chain_of(out)!r}")

        # A required flag's None default: still a define to give.
        proc = run("layout", "--python", write("required.py", REQUIRED_NONE))
        check(proc.returncode == 2 and b"--define FLAGS.pattern=VALUE" in proc.stderr,
              f"a required flag: exit {proc.returncode}\n{proc.stderr!r}")
    finally:
        os.chdir("/")
        shutil.rmtree(tmp)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
