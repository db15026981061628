#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# --python: input functions in the shapes public projects write them
# (tests/python/*.py), pasted as they are with --define only, give the
# layout of the equivalent method chain; run --device cpu delivers it;
# mistakes name the user's file and line, with exit 2.
# Usage: python_trace_test.py TFDIST
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import checks
from checks import check, tfdist

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "testdata", "python")


def fixture(name):
    return os.path.join(FIXTURES, name)


def layout_json(*args):
    """The layout as JSON, without what only a trace adds."""
    return checks.layout_parts(*args)[0]


def same_layout(name, python_args, chain, topology):
    return checks.same_layout(name, ["--python", *python_args, *topology], [chain, *topology])[0]


def traced_json(*args):
    return json.loads(tfdist("layout", "--format", "json", *args).stdout)


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="tfdist-python-")
    try:
        os.chdir(tmp)
        os.mkdir("data")
        tfdist("gen", "-o", "data/train", "--files", "4", "--records", "10", "--size", "20-40")
        tfdist("gen", "-o", "data/gz", "--files", "4", "--records", "9", "--size", "20-40",
               "--output-compression", "gzip")
        files = [f"data/train-0000{i}-of-00004.tfrecord" for i in range(4)]
        files_py = json.dumps(files)
        check_guide()
        check_official(files_py)
        check_class_reader()
        check_define_hints()
        check_bert(files_py)
        check_tfx()
        check_run(files_py)
        check_errors(tmp)
        check_entries()
        check_worker_traces()
        check_ops(tmp)
        check_seeds()
    finally:
        os.chdir("/")
        shutil.rmtree(tmp)
    return checks.finish()


def check_guide():
    # The distributed input guide's dataset_fn: an input context, so from-function.
    topology = ("--workers", "2", "--replicas", "2")
    chain = ("from_tensors(([1.0], [1.0])).repeat(64).batch(16)"
             ".shard(ctx.num_input_pipelines, ctx.input_pipeline_id)"
             ".batch(ctx.get_per_replica_batch_size(16)).prefetch(2)")
    same_layout("guide", [fixture("guide_dataset_fn.py")], chain,
                topology + ("--api", "from-function"))
    out = traced_json("--python", fixture("guide_dataset_fn.py"), *topology)
    check(out["api"] == "from-function", "guide: the input context makes it from-function")
    # The module distributes it as it loads: laid out from that call.
    check(out["input"]["entry"] == "distribute_datasets_from_function(dataset_fn) at line 18 "
          "(dist_dataset), as the file runs it", f"guide: entry {out['input']['entry']}")
    out = traced_json("--python", fixture("guide_dataset_fn.py"), "--entry", "dataset_fn",
                      *topology)
    check(out["input"]["entry"] == "dataset_fn(input_context=<input context>)",
          f"guide: --entry wins: {out['input']['entry']}")
    # 16 is not divisible by 3 replicas in sync: TensorFlow's error, at the user's line.
    proc = tfdist("layout", "--python", fixture("guide_dataset_fn.py"), "--replicas", "3",
                  expect=2)
    check("guide_dataset_fn.py:10: ValueError: The `global_batch_size` 16 is not divisible by "
          "`num_replicas_in_sync` 3" in proc.stderr, f"guide: indivisible: {proc.stderr}")


