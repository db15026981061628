#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Limits that hold, driven as a user meets them:
# - --pipeline-file and --python read a bounded amount: a FIFO fed forever,
#   /dev/zero, standard input that never ends and a file over the limit are
#   exit 2 naming the file and the limit (under ulimit -v, so that a reader
#   without a bound fails here rather than taking the machine's memory);
# - a mistake on a line of a megabyte quotes a window of it, the caret still
#   under the right character and the column still the true one;
# - a failed write of standard output is an error: exit 5 on a full disk
#   (/dev/full), exit 1 with the reason otherwise, and the quiet 141 of a
#   closed pipe;
# - a path too long for the system (deep folders, a long name) is said to be
#   too long, not to match nothing;
# - out of file descriptors while reading a pipeline file or starting a
#   trace is exit 5.
# Usage: limits_test.py TFDIST (from the source root)
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading

import checks
from checks import check

MIB = 1 << 20


def run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, limits=(), pipe=None,
        timeout=120):
    def preexec():
        for which, value in limits:
            resource.setrlimit(which, (value, value))
        if pipe is not None:
            signal.signal(signal.SIGPIPE, pipe)
    try:
        return subprocess.run([checks.TFDIST, *args], stdin=stdin, stdout=stdout,
                              stderr=subprocess.PIPE, timeout=timeout, preexec_fn=preexec)
    except subprocess.TimeoutExpired:
        check(False, f"tfdist {' '.join(args)}: still running after {timeout} s")
        return None


def text(data):
    return data.decode("utf-8", "replace") if data else ""


def expect(proc, what, code, *messages, max_stderr=2000):
    if proc is None:
        return
    err = text(proc.stderr)
    check(proc.returncode == code, f"{what}: exit {proc.returncode}, expected {code}: {err[:500]}")
    for m in messages:
        check(m in err, f"{what}: stderr lacks {m!r}: {err[:500]}")
    check(len(proc.stderr) <= max_stderr,
          f"{what}: {len(proc.stderr)} bytes of stderr, expected at most {max_stderr}")
    check("internal error" not in err, f"{what}: worded as a bug: {err[:500]}")


# What a reader without a bound may take before it fails (exit 5, not 2).
# Not under AddressSanitizer (TFDIST_SANITIZED), which reserves terabytes of
# address space: there the bound is checked without the cap.
MEMORY = [] if checks.SANITIZED else [(resource.RLIMIT_AS, 1 << 30)]


def feed_forever(path, stop):
    """Writes to the FIFO `path` until its reader goes away or `stop` is set:
    an input that never ends, from a writer the test still bounds."""
    try:
        with open(path, "wb") as f:
            chunk = b"range(3)  # " + b"x" * 65000 + b"\n"
            while not stop.is_set():
                f.write(chunk)
    except (BrokenPipeError, OSError):
        pass


def check_input_limits(tmp):
    fifo = os.path.join(tmp, "pipeline.fifo")
    os.mkfifo(fifo)
    stop = threading.Event()
    writer = threading.Thread(target=feed_forever, args=(fifo, stop), daemon=True)
    writer.start()
    proc = run(["take", "--pipeline-file", fifo], limits=MEMORY)
    stop.set()
    # Unblocks a writer still waiting for a reader (tfdist never opened it).
    try:
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        os.close(fd)
    except OSError:
        pass
    writer.join(timeout=10)
    expect(proc, "--pipeline-file FIFO fed forever", 2,
           f"{fifo}: the pipeline file is over 1 MiB, the most tfdist reads of one")

    proc = run(["layout", "--pipeline-file", "/dev/zero"], limits=MEMORY)
    expect(proc, "--pipeline-file /dev/zero", 2,
           "/dev/zero: the pipeline file is over 1 MiB, the most tfdist reads of one")
    with open("/dev/zero", "rb") as zero:
        proc = run(["take", "--pipeline-file", "-"], stdin=zero, limits=MEMORY)
    expect(proc, "--pipeline-file - < /dev/zero", 2,
           "<stdin>: the pipeline file is over 1 MiB, the most tfdist reads of one")
    with open("/dev/zero", "rb") as zero:
        proc = run(["take", "--python", "-"], stdin=zero, limits=MEMORY)
    expect(proc, "--python - < /dev/zero", 2,
           "<stdin>: the input function's code is over 16 MiB, the most tfdist reads of one")

    # A file one byte over the limit, and one at the limit (read, and parsed).
    big = os.path.join(tmp, "big.txt")
    with open(big, "w") as f:
        f.write("range(3)" + " " * (MIB - 8) + "\n")
    proc = run(["take", "--pipeline-file", big])
    expect(proc, "--pipeline-file of 1 MiB and a byte", 2,
           f"{big}: the pipeline file is over 1 MiB")
    with open(big, "w") as f:
        f.write("range(3)" + " " * (MIB - 9) + "\n")
    proc = run(["take", "--pipeline-file", big])
    expect(proc, "--pipeline-file of 1 MiB", 0)
    check(proc is not None and proc.stdout == b"0\n1\n2\n",
          f"--pipeline-file of 1 MiB: stdout {proc.stdout[:100] if proc else None!r}")

    big_py = os.path.join(tmp, "big_input.py")
    with open(big_py, "w") as f:
        f.write("# " + "x" * (16 * MIB) + "\n")
    proc = run(["take", "--python", big_py])
    expect(proc, "--python FILE over 16 MiB", 2,
           f"{big_py}: the input function file is over 16 MiB, the most tfdist reads of one")


