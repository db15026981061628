#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Keeps README.md true to the code: every fenced block that starts with
# "$ tfdist ARGS" is run, and its stdout must be the rest of the block.
# /tmp/demo in a command or its output stands for a fresh temporary folder;
# a command ending in " 2>&1" is compared on stdout then stderr. A block
# fenced ```console shows output with timings: it is run the same way and
# compared with numbers masked (see masked()).
# Usage: readme_test.py TFDIST README [--update]  (--update rewrites the blocks)
import re
import shlex
import subprocess
import sys
import tempfile


def masked(text):
    """The text with numbers as '#', runs of spaces as one space, and run's
    timing verdict (the input keeps up or not) as 'VERDICT'."""
    text = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?[kMG]?", "#", text)
    text = re.sub(r"verdict: (input keeps up|input-bound): waited p99 # ms per # ms step "
                  r"\((at most|more than) #% of it\)", "verdict: VERDICT", text)
    text = re.sub(r"first batch after # m?s", "first batch after #", text)
    return re.sub(r" +", " ", text)


def main():
    tfdist, readme = sys.argv[1], sys.argv[2]
    text = open(readme, encoding="utf-8").read()
    blocks = re.findall(r"^```(console)?\n(\$ tfdist .*?)^```$", text, flags=re.S | re.M)
    failures = 0
    update = "--update" in sys.argv[3:]
    for fence, block in blocks:
        command, _, expected = block.partition("\n")
        with tempfile.TemporaryDirectory(prefix="tfdist-readme-") as tmp:
            line = command[len("$ tfdist "):]
            merged = line.endswith(" 2>&1")
            if merged:
                line = line[: -len(" 2>&1")]
            args = shlex.split(line.replace("/tmp/demo", tmp))
            proc = subprocess.run([tfdist] + args, capture_output=True, text=True, timeout=120)
            actual = proc.stdout + (proc.stderr if merged else "")
            actual = actual.replace(tmp, "/tmp/demo")
        same = actual == expected
        if fence == "console":
            same = masked(actual) == masked(expected)
        if not same and update:
            text = text.replace(block, command + "\n" + actual, 1)
        elif not same:
            failures += 1
            print(f"README block differs: {command}\n--- README\n{expected}--- tfdist\n{actual}")
    if update:
        open(readme, "w", encoding="utf-8").write(text)
    print(f"{len(blocks)} README examples checked, {failures} differ")
    return 1 if failures or not blocks else 0


if __name__ == "__main__":
    sys.exit(main())