def check_official(files_py):
    topology = ("--workers", "2")
    parse = ('parse_single_example({"id": FixedLenFeature([], tf.int64, default_value=-1), '
             '"label": FixedLenFeature([], tf.int64, default_value=-1), '
             '"data": FixedLenFeature([], tf.string, default_value=""), '
             '"image/object/bbox/xmin": VarLenFeature(tf.float32), '
             '"image/object/bbox/ymin": VarLenFeature(tf.float32), '
             '"image/object/bbox/xmax": VarLenFeature(tf.float32), '
             '"image/object/bbox/ymax": VarLenFeature(tf.float32)})')
    # Evaluation: no shuffles, files given.
    chain = (f"from_tensor_slices({files_py}).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)"
             ".interleave(tfrecord, cycle_length=10, num_parallel_calls=AUTOTUNE)"
             f".map({parse}, num_parallel_calls=AUTOTUNE).batch(4).prefetch(AUTOTUNE)")
    defines = ["--define", "is_training=False", "--define", "data_dir='data'",
               "--define", "batch_size=4", "--define", f"filenames={files_py}"]
    same_layout("official eval", [fixture("official_style.py"), *defines], chain,
                topology + ("--api", "from-function"))
    # Training: the file names from data_dir, shuffled by seed 7; records
    # shuffled unseeded (tfdist's --seed on both sides), repeated forever.
    chain = (f"from_tensor_slices({files_py}).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)"
             ".shuffle(4, seed=7)"
             ".interleave(tfrecord, cycle_length=10, num_parallel_calls=AUTOTUNE)"
             ".shuffle(10000).repeat()"
             f".map({parse}, num_parallel_calls=AUTOTUNE).batch(4, drop_remainder=True)"
             ".prefetch(AUTOTUNE)")
    defines = ["--define", "is_training=True", "--define", "data_dir='data'",
               "--define", "batch_size=4", "--define", "drop_remainder=True"]
    same_layout("official train", [fixture("official_style.py"), *defines], chain,
                topology + ("--api", "from-function", "--steps", "12", "--seed", "5"))


def check_class_reader():
    topology = ("--workers", "2")
    chain = ('list_files("data/train-*", shuffle=False)'
             ".shard(ctx.num_input_pipelines, ctx.input_pipeline_id)"
             ".interleave(tfrecord, cycle_length=2, num_parallel_calls=AUTOTUNE, deterministic=True)"
             ".prefetch(1)"
             '.map(parse_single_example({"id": FixedLenFeature((), tf.int64, -1), '
             '"label": FixedLenFeature((), tf.int64, -1)}), num_parallel_calls=AUTOTUNE)'
             ".batch(3).prefetch(AUTOTUNE)")
    defines = ["--define", "file_pattern='data/train-*'", "--define", "is_training=False",
               "--define", 'params={"batch_size": 3, "drop_remainder": False}']
    same_layout("class reader", [fixture("class_reader.py"), *defines], chain,
                topology + ("--api", "from-function"))
    # Without the constructor's arguments, self has only what --define gives.
    out = traced_json("--python", fixture("class_reader.py"), "--entry", "InputReader.__call__",
                      "--define", "self._file_pattern='data/train-*'",
                      "--define", "self._is_training=False",
                      "--define", 'params={"batch_size": 3, "drop_remainder": False}',
                      *topology)
    check(any("InputReader.__init__ was not run" in a for a in out["assumptions"]),
          f"class reader: __init__ not run is said: {out['assumptions']}")
    proc = tfdist("layout", "--python", fixture("class_reader.py"), "--define",
                  'params={"batch_size": 3, "drop_remainder": False}', expect=2)
    check("self._file_pattern is not set" in proc.stderr or "_file_pattern" in proc.stderr,
          f"class reader: a missing attribute is named: {proc.stderr}")


def check_define_hints():
    """A --define of text where a Python expression goes: the command the
    hint prints, pasted into a shell as shown, passes the text."""
    for text in ("data/train-*", "data/tr\"ain-*", "data/it's-*"):
        args = ["layout", "--python", fixture("class_reader.py"), "--define",
                f"file_pattern={text}", "--define", "is_training=False",
                "--define", 'params={"batch_size": 3, "drop_remainder": False}']
        proc = tfdist(*args, expect=2)
        hint = proc.stderr.rsplit("quote it as a Python string: ", 1)
        check(len(hint) == 2, f"--define {text}: no quoting hint: {proc.stderr}")
        if len(hint) != 2:
            continue
        fixed = shlex.split(hint[1].strip())
        check(len(fixed) == 2 and fixed[0] == "--define",
              f"--define {text}: the hint is not one --define: {hint[1]}")
        again = subprocess.run([checks.TFDIST, *args[:3], *fixed, *args[5:], "--format", "json"],
                               capture_output=True, text=True, timeout=120)
        check("SyntaxError" not in again.stderr and "quote it" not in again.stderr,
              f"--define {text}: the hinted {hint[1].strip()} fails again: {again.stderr}")
        if text == "data/train-*":
            check(again.returncode == 0, f"--define {text} as hinted: exit {again.returncode}")


