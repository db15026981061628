#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# `tfdist run --timeline FILE`: the file is Chrome trace-event JSON as
# Perfetto and chrome://tracing read it (every event has its required
# fields, complete events of a track do not overlap and their timestamps
# increase, begin/end pairs balance, counters are numbers), with a process
# per worker, a track per stage and replica and the training loop's; the
# window of --timeline-steps bounds it, and a run that fails, or a bad
# window or path, leaves no file.
import html.parser
import json
import os
import sys
import tempfile
from collections import defaultdict

import checks
from checks import check, tfdist

REQUIRED = {"X": ("name", "ph", "ts", "dur", "pid", "tid"), "C": ("name", "ph", "ts", "pid", "args"),
            "M": ("name", "ph", "pid", "args"), "B": ("name", "ph", "ts", "pid", "tid"),
            "E": ("ph", "ts", "pid", "tid")}


def check_trace(name, path):
    """Checks the trace-event format of the file at `path`; returns it."""
    with open(path) as f:
        trace = json.load(f)
    events = trace.get("traceEvents")
    check(isinstance(events, list) and events, f"{name}: no traceEvents")
    by_track = defaultdict(list)
    counters = defaultdict(list)
    depth = defaultdict(int)
    processes, threads = {}, {}
    for e in events or []:
        ph = e.get("ph")
        check(ph in REQUIRED, f"{name}: an event of phase {ph}: {e}")
        missing = [k for k in REQUIRED.get(ph, ()) if k not in e]
        check(not missing, f"{name}: {e} lacks {missing}")
        if missing:
            continue
        if ph == "M":
            if e["name"] == "process_name":
                processes[e["pid"]] = e["args"]["name"]
            elif e["name"] == "thread_name":
                threads[(e["pid"], e["tid"])] = e["args"]["name"]
        elif ph == "X":
            check(isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and
                  e["dur"] >= 0, f"{name}: a complete event's times: {e}")
            by_track[(e["pid"], e["tid"])].append(e)
        elif ph == "C":
            check(all(isinstance(v, (int, float)) for v in e["args"].values()),
                  f"{name}: a counter's values are not numbers: {e}")
            counters[(e["pid"], e["name"])].append(e["ts"])
        elif ph == "B":
            depth[(e["pid"], e["tid"])] += 1
        elif ph == "E":
            depth[(e["pid"], e["tid"])] -= 1
    check(all(d == 0 for d in depth.values()), f"{name}: begin/end pairs do not balance")
    for track, evs in by_track.items():
        check(track in threads, f"{name}: track {track} has no thread_name")
        check(track[0] in processes, f"{name}: process {track[0]} has no process_name")
        for a, b in zip(evs, evs[1:]):
            # Timestamps increase along a track, and events end before the next
            # begins (to the nanosecond the file writes).
            check(a["ts"] <= b["ts"] and a["ts"] + a["dur"] <= b["ts"] + 0.001,
                  f"{name}: track {threads.get(track)}: {a} and {b} overlap or go back")
    for key, times in counters.items():
        check(times == sorted(times), f"{name}: counter {key}'s timestamps go back")
    return trace, processes, threads, by_track


