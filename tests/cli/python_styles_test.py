#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# --python on the input-function styles found in public training code that
# the other tests do not cover (testdata/python/*.py, written for these
# tests): each, given only values its user knows, lays out as the method
# chain that says what it builds. doc/python.md, "Input-function styles".
# Usage: python_styles_test.py TFDIST
import json
import os
import shutil
import sys
import tempfile

import checks
from checks import check, tfdist

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "testdata", "python")
FILES = [f"data/train-0000{i}-of-00004.tfrecord" for i in range(4)]
FILES_PY = json.dumps(FILES)


def fixture(name):
    return os.path.join(FIXTURES, name)


def same_layout(name, python_args, chain, topology):
    """The traced layout equals the chain's; returns the trace's input and
    assumptions."""
    _, source, assumed = checks.same_layout(name, ["--python", *python_args, *topology],
                                            [chain, *topology])
    return source, assumed


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="tfdist-styles-")
    try:
        os.chdir(tmp)
        os.mkdir("data")
        tfdist("gen", "-o", "data/train", "--files", "4", "--records", "10", "--size", "20-40")
        check_compat_v1()
        check_pathlib_loader()
        check_builder_tuple()
        check_keras_layer()
        check_transform_spec()
        check_host_reader()
        check_rank_padding()
    finally:
        os.chdir("/")
        shutil.rmtree(tmp)
    return checks.finish()


PARSE = ('parse_single_example({"id": FixedLenFeature([1], tf.int64), '
         '"label": FixedLenFeature([1], tf.int64)})')


def check_compat_v1():
    # tf.compat.v1: map_and_batch_with_legacy_function is map_and_batch, and
    # get_output_shapes gives the parsed columns, so the last map follows.
    topology = ("--workers", "2")
    defines = ["--define", f"files={FILES_PY}", "--define", "training=False",
               "--define", 'params={"batch_size": 4}']
    chain = (f"tfrecord({FILES_PY}).map({PARSE}).batch(4, drop_remainder=True)"
             '.map(opaque("_keep_columns.lambda"))')
    source, _ = same_layout("compat.v1", [fixture("compat_v1_pretrain.py"), *defines], chain,
                            topology)
    entry = source.get("entry", "")
    check(entry.startswith("make_input_fn(files=[") and
          entry.endswith("training=False) -> input_fn(params={'batch_size': 4})"),
          f"compat.v1: the builder and its input_fn are called: {entry}")
    # A column the element does not have is the code's own error, at its line.
    proc = tfdist("layout", "--python", fixture("compat_v1_pretrain.py"), *defines[:4],
                  "--define", 'params={"batch_size": 4}', "--define",
                  "_keep_columns=(lambda f: lambda ds, wanted: f(ds, wanted + ['mask']))"
                  "(_keep_columns)", *topology, expect=2)
    check("ValueError: no such columns: ['mask']" in proc.stderr,
          f"compat.v1: a missing column is the code's error: {proc.stderr}")


def check_pathlib_loader():
    # pathlib.Path names are read as os.fspath gives them, as TensorFlow's
    # readers do; option groups made on their own are accepted.
    topology = ("--workers", "2")
    defines = ["--define", 'data_dir="data"', "--define", "batch_size=4",
               "--define", "num_procs=2", "--define", "rank=1"]
    chain = (f"tfrecord({FILES_PY}, num_parallel_reads=2).shard(2, 1)"
             ".batch(4, drop_remainder=True)")
    same_layout("pathlib", [fixture("pathlib_loader.py"), *defines], chain, topology)


def check_builder_tuple():
    # A builder returning (input_fn, info): the function is laid out, said.
    topology = ("--workers", "2", "--steps", "3")
    defines = ["--define", 'data_dir="data"', "--define", 'split="train"',
               "--define", "per_core_batch=4", "--define", "params={}"]
    chain = (f"from_tensor_slices({FILES_PY}).repeat().flat_map(tfrecord)"
             ".batch(4, drop_remainder=True)")
    _, assumed = same_layout("builder tuple", [fixture("builder_tuple.py"), *defines], chain,
                             topology)
    check("get_input_fn() returned a tuple of 2; laid out: its item 0 (a function)" in assumed,
          f"builder tuple: the pick is said: {assumed}")
    # Two functions in the tuple: which one is the user's to say.
    with open("two.py", "w") as f:
        f.write("import tensorflow as tf\n\n"
                "def make_input_fns():\n"
                "  def train():\n    return tf.data.TFRecordDataset('data/train-00000-of-00004.tfrecord')\n"
                "  return train, {'steps': 3}, train\n")
    proc = tfdist("layout", "--python", "two.py", *topology, expect=2)
    check("returned a tuple holding 2 datasets or functions (items 0, 2)" in proc.stderr and
          "--entry" in proc.stderr, f"builder tuple: two functions: {proc.stderr}")