def check_bert(files_py):
    topology = ("--workers", "2", "--steps", "6")
    parse = ('parse_single_example({"id": FixedLenFeature([1], tf.int64), '
             '"label": FixedLenFeature([1], tf.int64)})')
    chain = f"tfrecord({files_py}).repeat().map({parse}).batch(8, drop_remainder=True)"
    defines = ["--define", f"input_files={files_py}", "--define", "is_training=False",
               "--define", "max_seq_length=128", "--define", 'params={"batch_size": 8}']
    out = same_layout("bert eval", [fixture("bert_builder.py"), *defines], chain, topology)
    check(out["policy"]["applied"] == "FILE", "bert eval: FILE sharding")
    traced = traced_json("--python", fixture("bert_builder.py"), *defines, *topology)
    check(traced["input"]["entry"].startswith("input_fn_builder(") and
          " -> input_fn(params={'batch_size': 8})" in traced["input"]["entry"],
          f"bert: the builder and the function it returns are called: {traced['input']['entry']}")
    # Training: the names repeated and shuffled, a sloppy parallel interleave.
    chain = (f"from_tensor_slices({files_py}).repeat().shuffle(4)"
             ".interleave(tfrecord, cycle_length=4, block_length=1, num_parallel_calls=4, "
             "deterministic=False).shuffle(100)"
             f".map({parse}).batch(8, drop_remainder=True)")
    defines[3] = "is_training=True"
    traced = traced_json("--python", fixture("bert_builder.py"), *defines, *topology,
                         "--seed", "3")
    check(any("deterministic=False" in a for a in traced["assumptions"]),
          "bert train: a sloppy interleave is said")
    check(traced["input"]["chain"].replace("  #@", "#@").count("#@") == 7,
          f"bert train: 7 ops: {traced['input']['chain']}")


def check_tfx():
    topology = ("--workers", "2")
    parse = ('{"id": FixedLenFeature([], tf.int64), "label": FixedLenFeature([], tf.int64)}')
    # make_batched_features_dataset as TensorFlow builds it; the label pop is
    # a map, which hides the batch size from tf.distribute (legacy split).
    chain = ('list_files("data/gz-*", shuffle=False)'
             '.interleave(tfrecord(compression_type="GZIP"), cycle_length=1, block_length=1, '
             'num_parallel_calls=1, deterministic=True)'
             f".batch(5).apply(parse_example_dataset({parse}, num_parallel_calls=2))"
             '.map(opaque("pop label")).prefetch(AUTOTUNE)')
    defines = ["--define", "file_pattern='data/gz-*'", "--define", "batch_size=5",
               "--define", "num_epochs=1"]
    out = same_layout("tfx", [fixture("tfx_gzip.py"), *defines], chain, topology)
    check(out["split"] == "legacy", f"tfx: the label map hides the batch size: {out['split']}")
    check(out["policy"]["applied"] == "FILE", "tfx: FILE sharding over the GZIP files")
    # Without the label map, parse_example_dataset keeps the batch size static.
    out = layout_json(chain.replace('.map(opaque("pop label"))', ""), *topology)
    check(out["split"] == "batch-sizes", f"tfx: parse_example_dataset keeps it: {out['split']}")


def run_records(*args):
    report = json.loads(tfdist("run", "--device", "cpu", "--json", *args).stdout)
    return report


