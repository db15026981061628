#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Issue 25, points 1 and 2: a layout holds record ids, never payloads, so its
# peak memory follows the pipeline's buffers counted in elements and not the
# records' sizes (a map() included); records are still read and checked as
# before (the same errors); and the FILE summary from record counts goes
# through map(), parse_example and the other one-to-one stages, while a
# filter() makes the pipeline run, and the summary says why.
# Usage: layout_payload_test.py TFDIST
import json
import os
import subprocess
import sys
import tempfile

import checks
from checks import check

# A layout of 1 MiB records whose shuffle holds 100 of them per worker took
# over 200 MB before; record ids take a few MB whatever the records' size.
PEAK_MB = 60
SANITIZED = checks.SANITIZED

FEATURES = ('{"id": tf.io.FixedLenFeature([], tf.int64), '
            '"label": tf.io.FixedLenFeature([], tf.int64), '
            '"data": tf.io.FixedLenFeature([], tf.string)}')


def run_measured(*args):
    """Runs tfdist ARGS; returns its exit status, stdout, stderr and peak RSS in MB."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([checks.TFDIST, *args], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read().decode(errors="replace"),
                err.read().decode(errors="replace"), usage.ru_maxrss / 1024)


def gen(*args):
    checks.tfdist("gen", "--no-fsync", *args)


def test_memory(tmp):
    """A map() over large records: memory follows the buffers' elements."""
    prefix = os.path.join(tmp, "big", "part")
    os.makedirs(os.path.dirname(prefix))
    gen("-o", prefix, "--files", "4", "--records", "60", "--size", "1M", "--kind", "random")
    pattern = prefix + "-*"
    pipelines = {
        "parallel interleave":
            f'list_files("{pattern}").interleave(tfrecord, cycle_length=2, num_parallel_calls=2)'
            '.shuffle(100, seed=1).map(opaque("decode")).batch(8, drop_remainder=True)',
        "sequential interleave":
            f'list_files("{pattern}").interleave(tfrecord, cycle_length=2)'
            '.shuffle(100, seed=1).map(opaque("decode")).prefetch(4).batch(8)',
    }
    for name, pipeline in pipelines.items():
        for fmt in ("table", "json", "summary"):
            rc, out, err, peak = run_measured("layout", "--workers", "2", "--replicas", "2",
                                              "--format", fmt, pipeline)
            check(rc == 0, f"{name}, --format {fmt}: exit {rc}: {err[-500:]}")
            if not SANITIZED:
                check(peak < PEAK_MB, f"{name}, --format {fmt}: peak RSS {peak:.0f} MB over "
                                      f"240 MB of 1 MiB records, expected under {PEAK_MB} MB")
    # --steps over a repeat(): memory does not grow with the steps either.
    pipeline = (f'list_files("{pattern}").repeat().interleave(tfrecord, cycle_length=2, '
                'num_parallel_calls=2).shuffle(100, seed=1).map(opaque("decode")).batch(4)')
    rc, out, err, peak = run_measured("layout", "--format", "summary", "--steps", "400",
                                      "--workers", "2", "--replicas", "2", pipeline)
    check(rc == 0 and "steps: 400 (planned" in out, f"--steps 400: exit {rc}: {out[-300:]}{err}")
    if not SANITIZED:
        check(peak < PEAK_MB, f"--steps 400 over repeat(): peak RSS {peak:.0f} MB, "
                              f"expected under {PEAK_MB} MB")


def test_checked_as_before(tmp):
    """Record ids are read and checked: damage is the error it always was."""
    path = os.path.join(tmp, "damaged.tfrecord")
    gen("-o", path, "--records", "40", "--size", "3000", "--kind", "random")
    data = bytearray(open(path, "rb").read())
    at = 20 * (3000 + 16) + 12 + 100  # a payload byte of record 20: only its data CRC tells
    data[at] ^= 0x40
    with open(path, "wb") as f:
        f.write(data)
    want = f"{path}: corrupted record at {20 * 3016 + 12}: data CRC mismatch"
    for reader in ("interleave(tfrecord)", "interleave(tfrecord, cycle_length=2, num_parallel_calls=2)"):
        pipeline = f'from_tensor_slices(["{path}"]).{reader}.map(opaque("f")).batch(4)'
        for args in ([], ["--format", "summary"], ["--format", "json", "--label", "ref"]):
            proc = checks.tfdist("layout", *args, pipeline, expect=3)
            text = proc.stderr + proc.stdout
            check(want in text, f"layout {args} over {reader}: {text[-600:]}")
        # ignore_errors() ends the file at the same record.
        proc = checks.tfdist("layout", "--format", "summary", pipeline + ".ignore_errors()")
        check("records: 20 received" in proc.stdout, f"ignore_errors over {reader}: {proc.stdout}")


