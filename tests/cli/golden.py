#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Runs one CLI golden: the first line of the golden file is "$ tfdist ARGS";
# the rest is the expected stdout, stderr and exit status. $TMP in the
# command and in the expected text stands for a fresh temporary folder, which
# also holds tfdist's index cache ($TMP/cache).
# Usage: golden.py TFDIST GOLDEN [--update]
import os
import shlex
import subprocess
import sys
import tempfile


def render(stdout, stderr, code):
    return f"[stdout]\n{stdout}[stderr]\n{stderr}[exit {code}]\n"


def main():
    tfdist, golden = sys.argv[1], sys.argv[2]
    update = "--update" in sys.argv[3:]
    with open(golden, encoding="utf-8") as f:
        command = f.readline()
        expected = f.read()
    assert command.startswith("$ tfdist "), f"{golden}: first line must be '$ tfdist ...'"
    with tempfile.TemporaryDirectory(prefix="tfdist-golden-") as tmp:
        args = shlex.split(command[len("$ tfdist "):].replace("$TMP", tmp))
        # tfdist's index cache in the temporary folder: nothing of it is
        # read from, or left in, the home folder.
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
        proc = subprocess.run([tfdist] + args, capture_output=True, text=True,
                              errors="replace", timeout=120, env=env)
        actual = render(proc.stdout, proc.stderr, proc.returncode).replace(tmp, "$TMP")
    if update:
        with open(golden, "w", encoding="utf-8") as f:
            f.write(command + actual)
        return 0
    if actual != expected:
        sys.stdout.write(f"{golden}: output differs\n--- expected\n{expected}--- actual\n{actual}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