def check_run(files_py):
    # The three done-when functions under run --device cpu.
    report = run_records("--python", fixture("guide_dataset_fn.py"), "--all-workers",
                         "--workers", "2", "--replicas", "2")
    check(report["records"] == 64, f"run guide: 64 records, got {report['records']}")
    defines = ["--define", "is_training=False", "--define", "data_dir='data'",
               "--define", "batch_size=4", "--define", f"filenames={files_py}"]
    report = run_records("--python", fixture("official_style.py"), *defines, "--all-workers",
                         "--workers", "2")
    check(report["records"] == 40, f"run official: 40 records, got {report['records']}")
    check(report["format"] == "features", f"run official: parsed into columns: {report['format']}")
    check(report["input"]["python"].endswith("official_style.py"), "run official: input said")
    defines = ["--define", f"input_files={files_py}", "--define", "is_training=False",
               "--define", "max_seq_length=128", "--define", 'params={"batch_size": 8}']
    report = run_records("--python", fixture("bert_builder.py"), *defines, "--steps", "4")
    check(report["records"] == 32, f"run bert: 4 steps of 8, got {report['records']}")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def check_errors(tmp):
    flags = write("flags.py", "import tensorflow as tf\nfrom absl import flags\n"
                              "FLAGS = flags.FLAGS\n\n"
                              "def input_fn(params):\n"
                              "  ds = tf.data.Dataset.list_files(FLAGS.pattern, shuffle=False)\n"
                              "  return ds.interleave(tf.data.TFRecordDataset).batch(params)\n")
    cases = [
        (["--python", flags], "flags.py:5: input_fn() needs params: give it with --define "
                              "params=VALUE"),
        (["--python", flags, "--define", "params=4"],
         "flags.py:6: FLAGS.pattern is an argument of list_files(), but nothing defines it; "
         "give it with --define FLAGS.pattern=VALUE"),
        (["--python", flags, "--define", "params=0", "--define", "FLAGS.pattern='data/train-*'"],
         "flags.py:7: batch(): batch_size must be greater than zero; got 0"),
        (["--python", write("name.py", "def dataset_fn():\n  return data_set\n")],
         "name.py:2: name 'data_set' is not defined; give it a value with --define "
         "data_set=VALUE"),
        (["--python", write("zip.py", "import tensorflow as tf\ndef dataset_fn():\n"
                                      "  a = tf.data.Dataset.range(3)\n"
                                      "  return tf.data.Dataset.zip((a, a))\n")],
         "zip.py:4: Dataset.zip(): pairs the elements of several datasets"),
        (["--python", write("window.py", "import tensorflow as tf\ndef dataset_fn():\n"
                                         "  return tf.data.Dataset.range(3).window(2)\n")],
         "window.py:3: Dataset.window(): "),
        (["--python", write("syntax.py", "def f(:\n  pass\n")], "syntax.py:1: SyntaxError"),
        (["--python", write("slow.py", "import time\ndef dataset_fn():\n  time.sleep(60)\n"),
          "--trace-timeout", "0.5"],
         "slow.py:3: the trace did not finish within 0.5 s"),
        (["--python", write("exits.py", "import sys\nprint('loading')\nsys.exit(1)\n")],
         "exits.py:3: the file exits while it is loaded"),
        (["--python", "missing.py"], "missing.py: cannot read the input function file"),
        (["--python", flags, "--entry", "nothing"], "--entry nothing: no such function"),
        (["--python", flags, "--define", "bad name=3"], "--define bad name=3: expected NAME=EXPR"),
        (["--python", flags, "range(3)"], "give the pipeline one way"),
        (["--define", "x=1", "range(3)"], "--entry and --define go with --python"),
        (["--python", flags, "--define", "params=(", "--define", "FLAGS.pattern='x'"],
         "--define params=(: SyntaxError"),
        (["--python", write("returns.py", "def dataset_fn():\n  return [1, 2]\n")],
         "dataset_fn() returned a list, not a tf.data.Dataset"),
        (["--python", write("derived.py", "import tensorflow as tf\nfrom absl import flags\n"
                                          "FLAGS = flags.FLAGS\n"
                                          "def input_fn():\n"
                                          "  ds = tf.data.Dataset.range(8)\n"
                                          "  if FLAGS.image_size <= 32:\n"
                                          "    ds = ds.repeat(2)\n"
                                          "  return ds\n")],
         "derived.py:6: (FLAGS.image_size <= 32), computed from FLAGS.image_size, decides a "
         "branch, but nothing defines it; give it with --define FLAGS.image_size=VALUE"),
        (["--python", write("called.py", "import tensorflow as tf\nimport mylib\n"
                                         "def input_fn():\n"
                                         "  return tf.data.Dataset.range(8).batch(mylib.size())\n")],
         "--define 'mylib.size=lambda *args, **kwargs: VALUE'"),
        (["--python", write("stdlib.py", "import dataclasses\nclass Aug:\n  pass\n"
                                         "@dataclasses.dataclass\nclass Config:\n"
                                         "  aug: list = []\n")],
         "stdlib.py:4: ValueError: mutable default"),
        (["--python", write("helpers.py", "import tensorflow as tf\n"
                                          "def build(x):\n  return x\n"
                                          "def flip(image):\n  return image\n")],
         "build is the function tfdist picked; the file also defines flip: name the input "
         "function with --entry"),
    ]
    for args, want in cases:
        proc = tfdist("take", *args, expect=2)
        check(want in proc.stderr, f"take {args}: expected {want!r} in\n{proc.stderr}")
    # The program's own output is shown when it fails.
    proc = tfdist("take", "--python", "exits.py", expect=2)
    check("loading" in proc.stderr, f"the output of a failed trace is shown: {proc.stderr}")
    # JSON errors on stdout too.
    proc = tfdist("layout", "--python", "zip.py", "--json", expect=2)
    check(json.loads(proc.stdout)["error"]["code"] == "INVALID_ARGUMENT", "json error")
    # Without python3 the rest works, --python is a clear error.
    env = dict(os.environ, TFDIST_PYTHON="/nonexistent/python3")
    proc = subprocess.run([checks.TFDIST, "take", "--python", flags], capture_output=True,
                          text=True, env=env, timeout=60)
    check(proc.returncode == 2 and "needs /nonexistent/python3, which was not found" in proc.stderr,
          f"no python3: {proc.returncode} {proc.stderr}")
    # An interpreter that is not a Python (and exits before reading the
    # request): exit 2, not a SIGPIPE.
    proc = subprocess.run([checks.TFDIST, "take", "--python", flags], capture_output=True,
                          text=True, env=dict(os.environ, TFDIST_PYTHON="/bin/true"), timeout=60)
    check(proc.returncode == 2 and "is /bin/true a Python 3 interpreter?" in proc.stderr,
          f"not a Python: {proc.returncode} {proc.stderr}")
    proc = subprocess.run([checks.TFDIST, "take", "range(2)"], capture_output=True, text=True,
                          env=env, timeout=60)
    check(proc.returncode == 0 and proc.stdout == "0\n1\n", "without python3 chains still run")
    # The interpreter's pipes: tfdist started without stdin; a process the
    # code leaves behind holding stdout does not hold up the answer.
    write("ok.py", "import tensorflow as tf\ndef input_fn():\n  return tf.data.Dataset.range(2)\n")
    proc = subprocess.run(f"exec {checks.TFDIST} take --python ok.py <&-", shell=True,
                          capture_output=True, text=True, timeout=60)
    check(proc.returncode == 0 and proc.stdout == "0\n1\n", f"stdin closed: {proc.stderr}")
    write("daemon.py", "import subprocess, tensorflow as tf\n"
                       "subprocess.Popen(['sleep', '30'], start_new_session=True)\n"
                       "def input_fn():\n  return tf.data.Dataset.range(2)\n")
    start = time.monotonic()
    proc = tfdist("take", "--python", "daemon.py")
    check(time.monotonic() - start < 20, "a daemon holding stdout does not hold up the trace")
    # Standard input.
    proc = subprocess.run([checks.TFDIST, "take", "--python", "-"], input=(
        "import tensorflow as tf\ndef input_fn():\n  return tf.data.Dataset.range(3).map("
        "lambda x: x * 2)\n"), capture_output=True, text=True, timeout=60)
    check(proc.returncode == 0 and proc.stdout == "0\n1\n2\n" and "<stdin>" in proc.stderr,
          f"--python -: {proc.returncode} {proc.stdout!r} {proc.stderr!r}")


