#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# URLs in --python code and in pipeline expressions, against s3rver started
# here on 127.0.0.1: list_files('s3://...') is tfdist's own listing, and
# count, layout and take of the bucket give the local files' answers (the
# paths aside); tf.io.gfile.glob and exists of a URL ask tfdist's listing.
# Skipped (77) without s3rver (tools/setup --servers installs it).
# Usage: remote_python_test.py TFDIST
import functools
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import check  # noqa: E402
from remote_checks import servers  # noqa: E402

BUCKET = "data"


def main():
    checks.TFDIST = sys.argv[1]
    servers.skip_unless_available("s3")
    with tempfile.TemporaryDirectory(prefix="tfdist-remote-python-") as tmp, \
            servers.S3Server() as s3:
        s3.create_bucket(BUCKET)
        local = os.path.join(tmp, "local")
        os.mkdir(local)
        checks.tfdist("gen", "-o", os.path.join(local, "train"), "--files", "3", "--records",
                      "20", "--kind", "text")
        s3.put_files(BUCKET, {name: os.path.join(local, name)
                              for name in sorted(os.listdir(local))})
        env = s3.env(XDG_CACHE_HOME=os.path.join(tmp, "cache"))
        url = f"s3://{BUCKET}"

        run = functools.partial(checks.tfdist, env=env)

        def same(args_local, args_remote):
            a = run(*args_local).stdout.replace(local, "@")
            b = run(*args_remote).stdout.replace(url, "@").replace("-True.py", "-False.py")
            check(a == b, f"{args_remote}: differs from the local files:\n{a}\n---\n{b}")

        same(["count", "--json", f"{local}/train-*"], ["count", "--json", f"{url}/train-*"])
        same(["take", "-n", "50", f"list_files('{local}/train-*', shuffle=False)"
              ".interleave(tfrecord, cycle_length=2)"],
             ["take", "-n", "50", f"list_files('{url}/train-*', shuffle=False)"
              ".interleave(tfrecord, cycle_length=2)"])
        for where in (local, url):
            with open(os.path.join(tmp, f"input-{where == url}.py"), "w") as f:
                f.write("import tensorflow as tf\n"
                        "def input_fn():\n"
                        f"    files = tf.data.Dataset.list_files('{where}/train-*', shuffle=False)\n"
                        "    return files.interleave(tf.data.TFRecordDataset, cycle_length=2)"
                        ".batch(4)\n")
        same(["layout", "--workers", "2", "--python", os.path.join(tmp, "input-False.py")],
             ["layout", "--workers", "2", "--python", os.path.join(tmp, "input-True.py")])
        # tf.io.gfile.glob of the bucket: tfdist's listing. Sorted: a local
        # folder's names come in readdir's order, a bucket's in byte order.
        for where in (local, url):
            with open(os.path.join(tmp, f"glob-{where == url}.py"), "w") as f:
                f.write("import tensorflow as tf\n"
                        "def input_fn():\n"
                        f"    names = sorted(tf.io.gfile.glob('{where}/train-*'))\n"
                        f"    assert tf.io.gfile.exists(names[0])\n"
                        "    return tf.data.TFRecordDataset(names).batch(4)\n")
        # The same but for the note on the names' order: a bucket's are
        # in byte order, a folder's in its listing's.
        glob_remote = run("layout", "--python", os.path.join(tmp, "glob-True.py")).stdout
        store_order = "in the store's listing order, byte order of the names"
        check(store_order in glob_remote, f"glob of a bucket: no {store_order!r}:\n"
                                          f"{glob_remote}")
        check(run("layout", "--python", os.path.join(tmp, "glob-False.py")).stdout.replace(
                  local, "@") ==
              glob_remote.replace(url, "@").replace("-True.py", "-False.py").replace(
                  store_order, "in the folder listing's order"),
              "layout of a glob of a bucket differs from the local files")
        # Indexed objects: count reads the indexes from the local cache.
        run("index", f"{url}/train-*")
        proc = run("count", "--json", f"{url}/train-*")
        check('"from_index": true' in proc.stdout or '"from_index":true' in proc.stdout,
              f"count of indexed objects: {proc.stdout}")
        listing = run("take", "-n", "-1", f"list_files('{url}/*', shuffle=False)").stdout
        check(".idx" not in listing, f"an index was written into the bucket: {listing}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