def test_labels(tmp):
    """A printable payload's label: up to 64 characters, then '...'."""
    path = os.path.join(tmp, "text.tfrecord")
    long_text = "x" * 80 + "{g}"
    gen("-o", path, "--records", "2", "--kind", "text", "--text", long_text)
    short = os.path.join(tmp, "short.tfrecord")
    gen("-o", short, "--records", "2", "--kind", "text", "--text", "r{g}")
    for reader in ("interleave(tfrecord)", "interleave(tfrecord, num_parallel_calls=2)"):
        pipeline = f'from_tensor_slices(["{path}", "{short}"]).{reader}'
        proc = checks.tfdist("layout", "--format", "json", pipeline)
        labels = [e for w in json.loads(proc.stdout)["workers"] for e in w["elements"]]
        check(sorted(labels) == sorted(["x" * 64 + "...", "x" * 64 + "...", "r0", "r1"]),
              f"labels over {reader}: {labels}")
        proc = checks.tfdist("layout", "--format", "json", "--label", "ref", pipeline)
        labels = [e for w in json.loads(proc.stdout)["workers"] for e in w["elements"]]
        check(sorted(labels) == sorted([f"{path}:0", f"{path}:1", f"{short}:0", f"{short}:1"]),
              f"--label ref over {reader}: {labels}")


def rows_of(summary):
    """The worker rows of a summary, without the bytes column."""
    rows = []
    for line in summary.splitlines():
        cells = line.split()
        if cells and cells[0].isdigit():
            rows.append(cells[:4] + cells[5:])
    return rows


def test_counted_summary(tmp):
    """The FILE summary from record counts through one-to-one stages."""
    data = os.path.join(tmp, "examples")
    os.makedirs(data)
    gen("-o", os.path.join(data, "part"), "--files", "6", "--records", "25", "--size", "200")
    index_dir = os.path.join(tmp, "idx")
    os.makedirs(index_dir)  # index --index-dir, as every writer, wants its folder there
    checks.tfdist("index", "--index-dir", index_dir, *sorted(
        os.path.join(data, f) for f in os.listdir(data)))
    source = f'list_files("{data}/part-*").interleave(tfrecord, cycle_length=2, num_parallel_calls=2)'
    parse = f"map(parse_example({FEATURES}))"
    counted = [
        f"{source}.shuffle(50, seed=1).{parse}.batch(8, drop_remainder=True)",
        f'{source}.map(opaque("decode"), num_parallel_calls=4).prefetch(2).cache().batch(8).{parse}',
        f'{source}.prefetch(3).batch(8).map(opaque("augment")).prefetch(1)',
    ]
    for pipeline in counted:
        proc = checks.tfdist("layout", "--format", "summary", "--index-dir", index_dir,
                             "--workers", "3", "--replicas", "2", pipeline)
        check("6 files from index files, 0 by scanning" in proc.stdout,
              f"summary of {pipeline}: not from the index files:\n{proc.stdout}")
        check("bytes read per worker" not in proc.stdout, f"{pipeline}: the pipeline ran")
        # The rows of running it (take(-1) makes it run), bytes aside
        # (estimated for the dropped records when counted).
        ran = checks.tfdist("layout", "--format", "summary", "--workers", "3", "--replicas", "2",
                            pipeline + ".take(-1)")
        check(rows_of(proc.stdout) == rows_of(ran.stdout),
              f"{pipeline}: counted rows differ from the run's:\n{proc.stdout}\n{ran.stdout}")
    # filter() and a stage that changes the count: the pipeline runs, and says why.
    for tail, why in ((".filter(keep).batch(8)", "as filter(keep) (column "),
                      (".take(100).batch(8)", "as take() (column ")):
        proc = checks.tfdist("layout", "--format", "summary", "--index-dir", index_dir,
                             "--workers", "3", source + tail)
        line = [l for l in proc.stdout.splitlines() if l.startswith("records:")]
        check(len(line) == 1 and "counted by running the pipeline, " + why in line[0],
              f"summary with {tail}: {proc.stdout}")
        proc = checks.tfdist("layout", "--format", "summary", "--json", "--index-dir", index_dir,
                             "--workers", "3", source + tail)
        check(why in json.loads(proc.stdout)["summary"]["records_source"], proc.stdout)


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-layout-payload-") as tmp:
        os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
        test_memory(tmp)
        test_checked_as_before(tmp)
        test_labels(tmp)
        test_counted_summary(tmp)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