def check_entries():
    # Inherited methods are found and the most derived class's is picked; a
    # context parameter of any name ending in _context is the input context.
    write("classes.py", "import tensorflow as tf\n"
                        "class Base:\n"
                        "  def input_fn(self, params):\n"
                        "    return self.make_source().batch(params['batch_size'])\n"
                        "class Reader(Base):\n"
                        "  def make_source(self):\n"
                        "    return tf.data.Dataset.list_files('data/train-*', shuffle=False)"
                        ".interleave(tf.data.TFRecordDataset)\n"
                        "def pad_to_fixed_size(data, pad_value, output_shape):\n"
                        "  return data\n")
    out = traced_json("--python", "classes.py", "--define", "params={'batch_size': 4}")
    check(out["input"]["entry"].startswith("Reader.input_fn("), f"entry: {out['input']['entry']}")
    out = traced_json("--python", "classes.py", "--entry", "Reader.input_fn",
                      "--define", "params={'batch_size': 4}")
    check(len(out["steps"]) == 10, "an inherited method named with --entry")
    write("context.py", "import tensorflow as tf\n"
                        "def create_dataset(batch_size, input_pipeline_context=None):\n"
                        "  ds = tf.data.Dataset.list_files('data/train-*', shuffle=False)\n"
                        "  if input_pipeline_context and "
                        "input_pipeline_context.num_input_pipelines > 1:\n"
                        "    ds = ds.shard(input_pipeline_context.num_input_pipelines,\n"
                        "                  input_pipeline_context.input_pipeline_id)\n"
                        "  return ds.interleave(tf.data.TFRecordDataset).batch(batch_size)\n")
    out = traced_json("--python", "context.py", "--define", "batch_size=4", "--workers", "2",
                      "--label", "ref")
    check(out["api"] == "from-function" and
          ".shard(ctx.num_input_pipelines, ctx.input_pipeline_id)" in out["input"]["chain"],
          f"input_pipeline_context: {out['input']['chain']}")
    # Horovod: a worker per process, sharded by rank.
    write("horovod.py", "import tensorflow as tf\nimport horovod.tensorflow as hvd\n"
                        "def input_fn():\n  hvd.init()\n"
                        "  ds = tf.data.Dataset.list_files('data/train-*', shuffle=False)\n"
                        "  ds = ds.shard(hvd.size(), hvd.rank())\n"
                        "  return ds.interleave(tf.data.TFRecordDataset).batch(4)\n")
    out = traced_json("--python", "horovod.py", "--workers", "2", "--label", "ref")
    files = [sorted(w["files"]) for w in out["workers"]]
    check(out["api"] == "from-function" and files == [
        ["data/train-00000-of-00004.tfrecord", "data/train-00002-of-00004.tfrecord"],
        ["data/train-00001-of-00004.tfrecord", "data/train-00003-of-00004.tfrecord"]],
        f"horovod: each rank its own files: {files}")


