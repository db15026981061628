#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Bad option values exit 2 with a message that names the option, and write
# nothing: a negative value of an unsigned option (CLI11 would wrap it to
# 2^64 - 1), a value out of the option's range, a name that cannot work.
# Runs in a temporary folder, which must stay empty.
# Usage: option_check_test.py TFDIST (from the source root)
import os
import sys
import tempfile

import checks
from checks import check, tfdist

ONE = os.path.abspath("testdata/one.tfrecord")

# (arguments, the first line of stderr)
CASES = [
    # Every unsigned option.
    (["gen", "-o", "x", "--files", "-1", "--records", "0"], "--files: must be at least 1; got -1"),
    (["gen", "-o", "x", "--files", "0"], "--files: must be at least 1; got 0"),
    (["gen", "-o", "x", "--records", "-1"],
     "--records: '-1' is not a count (100, 10k) or a range (100-1000)"),
    (["gen", "-o", "x", "--seed", "-1"], "--seed: must be at least 0; got -1"),
    (["gen", "-o", "x", "--seed", "18446744073709551616"],
     "--seed: must be at most 18446744073709551615; got 18446744073709551616"),
    (["take", "--seed", "-1", "range(3)"], "--seed: must be at least 0; got -1"),
    (["layout", "--seed", "-1", "range(3)"], "--seed: must be at least 0; got -1"),
    (["run", "--seed", "-1", "range(3)"], "--seed: must be at least 0; got -1"),
    (["reshard", ONE, "-o", "y", "--seed", "-1"], "--seed: must be at least 0; got -1"),
    (["reshard", ONE, "-o", "y", "--num-shards", "-1"], "--num-shards: must be at least 1; got -1"),
    (["reshard", ONE, "-o", "y", "--num-shards", "0"], "--num-shards: must be at least 1; got 0"),
    (["reshard", ONE, "-o", "y", "--records-per-shard", "0"],
     "--records-per-shard: must be at least 1; got 0"),
    (["reshard", ONE, "-o", "y", "--records-per-shard", "-1"],
     "--records-per-shard: must be at least 1; got -1"),
    # --cpus models a host: at least one CPU (0 and below were this machine's count).
    (["take", "--cpus", "0", "range(3)"], "--cpus: must be at least 1; got 0"),
    (["take", "--cpus", "-1", "range(3)"], "--cpus: must be at least 1; got -1"),
    (["layout", "--cpus", "-100", "range(3)"], "--cpus: must be at least 1; got -100"),
    (["run", "--cpus", "0", "range(3)"], "--cpus: must be at least 1; got 0"),
    # -1 means all; below it is a mistake.
    (["cat", "-n", "-5", ONE], "--limit: must be at least -1; got -5"),
    (["take", "-n", "-2", "range(3)"], "--limit: must be at least -1; got -2"),
    (["cat", "--skip", "-1", ONE], "--skip: must be at least 0; got -1"),
    # gen --size names the option and all of the value.
    (["gen", "-o", "x", "--size", "-5"],
     "tfdist: error: --size: '-5' is not a byte count (100, 10k, 1M) or a range (100-1000)"),
    (["gen", "-o", "x", "--size", "5-"],
     "tfdist: error: --size: '5-' is not a byte count (100, 10k, 1M) or a range (100-1000)"),
    (["gen", "-o", "x", "--size", "1x"],
     "tfdist: error: --size: '1x': unknown unit 'x' (use k, M or G, powers of 1024)"),
    (["gen", "-o", "x", "--size", "1-3G", "--kind", "random"],
     "tfdist: error: --size: '1-3G' goes over 1G, the most a record can have (records are built "
     "in memory)"),
    (["gen", "-o", ""],
     "tfdist: error: --output needs a file name (with --files N > 1, a prefix of file names); "
     "got ''"),
    (["gen", "-o", "sub/", "--files", "2"],
     "tfdist: error: --output needs a file name (with --files N > 1, a prefix of file names); "
     "got 'sub/'"),
    (["index", "-"], "tfdist: error: cannot index standard input (-): an index describes a file"),
] + [
    # Every floating-point option takes only finite numbers: CLI11 reads nan,
    # inf and -Infinity as numbers, and a range check lets NaN through.
    ([command, f"{option}={value}", "range(3)"], f"{option}: must be a finite number; got {value}")
    for value in ("nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e400")
    for command, option in (("run", "--target-steps-per-s"), ("run", "--step-time-ms"),
                            ("take", "--trace-timeout"), ("layout", "--trace-timeout"),
                            ("run", "--trace-timeout"))
] + [
    # A rate above 0, said in those words (not CLI11's "not in range 0.000000
    # to" and the largest double's 309 digits).
    (["run", "--target-steps-per-s", value, "range(3)"],
     f"--target-steps-per-s: must be above 0; got {value}")
    for value in ("0", "-1", "-0.5", "0e3")
] + [
    (["reshard", ONE, "-o", "sub/", "--num-shards", "2"],
     "--output needs a prefix of file names, such as out/part; got 'sub/'"),
    (["reshard", ONE, "-o", "", "--num-shards", "2"],
     "--output needs a prefix of file names, such as out/part; got ''"),
]


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="tfdist-options-") as tmp:
        os.chdir(tmp)
        for args, message in CASES:
            proc = tfdist(*args, expect=2)
            first = proc.stderr.splitlines()[0] if proc.stderr else ""
            if not message.startswith("tfdist: error: "):
                message = "tfdist: error: " + message  # as every error is worded
            check(first == message, f"tfdist {' '.join(args)}: stderr {first!r}, expected {message!r}")
            left = os.listdir(tmp)
            check(not left, f"tfdist {' '.join(args)}: left {left}")
        os.chdir("/")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
