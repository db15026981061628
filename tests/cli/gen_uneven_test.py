#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# gen --records A-B: uneven files, each file's count drawn uniformly in
# [A, B], the same counts and bytes for the same --seed, shown per file in
# the text and JSON output; a fixed count keeps its old form.
# Usage: gen_uneven_test.py TFDIST
import json
import os
import sys
import tempfile

import checks
from checks import check, tfdist


def contents(prefix, files):
    return [open(f"{prefix}-{i:05d}-of-{files:05d}.tfrecord", "rb").read() for i in range(files)]


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-gen-") as tmp:
        runs = {}
        for name, seed in (("a", "7"), ("b", "7"), ("c", "8")):
            out = json.loads(tfdist("gen", "-o", f"{tmp}/{name}", "--files", "12", "--records",
                                    "5-40", "--seed", seed, "--json").stdout)
            runs[name] = out
        counts = [f["records"] for f in runs["a"]["files"]]
        check(len(counts) == 12 and all(5 <= c <= 40 for c in counts),
              f"each count in [5, 40]: {counts}")
        check(len(set(counts)) > 1, f"the files are uneven: {counts}")
        check(runs["a"]["records"] == sum(counts), f"the total is the sum: {runs['a']}")
        check([f["records"] for f in runs["b"]["files"]] == counts and
              contents(f"{tmp}/a", 12) == contents(f"{tmp}/b", 12),
              "the same seed gives the same counts and the same bytes")
        check([f["records"] for f in runs["c"]["files"]] != counts,
              f"another seed, other counts: {[f['records'] for f in runs['c']['files']]} vs {counts}")
        # The files hold what gen says.
        count = json.loads(tfdist("count", f"{tmp}/a-*", "--json").stdout)
        check([f["records"] for f in count["files"]] == counts,
              f"count agrees with gen: {[f['records'] for f in count['files']]} vs {counts}")
        # Text output: each file with its count.
        text = tfdist("gen", "-o", f"{tmp}/t", "--files", "3", "--records", "1-3", "--seed", "1",
                      "--kind", "text").stdout.splitlines()
        check(len(text) == 4 and all(line.split("  ")[1].split(" ")[1] in ("record", "records")
                                     for line in text[:3]),
              f"gen prints each file's count: {text}")
        # A fixed count: every file has it, and the text output is unchanged.
        fixed = json.loads(tfdist("gen", "-o", f"{tmp}/f", "--files", "3", "--records", "4",
                                  "--json").stdout)
        check([f["records"] for f in fixed["files"]] == [4, 4, 4] and fixed["records"] == 12,
              f"a fixed count: {fixed}")
        plain = tfdist("gen", "-o", f"{tmp}/p", "--files", "2", "--records", "2").stdout
        check(plain.splitlines()[0] == f"{tmp}/p-00000-of-00002.tfrecord",
              f"a fixed count prints names alone: {plain}")
        # Bad ranges are usage errors naming the option.
        for bad, says in (("30-10", "the minimum exceeds the maximum"), ("-5", "not a count"),
                          ("x", "not a count"), ("5-", "not a count")):
            proc = tfdist("gen", "-o", f"{tmp}/bad", "--records", bad, expect=2)
            check(f"--records: '{bad}'" in proc.stderr and says in proc.stderr,
                  f"--records {bad}: {proc.stderr}")
            check(not os.path.exists(f"{tmp}/bad"), f"--records {bad} writes nothing")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