def check_long_lines(tmp):
    # A mistake a megabyte into a line of a pipeline file.
    pad = 500000
    expression = "range(3)" + " " * pad + ".bogus(1)" + " " * pad + "\n"
    path = os.path.join(tmp, "long.txt")
    with open(path, "w") as f:
        f.write(expression)
    proc = run(["take", "--pipeline-file", path])
    expect(proc, "a mistake in a line of a megabyte", 2,
           f"column {8 + pad + 2}: unknown method 'bogus'", max_stderr=1000)
    lines = text(proc.stderr).splitlines() if proc else []
    if len(lines) >= 3:
        quoted, caret = lines[1], lines[2]
        check(quoted.startswith("  ...") and quoted.endswith("..."),
              f"long line: the window lacks its '...' marks: {quoted!r}")
        check(len(quoted) <= 2 + 3 + 160 + 3, f"long line: a window of {len(quoted)}: {quoted!r}")
        at = caret.find("^")
        check(quoted[at:at + 5] == "bogus",
              f"long line: the caret points at {quoted[at:at + 5]!r}, not 'bogus'")
    else:
        check(False, f"a mistake in a long line: no quoted line and caret: {lines[:3]}")

    # Characters of two bytes before the mistake: the caret counts characters.
    expression = 'list_files(["' + "é" * 300 + '"]).bogus(1)'
    proc = run(["take", expression])
    expect(proc, "a mistake after 300 two-byte characters", 2,
           f"column {13 + 300 + 4 + 1}: unknown method 'bogus'")
    lines = text(proc.stderr).splitlines() if proc else []
    if len(lines) >= 3:
        quoted, caret = lines[1], lines[2]
        at = caret.find("^")
        check(quoted[at:at + 5] == "bogus",
              f"two-byte characters: the caret points at {quoted[at:at + 5]!r}, not 'bogus'")
        check(len(quoted) <= 2 + 3 + 160 + 3, f"two-byte characters: a window of {len(quoted)}")

    # A name of 600,000 characters: quoted by its start.
    expression = "range(3)." + "a" * 600000 + "(1)"
    path = os.path.join(tmp, "long_name.txt")
    with open(path, "w") as f:
        f.write(expression)
    proc = run(["take", "--pipeline-file", path])
    expect(proc, "an unknown method of 600,000 characters", 2, "column 10: unknown method 'aaaa",
           max_stderr=1000)

    # A mistake early in a long line: the window starts at the line's start.
    proc = run(["take", "rang(3)" + " " * 1000 + ".batch(2)"])
    expect(proc, "a mistake at the start of a long line", 2, "column 1: unknown source 'rang'")
    lines = text(proc.stderr).splitlines() if proc else []
    if len(lines) >= 3:
        check(lines[1].startswith("  rang(3)") and lines[1].endswith("..."),
              f"start of a long line: {lines[1]!r}")
        check(lines[2] == "  ^", f"start of a long line: caret line {lines[2]!r}")

    # A traced input function that fails on a line of a megabyte.
    source = os.path.join(tmp, "long_line.py")
    with open(source, "w") as f:
        f.write("def input_fn():\n    x = '" + "y" * MIB + "'; raise ValueError('no data')\n")
    proc = run(["take", "--python", source])
    expect(proc, "--python failing on a line of a megabyte", 2, "no data", max_stderr=2000)


