#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Keeps README.md true to the code: its tour is run as a user on a fresh
# machine runs it, and every output it shows must be what tfdist prints.
#
# Every fenced block (``` or ```console) whose first line starts with "$ " is
# a piece of the tour: each "$ COMMAND" line in it is run by bash, and the
# lines up to the next "$ " line are its expected standard output. The
# blocks run in the order of the README, one after another, in one fresh
# folder holding only what the README says the user has: the source tree's
# testdata/ (the tour starts "from the top of the source tree"). Nothing
# else is there: no index cache (HOME and XDG_CACHE_HOME are fresh), and
# /tmp/demo, which the tour writes to, stands for a path in the temporary
# folder that does not exist until a command makes it. So an example that
# needs a file no earlier example made, or prints what only a lone run of it
# prints, fails here as it would for the user.
#
# A command ending in " 2>&1" is compared on its standard output and error
# as the shell interleaves them. A block fenced ```console shows output with
# timings: it is compared with numbers masked (see masked()). Blocks fenced
# ```sh or ```text are not run (set-up steps, output from another machine).
# Usage: readme_test.py TFDIST README [--update]  (--update rewrites the outputs)
import os
import re
import shutil
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


def tour_blocks(text):
    """(start, end, fence, [(command, expected output)]) of each block run."""
    for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, flags=re.S | re.M):
        fence, body = m.group(1), m.group(2)
        if fence not in ("", "console") or not body.startswith("$ "):
            continue
        steps = []
        for line in body.splitlines(keepends=True):
            if line.startswith("$ "):
                steps.append([line[2:].rstrip("\n"), ""])
            else:
                steps[-1][1] += line
        yield m.start(2), m.end(2), fence, steps


def main():
    tfdist, readme = os.path.abspath(sys.argv[1]), sys.argv[2]
    update = "--update" in sys.argv[3:]
    source_tree = os.path.dirname(os.path.abspath(readme))
    text = open(readme, encoding="utf-8").read()
    blocks = list(tour_blocks(text))
    failures = 0
    commands = 0
    rewritten = []  # (start, end, new body) for --update
    with tempfile.TemporaryDirectory(prefix="tfdist-readme-") as tmp:
        work = os.path.join(tmp, "src")
        os.mkdir(work)
        shutil.copytree(os.path.join(source_tree, "testdata"), os.path.join(work, "testdata"),
                        symlinks=True)
        bin_dir = os.path.join(tmp, "bin")
        os.mkdir(bin_dir)
        os.symlink(tfdist, os.path.join(bin_dir, "tfdist"))
        home = os.path.join(tmp, "home")
        os.mkdir(home)
        demo = os.path.join(tmp, "demo")  # /tmp/demo: made by the tour, if at all
        env = dict(os.environ, HOME=home, XDG_CACHE_HOME=os.path.join(home, ".cache"),
                   PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
        for start, end, fence, steps in blocks:
            body = ""
            for command, expected in steps:
                commands += 1
                merged = command.endswith(" 2>&1")
                line = command.replace("/tmp/demo", demo)
                proc = subprocess.run(
                    ["bash", "-c", line], cwd=work,
                    env=env, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT if merged else subprocess.DEVNULL, text=True,
                    errors="replace", timeout=120)
                actual = proc.stdout.replace(demo, "/tmp/demo")
                same = actual == expected
                if fence == "console":
                    same = masked(actual) == masked(expected)
                body += f"$ {command}\n" + (actual if update and not same else expected)
                if not same and not update:
                    failures += 1
                    print(f"README example differs: $ {command}\n--- README\n{expected}"
                          f"--- tfdist (exit {proc.returncode})\n{actual}")
            rewritten.append((start, end, body))
    if update:
        for start, end, body in reversed(rewritten):
            text = text[:start] + body + text[end:]
        open(readme, "w", encoding="utf-8").write(text)
    print(f"{commands} README commands in {len(blocks)} blocks checked, {failures} differ")
    return 1 if failures or not blocks else 0


if __name__ == "__main__":
    sys.exit(main())
