#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# tfdist digest proves a round trip lost nothing: a dataset, its reshard
# into another number of GZIP shards shuffled by a seed, and that converted
# back give the same record count and unordered digest (and the same ordered
# one where the order is kept); a record there twice changes the digest,
# where an XOR of the hashes would not; a corrupt file is exit 3 naming the
# file and offset.
# Usage: digest_test.py TFDIST
import json
import os
import shutil
import sys
import tempfile

import checks
from checks import check, tfdist


def digest(*files):
    return json.loads(tfdist("digest", "--json", *files).stdout)


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-digest-") as tmp:
        tfdist("gen", "-o", f"{tmp}/d", "--files", "5", "--records", "20-80", "--size", "10-300",
               "--seed", "3")
        src = digest(f"{tmp}/d-*")
        check(src["hash"] == "xxh3-64" and src["ordered"] and src["unordered"],
              f"the source's digest: {src}")

        # Reshard: 3 GZIP shards, shuffled by a seed; then convert them back.
        os.mkdir(f"{tmp}/gz")
        tfdist("reshard", "-o", f"{tmp}/gz/r", "--num-shards", "3", "--seed", "11", "--output-compression", "gzip",
               f"{tmp}/d-*")
        shuffled = digest(f"{tmp}/gz/r-*")
        check(all(f["compression"] == "GZIP" for f in shuffled["files"]) and
              len(shuffled["files"]) == 3, f"three GZIP shards: {shuffled['files']}")
        os.mkdir(f"{tmp}/back")
        tfdist("convert", "--output-compression", "none", "--output-dir", f"{tmp}/back", f"{tmp}/gz/r-*")
        back = digest(f"{tmp}/back/r-*")
        for name, d in (("the shuffled GZIP reshard", shuffled), ("its conversion back", back)):
            check(d["records"] == src["records"] and d["bytes"] == src["bytes"] and
                  d["unordered"] == src["unordered"],
                  f"{name} has the source's records and unordered digest: {d} vs {src}")
        check(shuffled["ordered"] != src["ordered"], "a shuffle changes the ordered digest")
        check(back["ordered"] == shuffled["ordered"], "convert keeps the order")

        # Without a seed the order is kept: the ordered digest is the same
        # across another number of files.
        tfdist("reshard", "-o", f"{tmp}/gz/k", "--num-shards", "7", "--output-compression", "gzip", f"{tmp}/d-*")
        kept = digest(f"{tmp}/gz/k-*")
        check(kept["ordered"] == src["ordered"] and kept["unordered"] == src["unordered"],
              f"7 shards in order: the same digests: {kept} vs {src}")

        # Records there twice: two copies of a one-record file. The XOR of
        # the hashes would be the source's again; the sum is not.
        tfdist("gen", "-o", f"{tmp}/one", "--records", "1", "--size", "10", "--seed", "5")
        shutil.copy(f"{tmp}/one", f"{tmp}/two")
        once = digest(f"{tmp}/d-*", f"{tmp}/one")
        twice = digest(f"{tmp}/d-*", f"{tmp}/one", f"{tmp}/two")
        check(twice["records"] == src["records"] + 2, f"two more records: {twice}")
        check(len({src["unordered"], once["unordered"], twice["unordered"]}) == 3,
              f"a doubled record changes the unordered digest: {src['unordered']}, "
              f"{once['unordered']}, {twice['unordered']}")

        # Text output: the total line holds both digests.
        text = tfdist("digest", f"{tmp}/gz/r-*").stdout.splitlines()
        total = [line for line in text if line.endswith("total (3 files)")]
        check(len(total) == 1 and shuffled["ordered"] in total[0] and
              shuffled["unordered"] in total[0], f"the total line: {text}")
        check(text[-1].startswith("hash: xxh3-64"), f"the hash is named: {text}")

    # A corrupt file: exit 3 naming file and offset, and no total digest.
    proc = tfdist("digest", "testdata/one.tfrecord", "testdata/bad/data_crc.tfrecord", expect=3)
    check("testdata/bad/data_crc.tfrecord" in proc.stderr and "63" in proc.stderr,
          f"a corrupt record names file and offset: {proc.stderr}")
    check("1 bad: no digest" in proc.stdout, f"no total digest with a bad file: {proc.stdout}")
    # A GZIP file read as uncompressed, and a pattern matching nothing: usage errors.
    tfdist("digest", "--input-compression", "none", "testdata/examples.tfrecord.gz", expect=2)
    tfdist("digest", "testdata/no-such-*.tfrecord", expect=2)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