def check_worker_traces():
    # The code computes with the worker's index (a slice of the file list):
    # the function is called once per worker, each its own pipeline.
    write("ctxmath.py", "import tensorflow as tf\n"
                        "def dataset_fn(ctx):\n"
                        "  files = sorted(tf.io.gfile.glob('data/train-*'))\n"
                        "  mine = files[ctx.input_pipeline_id::ctx.num_input_pipelines]\n"
                        "  return tf.data.TFRecordDataset(mine).batch(4)\n")
    out = traced_json("--python", "ctxmath.py", "--workers", "2", "--label", "ref")
    files = [w["files"] for w in out["workers"]]
    check(files == [["data/train-00000-of-00004.tfrecord", "data/train-00002-of-00004.tfrecord"],
                    ["data/train-00001-of-00004.tfrecord", "data/train-00003-of-00004.tfrecord"]],
          f"per-worker traces: each worker its files: {files}")
    check(any("called once per worker (2 calls)" in a for a in out["assumptions"]),
          f"per-worker traces said: {out['assumptions']}")
    check(not any("does not shard" in w for w in out["warnings"]),
          f"per-worker pipelines are the function's sharding: {out['warnings']}")
    chain = ('tfrecord(["data/train-00001-of-00004.tfrecord", '
             '"data/train-00003-of-00004.tfrecord"]).batch(4)')
    take = tfdist("take", "--python", "ctxmath.py", "--workers", "2", "--worker", "1", "--label",
                  "ref").stdout
    check(take == tfdist("take", chain, "--label", "ref").stdout, "take --worker 1: its pipeline")
    report = json.loads(tfdist("run", "--device", "cpu", "--json", "--python", "ctxmath.py",
                               "--workers", "2", "--all-workers").stdout)
    check([r["records"] for r in report["replicas"]] == [20, 20], "run: each worker its records")
    tfdist("layout", "--python", "ctxmath.py", "--workers", "2", "--api", "distribute", expect=2)
    # Each worker's trace starts afresh: a flag the code changes, a name
    # built from the index.
    write("fresh.py", "import tensorflow as tf\nfrom absl import flags\n"
                      "flags.DEFINE_integer('batch_size', 8, 'global')\nFLAGS = flags.FLAGS\n"
                      "def input_fn(input_context):\n"
                      "  FLAGS.batch_size = FLAGS.batch_size // 2\n"
                      "  files = tf.io.gfile.glob(f'data/train-0000{input_context.input_pipeline_id}*')\n"
                      "  return tf.data.TFRecordDataset(files).batch(FLAGS.batch_size)\n")
    out = traced_json("--python", "fresh.py", "--workers", "2", "--label", "ref")
    check([w["files"] for w in out["workers"]] == [["data/train-00000-of-00004.tfrecord"],
                                                   ["data/train-00001-of-00004.tfrecord"]],
          f"per-worker: names built from the index: {[w['files'] for w in out['workers']]}")
    check({len(b["elements"]) for s in out["steps"][:2] for b in s["batches"]} == {4},
          "per-worker: each trace sees the flag as the file sets it")


