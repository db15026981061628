#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Indexes are trusted only while they fit their files, as users break them:
# a file rewritten in place with the same size and the mtime put back
# (cp -p, touch -r), or with the same future mtime (a clock that ran ahead),
# is not reported with the old index's numbers by count, layout or the
# directory index; run --read-by-index over such an index names it, reads
# the file instead and exits 0 with the right records; and a directory index
# truncated in place while layout reads it is a warning, never SIGBUS.
# Usage: index_trust_test.py TFDIST
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile

import checks
from checks import check, tfdist


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = _crc32c_table()


def masked_crc(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    c ^= 0xFFFFFFFF
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecords(payloads):
    out = b""
    for p in payloads:
        length = struct.pack("<Q", len(p))
        out += length + struct.pack("<I", masked_crc(length)) + p + struct.pack("<I", masked_crc(p))
    return out


# Two datasets of one size (104 bytes): 4 records of 10 bytes, 2 of 36.
FOUR = tfrecords([b"four-rec-%d" % i for i in range(4)])
TWO = tfrecords([b"two-records-of-thirty-six-bytes-%04d" % i for i in range(2)])
assert len(FOUR) == len(TWO)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def rewrite_in_place(path, data):
    """The same inode, new contents (as cp onto an existing file does)."""
    with open(path, "r+b") as f:
        f.write(data)
        f.truncate()


def count(path, *flags):
    proc = tfdist("count", path, "--json", *flags)
    return json.loads(proc.stdout)["records"], proc.stderr


def summary_records(pipeline, workers=2):
    out = tfdist("layout", pipeline, "--workers", str(workers), "--policy", "FILE", "--format",
                 "summary").stdout
    line = next((l for l in out.splitlines() if l.startswith("records:")), "")
    return line


def same_size_rewrites(top):
    """cp -p, touch -r, and a future mtime kept: the index no longer fits."""
    data = os.path.join(top, "rewrites")
    os.mkdir(data)
    # cp -p: the copy's mtime is the old file's, its size the same.
    f = os.path.join(data, "cp.tfrecord")
    write(f, FOUR)
    tfdist("index", f)
    check(count(f)[0] == 4, "the index counts the first version")
    src = os.path.join(top, "two.tfrecord")
    write(src, TWO)
    st = os.stat(f)
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    subprocess.run(["cp", "-p", src, f], check=True)
    check(os.stat(f).st_mtime_ns == st.st_mtime_ns and os.stat(f).st_size == st.st_size,
          "cp -p kept the size and the mtime")
    records, err = count(f)
    check(records == 2, f"cp -p, same size and mtime: count reports the new file, not the "
                        f"index's 4 records: {records}")
    check("ignoring the index" in err and f"{os.path.basename(f)}.idx" in err,
          f"count names the stale index:\n{err}")

    # touch -r: rewritten in place, the old mtime put back from a reference.
    f = os.path.join(data, "touch.tfrecord")
    ref = os.path.join(top, "ref")
    write(f, FOUR)
    tfdist("index", f)
    write(ref, b"")
    subprocess.run(["touch", "-r", f, ref], check=True)
    rewrite_in_place(f, TWO)
    subprocess.run(["touch", "-r", ref, f], check=True)
    check(os.stat(f).st_mtime_ns == os.stat(ref).st_mtime_ns, "touch -r put the mtime back")
    check(count(f)[0] == 2, "touch -r, same size and mtime: count reports the new file")

    # A future mtime (a host whose clock ran ahead), indexed, then the file
    # rewritten with the same size and the same future mtime.
    f = os.path.join(data, "future.tfrecord")
    write(f, FOUR)
    subprocess.run(["touch", "-d", "2100-01-01", f], check=True)
    tfdist("index", f)
    check(count(f)[0] == 4, "a file with a future mtime is indexed and counted")
    rewrite_in_place(f, TWO)
    subprocess.run(["touch", "-d", "2100-01-01", f], check=True)
    check(count(f)[0] == 2, "future mtime kept across a same-size rewrite: count reports the "
                            "new file")
    pipeline = f'list_files("{f}", shuffle=False).interleave(tfrecord, cycle_length=1).batch(2)'
    line = summary_records(pipeline, workers=1)
    check(line.startswith("records: 2 received"),
          f"layout reports the new file's records too: {line!r}")

    # The directory index: an entry whose file was rewritten with cp -p is
    # stale, and layout reports the new file.
    d = os.path.join(top, "folder")
    os.mkdir(d)
    f = os.path.join(d, "a.tfrecord")
    write(f, FOUR)
    write(os.path.join(d, "b.tfrecord"), FOUR)
    tfdist("index", "--directory", d)
    pipeline = (f'list_files("{d}/*.tfrecord", shuffle=False)'
                '.interleave(tfrecord, cycle_length=2).batch(2)')
    line = summary_records(pipeline)
    check(line.startswith("records: 8 received") and "2 files from .tfdist-index" in line,
          f"the directory index counts both files: {line!r}")
    st = os.stat(f)
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    subprocess.run(["cp", "-p", src, f], check=True)
    line = summary_records(pipeline)
    check(line.startswith("records: 6 received") and "1 stale .tfdist-index entry" in line,
          f"a .tfdist-index entry of a file rewritten by cp -p is stale: {line!r}")


def read_by_index_over_a_stale_index(top):
    d = os.path.join(top, "run")
    os.mkdir(d)
    a, b = os.path.join(d, "a.tfrecord"), os.path.join(d, "b.tfrecord")
    write(a, FOUR)
    write(b, FOUR)
    tfdist("index", a, b)
    # rsync -t / cp -p of a new version: same size, the old mtime.
    src = os.path.join(top, "two-for-run.tfrecord")
    write(src, TWO)
    st = os.stat(a)
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    subprocess.run(["cp", "-p", src, a], check=True)
    pipeline = (f'list_files("{d}/*.tfrecord", shuffle=False)'
                '.interleave(tfrecord, cycle_length=2).batch(2)')
    topology = ("--workers", "2", "--policy", "DATA", "--all-workers")
    plain = json.loads(tfdist("run", pipeline, *topology, "--json").stdout)
    proc = tfdist("run", pipeline, *topology, "--read-by-index", "--verify", "--json")
    if proc.returncode != 0:
        return
    report = json.loads(proc.stdout)
    check(report["records"] == 6 and report["bytes"] == plain["bytes"],
          f"--read-by-index over a stale index delivers the file's records: "
          f"{report['records']} records, {report['bytes']} bytes; without: {plain['bytes']}")
    check([(r["worker"], r["replica"], r["records"], r["bytes"]) for r in report["replicas"]] ==
          [(r["worker"], r["replica"], r["records"], r["bytes"]) for r in plain["replicas"]],
          "per replica, the same records as reading the files")
    said = " ".join(report.get("warnings", []) + report.get("notes", []))
    check(f"{os.path.basename(a)}.idx" in said,
          f"the run names the index that does not fit: {said!r}")


def fake_directory_index(lines):
    """A version 2 directory index (read by every tfdist since) of `lines`
    "- NAME" lines, without a listing: much to parse, nothing to check."""
    head = "tfdist-directory-index 2\nlisting " + " ".join(["0" * 19] * 2 + ["0" * 20] * 2) + "\n"
    body = "".join(f"- name-{i:09d}-padding-padding-padding\n" for i in range(lines))
    return (head + body).encode()


def truncated_while_read(top):
    """A .tfdist-index truncated in place while layout reads it, from a
    second process: never SIGBUS (a mapped page past the new end). Bounded:
    a fixed number of trials, each waiting for the process to end."""
    d = os.path.join(top, "truncate")
    os.mkdir(d)
    write(os.path.join(d, "a.tfrecord"), FOUR)
    write(os.path.join(d, "b.tfrecord"), FOUR)
    index = os.path.join(d, ".tfdist-index")
    text = fake_directory_index(400_000)
    pipeline = (f'list_files("{d}/*.tfrecord", shuffle=False)'
                '.interleave(tfrecord, cycle_length=2).batch(2)')
    args = [checks.TFDIST, "layout", pipeline, "--workers", "2", "--policy", "FILE",
            "--format", "summary", "--index-dir", d]
    crashes, warned, wrong = 0, 0, []
    for trial in range(25):
        write(index, text)
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        maps, fds = f"/proc/{proc.pid}/maps", f"/proc/{proc.pid}/fd"
        # Wait until tfdist has the index open (or mapped), then cut it.
        seen = False
        while proc.poll() is None and not seen:
            try:
                with open(maps) as m:
                    seen = index in m.read()
                if not seen:
                    for fd in os.listdir(fds):
                        try:
                            if os.readlink(os.path.join(fds, fd)) == index:
                                seen = True
                                break
                        except OSError:
                            pass
            except OSError:
                break
        if seen:
            os.truncate(index, len(text) // 3 if trial % 2 else 0)
        out, err = proc.communicate(timeout=120)
        if proc.returncode in (-signal.SIGBUS, 128 + signal.SIGBUS):
            crashes += 1
            continue
        if proc.returncode != 0 or b"records: 8 received" not in out:
            wrong.append((proc.returncode, err.decode()[-300:]))
        if b"changed while read" in out + err:
            warned += 1
    check(crashes == 0, f"a directory index truncated while read killed tfdist with SIGBUS "
                        f"{crashes} times of 25")
    check(not wrong, f"each layout still ends well, with the file's records: {wrong[:3]}")
    print(f"truncated while read: {warned} of 25 layouts warned 'changed while read'")


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-index-trust-") as top:
        os.environ["XDG_CACHE_HOME"] = os.path.join(top, "cache")
        same_size_rewrites(top)
        read_by_index_over_a_stale_index(top)
        truncated_while_read(top)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
