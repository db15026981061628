#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Errors keep their context: what the user can do about an error (the flag
# or pipeline argument that gets past it) reaches standard error wherever the
# error is told, and list_files' error is the same from the builder (take)
# and the planner (layout): its cause's exit status, its position.
# Usage: error_context_test.py TFDIST
import gzip
import json
import os
import subprocess
import sys
import tempfile

import checks

GZIP_HINT = "(use --input-compression gzip, or --input-compression auto to detect it)"
PIPELINE_HINT = '(declare it in the pipeline: compression_type="GZIP" on the tfrecord source)'


def run(*args):
    return subprocess.run([checks.TFDIST, *args], capture_output=True, text=True, timeout=120)


def error_lines(proc):
    return [line for line in proc.stderr.splitlines() if line.startswith("tfdist: error: ")]


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-error-context-") as tmp:
        checks.tfdist("gen", "-o", os.path.join(tmp, "x"), "--records", "5", "--size", "100")
        with open(os.path.join(tmp, "x"), "rb") as f:
            raw = f.read()
        compressed = os.path.join(tmp, "g.tfrecord")
        with open(compressed, "wb") as f:
            f.write(gzip.compress(raw))

        # A GZIP file read as uncompressed: count tells the flag that reads
        # it; digest, which reports each file's error itself, must too.
        for command in ("count", "digest"):
            proc = run(command, "--input-compression", "none", compressed)
            lines = error_lines(proc)
            checks.check(proc.returncode == 2, f"{command}: exit {proc.returncode}: {proc.stderr}")
            checks.check(len(lines) == 1 and "GZIP-compressed" in lines[0] and
                         lines[0].endswith(GZIP_HINT),
                         f"{command}: the error lacks the flag that reads it: {proc.stderr}")

        # take: the same error from a pipeline names the pipeline's argument,
        # in the JSON and on standard error alike.
        pipeline = f'tfrecord("{compressed}")'
        for args in ([], ["--json"]):
            proc = run("take", pipeline, *args)
            lines = error_lines(proc)
            checks.check(proc.returncode == 2, f"take {args}: exit {proc.returncode}")
            checks.check(len(lines) == 1 and lines[0].endswith(PIPELINE_HINT),
                         f"take {args}: the error lacks the pipeline's remedy: {proc.stderr}")
            if args:
                error = json.loads(proc.stdout.splitlines()[-1]).get("error", {})
                checks.check(error.get("message", "").endswith(PIPELINE_HINT),
                             f"take --json: the JSON error lacks the remedy: {proc.stdout}")

        # list_files over a folder that cannot be listed (a symbolic link
        # loop): a data error (exit 3), at list_files' position, the same
        # from the builder and the planner.
        loop = os.path.join(tmp, "loop")
        os.symlink(loop, loop)
        pipeline = f'  list_files("{loop}/*").interleave(tfrecord)'
        told = []
        for command in (["take"], ["layout", "--workers", "2"]):
            proc = run(*command, pipeline)
            lines = error_lines(proc)
            checks.check(proc.returncode == 3, f"{command}: exit {proc.returncode}: {proc.stderr}")
            checks.check(len(lines) == 1 and lines[0].startswith(
                f"tfdist: error: column 3: list_files: {loop}"), f"{command}: {proc.stderr}")
            checks.check(proc.stderr.rstrip().endswith("\n    ^"),
                         f"{command}: no caret under list_files: {proc.stderr}")
            told.append(proc.stderr)
        checks.check(told[0] == told[1], f"take and layout differ:\n{told[0]}\n{told[1]}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
