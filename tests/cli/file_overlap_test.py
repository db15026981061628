#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Issue 24, point 3 (the readers' side): file arguments that match one file
# twice ('d/*.tfrecord*' 'd/*.gz', d/x and d/./x, a symbolic link) take it
# once, with a warning naming it, in text and JSON; reshard of them writes no
# record twice. A pipeline's list_files keeps TensorFlow's duplicates, and
# layout warns of them; two -of-N sets of one prefix are warned of.
# Usage: file_overlap_test.py TFDIST
import json
import os
import shutil
import sys
import tempfile

import checks
from checks import check, tfdist


def gen(folder, *args):
    """Writes a set with `tfdist gen` in a folder of its own, then moves it
    into `folder` (beside what is there)."""
    staging = tempfile.mkdtemp(dir=os.path.dirname(folder))
    tfdist("gen", "--no-fsync", "-o", os.path.join(staging, "s"), "--kind", "text", *args)
    for name in os.listdir(staging):
        shutil.move(os.path.join(staging, name), os.path.join(folder, name))
    os.rmdir(staging)


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "d")
        os.mkdir(d)
        gen(d, "--files", "4", "--records", "10")
        gen(d, "--files", "2", "--records", "3", "--output-compression", "gzip")
        overlap = [f"{d}/*.tfrecord*", f"{d}/*.gz"]

        proc = tfdist("count", *overlap)
        check(proc.stdout.splitlines()[-1].split()[0] == "46",
              f"count of overlapping patterns: {proc.stdout}")
        for i in range(2):
            check(f"tfdist: warning: {d}/s-0000{i}-of-00002.tfrecord.gz matched by more than one "
                  "pattern; read once" in proc.stderr, f"count's warning: {proc.stderr}")
        check(f"{d}/s-*-of-00002.tfrecord.gz and {d}/s-*-of-00004.tfrecord: two sets of shards "
              f"of {d}/s; the dataset is counted twice" in proc.stderr, f"two sets: {proc.stderr}")
        out = json.loads(tfdist("count", "--json", *overlap).stdout)
        check(out["records"] == 46 and len(out["files"]) == 6, f"count --json: {out}")
        check(any("matched by more than one pattern" in w for w in out.get("warnings", [])),
              f"count --json warnings: {out}")
        out = json.loads(tfdist("verify", "--json", *overlap).stdout)
        check(out["records"] == 46 and out.get("warnings"), f"verify --json: {out}")

        # reshard of them: each record once.
        os.mkdir(f"{tmp}/r")
        tfdist("reshard", "--no-fsync", *overlap, "-o", f"{tmp}/r/s", "--num-shards", "2")
        out = json.loads(tfdist("count", "--json", f"{tmp}/r/s-*").stdout)
        check(out["records"] == 46, f"reshard of overlapping patterns wrote {out['records']} "
                                    "records for 46")

        # One file by two spellings, and by a symbolic link.
        one = f"{d}/s-00000-of-00004.tfrecord"
        proc = tfdist("count", one, f"{d}/./s-00000-of-00004.tfrecord")
        check(proc.stdout.splitlines()[-1].split()[0] == "10", f"d/x and d/./x: {proc.stdout}")
        check("the same file as" in proc.stderr, f"d/x and d/./x: {proc.stderr}")
        link = os.path.join(tmp, "link.tfrecord")
        os.symlink(one, link)
        proc = tfdist("count", link, f"{d}/s-*-of-00004.tfrecord")
        check(proc.stdout.splitlines()[-1].split()[0] == "40", f"a link and its file: {proc.stdout}")

        # list_files keeps what it matches twice, as TensorFlow does; layout warns.
        pipeline = (f'list_files(["{d}/s-*-of-00004.tfrecord", "{d}/s-00000-*.tfrecord"], '
                    'shuffle=False).interleave(tfrecord).batch(5)')
        out = json.loads(tfdist("layout", "--format", "json", "--workers", "2", pipeline).stdout)
        check(out["summary"]["records"] == 50, f"list_files duplicates not kept: {out['summary']}")
        check(any(f"{one} matched by more than one pattern" in w and "kept twice" in w
                  for w in out["warnings"]), f"layout --format json warnings: {out['warnings']}")
        proc = tfdist("layout", "--format", "summary", "--workers", "2", pipeline)
        check("kept twice" in proc.stdout, f"layout --format summary: {proc.stdout}")
        proc = tfdist("layout", "--workers", "2", pipeline)
        check("kept twice" in proc.stdout, f"layout (table): {proc.stdout}")

        # Two -of-N sets of one prefix under one list_files glob.
        e = os.path.join(tmp, "e")
        os.mkdir(e)
        gen(e, "--files", "4", "--records", "10")
        gen(e, "--files", "2", "--records", "20")
        pipeline = f'list_files("{e}/s-*", shuffle=False).interleave(tfrecord).batch(5)'
        out = json.loads(tfdist("layout", "--format", "json", "--workers", "2", pipeline).stdout)
        check(any(f"{e}/s-*-of-00002.tfrecord and {e}/s-*-of-00004.tfrecord: two sets of shards of {e}/s" in w
                  for w in out["warnings"]), f"two sets in layout: {out['warnings']}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
