#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# The command line's conventions (doc/cli.md), held against every command's
# --help and against what the commands do:
# - every flag of every command is in doc/cli.md's table, with that command
#   (one meaning per flag name), and the table names no flag a command lacks;
# - a short name is one long name everywhere, and -n is --limit;
# - every command prints with --format (text and json) and --json;
# - no flag with a default is REQUIRED;
# - the exit statuses of tfdist --help are those of the manual's EXIT STATUS;
# - the spellings of the last release work, with one note each;
# - every writer refuses a missing output folder with one message;
# - a list of files in JSON is "files": [{"path", "records", "bytes"}];
# - an unseeded shuffle is a warning in layout, run and take alike.
# Usage: cli_conventions_test.py TFDIST (run from the source root)
import json
import os
import re
import subprocess
import sys
import tempfile

import checks
from checks import check

ROOT = os.getcwd()
ONE = os.path.join(ROOT, "testdata", "one.tfrecord")


def tfdist(*args, cwd=None):
    return subprocess.run([checks.TFDIST, *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=dict(os.environ, XDG_CACHE_HOME=cwd or "/nonexistent"))


def commands():
    """The commands tfdist --help lists."""
    out = tfdist("--help").stdout
    names = re.findall(r"^  ([a-z]+)  ", out.split("Subcommands:", 1)[1], re.M)
    check(len(names) >= 10, f"tfdist --help lists {names}")
    return names


def help_options(command):
    """{name: line} of each option --help shows, and the text."""
    text = tfdist(command, "--help").stdout
    options = {}
    for line in text.split("Options:", 1)[1].splitlines():
        m = re.match(r"^  (-\w)?,?(--[\w-]+)?", line)
        if not m or not (m.group(1) or m.group(2)):
            continue
        for name in m.groups():
            if name:
                options[name] = line
        if m.group(1) and m.group(2):
            options[m.group(1)] = m.group(2)  # a short name's long name
    return options, text


def doc_table():
    """{flag: set of commands} of doc/cli.md's table; "all" for every command."""
    with open(os.path.join(ROOT, "doc", "cli.md"), encoding="utf-8") as f:
        doc = f.read()
    table = {}
    for m in re.finditer(r"^\| (`-[^|]+) \| [^|]+ \| ([^|]+) \|$", doc, re.M):
        where = {c.strip() for c in m.group(2).split(",")}
        for flag in re.findall(r"`(-[\w-]+)`", m.group(1)):
            check(flag not in table, f"doc/cli.md: {flag} has two rows (two meanings)")
            table[flag] = where
    check(len(table) > 40, f"doc/cli.md's table has {len(table)} flags")
    return table


def test_flags(names, table):
    shorts = {}
    for command in names:
        options, text = help_options(command)
        check("--format" in options and "--json" in options,
              f"{command}: no --format or --json")
        if "--format" in options:
            for form in ("text", "json"):
                check(form in options["--format"], f"{command} --format lacks {form}")
        for name, line in options.items():
            if not line.startswith("  "):  # a short name's long name
                check(shorts.setdefault(name, line) == line,
                      f"{name} is {shorts[name]} and {line} ({command})")
                continue
            where = table.get(name)
            check(where is not None and ("all" in where or command in where),
                  f"{command} {name}: not in doc/cli.md's table for {command} ({where})")
            check(not re.search(r"=\S+ REQUIRED", line),
                  f"{command} {name}: a default and REQUIRED: {line.strip()}")
        for flag, where in table.items():
            if command in where:
                check(flag in options, f"doc/cli.md says {command} has {flag}; --help lacks it")
    check(shorts.get("-n") == "--limit", f"-n is {shorts.get('-n')}, not --limit")


def test_exit_statuses():
    text = tfdist("--help").stdout
    listed = re.search(r"Exit status: (.*)", text).group(1)
    in_help = {int(n) for n in re.findall(r"(?:^|, )(\d+) [a-z]", listed)}
    in_help |= {int(n) for n in re.findall(r"\((\d+) SIGINT", listed)}
    with open(os.path.join(ROOT, "man", "tfdist.1"), encoding="utf-8") as f:
        man = f.read()
    section = man.split(".SH EXIT STATUS", 1)[1].split(".SH ", 1)[0]
    in_man = {int(n) for n in re.findall(r"^\.B (\d+)$", section, re.M)}
    in_man |= {int(n) for n in re.findall(r"(\d+) for\nSIGINT", section)}
    check(in_help == {0, 1, 2, 3, 4, 5, 6, 7, 130}, f"tfdist --help's exit statuses: {sorted(in_help)}")
    check(in_man == in_help, f"the manual's EXIT STATUS {sorted(in_man)} differs from "
          f"--help's {sorted(in_help)}")
    check("full disk (exit 1)" not in man, "the manual calls a full disk exit 1")


NOTE = ("tfdist: note: {old} is deprecated here; it means {new} (the old spelling goes in the "
        "next release)\n")


def test_old_spellings(tmp):
    cases = [
        (["count", "--compression", "none", ONE], "--compression", "--input-compression"),
        (["gen", "-o", "g.tfrecord", "--compression", "gzip"], "--compression",
         "--output-compression"),
        (["reshard", ONE, "-o", "s", "-n", "2"], "-n", "--num-shards"),
        (["take", "--summary", "range(3)"], "--summary", "--format summary"),
    ]
    for args, old, new in cases:
        proc = tfdist(*args, cwd=tmp)
        check(proc.returncode == 0, f"{args}: exit {proc.returncode}: {proc.stderr}")
        check(proc.stderr == NOTE.format(old=old, new=new), f"{args}: stderr {proc.stderr!r}")
    check(os.path.exists(os.path.join(tmp, "g.tfrecord.gz")) or
          os.path.exists(os.path.join(tmp, "g.tfrecord")), "gen --compression wrote nothing")
    check(os.path.exists(os.path.join(tmp, "s-00001-of-00002.tfrecord")), "reshard -n 2: no shards")
    proc = tfdist("take", "--format", "summary", "range(3)", cwd=tmp)
    check(proc.returncode == 0 and proc.stderr == "" and "3 elements" in proc.stdout,
          f"take --format summary: {proc.stderr!r}")
    # The old spelling is checked as the new one.
    proc = tfdist("reshard", ONE, "-o", "t", "-n", "0", cwd=tmp)
    check(proc.returncode == 2 and "--num-shards: must be at least 1" in proc.stderr,
          f"reshard -n 0: {proc.stderr!r}")


def test_output_folders(tmp):
    missing = os.path.join(tmp, "missing")
    writers = [
        ["gen", "-o", os.path.join(missing, "x.tfrecord")],
        ["reshard", ONE, "-o", os.path.join(missing, "x"), "--num-shards", "2"],
        ["convert", ONE, "--output-compression", "gzip", "--output-dir", missing],
        ["index", ONE, "--index-dir", missing],
    ]
    for args in writers:
        proc = tfdist(*args, cwd=tmp)
        check(proc.returncode == 2 and
              f"{missing}: the output folder does not exist" in proc.stderr,
              f"{args[0]} into a missing folder: exit {proc.returncode}: {proc.stderr!r}")
        check(not os.path.exists(missing), f"{args[0]} made {missing}")


def test_file_lists(tmp):
    runs = [
        ["gen", "-o", "j", "--files", "2", "--records", "3", "--json"],
        ["count", "--json", "j-00000-of-00002.tfrecord"],
        ["verify", "--format", "json", "j-00000-of-00002.tfrecord"],
        ["reshard", "--json", "j-*", "-o", "r", "--num-shards", "3"],
        ["convert", "--json", "j-*", "--output-compression", "gzip"],
        ["index", "--json", "j-00000-of-00002.tfrecord"],
    ]
    for args in runs:
        proc = tfdist(*args, cwd=tmp)
        check(proc.returncode == 0, f"{args[0]}: {proc.stderr}")
        files = json.loads(proc.stdout).get("files")
        check(isinstance(files, list) and files and
              all(isinstance(f, dict) and {"path", "records", "bytes"} <= f.keys()
                  for f in files), f"{args[0]} --json: files {files}")


def test_message_words(tmp):
    """An unseeded shuffle is a warning wherever it is said: layout's and run's
    reports, take's standard error (its standard output holds the elements)."""
    pipeline = "range(8).shuffle(8).batch(2)"
    said = "a shuffle has no seed and the program sets no global seed"
    for args in (["layout", pipeline], ["run", "--device", "cpu", pipeline]):
        proc = tfdist(*args, cwd=tmp)
        check(f"warning:  {said}" in proc.stdout, f"{args[0]}: {proc.stdout!r}")
    proc = tfdist("take", pipeline, cwd=tmp)
    check(proc.stderr.startswith(f"tfdist: warning: {said}"), f"take: {proc.stderr!r}")
    for line in proc.stderr.splitlines():
        check(re.match(r"tfdist: (error|warning|note): ", line), f"take: {line!r}")


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    names = commands()
    test_flags(names, doc_table())
    test_exit_statuses()
    for test in (test_old_spellings, test_output_folders, test_file_lists,
                 test_message_words):
        with tempfile.TemporaryDirectory(prefix="tfdist-cli-") as tmp:
            test(tmp)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
