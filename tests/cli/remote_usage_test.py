#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# URLs where tfdist cannot take them, refused before any request: an
# object-store output (outputs are local in this version) and a scheme
# tfdist does not read. Each is a usage error (exit 2) naming the argument;
# none needs a server.
# Usage: remote_usage_test.py TFDIST
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import check  # noqa: E402

GOOD = "testdata/one.tfrecord"


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-remote-usage-") as tmp:
        for args, names in (
                (["reshard", GOOD, "-o", "s3://bucket/out/part", "--num-shards", "2"],
                 "--output s3://bucket/out/part"),
                (["gen", "-o", "gs://bucket/x.tfrecord", "--records", "3"],
                 "--output gs://bucket/x.tfrecord"),
                (["convert", GOOD, "--output-compression", "gzip", "--output-dir", "s3://b/d"],
                 "--output-dir s3://b/d"),
                (["convert", "s3://bucket/x.tfrecord", "--output-compression", "gzip"],
                 "--output-dir DIR"),
                (["index", GOOD, "--index-dir", "gs://bucket/indexes"], "gs://bucket/indexes")):
            proc = checks.tfdist(*args, expect=2)
            check(names in proc.stderr, f"{args}: {proc.stderr!r}")
            check("local" in proc.stderr, f"{args}: does not say outputs are local: {proc.stderr!r}")
        check(not os.listdir(tmp), "something was written")
        for args in (["count", "hdfs://namenode/data/*"],
                     ["verify", "az://container/x.tfrecord"],
                     ["take", "-n", "1", "tfrecord('http://example.com/x.tfrecord')"],
                     ["layout", "list_files('file:///data/*').batch(2)"]):
            proc = checks.tfdist(*args, expect=2)
            check("s3://" in proc.stderr and "gs://" in proc.stderr and "not supported" in proc.stderr,
                  f"{args}: the supported schemes not named: {proc.stderr!r}")
        # --python code: list_files and tf.io.gfile.glob of a URL are tfdist's
        # own listing (its error for a scheme it does not read), never an
        # empty list from os.listdir.
        code = os.path.join(tmp, "input.py")
        with open(code, "w", encoding="utf-8") as f:
            f.write("import tensorflow as tf\n"
                    "def input_fn():\n"
                    "    files = tf.data.Dataset.list_files('hdfs://namenode/train-*')\n"
                    "    return files.interleave(tf.data.TFRecordDataset).batch(4)\n")
        proc = checks.tfdist("layout", "--python", code, expect=2)
        check("hdfs://" in proc.stderr and "s3://" in proc.stderr, f"--python list_files: {proc.stderr!r}")
        with open(code, "w", encoding="utf-8") as f:
            f.write("import tensorflow as tf\n"
                    "def input_fn():\n"
                    "    names = tf.io.gfile.glob('az://container/train-*')\n"
                    "    return tf.data.TFRecordDataset(names).batch(4)\n")
        proc = subprocess.run([checks.TFDIST, "layout", "--python", code], capture_output=True,
                              text=True, timeout=120)
        check(proc.returncode not in (0, 1) and "az://container/train-*" in proc.stderr
              and "s3://" in proc.stderr and "gs://" in proc.stderr and "not supported" in proc.stderr,
              f"--python gfile.glob: {proc.returncode} {proc.stderr!r}")
        os.remove(code)
        # A wildcard in a bucket's name: a listing is of one bucket.
        proc = checks.tfdist("count", "s3://bucket-*/x", expect=2)
        check("bucket" in proc.stderr, proc.stderr)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
