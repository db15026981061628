#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# --python with values the trace cannot see: a map/filter/interleave of a
# function from a module the stand-in lacks, or given as
# --define NAME=UNKNOWN (also read while the file loads, as a default
# argument), lays out as an opaque stage, said; a chain of a million
# operations on an unknown ends in the error that names it, not in the
# trace's time limit; an answer nested millions of levels deep is an error,
# not a crash; a --define holding a byte that is not UTF-8 opens that file.
# Usage: python_unknown_test.py TFDIST
import json
import os
import shutil
import subprocess
import sys
import tempfile

import checks
from checks import check

PARSE_FROM_A_MISSING_MODULE = """\
import tensorflow as tf
from official.vision import preprocess


def input_fn(pattern, batch_size=4):
    ds = tf.data.Dataset.list_files(pattern, shuffle=False)
    ds = ds.interleave(preprocess.reader, cycle_length=2)
    ds = ds.map(preprocess.parse_record)
    return ds.batch(batch_size)
"""

METHODS_OUTSIDE_THE_PASTE = """\
import tensorflow as tf


class Builder:
    def input_fn(self, pattern, batch_size=4):
        ds = tf.data.Dataset.list_files(pattern, shuffle=False)
        ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=2)
        ds = ds.map(self.parse, num_parallel_calls=2)
        ds = ds.filter(self.keep)
        return ds.batch(batch_size)
"""

READ_AT_LOAD_TIME = """\
import tensorflow as tf

PARSERS = {"train": parse_record}


def input_fn(pattern, batch_size=4, parse_record_fn=parse_record, decode=helpers.decode):
    ds = tf.data.Dataset.list_files(pattern, shuffle=False)
    ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=2)
    ds = ds.map(parse_record_fn).map(PARSERS["train"]).map(decode)
    return ds.batch(batch_size)
"""

LONG_CHAIN = """\
import tensorflow as tf
from absl import flags

FLAGS = flags.FLAGS


def input_fn():
    n = FLAGS.epochs
    for _ in range(1000000):
        n = n + 1
    return tf.data.Dataset.range(10).repeat(n)
"""

GLOB = """\
import tensorflow as tf


def input_fn(pattern):
    return tf.data.TFRecordDataset(tf.io.gfile.glob(pattern)).batch(2)
"""

# An interpreter that answers with JSON nested five million levels deep.
DEEP_ANSWER = """\
#!/usr/bin/env python3
import os
n = 5000000
os.write(3, ('{"chain": "range(3)", "worker_chains": ' + "[" * n + "]" * n + "}").encode())
"""


def run(*args, env=None, stdin=None):
    return subprocess.run([checks.TFDIST, *args], capture_output=True, timeout=300,
                          env=env, input=stdin)


def write(name, text):
    with open(name, "w") as f:
        f.write(text)
    return name


def layout(what, *args, **kwargs):
    proc = run("layout", "--format", "json", *args, **kwargs)
    err = proc.stderr.decode("utf-8", "replace")
    check(proc.returncode == 0, f"{what}: exit {proc.returncode}\n{err}")
    return json.loads(proc.stdout) if proc.returncode == 0 else {}


