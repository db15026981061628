#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Every --define an error of --python suggests is one tfdist accepts and
# that does what the error says: small failing input functions, one per
# kind of error that suggests a define; each suggested --define is read
# from stderr (as the shell reads it: shlex), VALUE replaced by a value the
# user knows, and the run repeated with it: no define-syntax error, and it
# gets further (another error) until it lays out. Also: CONTEXT gives an
# attribute or a global each worker's input context, and a global of the
# file's own named CONTEXT or UNKNOWN wins over the spelled value.
# Usage: python_define_hints_test.py TFDIST
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import checks
from checks import check

HEAD = "import tensorflow as tf\n"
READ = """\
    ds = tf.data.Dataset.list_files(pattern, shuffle=False)
    ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=2)
"""

# name -> (code, the values the user knows: define name -> what replaces VALUE)
CASES = {
    "absl flags": (HEAD + """\
from absl import flags
FLAGS = flags.FLAGS


def input_fn():
    pattern = FLAGS.pattern
""" + READ + """\
    return ds.batch(FLAGS.batch_size)
""", {"FLAGS.pattern": '"data/*"', "FLAGS.batch_size": "2"}),

    "params keys": (HEAD + """\

def input_fn(params):
    pattern = params["pattern"]
""" + READ + """\
    return ds.batch(params.batch_size)
""", {"params": '{"pattern": "data/*"}', "params.batch_size": "2"}),

    "params of self, holding itself": (HEAD + """\

class Model:
    def input_fn(self, pattern):
        self.params["me"] = self.params
""" + READ.replace("    ", "        ") + """\
        return ds.batch(self.params["batch_size"])
""", {"pattern": '"data/*"', "self.params": '{"a": 1}', "self.params.batch_size": "2"}),

    "hparams of a library": (HEAD + """\
def input_fn(hparams, pattern):
""" + READ + """\
    return ds.batch(hparams.batch_size)
""", {"hparams": "UNKNOWN", "pattern": '"data/*"', "hparams.batch_size": "2"}),

    "a helper the paste lacks": (HEAD + """\

def input_fn(pattern):
""" + READ + """\
    return ds.map(parse_example).batch(2)
""", {"pattern": '"data/*"', "parse_example": "UNKNOWN"}),

    "methods of self": (HEAD + """\

class Builder:
    def __init__(self, config):
        self.parse = make_parser(config)

    def input_fn(self, pattern):
        ds = tf.data.Dataset.list_files(pattern, shuffle=False)
        ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=2)
        if self.is_training:
            ds = ds.shuffle(10, seed=1)
        return ds.map(self.parse).batch(self.config.batch_size)
""", {"pattern": '"data/*"', "self.is_training": "True", "self.parse": "UNKNOWN",
      "self.config": "UNKNOWN", "self.config.batch_size": "2"}),

    "in, len, comparison, branch": (HEAD + """\
from absl import flags
FLAGS = flags.FLAGS


def input_fn(pattern, mode):
""" + READ + """\
    if "train" in FLAGS.modes and FLAGS.use_tpu:
        ds = ds.repeat(2)
    if FLAGS.batch_size > 4 or len(FLAGS.keys) == 3:
        ds = ds.take(1)
    return ds.batch(2)
""", {"pattern": '"data/*"', "mode": '"train"', "FLAGS.modes": '["train"]',
      "FLAGS.use_tpu": "False", "FLAGS.batch_size": "2", "FLAGS.keys": "[1]"}),

    "a transform output's feature spec": (HEAD + """\
LABEL = "label"


def _input_fn(file_pattern, tf_transform_output, batch_size=4):
    feature_spec = tf_transform_output.transformed_feature_spec().copy()
    if LABEL in feature_spec:
        feature_spec.pop(LABEL)
    pattern = file_pattern
""" + READ + """\
    return ds.batch(batch_size)
""", {"file_pattern": '"data/*"', "tf_transform_output": "UNKNOWN",
      "tf_transform_output.transformed_feature_spec": '{"label": 1, "x": 2}'}),

    "a project module, read while the file loads": (HEAD + """\
from myproject import config
from myproject.data import columns as cols

BATCH = len(config.FEATURES) + len(cols.KEYS)


def input_fn(pattern):
""" + READ + """\
    return ds.batch(BATCH * len(config.FEATURES))
""", {"pattern": '"data/*"', "config.FEATURES": '["a", "b"]', "cols.KEYS": "[1]"}),

    "a value holding a backslash and quotes": (HEAD + """\
def input_fn(pattern, sep):
    assert sep == "C:\\\\data\\\\it's \\"x\\"", sep
""" + READ + """\
    return ds.batch(2)
""", {"pattern": '"data/*"'}),

    "an input context stored by a method outside the paste": (HEAD + """\

class Builder:
    def set_context(self, input_context):
        self.input_context = input_context

    def build(self, pattern):
        ds = tf.data.Dataset.list_files(pattern, shuffle=False)
        if self.input_context:
            ds = ds.shard(self.input_context.num_input_pipelines,
                          self.input_context.input_pipeline_id)
        return ds.interleave(tf.data.TFRecordDataset, cycle_length=2).batch(2)
""", {"pattern": '"data/*"', "self.input_context": "None"}),

    "an input context of a builder whose base the paste lacks": (HEAD + """\
from official.core import input_reader


class Reader(input_reader.InputReader):
    def read(self, pattern):
        ds = tf.data.Dataset.list_files(pattern, shuffle=False)
        if self.input_context:
            ds = ds.shard(self.input_context.num_input_pipelines,
                          self.input_context.input_pipeline_id)
        return ds.interleave(tf.data.TFRecordDataset, cycle_length=2).batch(2)
""", {"pattern": '"data/*"', "self.input_context": "None"}),

    "a global used as an input context": (HEAD + """\

def make(pattern):
    ds = tf.data.Dataset.list_files(pattern, shuffle=False)
    ds = ds.shard(dist.num_input_pipelines, dist.input_pipeline_id)
    return ds.interleave(tf.data.TFRecordDataset, cycle_length=2).batch(2)
""", {"pattern": '"data/*"', "dist": "UNKNOWN", "dist.num_input_pipelines": "1",
      "dist.input_pipeline_id": "0"}),

    "a project helper called while the file loads": (HEAD + """\
from myproject.features import get_spec

KEYS = [k for k in get_spec() if k != "label"]


def input_fn(pattern):
""" + READ + """\
    return ds.batch(len(KEYS))
""", {"pattern": '"data/*"', "get_spec": '{"a": 1, "label": 2}'}),

    "absl flags read while the file loads, and as flags.FLAGS": (HEAD + """\
from absl import flags

flags.DEFINE_integer("batch_size", None, "the batch")
FLAGS = flags.FLAGS
GLOBAL_BATCH = FLAGS.batch_size * 2 if FLAGS.use_tpu else FLAGS.batch_size


def input_fn(pattern):
""" + READ + """\
    return ds.batch(GLOBAL_BATCH).take(flags.FLAGS.steps)
""", {"pattern": '"data/*"', "FLAGS.use_tpu": "False", "FLAGS.batch_size": "2",
      "GLOBAL_BATCH": "2", "FLAGS.steps": "2"}),

    "a config object a library's call makes": (HEAD + """\
import hparams


class Reader:
    def __init__(self):
        self.cfg = hparams.Config(name="imagenet")

    def input_fn(self, batch_size):
        files = tf.io.gfile.glob(self.cfg.splits["train"]["files"])
        return tf.data.TFRecordDataset(files).batch(batch_size)
""", {"batch_size": "2", "hparams.Config": '{"splits": {"train": {"files": "data/*"}}}'}),

    "a launcher's rank and size helpers": (HEAD + """\
from myproject.launch import get_rank, get_world_size


def input_fn(pattern):
    ds = tf.data.Dataset.list_files(pattern, shuffle=False)
    ds = ds.shard(get_world_size(), get_rank())
    return ds.interleave(tf.data.TFRecordDataset, cycle_length=2).batch(2)
""", {"pattern": '"data/*"', "get_world_size": "1", "get_rank": "0"}),

    "a global a project helper made": (HEAD + """\
from myproject import utils

FEATURES = utils.get_features()


def input_fn(pattern):
""" + READ + """\
    return ds.batch(len(FEATURES))
""", {"pattern": '"data/*"', "FEATURES": '["a", "b"]', "utils.get_features": '["a"]'}),
}

