#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# `tfdist layout --format html` (and --compare): every number the page draws
# equals the JSON it embeds, and that JSON is what tfdist prints with --json
# (or, for a layout too large to list, --format summary --json plus the
# grid drawn). The page stays self-contained and within 2 MB at 64 workers
# x 8 replicas x over 1,000 steps of 2,000 uneven files.
#
# Usage: html_test.py TFDIST [--browser SHOTS_DIR]
#   --browser: also load each page in headless Chromium (exit 77 where there
#   is none): no console message, the script ran to its end (data-ready),
#   and the numbers of the DOM Chromium built equal the embedded JSON; a
#   screenshot of each page goes to SHOTS_DIR.
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import checks
from checks import check, tfdist

PAGE_LIMIT = 2 * 1000 * 1000


class Page(html.parser.HTMLParser):
    """What the checks read of a page: the embedded JSON, the heat map's
    attributes and runs, the bars and the tables' cells."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.embedded = None
        self.map = None  # the <svg id="heatmap"> attributes
        self.rows = []  # [(row id, [(c, n, [values])])]
        self.bars = {}  # metric -> [(id, value text)]
        self.columns = {}  # metric -> [(first, n, min, max)]
        self.tables = {}  # table id -> [(row attrs, [(cell attrs, text)])]
        self.ready = None
        self.external = []
        self._script = None
        self._metric = None
        self._table = None
        self._cell = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.ready = a.get("data-ready")
        for key in ("src", "href"):
            if key in a:
                self.external.append(f"{tag} {key}={a[key]}")
        if tag == "script" and a.get("id") == "tfdist-layout":
            self._script = []
        elif tag == "svg" and a.get("id") == "heatmap":
            self.map = a
        elif tag == "g" and "data-row" in a:
            self.rows.append((int(a["data-row"]), []))
        elif tag == "rect" and "data-v" in a:
            self.rows[-1][1].append(
                (int(a["data-c"]), int(a["data-n"]), [int(x) for x in a["data-v"].split(",")]))
        elif tag == "rect" and "data-first" in a and self._metric:
            self.columns.setdefault(self._metric, []).append(
                (int(a["data-first"]), int(a["data-n"]), int(a["data-min"]), int(a["data-max"])))
        elif tag == "svg" and "data-metric" in a:
            self._metric = a["data-metric"]
            self.bars[self._metric] = []
        elif tag == "g" and "data-value" in a and self._metric:
            self.bars[self._metric].append((a["data-id"], a["data-value"]))
        elif tag == "table":
            self._table = a.get("id")
            self.tables[self._table] = []
        elif tag == "tr" and self._table and ("data-worker" in a or "data-policy" in a or
                                              "data-file" in a):
            self.tables[self._table].append((a, []))
        elif tag == "td" and self._table and self.tables[self._table]:
            self._cell = (a, [])

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.embedded = json.loads("".join(self._script))
            self._script = None
        elif tag == "svg":
            self._metric = None
        elif tag == "td" and self._cell is not None:
            self.tables[self._table][-1][1].append((self._cell[0], "".join(self._cell[1])))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._script is not None:
            self._script.append(data)
        elif self._cell is not None:
            self._cell[1].append(data)


def cells_from_steps(doc, by_replica, per, per_row):
    """The heat map's cells, computed here from the layout's steps: per row
    (of `per_row` workers), per column of `per` steps, [records, batches,
    empty, idle, dropped, steps]."""
    rows = {}
    for i, step in enumerate(doc["steps"]):
        column = i // per
        this = {}
        for b in step["batches"]:
            unit = b["replica"] if by_replica else b["worker"]
            c = this.setdefault(unit, [0, 0, 0, 0, 0, 1])
            n = 0 if b.get("padding") else len(b["elements"])
            c[1] += 1
            if n == 0:
                c[2] += 1
            if step.get("dropped"):
                c[4] += n
            else:
                c[0] += n
        stepped = set()
        for unit, c in sorted(this.items()):
            if c[2] == c[1]:
                c[3] = 1
            row = unit // per_row * per_row
            if row in stepped:
                c[5] = 0
            stepped.add(row)
            cols = rows.setdefault(row, [])
            while len(cols) <= column:
                cols.append([0] * 6)
            cols[column] = [x + y for x, y in zip(cols[column], c)]
    return rows


def cells_from_grid(grid):
    """The cells of the page JSON's grid (runs of equal cells)."""
    rows = {}
    for row_id, runs in zip(grid["row_ids"], grid["runs"]):
        cols = []
        for run in runs:
            cols.extend([run[1:]] * run[0])
        rows[row_id] = cols
    return rows