def take(*args):
    return tfdist("take", *args).stdout.split()


def check_seeds():
    # tf.random.set_seed in the code: seedless shuffles take their op seeds
    # from its counter as the program makes them, eager random ops included.
    write("seeds.py", "import tensorflow as tf\n"
                      "tf.random.set_seed(1)\n"
                      "noise = tf.random.uniform([3])\n"
                      "def input_fn():\n"
                      "  ds = tf.data.Dataset.range(10).shuffle(10)\n"
                      "  return ds.shuffle(10, seed=2)\n")
    traced = take("--python", "seeds.py")
    # set_seed(1) draws 577090037 (the uniform's), then 271041745.
    direct = take("--global-seed", "1",
                  "range(10).shuffle(10, seed=271041745).shuffle(10, seed=2)")
    check(traced == direct, f"set_seed: the traced order {traced} is the chain's {direct}")
    # Without set_seed in the code, --global-seed starts the counter; the
    # offset skips draws the trace does not see.
    write("noseed.py", "import tensorflow as tf\n"
                       "def input_fn():\n"
                       "  return tf.data.Dataset.range(10).shuffle(10)\n")
    traced = take("--python", "noseed.py", "--global-seed", "1", "--op-seed-offset", "1")
    direct = take("--global-seed", "1", "range(10).shuffle(10, seed=271041745)")
    check(traced == direct, f"--global-seed with --python: {traced} vs {direct}")
    proc = tfdist("take", "--python", "noseed.py", "--seed", "4")
    check("TensorFlow's order differs on every run" in proc.stderr,
          f"an unseeded shuffle is said: {proc.stderr}")
    # A seed TensorFlow cannot know here: said.
    write("flagseed.py", "import tensorflow as tf\n"
                         "import config\n"
                         "tf.random.set_seed(config.SEED)\n"
                         "def input_fn():\n"
                         "  return tf.data.Dataset.range(4).shuffle(4)\n")
    out = traced_json("--python", "flagseed.py")
    check(any("tf.random.set_seed(...) of a value tfdist cannot know" in a
              for a in out["assumptions"]), f"unknown global seed: {out['assumptions']}")