# Texts given as the user would first (unquoted) to draw the quoting hint.
FIRST = {"a value holding a backslash and quotes":
         {"pattern": '"data/*"', "sep": "C:\\data\\it's \"x\""}}


def run(*args):
    return subprocess.run([checks.TFDIST, *args], capture_output=True, timeout=120)


def suggested(err):
    """The --define arguments a message suggests, as the shell reads them
    (the echo of a refused define, `error: --define X: ...`, is no hint)."""
    out = []
    for m in re.finditer(r"(?<!error: )--define (?=\S)", err):
        lexer = shlex.shlex(err[m.end():].split("\n")[0], posix=True)
        lexer.whitespace_split = True
        lexer.commenters = ""
        token = lexer.get_token()
        if token and "=" in token and not token.endswith(":"):
            out.append(token)
    return out


def given(hint, values):
    name, _, expr = hint.partition("=")
    if re.search(r"\bVALUE\b", expr):
        check(name in values, f"no value known for the hint --define {hint}")
        expr = re.sub(r"\bVALUE\b", lambda _: values.get(name, "None"), expr)
    return name, expr


def follow(label, path, values, topology):
    """Runs `path`, takes each suggested define in turn (all of a message's
    tried, its last kept: the CONTEXT of "VALUE or CONTEXT"), until it lays
    out; each must be accepted."""
    defines = dict(FIRST.get(label, {}))  # name -> expression

    def layout_with(extra):
        given_ = {**defines, **extra}
        args = [a for name, expr in given_.items() for a in ("--define", f"{name}={expr}")]
        return run("layout", "--python", path, *topology, *args)

    proc = layout_with({})
    hints_seen = 0
    for _ in range(12):
        err = proc.stderr.decode("utf-8", "replace")
        if proc.returncode == 0:
            break
        hints = suggested(err)
        check(proc.returncode == 2 and hints,
              f"{label}: exit {proc.returncode} with no define to give\n{err}")
        if not hints:
            return
        for hint in hints:
            name, expr = given(hint, values)
            tried = layout_with({name: expr})
            out = tried.stderr.decode("utf-8", "replace")
            hints_seen += 1
            accepted = not re.search(r"error: --define " + re.escape(name) + r"\b", out) \
                and "expected NAME=EXPR" not in out
            check(accepted, f"{label}: the suggested --define {hint} is refused:\n{out}")
            further = tried.returncode == 0 or (tried.returncode == 2 and out != err)
            check(further,
                  f"{label}: --define {name}={expr} (suggested: {hint}) gets no further:\n{out}")
            if not (accepted and further):
                return
        defines[name] = expr
        proc = tried
    check(proc.returncode == 0,
          f"{label}: still no layout after the hints: {proc.stderr.decode('utf-8', 'replace')}")
    check(hints_seen > 0, f"{label}: no hint followed")


