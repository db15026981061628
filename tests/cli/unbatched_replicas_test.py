#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# A pipeline without batch() on several replicas in sync: tf.distribute
# (input_lib) finds no batch size and adds the legacy RebatchDataset, which
# splits each element's first dimension over the replicas and fails on a
# scalar. The layout says so (an error-level warning for scalars), instead
# of reporting that nothing is split.
#
# Usage: unbatched_replicas_test.py TFDIST
import json
import os
import sys

import checks
from checks import check, tfdist

SCALAR = "Cannot rebatch dataset: All components must have at least one dimension"


def layout_json(*args):
    return json.loads(tfdist("layout", "--json", *args).stdout)


def main():
    checks.TFDIST = sys.argv[1]
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata")
    one = os.path.join(data, "one.tfrecord")
    # Scalars: integers, records, enumerate()'s index; over replicas or workers.
    for args in (("--replicas", "2", "range(5)"),
                 ("--workers", "2", "--policy", "DATA", f'tfrecord(["{one}"])'),
                 ("--replicas", "2", "range(8).batch(2).unbatch()"),
                 ("--replicas", "2", "range(8).batch(2).enumerate()")):
        text = tfdist("layout", *args).stdout
        check("error:" in text and SCALAR in text,
              f"{args}: TensorFlow's error is said, at error level:\n{text}")
        out = layout_json(*args)
        check(any(SCALAR in w for w in out.get("warnings", [])) and
              "legacy RebatchDataset" in out.get("split_reason", ""),
              f"{args}: JSON warning and split reason: {out.get('warnings')} {out.get('split_reason')}")
    # What tfdist cannot see (an opaque map may return a batch): said, no error.
    out = layout_json("--replicas", "2", f'tfrecord(["{one}"]).map(opaque("decode"))')
    check("cannot see in these elements" in out.get("split_reason", "") and
          not any(SCALAR in w for w in out.get("warnings", [])),
          f"opaque elements: {out.get('split_reason')} {out.get('warnings')}")
    # Parsed records: a dict of features, flattened in sorted key order. A
    # scalar feature is TensorFlow's error, named by its index; features
    # that all have a first dimension are cut into ceil(n / N) rows a piece.
    parsed = (f'tfrecord(["{one}"]).map(parse_single_example({{"x": FixedLenFeature([3], '
              'tf.int64), "c": FixedLenFeature([], tf.int64), "a": FixedLenFeature([2], '
              'tf.int64)}))')
    out = layout_json("--replicas", "2", parsed)
    check(any(SCALAR in w and "Component 1 is scalar" in w and "feature 'c'" in w
              for w in out.get("warnings", [])),
          f"a scalar feature: component 1 (a, c, x), named: {out.get('warnings')}")
    rows = (f'tfrecord(["{one}"]).map(parse_single_example({{"x": FixedLenFeature([4], '
            'tf.int64), "y": FixedLenFeature([1, 2], tf.float32)}))')
    out = layout_json("--replicas", "3", rows)
    check("x: 4 -> 2 + 2 + 0 rows; y: 1 -> 1 + 0 + 0 rows" in out.get("split_reason", "") and
          "every replica gets a piece of every element" in out.get("split_reason", "") and
          not any(SCALAR in w for w in out.get("warnings", [])),
          f"features with rows: {out.get('split_reason')} {out.get('warnings')}")
    out = layout_json("--replicas", "3", rows + ".batch(6)")
    check("rows" not in out.get("split_reason", ""), f"batched: {out.get('split_reason')}")
    # One replica in sync, --rebatch none, from-function and batch(): no rebatch, no error.
    for args in (("range(5)",), ("--replicas", "2", "--rebatch", "none", "range(5)"),
                 ("--replicas", "2", "--api", "from-function", "range(5)"),
                 ("--replicas", "2", "range(8).batch(4)")):
        out = layout_json(*args)
        check(not any(SCALAR in w for w in out.get("warnings", [])), f"{args}: {out.get('warnings')}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
