#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# layout with index files, from the command line: indexes go to tfdist's
# cache, never into the data folder, and a pattern that matches an index
# file there is an error; the FILE summary takes its record counts from
# FILE.idx files and then from the directory index, with the same table as a
# scan; a file changed after indexing is scanned again
# (its entry is stale); DATA read by index gives the same elements as
# DATA without, while each worker reads only its own records.
# Usage: index_layout_test.py TFDIST
import glob
import json
import os
import shutil
import sys
import tempfile

import checks
from checks import check, tfdist


def summary(pipeline, *flags):
    """(the per-worker table, the records: line) of layout --format summary."""
    out = tfdist("layout", pipeline, "--workers", "2", "--format", "summary", *flags).stdout
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("worker "))
    end = next(i for i, l in enumerate(lines) if l.startswith("steps:"))
    # "records: 8 received, 0 dropped, 8 read; <how they were counted>"
    records = next((l for l in lines if l.startswith("records:")), "")
    records = "records: " + records.split("; ", 1)[1] if "; " in records else records
    bytes_read = next((l for l in lines if l.startswith("bytes read per worker:")), "")
    return lines[start:end], records, bytes_read


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-index-layout-") as top:
        # tfdist's index cache, for this test alone.
        os.environ["XDG_CACHE_HOME"] = os.path.join(top, "cache")
        tmp = os.path.join(top, "data")
        os.mkdir(tmp)
        for f in sorted(glob.glob("testdata/text-*.tfrecord")):
            shutil.copy(f, tmp)
        files = sorted(glob.glob(tmp + "/*.tfrecord"))
        data_names = sorted(os.listdir(tmp))
        pipeline = (f'list_files("{tmp}/*.tfrecord", shuffle=False)'
                    '.interleave(tfrecord, cycle_length=2).batch(4)')

        scanned, records, _ = summary(pipeline, "--policy", "FILE")
        check(records == "records: 0 files from index files, 2 by scanning",
              f"no index: counted by scanning: {records!r}")
        data_plain = json.loads(tfdist("layout", pipeline, "--workers", "2", "--policy", "DATA",
                                       "--format", "json").stdout)
        _, _, read_plain = summary(pipeline, "--policy", "DATA")

        made = json.loads(tfdist("index", "--json", *files).stdout)["files"]
        cache = os.path.join(top, "cache", "tfdist", "index") + os.path.realpath(tmp)
        check([m["index"] for m in made] == [os.path.join(cache, os.path.basename(f) + ".idx")
                                             for f in files],
              f"the indexes go to the cache, by the folder's path: {made}")
        check(sorted(os.listdir(tmp)) == data_names, "nothing is written into the data folder")
        table, records, _ = summary(pipeline, "--policy", "FILE")
        check(table == scanned, f"FILE.idx counts give the scan's table:\n{table}\n{scanned}")
        check(records == "records: 2 files from index files, 0 by scanning",
              f"FILE.idx files are used: {records!r}")
        # A glob over the whole folder matches the data alone.
        everything = pipeline.replace("/*.tfrecord", "/*")
        table, records, _ = summary(everything, "--policy", "FILE")
        check(table == scanned and records == "records: 2 files from index files, 0 by scanning",
              f"list_files(\"data/*\") over an indexed folder matches only the data: {table}")

        # DATA read by index: the same elements, and a worker reads less.
        data_indexed = json.loads(tfdist("layout", pipeline, "--workers", "2", "--policy",
                                         "DATA", "--format", "json").stdout)
        check(data_indexed["steps"] == data_plain["steps"],
              "DATA read by index gives the same steps and elements")
        # What TensorFlow reads: every worker the whole dataset, index files
        # or not (reading by index is tfdist run's own --read-by-index).
        _, _, read_indexed = summary(pipeline, "--policy", "DATA")
        check(read_indexed == read_plain,
              f"DATA reports TensorFlow's reads with index files too: {read_indexed!r} vs "
              f"{read_plain!r}")
        out = tfdist("layout", pipeline, "--workers", "2", "--policy", "DATA", "--format",
                     "summary").stdout
        check("read amplification: 2x" in out and "warning:  DATA sharding: each of the 2" in out,
              f"DATA read by index still reads 2x and says so:\n{out}")

        # The directory index in the cache: counts, but no listing (that
        # needs the index in the folder, where the folder's clock is read).
        made = json.loads(tfdist("index", "--directory", tmp, "--json").stdout)
        check(made["index"] == os.path.join(cache, ".tfdist-index") and made["listing"] is False,
              f"the directory index goes to the cache, without a listing: {made}")
        check(sorted(os.listdir(tmp)) == data_names, "nothing is written into the data folder")
        table, records, _ = summary(everything, "--policy", "FILE")
        check(table == scanned and records == "records: 2 files from .tfdist-index, "
                                              "0 from index files, 0 by scanning",
              f"the cached directory index is used: {records!r}")

        # Indexes in the data folder, by choice (--index-dir: DALI's layout).
        tfdist("index", "--index-dir", tmp, *files)
        made = json.loads(tfdist("index", "--directory", tmp, "--index-dir", tmp,
                                 "--json").stdout)
        check(made["listing"] is True, "the directory index records the folder's names")
        table, records, _ = summary(pipeline, "--policy", "FILE", "--index-dir", tmp)
        check(table == scanned, f"directory index counts give the scan's table:\n{table}")
        check(records.startswith("records: 2 files from .tfdist-index") and
              records.endswith("; folder names from its .tfdist-index"),
              f"the directory index and its listing are used: {records!r}")
        # Now "*" matches tfdist's index files: an error that says so.
        proc = tfdist("layout", everything, "--workers", "2", "--format", "summary", expect=2)
        check(f"'{tmp}/*' matches {tmp}/.tfdist-index, tfdist's directory index" in proc.stderr
              and "Move the index files out of" in proc.stderr,
              f"a pattern matching an index file is an error naming it:\n{proc.stderr}")
        proc = tfdist("count", f"{tmp}/text-*", expect=2)
        check(f"matches {files[0]}.idx, the record index of {files[0]}" in proc.stderr,
              f"count says so too:\n{proc.stderr}")

        # A file added at once after indexing: the index's listing of the
        # folder is no longer current, so the folder is listed and the file
        # scanned. The same when the folder's mtime is then set back (as
        # rsync -a or touch -r do).
        stat = os.stat(tmp)
        extra = os.path.join(tmp, "text-extra.tfrecord")
        shutil.copy(files[1], extra)
        for what in ("added", "added, then the folder's mtime set back"):
            table, records, _ = summary(pipeline, "--policy", "FILE", "--index-dir", tmp)
            check(sum(int(row.split()[1]) for row in table[1:]) == 3,
                  f"a file {what} after indexing is listed:\n{table}")
            check(records == "records: 2 files from .tfdist-index, 0 from index files, "
                             "1 by scanning", f"and scanned ({what}): {records!r}")
            os.utime(tmp, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        os.remove(extra)

        # A file grown after indexing: its entries are stale, it is scanned,
        # and the table is that of the new contents.
        with open(files[1], "rb") as src, open(files[0], "ab") as dst:
            dst.write(src.read())
        os.utime(files[0], None)
        table, records, _ = summary(pipeline, "--policy", "FILE", "--index-dir", tmp)
        for idx in glob.glob(tmp + "/*.idx") + [os.path.join(tmp, ".tfdist-index")]:
            os.remove(idx)
        rescanned, _, _ = summary(pipeline, "--policy", "FILE", "--index-dir", tmp)
        check(table == rescanned, f"a stale entry is not used:\n{table}\n{rescanned}")
        check("1 by scanning" in records and "1 stale .tfdist-index entry ignored" in records,
              f"the changed file is scanned and its entry counted stale: {records!r}")
        # The cache's entries for it are stale too.
        table, records, _ = summary(pipeline, "--policy", "FILE")
        check(table == rescanned and "1 stale .tfdist-index entry ignored" in records,
              f"the cache's stale entry is not used: {records!r}")

    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