def check_stdout_failures(tmp):
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    os.mkdir(os.path.join(tmp, "idx"))  # --index-dir names a folder that is there
    checks.tfdist("gen", "-o", os.path.join(data, "x"), "--files", "2", "--records", "20",
                  "--size", "100")
    one = os.path.join(data, "x-00000-of-00002.tfrecord")
    commands = {
        "count": ["count", one],
        "count --json": ["count", "--json", one],
        "cat": ["cat", one],
        "layout": ["layout", f"list_files('{data}/x-*', shuffle=False).interleave(tfrecord)"
                   ".batch(4)", "--workers", "2"],
        "take": ["take", "range(3)"],
        "take --format summary": ["take", "--format", "summary", "range(3)"],
        "verify": ["verify", one],
        "index": ["index", "--index-dir", os.path.join(tmp, "idx"), one],
        "--version": ["--version"],
        "count --help": ["count", "--help"],
    }
    for what, args in commands.items():
        with open("/dev/full", "wb") as full:
            proc = run(args, stdout=full)
        expect(proc, f"{what} > /dev/full", 5,
               "cannot write to standard output: No space left on device")

    # Another failure than a full disk: exit 1 with the reason.
    readonly = os.path.join(tmp, "readonly")
    open(readonly, "w").close()
    with open(readonly, "rb") as f:
        proc = run(["count", one], stdout=f)
    expect(proc, "count > a descriptor open for reading", 1,
           "cannot write to standard output: Bad file descriptor")

    # A closed pipe, SIGPIPE ignored (as a caller may leave it): the quiet
    # 141 that SIGPIPE gives; with SIGPIPE as it is by default, the signal.
    for pipe_action, codes in ((signal.SIG_IGN, (141,)), (signal.SIG_DFL, (141, -13))):
        for args in (["count", one], ["cat", one]):
            r, w = os.pipe()
            os.close(r)
            proc = run(args, stdout=w, pipe=pipe_action)
            os.close(w)
            if proc is None:
                continue
            check(proc.returncode in codes,
                  f"{args[0]} into a closed pipe (SIGPIPE {pipe_action}): exit "
                  f"{proc.returncode}, expected {codes}: {text(proc.stderr)}")
            check(proc.stderr == b"",
                  f"{args[0]} into a closed pipe (SIGPIPE {pipe_action}): {text(proc.stderr)}")

    # Standard error full as well: still the exit status, no crash.
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([checks.TFDIST, "count", one], stdout=full, stderr=full,
                              timeout=120)
    check(proc.returncode == 5, f"count >/dev/full 2>&1: exit {proc.returncode}, expected 5")
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([checks.TFDIST, "count", "--no-such-option"], stderr=full,
                              stdout=subprocess.DEVNULL, timeout=120)
    check(proc.returncode == 2, f"a usage error 2>/dev/full: exit {proc.returncode}, expected 2")


def make_deep(top, depth, name_len):
    """Folders `depth` deep under `top`, each named by `name_len` bytes, made
    one at a time (no path to them fits PATH_MAX). Returns the relative path
    of the deepest, which is too long to open."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    parts = []
    try:
        for i in range(depth):
            name = f"{i:03d}" + "d" * (name_len - 3)
            os.mkdir(name, dir_fd=fd)
            new = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = new
            parts.append(name)
        # The data file, written where tfdist can name it (its own folder).
        os.fchdir(fd)
    finally:
        os.close(fd)
    return "/".join(parts)


def check_long_paths(tmp):
    deep = os.path.join(tmp, "deep")
    os.mkdir(deep)
    here = os.getcwd()
    try:
        rel = make_deep(deep, 20, 250)  # 5,019 bytes
        checks.tfdist("gen", "-o", "x.tfrecord", "--records", "3", "--size", "10")
    finally:
        os.chdir(here)
    path = rel + "/x.tfrecord"
    check(len(path) > 4096, f"the deep path is only {len(path)} bytes")
    # From `deep` (the relative path is the one too long to open).
    proc = subprocess.run([checks.TFDIST, "count", path], cwd=deep, capture_output=True,
                          timeout=120)
    expect(proc, "count of a file 5,030 bytes deep", 3, "the path is too long to open",
           "File name too long")
    check(b"no files match" not in proc.stderr, f"deep path: {text(proc.stderr)[:300]}")
    # The same, as a pattern and in a pipeline's list_files.
    proc = subprocess.run([checks.TFDIST, "take", f"list_files('{path}').interleave(tfrecord)"],
                          cwd=deep, capture_output=True, timeout=120)
    expect(proc, "list_files of a file 5,030 bytes deep", 3, "the path is too long to open",
           max_stderr=6000)
    proc = subprocess.run([checks.TFDIST, "count", rel + "/*.tfrecord"], cwd=deep,
                          capture_output=True, timeout=120)
    expect(proc, "count of a pattern in a folder 5,019 bytes deep", 3, "File name too long",
           max_stderr=10000)
    # A name longer than a file system takes (255 bytes).
    proc = run(["count", os.path.join(tmp, "n" * 300 + ".tfrecord")])
    expect(proc, "count of a name of 309 bytes", 3, "the path is too long to open")


def check_out_of_descriptors(tmp):
    # Five descriptors: standard input, output and error, and one for the
    # dynamic loader; the trace's second pipe finds none left.
    source = os.path.join(tmp, "input.py")
    with open(source, "w") as f:
        f.write("import tensorflow as tf\ndef input_fn():\n    return tf.data.Dataset.range(3)\n")
    proc = run(["take", "--python", source], limits=[(resource.RLIMIT_NOFILE, 5)])
    expect(proc, "--python with ulimit -n 5", 5, "cannot make a pipe for the trace",
           "Too many open files")


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="tfdist-limits-") as tmp:
        check_input_limits(tmp)
        check_long_lines(tmp)
        check_stdout_failures(tmp)
        check_long_paths(tmp)
        check_out_of_descriptors(tmp)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
