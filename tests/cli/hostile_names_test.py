#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# File names that hold terminal escape sequences, a newline, C1 controls or
# bytes that are not UTF-8 (any name a file system takes): the text that
# count, verify, cat, take, layout, index, reshard and gen print, and every
# error message, shows them escaped (doc/names.md) and sends no control
# byte to the terminal; their JSON is valid and gives the exact bytes back
# through json.loads and os.fsencode; a --python trace reads such a name
# byte for byte, both ways.
# Usage: hostile_names_test.py TFDIST
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import check  # noqa: E402

GOOD = os.path.abspath("testdata/one.tfrecord")
BAD = os.path.abspath("testdata/bad/data_crc.tfrecord")  # a corrupt record at 63

ESC = b"a\x1b[31mred\x1b[0m.tfrecord"
NEWLINE = b"new\nline.tfrecord"
NOT_UTF8 = b"\xff\xfe.tfrecord"
C1 = b"c1\xc2\x9b2J.tfrecord"  # U+009B: the 8-bit CSI
TITLE = b"bad\x1b]0;owned\x07.tfrecord"  # sets the window title; corrupt
NAMES = [ESC, NEWLINE, NOT_UTF8, C1]


def run(args, stdin=None):
    """tfdist ARGS (bytes or str each), output as bytes."""
    return subprocess.run([checks.TFDIST, *args], capture_output=True, timeout=120,
                          stdin=stdin)


def raw_controls(data):
    """The control bytes and sequences in terminal text: C0 but newline, DEL,
    C1 (as UTF-8) and bytes that are not UTF-8."""
    found = [bytes([b]) for b in set(data) if (b < 0x20 and b != 0x0a) or b == 0x7f]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return found + [f"not UTF-8 at {e.start}: {data[e.start:e.start + 4]!r}"]
    return found + [hex(ord(c)) for c in set(text) if 0x80 <= ord(c) <= 0x9f]


def check_text(what, proc, code, *shown):
    """Exit `code`; nothing raw on stdout or stderr; each of `shown` (the
    escaped spelling) somewhere in them."""
    out = proc.stdout + proc.stderr
    check(proc.returncode == code, f"{what}: exit {proc.returncode}, expected {code}\n"
                                   f"{proc.stderr[-800:]!r}")
    for stream, data in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        bad = raw_controls(data)
        check(not bad, f"{what}: raw {bad} reach {stream}: {data[-600:]!r}")
    for s in shown:
        check(s.encode() in out, f"{what}: {s!r} not shown in {out[-800:]!r}")


def load_json(what, proc, code):
    check(proc.returncode == code, f"{what}: exit {proc.returncode}, expected {code}\n"
                                   f"{proc.stderr[-800:]!r}")
    bad = raw_controls(proc.stderr)
    check(not bad, f"{what}: raw {bad} reach stderr: {proc.stderr[-600:]!r}")
    try:
        return json.loads(proc.stdout)
    except ValueError as e:
        check(False, f"{what}: not JSON ({e}): {proc.stdout[:600]!r}")
        return {}


def fs(name):
    """A JSON string back to the file name's bytes, as a script does."""
    return os.fsencode(name)


# The escaped spelling of each name (TerminalText).
SHOWN = {
    ESC: r"a\x1b[31mred\x1b[0m.tfrecord",
    NEWLINE: r"new\nline.tfrecord",
    NOT_UTF8: r"\xff\xfe.tfrecord",
    C1: r"c1\xc2\x9b2J.tfrecord",
    TITLE: r"bad\x1b]0;owned\x07.tfrecord",
}


