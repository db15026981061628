#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# layout accounts for every record and streams: drop_remainder's drops and an
# epoch without steps are reported (text and JSON, the FILE summary from
# counts and the streamed one agreeing), JSON is one valid object even when
# a read fails part way, and a layout holds a step at a time.
#
# Usage: layout_accounting_test.py TFDIST
import json
import os
import random
import resource
import subprocess
import sys
import tempfile

import checks
from checks import check, tfdist


def summary_json(pipeline, *flags):
    out = tfdist("layout", "--format", "summary", "--json", pipeline, *flags).stdout
    return json.loads(out)


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-accounting-") as tmp:
        # 64 shards of 58 records at 8 x 8, batch(512, drop_remainder=True):
        # each worker reads 464 records, less than one global batch.
        tfdist("gen", "-o", f"{tmp}/train", "--files", "64", "--records", "58", "--no-fsync")
        shards = (f'list_files("{tmp}/train-*").interleave(tfrecord, cycle_length=4)'
                  '.shuffle(100).batch(512, drop_remainder=True)')
        text = tfdist("layout", "--workers", "8", "--replicas", "8", "--format", "summary",
                      shards).stdout
        check("error:    an epoch has no steps: all 3712 records read are dropped" in text,
              f"an epoch without steps is an error-level warning:\n{text}")
        s = summary_json(shards, "--workers", "8", "--replicas", "8")
        check(s["summary"]["steps"] == 0 and s["summary"]["dropped_records"] == 3712 and
              s["summary"]["records_read"] == 3712,
              f"JSON summary: no steps, all dropped: {s['summary']}")
        check(any(w.startswith("an epoch has no steps") for w in s["warnings"]),
              f"JSON warnings: {s['warnings']}")
        table = tfdist("layout", "--workers", "8", "--replicas", "8", shards).stdout
        check("(no steps: every record read is dropped)" in table, f"the table says why:\n{table}")

        # Uneven files over workers with drop_remainder: each worker drops
        # its own remainder; the summary from counts and the streamed one
        # agree on every count.
        rng = random.Random(7)
        total = 0
        for i in range(40):
            n = rng.randint(3, 30)
            total += n
            tfdist("gen", "-o", f"{tmp}/u-{i:03}.tfrecord", "--records", str(n), "--size", "5",
                   "--no-fsync")
        uneven = f'list_files("{tmp}/u-*.tfrecord").interleave(tfrecord, cycle_length=2)'
        for flags in (["--workers", "8"], ["--workers", "3", "--replicas", "2"]):
            fast = summary_json(uneven + ".batch(16, drop_remainder=True)", *flags)["summary"]
            # skip(0) keeps the summary off the arithmetic: the pipeline runs.
            slow = summary_json(uneven + ".skip(0).batch(16, drop_remainder=True)",
                                *flags)["summary"]
            check(fast["records_source"] != slow["records_source"],
                  f"{flags}: one summary counted, the other ran: {fast['records_source']}")
            check(fast["records_read"] == total and
                  fast["records"] + fast["dropped_records"] == total,
                  f"{flags}: received + dropped = the files' records: {fast}")
            check(fast["dropped_records"] > 0, f"{flags}: drop_remainder drops: {fast}")
            for key in ("records", "dropped_records", "records_read"):
                check(fast[key] == slow[key], f"{flags}: {key}: counts {fast[key]}, streamed "
                                              f"{slow[key]}")
        out = tfdist("layout", "--workers", "8", "--format", "summary",
                     uneven + ".batch(16, drop_remainder=True)").stdout
        check("warning:  " in out and "never reach a replica in an epoch" in out,
              f"the dropped share is a warning:\n{out}")

        # A damaged file met part way: the JSON still parses, ending in "error".
        good = f"{tmp}/good.tfrecord"
        tfdist("gen", "-o", good, "--records", "20", "--kind", "text", "--no-fsync")
        data = open(good, "rb").read()
        with open(f"{tmp}/zbad.tfrecord", "wb") as f:
            f.write(data[:-3])
        bad = (f'tfrecord(["{good}", "{tmp}/zbad.tfrecord"]).batch(4)')
        proc = tfdist("layout", "--json", bad, expect=3)
        try:
            doc = json.loads(proc.stdout)
            check(doc.get("error", {}).get("code") == "DATA_LOSS" and len(doc["steps"]) >= 5,
                  f"a failure part way ends the JSON with its error: {proc.stdout[-300:]}")
        except json.JSONDecodeError as e:
            check(False, f"the JSON of a failed layout does not parse: {e}: {proc.stdout[-300:]}")
        check("zbad.tfrecord" in proc.stderr, f"the error names the file: {proc.stderr}")

    check_reads_repeat()

    # An endless pipeline: an error at its repeat() without --steps; with
    # --steps, many steps in a few MB.
    proc = tfdist("layout", "range(3).repeat().batch(2)", expect=2)
    check("column 10: repeat() without a count repeats forever" in proc.stderr,
          f"the endless pipeline is named: {proc.stderr}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run([checks.TFDIST, "layout", "--workers", "4", "--replicas", "4",
                           "--steps", "200000", "range(7).repeat().batch(16)"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    check(proc.returncode == 0, f"200,000 steps stream: {proc.stderr}")
    check(before / 1024 > 200 or peak_mb < 200, f"a layout of 200,000 steps peaked at {peak_mb} MB")
    return checks.finish()


def check_reads_repeat():
    # A layout that stops at --steps counts as read what its steps took: the
    # same on every run, whatever a prefetch or a parallel interleave's
    # threads fetched ahead, and the same as with neither.
    with tempfile.TemporaryDirectory(prefix="tfdist-reads-") as tmp:
        tfdist("gen", "-o", f"{tmp}/d", "--files", "6", "--records", "40", "--no-fsync")
        base = f'list_files("{tmp}/d-*", shuffle=False).repeat()'
        tail = ".shuffle(50, seed=3).batch(4)"
        threaded = (base + ".interleave(tfrecord, cycle_length=3, num_parallel_calls=3)" + tail +
                    ".prefetch(256)")
        plain = base + ".interleave(tfrecord, cycle_length=3)" + tail
        flags = ("--workers", "2", "--policy", "DATA", "--steps", "5", "--cpus", "4")
        runs = [summary_json(threaded, *flags)["summary"] for _ in range(5)]
        for r in runs[1:]:
            check(r == runs[0], f"a layout stopped at --steps reads the same on every run:\n"
                                f"{json.dumps(runs[0])}\n{json.dumps(r)}")
        one = summary_json(plain, *flags)["summary"]
        check(runs[0] == one, f"a prefetch and threads change no count:\n"
                              f"{json.dumps(runs[0])}\n{json.dumps(one)}")
        check(all(w["bytes_read"] > 0 and w["files"] > 0 for w in one["workers"]),
              f"each worker's reads are counted: {json.dumps(one)}")


if __name__ == "__main__":
    sys.exit(main())