def check_keras_layer():
    # A Keras preprocessing layer mapped over batches in a dataset_fn.
    topology = ("--workers", "2", "--replicas", "2", "--api", "from-function")
    chain = ('from_tensor_slices(["ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen"])'
             ".repeat(3).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)"
             ".batch(ctx.get_per_replica_batch_size(4))"
             '.map(opaque("dataset_fn.lambda"), num_parallel_calls=AUTOTUNE)')
    source, _ = same_layout("keras layer", [fixture("keras_layer_dataset_fn.py")], chain,
                            topology)
    # The file distributes its dataset_fn as it loads: that call is laid out.
    check(source.get("entry") == "distribute_datasets_from_function(dataset_fn) at line 25 "
          "(train_data), as the file runs it",
          f"keras layer: entry {source.get('entry')}")


def check_transform_spec():
    # A tf.Transform feature spec: parse_example_dataset of a spec the trace
    # cannot see keeps the batches (TensorFlow's ParseExampleDataset).
    topology = ("--workers", "2", "--steps", "5")
    defines = ["--define", 'transform_dir="transform"', "--define", 'file_glob="data/train-*"',
               "--define", "batch_size=4", "--define", 'mode="train"']
    chain = ('list_files("data/train-*", shuffle=False)'
             ".interleave(tfrecord, cycle_length=2, block_length=1, num_parallel_calls=2, "
             "deterministic=True).shuffle(32, seed=11).repeat().batch(4)"
             '.apply(parse_example_dataset(opaque("feature spec")))'
             '.map(opaque("build_input_fn.input_fn.lambda"))')
    _, assumed = same_layout("transform", [fixture("transform_spec_input.py"), *defines], chain,
                             topology)
    check(any("transformed_feature_spec" in a and "not known to the trace" in a
              for a in assumed), f"transform: the unseen spec is said: {assumed}")
    # Evaluation: no shuffle, no repeat.
    defines[-1] = 'mode="eval"'
    chain = ('list_files("data/train-*", shuffle=False)'
             ".interleave(tfrecord, cycle_length=2, block_length=1, num_parallel_calls=2, "
             "deterministic=True).batch(4)"
             '.apply(parse_example_dataset(opaque("feature spec")))'
             '.map(opaque("build_input_fn.input_fn.lambda"))')
    same_layout("transform eval", [fixture("transform_spec_input.py"), *defines], chain,
                ("--workers", "2"))


def check_host_reader():
    # A base class's input_fn over a subclass's make_source_dataset; without
    # a TPU context in params the host is 0 of 1.
    topology = ("--workers", "2", "--steps", "4")
    defines = ["--entry", "FolderReader.input_fn", "--define", "is_training=True",
               "--define", 'folder="data"', "--define", 'params={"batch_size": 4}']
    parse = ('parse_single_example({"id": FixedLenFeature([], tf.int64), '
             '"label": FixedLenFeature([], tf.int64)})')
    chain = ('list_files("data/train-*", shuffle=False).shard(1, 0).repeat()'
             ".interleave(tfrecord(buffer_size=1048576), cycle_length=2, num_parallel_calls=2)"
             f".map({parse}).batch(4, drop_remainder=True)"
             '.map(opaque("partial(HostReader.fix_shapes)")).prefetch(AUTOTUNE)')
    same_layout("host reader", [fixture("host_sharded_reader.py"), *defines], chain, topology)
    # TPUEstimator's context in params: the host's place is the worker's.
    defines[-1] = ('params={"batch_size": 4, "context": '
                   '__import__("types").SimpleNamespace(current_host=1, num_hosts=2)}')
    chain = chain.replace(".shard(1, 0)", ".shard(2, 1)")
    same_layout("host reader context", [fixture("host_sharded_reader.py"), *defines], chain,
                topology)



def check_rank_padding():
    # A loop that ends on a tensor's real rank never ends on a symbolic
    # element: the function is given up (the user's `except Exception` does
    # not catch that) and the map is opaque, said; the layout follows.
    topology = ("--workers", "2")
    defines = ["--define", 'pattern="data/train-*"', "--define", "batch_size=4"]
    chain = ('list_files("data/train-*", shuffle=False).interleave(tfrecord, cycle_length=2)'
             '.map(opaque("input_fn.lambda")).map(opaque("_to_rank4")).batch(4)')
    _, assumed = same_layout("rank padding", [fixture("rank_padding_map.py"), *defines], chain,
                             topology)
    check(any("map(_to_rank4)" in a and "SymbolicLoop at " in a and
              "rank_padding_map.py:12" in a for a in assumed),
          f"rank padding: the endless loop is said at its line: {assumed}")


if __name__ == "__main__":
    sys.exit(main())
