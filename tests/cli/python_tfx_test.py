#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# --python on a TFX Trainer module's input functions
# (testdata/python/tfx_trainer_module.py): --define NAME=DATA_ACCESSOR is the
# DataAccessor TFX's Trainer passes, and its tf_dataset_factory lays out as
# the chain tfx_bsl's TFExampleRecord builds (list_files, an interleave of
# GZIP readers, shuffle, repeat, batch, parse_example_dataset, the maps,
# prefetch). doc/python.md, "TFX input functions".
# Usage: python_tfx_test.py TFDIST
import os
import shutil
import sys
import tempfile

import checks
from checks import check, tfdist

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = os.path.join(HERE, "..", "..", "testdata", "python", "tfx_trainer_module.py")
# Stable autotuned values and shuffles, whatever the machine.
FIXED = ("--cpus", "4", "--seed", "3")
PARSED = ('.apply(parse_example_dataset(opaque("feature spec")))'
          '.map(opaque("rename features"))')


def same_layout(name, python_args, chain, topology):
    return checks.same_layout(name, ["--python", MODULE, *python_args, *topology, *FIXED],
                              [chain, *topology, *FIXED])


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="tfdist-tfx-")
    try:
        os.chdir(tmp)
        os.mkdir("data")
        # As ExampleGen writes them: GZIP, the names ending in .gz.
        tfdist("gen", "-o", "data/gz", "--files", "4", "--records", "9", "--size", "20-40",
               "--output-compression", "gzip")
        tfdist("gen", "-o", "data/plain", "--files", "2", "--records", "5", "--size", "20-40")
        check_train()
        check_eval()
        check_fn_args()
        check_legacy()
        check_compression()
        check_hints()
    finally:
        os.chdir("/")
        shutil.rmtree(tmp)
    return checks.finish()


def check_train():
    # TensorFlowDatasetOptions' defaults: shuffled file names, an AUTOTUNE
    # interleave, a 10000-record shuffle, forever, the last batch dropped.
    topology = ("--workers", "2", "--steps", "4")
    defines = ["--entry", "train_input_fn", "--define", 'file_pattern=["data/gz-*"]',
               "--define", "data_accessor=DATA_ACCESSOR", "--define",
               "tf_transform_output=UNKNOWN", "--define", "batch_size=4"]
    chain = ('list_files(["data/gz-*"], shuffle=True)'
             '.interleave(tfrecord(compression_type="GZIP"), num_parallel_calls=AUTOTUNE)'
             ".shuffle(10000).repeat().batch(4, drop_remainder=True)"
             + PARSED + '.map(opaque("pop label")).prefetch(AUTOTUNE).repeat()')
    out, source, assumed = same_layout("train", defines, chain, topology)
    check("data_accessor=DATA_ACCESSOR" in source.get("entry", ""),
          f"train: the entry shows the define: {source.get('entry')}")
    check(any("label_xf" in a and "popped" in a for a in assumed),
          f"train: the label pop is said: {assumed}")
    check(out["split"] == "legacy", f"train: the maps hide the batch size: {out['split']}")
    # The prefixed spelling is the same value.
    defines[defines.index("data_accessor=DATA_ACCESSOR")] = "data_accessor=tfdist.DATA_ACCESSOR"
    same_layout("train tfdist.DATA_ACCESSOR", defines, chain, topology)


def check_eval():
    # One epoch, unshuffled, one reading thread, the short batch kept; a
    # TFTransformOutput of a folder gives an opaque schema.
    topology = ("--workers", "2")
    defines = ["--entry", "eval_input_fn", "--define", 'file_pattern=["data/gz-*"]',
               "--define", "data_accessor=DATA_ACCESSOR",
               "--define", 'tf_transform_output=tft.TFTransformOutput("transform")']
    chain = ('list_files(["data/gz-*"], shuffle=False)'
             '.interleave(tfrecord(compression_type="GZIP"), num_parallel_calls=1)'
             ".batch(4)" + PARSED + ".prefetch(AUTOTUNE)")
    out, _, assumed = same_layout("eval", defines, chain, topology)
    check(out["policy"]["applied"] == "FILE", f"eval: FILE sharding: {out['policy']}")
    check(any("TFTransformOutput('transform').transformed_metadata.schema" in a
              for a in assumed), f"eval: the opaque schema is said: {assumed}")