def said(out, *words):
    text = "\n".join(out.get("assumptions", []))
    for word in words:
        check(word in text, f"assumptions lack {word!r}:\n{text}")


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="tfdist-unknown-")
    try:
        os.chdir(tmp)
        os.mkdir("data")
        subprocess.run([checks.TFDIST, "gen", "-o", "data/train", "--files", "2", "--records",
                        "6", "--size", "20-40"], check=True, capture_output=True)
        pattern = "--define", 'pattern="data/*"'
        topology = ("--workers", "2")
        chain = ('list_files("data/*", shuffle=False).interleave(tfrecord, cycle_length=2)'
                 '.map(opaque("f")).batch(4)')
        direct = layout("the chain", chain, *topology)

        # A function of a module the stand-in lacks: it has every attribute
        # (.func made naming it recurse without end).
        out = layout("map of a missing module's function",
                     "--python", write("missing.py", PARSE_FROM_A_MISSING_MODULE), *pattern,
                     *topology)
        said(out, "map(official.vision.preprocess.parse_record): the trace cannot see this "
                  "function", "one element in, one out",
             "interleave(official.vision.preprocess.reader)", "uncompressed TFRecord file")
        check(out.get("workers") == direct.get("workers") and "steps" in direct,
              f"the workers differ from the chain's: {out}")

        # The manual's answer for a helper the paste lacks: self.NAME=UNKNOWN.
        out = layout("methods given as UNKNOWN", "--python",
                     write("methods.py", METHODS_OUTSIDE_THE_PASTE), *pattern,
                     "--define", "self.parse=UNKNOWN", "--define", "self.keep=UNKNOWN",
                     *topology)
        said(out, "map(self.parse): the trace cannot see", "filter(self.keep): the trace "
                  "cannot see this function", "keeping every element")

        # Names read while the file loads: a module global, default arguments.
        out = layout("UNKNOWN read at load time", "--python",
                     write("load.py", READ_AT_LOAD_TIME), *pattern,
                     "--define", "parse_record=UNKNOWN", "--define", "helpers.decode=UNKNOWN",
                     *topology)
        said(out, "map(parse_record)", "map(helpers.decode)")
        proc = run("layout", "--python", "load.py", *pattern, *topology)
        check(proc.returncode == 2 and b"--define parse_record=VALUE" in proc.stderr,
              f"without the define: exit {proc.returncode}\n{proc.stderr!r}")

        # A million operations on an unknown: linear, so the error names the
        # value (and its define) instead of the trace's time limit.
        proc = run("layout", "--python", write("chain.py", LONG_CHAIN))
        err = proc.stderr.decode("utf-8", "replace")
        check(proc.returncode == 2 and "computed from FLAGS.epochs" in err and
              "--define FLAGS.epochs=VALUE" in err and "did not finish" not in err,
              f"a long chain: exit {proc.returncode}\n{err[:2000]}")
        check(len(err) < 2000, f"a long chain: the message is {len(err)} characters")

        # An answer nested five million levels deep: an error, not a crash.
        fake = write("deep-python", DEEP_ANSWER)
        os.chmod(fake, 0o755)
        proc = run("layout", "--python", "chain.py",
                   env={**os.environ, "TFDIST_PYTHON": os.path.abspath(fake)})
        check(proc.returncode == 2 and b"nests deeper than 1000 levels" in proc.stderr,
              f"a deep answer: exit {proc.returncode}\n{proc.stderr[:2000]!r}")

        # A file name that is not UTF-8, in a --define: the trace opens it.
        os.mkdir(b"odd")
        subprocess.run([checks.TFDIST, "gen", "-o", "odd/x", "--files", "1", "--records", "3",
                        "--size", "20-40"], check=True, capture_output=True)
        (made,) = os.listdir(b"odd")
        os.rename(b"odd/" + made, b"odd/caf\xe9-\xff.tfrecord")
        define = os.fsdecode(b'pattern="odd/caf\xe9-\xff*"')
        out = layout("a define holding bytes that are not UTF-8", "--python",
                     write("glob.py", GLOB), "--define", define)
        text = json.dumps(out)
        check("odd/caf\\udce9-\\udcff.tfrecord" in text, f"the file is not read: {text[:2000]}")
        # The same bytes in the code itself: not UTF-8, said so.
        proc = run("layout", "--python", "-", stdin=b"import tensorflow as tf\n# caf\xe9\n")
        check(proc.returncode == 2 and b"<stdin>: not UTF-8 text" in proc.stderr,
              f"code that is not UTF-8: exit {proc.returncode}\n{proc.stderr!r}")
    finally:
        os.chdir("/")
        shutil.rmtree(tmp)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