def cells_drawn(page):
    rows = {}
    for row_id, rects in page.rows:
        cols = []
        for c, n, values in rects:
            check(c == len(cols), f"row {row_id}: a run starts at column {c}, not {len(cols)}")
            cols.extend([values] * n)
        rows[row_id] = cols
    return rows


def check_workers(name, page, summary):
    """The per-worker table and bars equal the summary's workers."""
    table = page.tables.get("workers-table", [])
    check(len(table) == len(summary["workers"]),
          f"{name}: {len(table)} table rows for {len(summary['workers'])} workers")
    for (attrs, cells), w in zip(table, summary["workers"]):
        check(int(attrs["data-worker"]) == w["worker"], f"{name}: table row {attrs}")
        for cell, text in cells:
            field = cell.get("data-field")
            if field is None:
                continue
            want = w.get(field)
            check(text == ("-" if want is None else str(want)),
                  f"{name}: worker {w['worker']} {field}: drawn {text}, JSON {want}")
    records = dict(page.bars.get("records", []))
    for w in summary["workers"]:
        check(records.get(str(w["worker"])) == str(w["records"]),
              f"{name}: worker {w['worker']}'s records bar {records.get(str(w['worker']))}, "
              f"JSON {w['records']}")
    values = [int(v) for _, v in page.bars.get("records", [])]
    check(values == sorted(values, reverse=True), f"{name}: the records bars are not sorted")


def check_layout_page(name, text, expect_json, expect_full):
    page = Page(text)
    check(len(text.encode()) <= PAGE_LIMIT, f"{name}: the page is {len(text.encode())} bytes")
    check(not page.external, f"{name}: the page refers outside itself: {page.external}")
    check(not re.search(r"https?://|@import|url\((?!#)", text),
          f"{name}: a URL or an import in the page")
    check(page.embedded == expect_json,
          f"{name}: the embedded JSON differs from tfdist's own\n"
          f"{json.dumps(page.embedded)[:1500]}\n{json.dumps(expect_json)[:1500]}")
    doc = page.embedded or {}
    check(("grid" not in doc) == expect_full, f"{name}: lists every batch: {'grid' not in doc}")
    summary = doc.get("summary", {})
    if page.map is not None:
        per = int(page.map["data-steps-per-column"])
        by_replica = page.map["data-rows"] == "replica"
        drawn = cells_drawn(page)
        if "steps" in doc:
            want = cells_from_steps(doc, by_replica, per, int(page.map["data-per-row"]))
            check(int(page.map["data-steps"]) == len(doc["steps"]), f"{name}: steps drawn")
        else:
            grid = doc.get("grid", {})
            check(grid.get("steps_per_column") == per and
                  grid.get("rows") == page.map["data-rows"], f"{name}: the grid's shape")
            want = cells_from_grid(grid)
        check(drawn == want, f"{name}: the cells drawn differ from the JSON's\n"
                             f"{str(drawn)[:800]}\n{str(want)[:800]}")
        check(int(page.map["data-columns"]) <= 1000, f"{name}: columns {page.map['data-columns']}")
        check(summary.get("steps") is None or summary["steps"] == int(page.map["data-steps"]),
              f"{name}: {page.map['data-steps']} steps drawn, {summary.get('steps')} in JSON")
    check_workers(name, page, summary)
    return page