def check_fn_args():
    # A run_fn's FnArgs, its data_accessor DATA_ACCESSOR; seeded shuffles.
    topology = ("--workers", "2", "--steps", "3")
    defines = ["--entry", "run_fn_dataset", "--define",
               'fn_args=tfx.components.FnArgs(train_files=["data/gz-*"], '
               'data_accessor=DATA_ACCESSOR, transform_output="transform")']
    chain = ('list_files(["data/gz-*"], shuffle=True, seed=5)'
             '.interleave(tfrecord(compression_type="GZIP"), num_parallel_calls=AUTOTUNE)'
             ".shuffle(64, seed=5).repeat().batch(8, drop_remainder=True)"
             + PARSED + ".prefetch(AUTOTUNE)")
    same_layout("fn_args", defines, chain, topology)


def check_legacy():
    # The older templates: make_batched_features_dataset over
    # transformed_feature_spec(), whose label key TensorFlow checks.
    topology = ("--workers", "2", "--steps", "3")
    defines = ["--entry", "legacy_input_fn", "--define", 'filenames="data/gz-*"',
               "--define", "tf_transform_output=UNKNOWN", "--define", "batch_size=4"]
    chain = ('list_files("data/gz-*", shuffle=True)'
             '.interleave(tfrecord(compression_type="GZIP"), cycle_length=1, block_length=1, '
             "num_parallel_calls=1, deterministic=True).shuffle(10000).repeat()"
             ".batch(4, drop_remainder=True)"
             '.apply(parse_example_dataset(opaque("feature spec"), num_parallel_calls=2))'
             '.map(opaque("pop label")).prefetch(AUTOTUNE)')
    _, _, assumed = same_layout("legacy", defines, chain, topology)
    check(any("label_xf" in a and "not checked" in a for a in assumed),
          f"legacy: the unchecked label key is said: {assumed}")
    # And with the transform output of a folder.
    defines[-3] = 'tf_transform_output=tft.TFTransformOutput("transform")'
    same_layout("legacy TFTransformOutput", defines, chain, topology)


def check_compression():
    # TFX decides the compression by the names: none of data/plain-* ends
    # in .gz, so they are read uncompressed.
    defines = ["--entry", "eval_input_fn", "--define", 'file_pattern=["data/plain-*"]',
               "--define", "data_accessor=DATA_ACCESSOR", "--define",
               "tf_transform_output=UNKNOWN"]
    chain = ('list_files(["data/plain-*"], shuffle=False)'
             '.interleave(tfrecord(compression_type=""), num_parallel_calls=1)'
             ".batch(4)" + PARSED + ".prefetch(AUTOTUNE)")
    same_layout("plain", defines, chain, ("--workers", "2"))
    # A GZIP file not named .gz: read uncompressed, as TensorFlow would, and
    # refused with the compression it has.
    os.mkdir("odd")
    shutil.copy("data/gz-00000-of-00004.tfrecord.gz", "odd/part-0.tfrecord")
    defines[3] = 'file_pattern=["odd/part-*"]'
    r = tfdist("layout", "--python", MODULE, *defines, "--workers", "1", expect=2)
    check("GZIP" in r.stderr, f"odd: the GZIP file read as uncompressed is named: {r.stderr}")
    # Names that mix .gz and not: tfx_bsl's INVALID_MIXED_COMPRESSION_TYPES.
    shutil.copy("data/plain-00000-of-00002.tfrecord", "odd/part-1.tfrecord")
    shutil.copy("data/gz-00001-of-00004.tfrecord.gz", "odd/part-2.tfrecord.gz")
    r = tfdist("layout", "--python", MODULE, *defines, "--workers", "1", expect=2)
    check("INVALID_MIXED_COMPRESSION_TYPES" in r.stderr and "part-2.tfrecord.gz" in r.stderr,
          f"odd: mixed names are refused: {r.stderr}")


def check_hints():
    # No define for the TFX values: the error names the spellings that work.
    r = tfdist("layout", "--python", MODULE, "--entry", "train_input_fn", "--define",
               'file_pattern=["data/gz-*"]', "--define", "batch_size=4", expect=2)
    check("--define data_accessor=DATA_ACCESSOR" in r.stderr and
          "--define tf_transform_output=UNKNOWN" in r.stderr,
          f"hints: the missing TFX values: {r.stderr}")
    # data_accessor given as UNKNOWN: the returned unknown names the define.
    r = tfdist("layout", "--python", MODULE, "--entry", "train_input_fn", "--define",
               'file_pattern=["data/gz-*"]', "--define", "batch_size=4", "--define",
               "data_accessor=UNKNOWN", "--define", "tf_transform_output=UNKNOWN", expect=2)
    check("--define data_accessor=DATA_ACCESSOR" in r.stderr,
          f"hints: an unknown DataAccessor: {r.stderr}")
    # A global of the file's own named DATA_ACCESSOR would win; the
    # prefixed name stays the stand-in's (checked in check_train).


if __name__ == "__main__":
    sys.exit(main())
