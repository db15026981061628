#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# The --api from-function summary tells each worker's own reads: records
# read per worker, the records read in all (each once), the records read by
# more than one worker and the read amplification, all as the layout's own
# records show them; "(each worker reads them all)" only where so.
#
# Usage: from_function_summary_test.py TFDIST
import json
import os
import sys
import tempfile

import checks
from checks import check, tfdist

TOPOLOGY = ("--api", "from-function", "--workers", "2")


def summary(pipeline, *flags):
    text = tfdist("layout", "--format", "summary", pipeline, *TOPOLOGY, *flags).stdout
    js = json.loads(tfdist("layout", "--format", "summary", "--json", pipeline, *TOPOLOGY,
                           *flags).stdout)
    return text, js["summary"]


def read_sets(pipeline, *flags):
    """Each worker's records (file:index), from the layout itself."""
    out = json.loads(tfdist("layout", "--json", "--label", "ref", pipeline, *TOPOLOGY,
                            *flags).stdout)
    sets = {}
    for step in out["steps"]:
        for b in step["batches"]:
            sets.setdefault(b["worker"], []).extend(b.get("elements", []))
    return [sets.get(w, []) for w in range(2)]


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-from-function-") as tmp:
        tfdist("gen", "-o", f"{tmp}/d", "--files", "4", "--records", "5", "--kind", "text",
               "--no-fsync")
        names = sorted(f"{tmp}/{n}" for n in os.listdir(tmp))
        files = json.dumps(names)

        # Sharding the files by the context: each worker reads its own 10.
        own = (f"from_tensor_slices({files}).shard(ctx.num_input_pipelines, "
               "ctx.input_pipeline_id).interleave(tfrecord).batch(2)")
        text, s = summary(own)
        check("records: 20 received, 0 dropped, 20 read;" in text,
              f"own shares: 20 read, not 'each worker reads them all':\n{text}")
        check("each worker reads them all" not in text, f"own shares:\n{text}")
        check("records read per worker: 10\n" in text, f"own shares: 10 a worker:\n{text}")
        check("read amplification: 1x" in text, f"own shares: 1x:\n{text}")
        check(s["records_read"] == 20 and s["read_amplification"] == 1 and
              s["records_read_by_several_workers"] == 0 and s.get("records_unread") == 0 and
              [w["records_read"] for w in s["workers"]] == [10, 10],
              f"own shares, JSON: {s}")

        # Sharding records after the reader: each worker reads all 20.
        records = (f"from_tensor_slices({files}).interleave(tfrecord)"
                   ".shard(ctx.num_input_pipelines, ctx.input_pipeline_id).batch(2)")
        text, s = summary(records)
        check("records: 20 received, 0 dropped, 20 read (each worker reads them all)" in text,
              f"records sharded: every worker reads every record:\n{text}")
        check("read amplification: 2x" in text, f"records sharded: 2x:\n{text}")
        check(s["read_amplification"] == 2 and s["records_read_by_several_workers"] == 20 and
              [w["records_read"] for w in s["workers"]] == [20, 20],
              f"records sharded, JSON: {s}")

        # An unseeded shuffle of the names before shard(): each worker draws
        # its own order, so some files are read twice and others never. The
        # summary agrees with the workers' records in the layout, seed by seed.
        shuffled = (f"from_tensor_slices({files}).shuffle(4).shard(ctx.num_input_pipelines, "
                    "ctx.input_pipeline_id).interleave(tfrecord).batch(2)")
        overlaps = 0
        for seed in range(1, 13):
            flags = ("--seed", str(seed))
            text, s = summary(shuffled, *flags)
            w0, w1 = read_sets(shuffled, *flags)
            distinct = len(set(w0) | set(w1))
            both = len(set(w0) & set(w1))
            check(s["records_read"] == distinct and
                  s["records_read_by_several_workers"] == both and
                  [w["records_read"] for w in s["workers"]] == [len(w0), len(w1)],
                  f"seed {seed}: the summary {s} agrees with the layout's records "
                  f"({len(w0)}, {len(w1)}, {distinct} distinct, {both} in both)")
            check(s.get("records_unread") == 20 - distinct,
                  f"seed {seed}: the records of the files no worker read: {s.get('records_unread')}, "
                  f"want {20 - distinct}")
            if distinct < 20:
                check(f"{20 - distinct} in the listed files that no worker read" in text,
                      f"seed {seed}: the unread records are said:\n{text}")
            want = round((len(w0) + len(w1)) / distinct, 2)
            check(s["read_amplification"] == want,
                  f"seed {seed}: amplification {s['read_amplification']}, want {want}")
            if both > 0:
                overlaps += 1
                check(f"{both} read by more than one worker" in text or
                      "every record read by more than one worker" in text,
                      f"seed {seed}: the overlap is said:\n{text}")
                check("read amplification: 1x" not in text, f"seed {seed}: not 1x:\n{text}")
            if both not in (0, distinct):
                check("each worker reads them all" not in text,
                      f"seed {seed}: workers read different records:\n{text}")
        check(overlaps > 0, "some seed makes the workers' unseeded orders overlap")

        # The same pipeline everywhere, no shard: each worker reads them all.
        text, s = summary(f"from_tensor_slices({files}).interleave(tfrecord).batch(2)")
        check("records: 40 received, 0 dropped, 20 read (each worker reads them all)" in text and
              "read amplification: 2x" in text, f"no shard:\n{text}")

        # A function that reads no file, sharded by its context: its own.
        text, s = summary("range(20).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)"
                          ".batch(2)")
        check("records: 20 received, 0 dropped, 20 read;" in text and
              "each worker reads them all" not in text, f"range sharded:\n{text}")

        # A pipeline summary stays as it was (DATA: W times, by the rule).
        text = tfdist("layout", "--format", "summary", "--workers", "2", "--policy", "DATA",
                      f"from_tensor_slices({files}).interleave(tfrecord).batch(2)").stdout
        check("read amplification: 2x (DATA: every worker reads the whole dataset, as TensorFlow "
              "does)" in text and "records read per worker" not in text, f"DATA:\n{text}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