def check_compare_page(name, text, expect_json):
    page = Page(text)
    check(not page.external, f"{name}: refers outside itself")
    check(page.embedded == expect_json, f"{name}: the embedded JSON differs from --json")
    rows = page.tables.get("compare-table", [])
    by_policy = {c["policy"]: c for c in (page.embedded or {}).get("compare", [])}
    check(len(rows) == len(by_policy), f"{name}: {len(rows)} policy rows")
    for attrs, cells in rows:
        c = by_policy.get(attrs["data-policy"], {})
        s = c.get("summary")
        fields = {cell.get("data-field"): t for cell, t in cells}
        if s is None:
            continue
        check(fields.get("records") == str(s["records"]) and
              fields.get("dropped_records") == str(s["dropped_records"]) and
              fields.get("steps") == str(s.get("steps", "-")) and
              fields.get("imbalance") == f"{s['imbalance']:.2f}" and
              fields.get("read_amplification") == f"{s['read_amplification']}x",
              f"{name}: {attrs['data-policy']}: drawn {fields}, JSON {s}")
        bars = {m: dict(v) for m, v in page.bars.items()}
        check(bars["dropped_records"].get(attrs["data-policy"]) == str(s["dropped_records"]),
              f"{name}: {attrs['data-policy']}'s dropped bar")
    rec = (page.embedded or {}).get("recommend")
    if rec:
        check(rec["text"] in text.replace("&#39;", "'").replace("&quot;", '"'),
              f"{name}: the recommendation is not on the page")
    return page


def check_files_page(name, text, expect_json):
    """count's and reshard's page: the columns and the table equal the JSON's files."""
    page = Page(text)
    check(not page.external, f"{name}: refers outside itself")
    check(len(text.encode()) <= PAGE_LIMIT, f"{name}: {len(text.encode())} bytes")
    check(page.embedded == expect_json, f"{name}: the embedded JSON differs from --json")
    files = (page.embedded or {}).get("files", [])
    for metric in ("records", "bytes"):
        drawn = []
        for first, n, lo, hi in page.columns.get(metric, []):
            want = [f.get(metric, 0) for f in files[first:first + n]]
            check(want and lo == min(want) and hi == max(want),
                  f"{name}: {metric} of files {first}..{first + n - 1}: drawn {lo}..{hi}, "
                  f"JSON {want[:5]}")
            drawn.extend(range(first, first + n))
        check(drawn == list(range(len(files))), f"{name}: {metric}: not every file drawn once")
    rows = page.tables.get("files-table", [])
    check(len(rows) == min(len(files), 1000), f"{name}: {len(rows)} table rows")
    for (attrs, cells), f in zip(rows, files):
        fields = {c.get("data-field"): t for c, t in cells if c.get("data-field")}
        check(fields == {k: str(f[k]) for k in ("records", "bytes", "file_bytes")},
              f"{name}: file {attrs['data-file']}: drawn {fields}, JSON {f}")
    return page