def masked_crc(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    crc ^= 0xFFFFFFFF
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def write_records(path, payloads):
    with open(path, "wb") as f:
        for p in payloads:
            header = struct.pack("<Q", len(p))
            f.write(header + struct.pack("<I", masked_crc(header)) + p +
                    struct.pack("<I", masked_crc(p)))


def check_files(d):
    files = [os.path.join(d, n) for n in NAMES]
    pattern = os.path.join(d, b"*.tfrecord")
    for n in NAMES:
        shutil.copy(GOOD, os.path.join(d, n))

    check_text("count", run(["count", pattern]), 0, *(SHOWN[n] for n in NAMES))
    out = load_json("count --json", run(["count", "--json", pattern]), 0)
    check(sorted(fs(f["path"]) for f in out.get("files", [])) == sorted(files),
          f"count --json: the paths are not the files' bytes: {out.get('files')}")

    check_text("verify", run(["verify", pattern]), 0, *(SHOWN[n] for n in NAMES))
    out = load_json("verify --json", run(["verify", "--json", pattern]), 0)
    check(sorted(fs(f["path"]) for f in out.get("files", [])) == sorted(files),
          f"verify --json: the paths are not the files' bytes: {out.get('files')}")

    for n in NAMES:
        path = os.path.join(d, n)
        check_text(f"cat {n!r}", run(["cat", "-n", "1", path]), 0, "# " + SHOWN[n].join(
            [os.fsdecode(d) + "/", ":0"]))
        out = load_json(f"cat --json {n!r}", run(["cat", "--json", "-n", "1", path]), 0)
        check(fs(out.get("file", "")) == path, f"cat --json {n!r}: file {out.get('file')!r}")

    chain = b'list_files("' + pattern + b'", shuffle=False).interleave(tfrecord, cycle_length=1)'
    refs = sorted(f + b":" + str(i).encode() for f in files for i in range(12))
    check_text("take --label ref", run(["take", "--label", "ref", "-n", "-1", chain]), 0,
               *(SHOWN[n] + ":0" for n in NAMES))
    out = load_json("take --json", run(["take", "--json", "--label", "ref", "-n", "-1", chain]), 0)
    check(sorted(fs(e) for e in out.get("elements", [])) == refs,
          f"take --json: the labels are not the files' bytes: {out.get('elements')}")

    for args in (["--workers", "2"], ["--workers", "2", "--format", "summary"]):
        check_text(f"layout {args}", run(["layout", "--label", "ref", *args, chain]), 0)
    check_text("layout batched", run(["layout", "--label", "ref", "--replicas", "2", chain +
                                      b".batch(2)"]), 0, SHOWN[NOT_UTF8] + ":0")
    out = load_json("layout --format json", run(["layout", "--format", "json", "--label", "ref",
                                                 "--workers", "2", chain]), 0)
    labels = [e for w in out.get("workers", []) for e in w.get("elements", [])]
    names = [f for w in out.get("workers", []) for f in w.get("files", [])]
    check(sorted(fs(e) for e in labels) == refs,
          f"layout --format json: the labels are not the files' bytes: {labels}")
    check(sorted(fs(f) for f in names) == sorted(files),
          f"layout --format json: the files are not the files' bytes: {names}")

    # A corrupt file whose name sets the terminal's title: the BAD line and
    # the error message name it escaped, the JSON exactly.
    bad = os.path.join(d, TITLE)
    shutil.copy(BAD, bad)
    check_text("verify (corrupt)", run(["verify", pattern]), 3, "BAD  " + SHOWN[TITLE].join(
        [os.fsdecode(d) + "/", ""]), "tfdist: error: ")
    out = load_json("verify --json (corrupt)", run(["verify", "--json", bad]), 3)
    check(fs(out.get("files", [{}])[0].get("path", "")) == bad,
          f"verify --json: {out.get('files')}")
    check(bad in fs(out.get("error", {}).get("message", "")),
          f"verify --json: the error message does not name the file: {out.get('error')}")
    check_text("cat (corrupt)", run(["cat", bad]), 3, SHOWN[TITLE])
    check_text("take (corrupt)", run(["take", b'tfrecord("' + bad + b'")']), 3, SHOWN[TITLE])
    os.unlink(bad)

    # Errors that quote what was given: a pattern matching nothing, an
    # option's value, a pipeline's string.
    missing = os.path.join(d, b"none\x1b[2J\xff*")
    check_text("count (no match)", run(["count", missing]), 2, r"none\x1b[2J\xff*")
    out = load_json("count --json (no match)", run(["count", "--json", missing]), 2)
    check(missing in fs(out.get("error", {}).get("message", "")),
          f"count --json: the error does not quote the pattern: {out.get('error')}")
    check_text("count --input-compression",
               run(["count", "--input-compression", "\x1b[5mgz", GOOD]), 2, r"\x1b[5mgz")
    check_text("take (syntax)", run(["take", b'tfrecord("\x1b[31m\xff", ']), 2, r"\x1b[31m\xff")

    # Writers' text: the names they wrote.
    out_dir = os.path.join(d, b"out")
    os.mkdir(out_dir)
    check_text("gen", run(["gen", "-o", os.path.join(out_dir, ESC), "--records", "3"]), 0,
               SHOWN[ESC])
    out = load_json("gen --json", run(["gen", "--json", "-o", os.path.join(out_dir, NOT_UTF8),
                                       "--records", "3"]), 0)
    check([fs(f["path"]) for f in out.get("files", [])] == [os.path.join(out_dir, NOT_UTF8)],
          f"gen --json: {out.get('files')}")
    check_text("reshard", run(["reshard", os.path.join(d, NOT_UTF8), "-o",
                               os.path.join(out_dir, b"\x1b[1mpart"), "--num-shards", "1"]),
               0,
               r"\x1b[1mpart-00000-of-00001")
    out = load_json("reshard --json", run(["reshard", "--json", os.path.join(d, ESC), "-o",
                                           os.path.join(out_dir, b"\xfe\n"), "--num-shards", "1"]),
                   0)
    outputs = [fs(o["path"]) for o in out.get("files", [])]
    check(outputs == [os.path.join(out_dir, b"\xfe\n-00000-of-00001.tfrecord")],
          f"reshard --json: {out}")
    os.mkdir(os.path.join(d, b"idx"))
    check_text("index", run(["index", "--index-dir", os.path.join(d, b"idx"),
                             os.path.join(d, NEWLINE)]), 0, r"new\nline.tfrecord")


def check_payload_labels(d):
    """A record's payload is its label only when it is printable: not with
    a C1 control or a bidirectional override, which then show as file:index."""
    path = os.path.join(d, b"labels.tfrecord")
    write_records(path, [b"plain", "csi\u009b2J".encode(), "rlo\u202e".encode(), b"tab\there"])
    chain = b'tfrecord("' + path + b'")'
    out = load_json("take --json (payloads)", run(["take", "--json", chain]), 0)
    check(out.get("elements") == ["plain", os.fsdecode(path) + ":1", os.fsdecode(path) + ":2",
                                  "tab\there"],
          f"take --json: payload labels {out.get('elements')}")
    check_text("take (payloads)", run(["take", chain]), 0, "plain", r"tab\there")


def check_python_trace(d):
    """A name that is not UTF-8 given to list_files in traced Python, and a
    Python file whose own name is not UTF-8."""
    data = os.path.join(d, b"py")
    os.mkdir(data)
    target = os.path.join(data, NOT_UTF8)
    shutil.copy(GOOD, target)
    shutil.copy(GOOD, os.path.join(data, ESC))
    source = (
        "import os\n"
        "import tensorflow as tf\n"
        "def input_fn():\n"
        f"    files = tf.data.Dataset.list_files(os.fsdecode({target!r}), shuffle=False)\n"
        "    return files.interleave(tf.data.TFRecordDataset, cycle_length=1)\n")
    script = os.path.join(d, b"tr\xff\x1b[7m.py")
    with open(script, "w") as f:
        f.write(source)
    out = load_json("take --python --json", run(["take", "--json", "--label", "ref",
                                                 "--python", script]), 0)
    check([fs(e) for e in out.get("elements", [])] == [target + b":%d" % i for i in range(12)],
          f"take --python: the labels are not the file's bytes: {out.get('elements')}")
    check(fs(out.get("input", {}).get("python", "")) == script,
          f"take --python: the input file is not its bytes: {out.get('input')}")
    check_text("take --python", run(["take", "--label", "ref", "--python", script]), 0,
               SHOWN[NOT_UTF8] + ":0", r"tr\xff\x1b[7m.py")
    # A bytes pattern (tf.io takes bytes as TensorFlow does), and a glob
    # over names that are not UTF-8.
    with open(script, "w") as f:
        f.write(source.replace(f"os.fsdecode({target!r})", repr(os.path.join(data, b"*"))))
    out = load_json("take --python (bytes)", run(["take", "--json", "--label", "ref",
                                                  "--python", script]), 0)
    check(sorted(fs(e) for e in out.get("elements", [])) ==
          sorted(f + b":%d" % i for f in (target, os.path.join(data, ESC)) for i in range(12)),
          f"take --python (bytes): {out.get('elements')}")
    # An error in such a file: the message names it, escaped on the
    # terminal, exactly in the JSON.
    with open(script, "w") as f:
        f.write("def input_fn():\n    raise ValueError('no \\x1b[31m')\n")
    check_text("take --python (error)", run(["take", "--python", script]), 2,
               r"tr\xff\x1b[7m.py:2", r"no \x1b[31m")
    out = load_json("take --python --json (error)", run(["take", "--json", "--python", script]), 2)
    check(fs(out.get("error", {}).get("message", "")).startswith(script + b":2: "),
          f"take --python --json: the error does not name the file: {out.get('error')}")


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="tfdist-names-")
    try:
        d = os.fsencode(tmp)
        os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
        files = os.path.join(d, b"files")
        os.mkdir(files)
        check_files(files)
        check_payload_labels(d)
        check_python_trace(d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