def case(label):
    """The file main() wrote the case of this label to."""
    return f"case{list(CASES).index(label)}.py"


def layout(what, *args):
    proc = run("layout", "--format", "json", *args)
    check(proc.returncode == 0,
          f"{what}: exit {proc.returncode}\n{proc.stderr.decode('utf-8', 'replace')}")
    return json.loads(proc.stdout) if proc.returncode == 0 else {}


def files_of(out):
    """Each worker's files, as the JSON layout lists its elements."""
    text = json.dumps(out.get("workers", out))
    return sorted(set(re.findall(r"train-\d+-of-\d+", text)))


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="tfdist-hints-")
    try:
        os.chdir(tmp)
        os.mkdir("data")
        subprocess.run([checks.TFDIST, "gen", "-o", "data/train", "--files", "2", "--records",
                        "6", "--size", "20-40"], check=True, capture_output=True)
        topology = ["--workers", "2"]
        for i, (label, (code, values)) in enumerate(CASES.items()):
            path = case(label)
            with open(path, "w") as f:
                f.write(code)
            follow(label, path, values, topology)

        # A global made by a helper the paste lacks: the value the user knows
        # is the global's, not a stand-in for the helper.
        proc = run("layout", "--python", case("a global a project helper made"), "--define",
                   'pattern="data/*"')
        check(b"give it with --define FEATURES=VALUE" in proc.stderr,
              f"a global made by a helper: no define of the global: {proc.stderr!r}")

        stored = case("an input context stored by a method outside the paste")
        based = case("an input context of a builder whose base the paste lacks")
        dist = case("a global used as an input context")
        # (b) CONTEXT: an attribute and a global get each worker's context,
        # which shards as a from-function's input_context does.
        attr = layout("self.input_context=CONTEXT", "--python", stored,
                      "--define", 'pattern="data/*"', "--define",
                      "self.input_context=CONTEXT", *topology)
        check(attr.get("api") == "from-function",
              f"CONTEXT gives no from-function layout: {json.dumps(attr)[:800]}")
        workers = attr.get("workers", [])
        check(len(workers) == 2 and files_of(workers[0]) != files_of(workers[1]),
              f"each worker's context: the workers read the same files: {workers}")
        # A dict define read as HParams are, get(key=..., default=...); an
        # object's repr on the input line without its address.
        with open("hparams.py", "w") as f:
            f.write(HEAD + "\n\ndef input_fn(hparams, cfg):\n"
                    "    ds = tf.data.TFRecordDataset(tf.io.gfile.glob('data/*'))\n"
                    "    return ds.batch(hparams.get(key='batch_size', default=8))\n")
        out = layout("get by keyword", "--python", "hparams.py", "--define",
                     'hparams={"batch_size": 2}', "--define", "cfg=object()")
        check(out.get("global_batch_size") == 2, f"hparams.get(key=...): {json.dumps(out)[:400]}")
        check("0x" not in out.get("input", {}).get("entry", "0x") and
              "<object object>" in out.get("input", {}).get("entry", ""),
              f"an object's address on the input line: {out.get('input')}")
        # CONTEXT inside an expression: a launcher's rank and size helpers.
        launcher = case("a launcher's rank and size helpers")
        out = layout("CONTEXT in a lambda", "--python", launcher, "--define", 'pattern="data/*"',
                     "--define", "get_rank=lambda: CONTEXT.input_pipeline_id", "--define",
                     "get_world_size=lambda: CONTEXT.num_input_pipelines", *topology)
        workers = out.get("workers", [])
        check(out.get("api") == "from-function" and len(workers) == 2 and
              files_of(workers[0]) != files_of(workers[1]),
              f"CONTEXT in a lambda: each worker's rank: {json.dumps(out)[:800]}")
        with open("param.py", "w") as f:
            f.write(HEAD + "\n\ndef input_fn(pattern, input_context):\n"
                    "    ds = tf.data.Dataset.list_files(pattern, shuffle=False)\n"
                    "    ds = ds.shard(input_context.num_input_pipelines,\n"
                    "                  input_context.input_pipeline_id)\n"
                    "    return ds.interleave(tf.data.TFRecordDataset, cycle_length=2).batch(2)\n")
        param = layout("a parameter input_context", "--python", "param.py", "--define",
                       'pattern="data/*"', *topology)
        check(param.get("workers") == workers, "self.input_context=CONTEXT lays out otherwise "
              f"than a parameter input_context:\n{workers}\n{param.get('workers')}")
        # A parameter of another name given CONTEXT: the same, shown as the context.
        with open("named.py", "w") as f:
            f.write(open("param.py").read().replace("input_context", "dist"))
        named = layout("dist=CONTEXT", "--python", "named.py", "--define", 'pattern="data/*"',
                       "--define", "dist=CONTEXT", *topology)
        check(named.get("workers") == workers and
              named.get("input", {}).get("entry") == "input_fn(pattern='data/*', "
                                                    "dist=<input context>)",
              f"a parameter given CONTEXT: {named.get('input')}\n{named.get('workers')}")
        # (c) The builder: its error suggests CONTEXT, which lays out
        # as the attribute set by the paste's own method does.
        proc = run("layout", "--python", based, "--define", 'pattern="data/*"', *topology)
        check(b"self.input_context decides a branch" in proc.stderr and
              b"--define self.input_context=CONTEXT" in proc.stderr,
              f"a branch on self.input_context: no CONTEXT hint: {proc.stderr!r}")
        base = layout("a builder's self.input_context=CONTEXT", "--python", based,
                      "--define", 'pattern="data/*"', "--define", "self.input_context=CONTEXT",
                      *topology)
        check(base.get("workers") == workers, "the builder whose base the trace lacks lays "
              f"out otherwise:\n{base.get('workers')}\n{workers}")
        glob = layout("ctx=CONTEXT", "--python", dist, "--define", 'pattern="data/*"',
                      "--define", "dist=tfdist.CONTEXT", *topology)
        check(glob.get("workers") == workers, "a global given tfdist.CONTEXT lays out "
              f"otherwise than the attribute:\n{glob.get('workers')}\n{workers}")
        proc = run("layout", "--python", stored, "--define", 'pattern="data/*"',
                   "--define", "self.input_context=CONTEXT", "--api", "distribute", *topology)
        check(proc.returncode == 2 and b"--api distribute gives none" in proc.stderr,
              f"CONTEXT with --api distribute: exit {proc.returncode}\n{proc.stderr!r}")

        # A global of the file's own named as a spelled value wins; the
        # spelled value stays reachable as tfdist.NAME.
        with open("own.py", "w") as f:
            f.write(HEAD + "UNKNOWN = 3\nCONTEXT = 2\n\n\ndef input_fn(n, m):\n"
                    "    return tf.data.Dataset.range(12).batch(n * m)\n")
        out = layout("the file's own UNKNOWN", "--python", "own.py", "--define", "n=UNKNOWN",
                     "--define", "m=CONTEXT")
        check(out.get("input", {}).get("entry") == "input_fn(n=3, m=2)",
              f"the file's UNKNOWN and CONTEXT: {out.get('input')}")
        proc = run("layout", "--python", "own.py", "--define", "n=tfdist.UNKNOWN",
                   "--define", "m=2")
        check(proc.returncode == 2 and b"--define n=VALUE" in proc.stderr,
              f"tfdist.UNKNOWN beside the file's UNKNOWN: {proc.stderr!r}")
    finally:
        os.chdir("/")
        shutil.rmtree(tmp)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