class Findings(html.parser.HTMLParser):
    """check's page: per finding section, its kind, severity and fields' texts."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.found = []
        self._field = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and "data-finding" in a:
            self.found.append({"kind": a["data-kind"], "severity": a["data-severity"],
                               "fix_flags": []})
        elif tag == "dd" and self.found:
            self._field = (a["data-field"], [])

    def handle_endtag(self, tag):
        if tag == "dd" and self._field:
            key, parts = self._field
            if key == "fix_flags":
                self.found[-1]["fix_flags"].append("".join(parts))
            else:
                self.found[-1][key] = "".join(parts)
            self._field = None

    def handle_data(self, data):
        if self._field:
            self._field[1].append(data)


def check_check_page(name, text, expect_json):
    page = Page(text)
    check(not page.external, f"{name}: refers outside itself")
    check(page.embedded == expect_json, f"{name}: the embedded JSON differs from --json")
    drawn = Findings(text).found
    want = []
    for f in (page.embedded or {}).get("findings", []):
        w = {k: f[k] for k in ("kind", "severity", "tensorflow", "evidence", "fix", "fix_flags")}
        if f.get("other_versions"):
            w["other_versions"] = f["other_versions"]
        want.append(w)
    check(drawn == want, f"{name}: the findings drawn differ from the JSON's\n{drawn}\n{want}")
    return page


def chromium():
    for exe in ("chromium", "chromium-browser"):
        path = shutil.which(exe)
        if path:
            return path
    return None


def in_browser(exe, path, shot, profile):
    """Loads `path` in headless Chromium: (the DOM it built, its console lines)."""
    flags = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", f"--user-data-dir={profile}",
             "--enable-logging=stderr", "--v=0", "--window-size=1300,1000"]
    dom = subprocess.run(flags + ["--dump-dom", f"file://{path}"], capture_output=True,
                         text=True, timeout=120)
    subprocess.run(flags + [f"--screenshot={shot}", f"file://{path}"], capture_output=True,
                   timeout=120)
    console = [l for l in dom.stderr.splitlines() if "CONSOLE" in l]
    return dom.stdout, console, dom.returncode


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    shots = None
    exe = None
    if len(sys.argv) > 3 and sys.argv[2] == "--browser":
        exe = chromium()
        if exe is None:
            print("skip: no chromium (tools/setup --servers installs it)")
            return 77
        shots = sys.argv[3]
        os.makedirs(shots, exist_ok=True)
    pages = []  # (name, path, kind, expected JSON, full)
    with tempfile.TemporaryDirectory() as tmp:
        tfdist("gen", "-o", f"{tmp}/u", "--files", "40", "--records", "5-60", "--kind", "text",
               "--seed", "3", "--no-fsync")
        small = f'list_files("{tmp}/u-*", shuffle=False).interleave(tfrecord, cycle_length=2)'
        cases = [
            ("file-4x2", ["--workers", "4", "--replicas", "2", "--label", "ref",
                          small + ".batch(8)"]),
            ("data-worker-1", ["--workers", "2", "--replicas", "3", "--worker", "1",
                               "--policy", "DATA", "--label", "ref", small + ".batch(24)"]),
            ("off-dropped", ["--workers", "3", "--replicas", "2", "--policy", "OFF",
                             small + ".batch(7, drop_remainder=True)"]),
            ("epochs", ["--workers", "2", "--replicas", "2", "--epochs", "2",
                        small + ".shuffle(50, seed=4).batch(16)"]),
            ("unbatched", ["--workers", "3", small + ".take(5)"]),
            ("600-workers", ["--workers", "600", "--policy", "DATA", small + ".batch(600)"]),
            ("dropped-step", ["--api", "from-function", "--replicas", "2",
                              "range(7).batch(2, drop_remainder=True)"]),
        ]
        # The size bound: 64 workers x 8 replicas, over 1,000 steps, 2,000 uneven files.
        tfdist("gen", "-o", f"{tmp}/big", "--files", "2000", "--records", "500-1500", "--kind",
               "text", "--seed", "5", "--no-fsync")
        big = (f'list_files("{tmp}/big-*", shuffle=False).interleave(tfrecord, cycle_length=4)'
               ".batch(2048)")
        cases.append(("file-64x8", ["--workers", "64", "--replicas", "8", big]))
        for name, args in cases:
            proc = tfdist("layout", "--format", "html", *args)
            full_text = tfdist("layout", "--json", *args).stdout
            is_full = "grid" not in (Page(proc.stdout).embedded or {})
            # Under 900 KiB the page lists every batch; over 2 MB it cannot.
            check(is_full or len(full_text) > 900 * 1024, f"{name}: a small layout aggregated")
            check(not is_full or len(full_text) < PAGE_LIMIT, f"{name}: a large layout listed")
            if is_full:
                want = json.loads(full_text)
            else:
                want = json.loads(tfdist("layout", "--format", "summary", "--json", *args).stdout)
                want["grid"] = Page(proc.stdout).embedded["grid"]
            check_layout_page(name, proc.stdout, want, is_full)
            if name == "file-64x8":
                steps = json.loads(tfdist("layout", "--format", "summary", "--json",
                                          *args).stdout)["summary"]["steps"]
                check(steps >= 1000, f"{name}: {steps} steps, not over 1,000")
                print(f"{name}: {len(proc.stdout.encode())} bytes, {steps} steps")
            path = f"{tmp}/{name}.html"
            with open(path, "w") as f:
                f.write(proc.stdout)
            pages.append((name, path, "layout", want, is_full))
        for name, args in (("compare-3x2", ["--workers", "3", "--replicas", "2",
                                            small + ".batch(24)"]),):
            proc = tfdist("layout", "--compare", "--format", "html", *args)
            want = json.loads(tfdist("layout", "--compare", "--json", *args).stdout)
            check_compare_page(name, proc.stdout, want)
            path = f"{tmp}/{name}.html"
            with open(path, "w") as f:
                f.write(proc.stdout)
            pages.append((name, path, "compare", want, True))
        # count and reshard: each file's records and bytes.
        proc = tfdist("count", "--format", "html", f"{tmp}/big-*")
        want = json.loads(tfdist("count", "--json", f"{tmp}/big-*").stdout)
        check_files_page("count-2000", proc.stdout, want)
        pages.append(("count-2000", f"{tmp}/count-2000.html", "files", want, True))
        os.makedirs(f"{tmp}/rs")
        proc = tfdist("reshard", "--num-shards", "7", "-o", f"{tmp}/rs/part", "--format", "html",
                      f"{tmp}/u-*")
        want = json.loads(tfdist("count", "--json", f"{tmp}/rs/part-*").stdout)
        page = Page(proc.stdout)
        # reshard's JSON names its outputs as it wrote them; count's the same files.
        check([f["records"] for f in (page.embedded or {}).get("files", [])] ==
              [f["records"] for f in want["files"]], "reshard: the shards' records")
        check_files_page("reshard-7", proc.stdout, page.embedded)
        pages.append(("reshard-7", f"{tmp}/reshard-7.html", "files", page.embedded, True))
        for pname, ptext in (("count-2000", None), ("reshard-7", proc.stdout)):
            if ptext is None:
                ptext = tfdist("count", "--format", "html", f"{tmp}/big-*").stdout
            with open(f"{tmp}/{pname}.html", "w") as f:
                f.write(ptext)
        tfdist("count", "--format", "html", "--json", f"{tmp}/u-*", expect=2)
        # check: the verdict and a card per finding.
        args = ["--workers", "4", "--replicas", "2", small + ".batch(16)"]
        proc = tfdist("check", "--format", "html", *args)
        want = json.loads(tfdist("check", "--json", *args).stdout)
        check(want["findings"], "check: the case has findings")
        check_check_page("check-4x2", proc.stdout, want)
        with open(f"{tmp}/check-4x2.html", "w") as f:
            f.write(proc.stdout)
        pages.append(("check-4x2", f"{tmp}/check-4x2.html", "check", want, True))
        tfdist("check", "--format", "html", "--json", *args, expect=2)
        # run: the page loads whole (its numbers are the timeline test's to check).
        proc = tfdist("run", "--device", "cpu", "--replicas", "2", "--step-time-ms", "0.5",
                      "--format", "html", small + ".batch(16)")
        with open(f"{tmp}/run-4x2.html", "w") as f:
            f.write(proc.stdout)
        pages.append(("run", f"{tmp}/run-4x2.html", "run", Page(proc.stdout).embedded, True))
        tfdist("run", "--device", "cpu", "--format", "html", "--json", small + ".batch(16)",
               expect=2)
        # An error leaves no page; --json with --format html is refused.
        proc = tfdist("layout", "--format", "html", f'tfrecord("{tmp}/missing").batch(2)',
                      expect=3)
        check(proc.stdout == "", f"an error leaves no page: {proc.stdout[:200]}")
        tfdist("layout", "--format", "html", "--json", small + ".batch(2)", expect=2)

        if exe:
            profile = f"{tmp}/profile"
            for name, path, kind, want, full in pages:
                dom, console, rc = in_browser(exe, path, f"{shots}/{name}.png", profile)
                check(rc == 0 and dom, f"{name}: chromium exit {rc}")
                check(not console, f"{name}: console messages: {console[:5]}")
                if kind == "layout":
                    page = check_layout_page(f"{name} (chromium)", dom, want, full)
                elif kind == "files":
                    page = check_files_page(f"{name} (chromium)", dom, want)
                elif kind == "check":
                    page = check_check_page(f"{name} (chromium)", dom, want)
                elif kind == "run":
                    page = Page(dom)
                    check(page.embedded == want, f"{name}: the DOM's JSON differs from the file's")
                else:
                    page = check_compare_page(f"{name} (chromium)", dom, want)
                check(page.ready == "1", f"{name}: the page's script did not run to its end")
                check(os.path.exists(f"{shots}/{name}.png"), f"{name}: no screenshot")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