def check_ops(tmp):
    # Options set in the code: the policy from with_options, said as an assumption.
    write("options.py", "import tensorflow as tf\n"
                        "def input_fn():\n"
                        "  ds = tf.data.Dataset.list_files('data/train-*', shuffle=False)\n"
                        "  ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=2).batch(4)\n"
                        "  options = tf.data.Options()\n"
                        "  options.experimental_distribute.auto_shard_policy = \\\n"
                        "      tf.data.experimental.AutoShardPolicy.DATA\n"
                        "  return ds.with_options(options)\n")
    out = traced_json("--python", "options.py", "--workers", "2")
    check(out["policy"]["applied"] == "DATA" and out["policy"]["requested"] == "DATA",
          f"with_options DATA: {out['policy']}")
    check(any("options.py:8: with_options(): auto_shard_policy = DATA" in a
              for a in out["assumptions"]), f"with_options said: {out['assumptions']}")
    out = traced_json("--python", "options.py", "--workers", "2", "--policy", "FILE")
    check(out["policy"]["applied"] == "FILE", "--policy overrides the code's options")
    out = layout_json('list_files("data/train-*", shuffle=False).interleave(tfrecord).batch(4)',
                      "--workers", "2", "--policy", "tf.data.experimental.AutoShardPolicy.DATA")
    check(out["policy"]["applied"] == "DATA", "--policy takes TensorFlow's spelling")
    # The ops a layout honours: from Python and as a chain.
    write("ops.py", "import tensorflow as tf\n"
                    "def keep(x):\n  return x > 2\n"
                    "def input_fn():\n"
                    "  ds = tf.data.TFRecordDataset(tf.io.gfile.glob('data/train-*'))\n"
                    "  ds = ds.apply(tf.data.experimental.ignore_errors()).filter(keep)\n"
                    "  ds = ds.batch(3).unbatch().padded_batch(4, padded_shapes=[None])\n"
                    "  return ds.rebatch(5).cache().repeat(2)\n")
    out = traced_json("--python", "ops.py", "--label", "ref")
    chain = out["input"]["chain"]
    for op in (".ignore_errors()", '.filter(opaque("keep"))', ".unbatch()",
               ".padded_batch(4)", ".rebatch(5)", ".cache()"):
        check(op in chain, f"ops: {op} in the chain: {chain}")
    check(any("filter(keep)" in w and "upper bounds" in w for w in out["warnings"]),
          f"filter warns that counts are upper bounds: {out['warnings']}")
    check(any("tf.io.gfile.glob('data/train-*'): 4 names, in the folder listing's order" in a
              for a in out["assumptions"]), f"glob said: {out['assumptions']}")
    elements = [e for s in out["steps"] for b in s["batches"] for e in b["elements"]]
    check(len(elements) == 80, f"ops: 2 passes of 40 records, got {len(elements)}")
    # concatenate under FILE: each joined dataset's files are sharded.
    joined = ('list_files("data/train-*", shuffle=False).interleave(tfrecord)'
              '.concatenate(list_files("data/gz-*", shuffle=False)'
              '.interleave(tfrecord(compression_type="GZIP")))')
    out = layout_json(joined, "--workers", "2", "--label", "ref")
    check(out["policy"]["applied"] == "FILE", f"concatenate: FILE applies: {out['policy']}")
    got = [sorted({e.rsplit(":", 1)[0].split("/")[1] for e in w["elements"]})
           for w in out["workers"]]
    want = [sorted(f"{kind}-0000{i}-of-00004.tfrecord{'.gz' if kind == 'gz' else ''}"
                   for kind in ("train", "gz") for i in (w, w + 2)) for w in (0, 1)]
    check(got == want, f"concatenate: each worker reads its share of both: {got}")
    proc = tfdist("layout", 'list_files("data/train-*").interleave(tfrecord).concatenate('
                  'tfrecord("data/gz-00000-of-00004.tfrecord.gz", compression_type="GZIP"))',
                  "--workers", "2", expect=2)
    check("concatenate()'s dataset: FILE sharding needs at least 2 files for 2 workers; found 1"
          in proc.stderr, f"concatenate: a joined dataset without enough files: {proc.stderr}")
    # What real code does around the pipeline: project modules that are not
    # there (a base class, a decorator), configs read as attributes, TF1's
    # one-shot iterator, options groups of newer TensorFlow.
    write("robust.py", "import gin\nimport numpy as np\nimport tensorflow as tf\n"
                       "from official.core import input_reader\n\n"
                       "class Decoder(input_reader.Decoder):\n"
                       "  def decode(self, record):\n    return record\n\n"
                       "@gin.configurable\n"
                       "def input_fn(params, mode=tf.estimator.ModeKeys.TRAIN):\n"
                       "  ds = tf.data.TFRecordDataset(tf.io.gfile.glob(params.data.pattern))\n"
                       "  ds = ds.map(Decoder(params).decode)\n"
                       "  options = tf.data.Options()\n"
                       "  options.threading.private_threadpool_size = 4\n"
                       "  options.autotune.enabled = True\n"
                       "  ds = ds.with_options(options)\n"
                       "  if mode == tf.estimator.ModeKeys.TRAIN:\n"
                       "    ds = ds.repeat(2)\n"
                       "  ds = ds.batch(params['data']['batch_size'])\n"
                       "  return tf.compat.v1.data.make_one_shot_iterator(ds).get_next()\n")
    out = traced_json("--python", "robust.py", "--define",
                      "params={'data': {'pattern': 'data/train-*', 'batch_size': 8}}")
    check(len(out.get("steps", [])) == 10, f"robust: 80 records in batches of 8: {out}")
    check(any("returns the next element of an iterator" in a for a in out.get("assumptions", [])),
          f"robust: the iterator's dataset is said: {out.get('assumptions')}")


if __name__ == "__main__":
    sys.exit(main())