class RunPage(html.parser.HTMLParser):
    """run's page: the embedded JSON, the rects per timeline track, the
    histogram's steps."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.embedded = None
        self.track_rects = []
        self.buckets = []
        self._script = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and a.get("id") == "tfdist-layout":
            self._script = []
        elif tag == "g" and "data-track" in a:
            self.track_rects.append(0)
        elif tag == "rect" and "data-i" in a:
            self.track_rects[-1] += 1
        elif tag == "g" and "data-bucket" in a:
            self.buckets.append(int(a["data-steps"]))

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.embedded = json.loads("".join(self._script))
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self._script.append(data)


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        tfdist("gen", "-o", f"{tmp}/d", "--files", "8", "--records", "1000", "--kind", "text",
               "--no-fsync")
        pipeline = f'list_files("{tmp}/d-*", shuffle=False).interleave(tfrecord, cycle_length=2).batch(8)'
        # A 1,000-step run, one worker x 2 replicas, with a simulated step.
        path = f"{tmp}/run.json"
        tfdist("run", "--device", "cpu", "--replicas", "2", "--step-time-ms", "0.2",
               "--timeline", path, pipeline)
        trace, processes, threads, by_track = check_trace("1,000 steps", path)
        check(trace["otherData"].get("steps") == 1000, f"steps: {trace['otherData']}")
        check(sorted(processes.values()) == ["training loop", "worker 0"],
              f"processes: {processes}")
        names = sorted(threads.values())
        check(any(n.startswith("read") for n in names) and
              sum(n.startswith("replica ") for n in names) == 2 and
              any(n.startswith("loop") for n in names) and
              any(n.startswith("staging rings") for n in names), f"tracks: {names}")
        loop = [e for (pid, _), evs in by_track.items() if pid == 0 for e in evs]
        steps = {e["args"]["step"] for e in loop if e["name"] == "step"}
        check(steps == set(range(1, 1001)), f"simulated steps recorded: {len(steps)}")
        packs = sum(1 for (pid, tid), evs in by_track.items()
                    if threads[(pid, tid)].startswith("replica") for e in evs if e["name"] == "pack")
        check(packs == 2000, f"{packs} packs recorded for 2,000 per-replica batches")
        # The window bounds the loop's events and the file's size.
        sizes = {}
        for window in ("101:200", "101:400"):
            wpath = f"{tmp}/w{window.replace(':', '-')}.json"
            tfdist("run", "--device", "cpu", "--replicas", "2", "--timeline", wpath,
                   "--timeline-steps", window, pipeline)
            _, _, _, wtracks = check_trace(window, wpath)
            first, last = (int(x) for x in window.split(":"))
            seen = {e["args"]["step"] for (pid, _), evs in wtracks.items() if pid == 0
                    for e in evs if e["name"] == "receive"}
            check(seen == set(range(first, last + 1)), f"{window}: loop steps {min(seen)}..{max(seen)}")
            sizes[window] = os.path.getsize(wpath)
        ratio = sizes["101:400"] / sizes["101:200"]
        check(2.2 < ratio < 3.8, f"the file grows with the window: {sizes}")
        # Several workers in one process: a process each.
        apath = f"{tmp}/all.json"
        tfdist("run", "--device", "cpu", "--workers", "2", "--all-workers", "--replicas", "2",
               "--timeline", apath, "--timeline-steps", "1:50", pipeline)
        _, aprocs, _, _ = check_trace("2 workers", apath)
        check(sorted(aprocs.values()) == ["training loop", "worker 0", "worker 1"],
              f"processes of 2 workers: {aprocs}")
        # run --format html: the timeline drawn and the waits' histogram equal its JSON.
        proc = tfdist("run", "--device", "cpu", "--replicas", "2", "--format", "html",
                      "--timeline-steps", "1:100", pipeline)
        page = RunPage(proc.stdout)
        doc = page.embedded or {}
        tl = doc.get("timeline", {})
        check(tl.get("first_step") == 1 and tl.get("last_step") == 100, f"window: {tl}")
        check([len(t["events"]) for t in tl.get("tracks", [])] == page.track_rects,
              f"events drawn per track {page.track_rects}")
        check(sum(page.track_rects) == tl.get("events_listed") and
              tl.get("events_listed") <= 6000, "events listed")
        hist = doc.get("input_wait_histogram", [])
        check([b["steps"] for b in hist] == page.buckets, f"histogram drawn {page.buckets}")
        check(sum(page.buckets) == 99, f"the waits of steps 2..100: {sum(page.buckets)}")
        check(doc.get("steps") == 1000 and doc.get("records") == 8000, "the report's figures")
        check(not os.path.exists(f"{tmp}/timeline.json"), "no file without --timeline")
        with open(f"{tmp}/run-page.html", "w") as f:
            f.write(proc.stdout)
        # No file: a bad window, a missing folder, a run that fails.
        for bad in ("0:5", "5:2", "x", "3"):
            tfdist("run", "--device", "cpu", "--timeline", f"{tmp}/bad.json", "--timeline-steps",
                   bad, pipeline, expect=2)
            check(not os.path.exists(f"{tmp}/bad.json"), f"--timeline-steps {bad} leaves a file")
        tfdist("run", "--device", "cpu", "--timeline", f"{tmp}/no/such/t.json", pipeline,
               expect=2)
        with open(f"{tmp}/bad.tfrecord", "wb") as f:
            f.write(b"\x10\x00\x00\x00\x00\x00\x00\x00garbage-crc-and-more-bytes")
        proc = tfdist("run", "--device", "cpu", "--timeline", f"{tmp}/failed.json",
                      f'tfrecord("{tmp}/bad.tfrecord").batch(2)', expect=3)
        check(not os.path.exists(f"{tmp}/failed.json"), "a failed run leaves a timeline")
        check(not [n for n in os.listdir(tmp) if n.startswith(".")],
              f"temporary files left: {os.listdir(tmp)}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
