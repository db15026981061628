#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# The writers' promises, driven as they break for users (doc/outputs.md):
# - an in-place `reshard --force` of 2,000 shards hit by SIGINT inside its
#   commit, and one killed after each phase of its commit (the fault hook)
#   then recovered by the next writer, leave the whole old or the whole new
#   set;
# - two concurrent reshards into one prefix never leave a mix;
# - a reshard 16 -> 8 beside the old set is refused (the glob would hold
#   twice the dataset), and with --force replaces it;
# - a terminal hang-up (SIGHUP through a real pseudo-terminal) and a real
#   `ulimit -f` leave no file, with exit 129 and 5;
# - no --python interpreter outlives a SIGKILLed tfdist.
# Usage: output_commit_test.py TFDIST
import hashlib
import json
import os
import pty
import resource
import signal
import subprocess
import sys
import tempfile
import time

import checks


def run(*args, **kw):
    return subprocess.run([checks.TFDIST, *args], capture_output=True, text=True, timeout=300,
                          **kw)


def digest(folder, prefix="s-"):
    """name -> sha256 of every file of `folder` starting with `prefix`."""
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.startswith(prefix):
            with open(os.path.join(folder, name), "rb") as f:
                out[name] = hashlib.sha256(f.read()).hexdigest()
    return out


def count(pattern):
    proc = run("count", "--json", "--no-index", pattern)
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout)["records"]


def staging_of(folder):
    folder = os.path.realpath(folder)
    return os.path.join(os.path.dirname(folder), ".tfdist-staging." + os.path.basename(folder))


def gen(folder, files, records, *extra):
    proc = run("gen", "-o", os.path.join(folder, "s"), "--files", str(files), "--records",
               str(records), "--size", "20-60", "--kind", "random", "--no-fsync", *extra)
    assert proc.returncode == 0, proc.stderr


def test_in_place_sigint_in_commit(tmp):
    """2,000 shards resharded in place, SIGINT once the commit's journal exists."""
    ds = os.path.join(tmp, "inplace")
    os.mkdir(ds)
    gen(ds, 2000, 3)
    old = digest(ds)
    # The new set, from an uninterrupted run of the same command on a copy.
    copy = os.path.join(tmp, "inplace-copy")
    os.mkdir(copy)
    for name in old:
        os.link(os.path.join(ds, name), os.path.join(copy, name))
    args = ["reshard", "--seed", "5", "--num-shards", "2000", "--force", "--no-fsync"]
    proc = run(*args, os.path.join(copy, "s-*"), "-o", os.path.join(copy, "s"))
    checks.check(proc.returncode == 0, f"reshard of the copy: {proc.stderr}")
    new = digest(copy)
    checks.check(new != old and sorted(new) == sorted(old), "the reshuffled set differs")
    staging = staging_of(ds)
    outcomes = set()
    for trial in range(4):
        p = subprocess.Popen([checks.TFDIST, *args, os.path.join(ds, "s-*"), "-o",
                              os.path.join(ds, "s")], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        # Aim inside the commit: once the journal is written (or at any
        # moment after, on a slow machine).
        deadline = time.monotonic() + 120
        while p.poll() is None and time.monotonic() < deadline:
            try:
                if any(os.path.exists(os.path.join(staging, t, "journal"))
                       for t in os.listdir(staging) if t.startswith("txn-")):
                    break
            except OSError:
                pass
        time.sleep(0.0005 * trial)
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        now = digest(ds)
        if p.returncode == 130:
            checks.check(now == old, f"trial {trial}: exit 130 but the old set is not whole")
            checks.check("the outputs are as they were" in err, f"trial {trial}: message: {err}")
            outcomes.add("old")
        elif p.returncode == 0:
            checks.check(now == new, f"trial {trial}: exit 0 but the new set is not whole")
            outcomes.add("new")
            gen_back(ds, old)  # the old set again, for the next trial
        else:
            checks.check(False, f"trial {trial}: exit {p.returncode}: {err}")
        checks.check(not os.path.exists(staging), f"trial {trial}: staging folder left")
        checks.check(sorted(os.listdir(ds)) == sorted(old), f"trial {trial}: stray files")
    print(f"in-place 2,000 shards, SIGINT in the commit: outcomes {sorted(outcomes)}")


def gen_back(ds, old):
    """Restores the generated old set (gen is deterministic)."""
    proc = run("gen", "-o", os.path.join(ds, "s"), "--files", "2000", "--records", "3", "--size",
               "20-60", "--kind", "random", "--no-fsync", "--force")
    checks.check(proc.returncode == 0 and digest(ds) == old, f"restoring the old set: {proc.stderr}")


def faulted_reshard(folder, phase, action):
    """16 generated shards in `folder` resharded in place into 8, the commit
    stopped at `phase` by `action`: (the old set's digest, the process)."""
    os.mkdir(folder)
    gen(folder, 16, 50)
    old = digest(folder)
    env = dict(os.environ, TFDIST_COMMIT_FAULT=f"{phase}:{action}")
    return old, run("reshard", os.path.join(folder, "s-*"), "-o", os.path.join(folder, "s"),
                    "--num-shards", "8", "--force", "--no-fsync", env=env)


def test_killed_after_each_phase(tmp):
    for phase in ["prepared", "old-moved-1", "old-moved", "new-renamed-1", "new-renamed",
                  "committed"]:
        ds = os.path.join(tmp, "phase-" + phase)
        old, proc = faulted_reshard(ds, phase, "kill")
        checks.check(proc.returncode == -signal.SIGKILL, f"{phase}: exit {proc.returncode}")
        # A glob that reaches into what the dead writer left says so, and
        # reads none of it as records.
        proc = run("count", os.path.join(tmp, "*"))
        checks.check(proc.returncode == 2 and "in the staging folder of a tfdist writer" in
                     proc.stderr, f"{phase}: count of * over a staging folder: {proc.stderr}")
        # The next writer (here a gen into the same folder, another prefix)
        # completes or undoes the commit first, and says so.
        proc = run("gen", "-o", os.path.join(ds, "other"), "--records", "1", "--no-fsync")
        checks.check(proc.returncode == 0, f"{phase}: next writer: {proc.stderr}")
        now = digest(ds)
        if phase == "committed":
            checks.check("stopped after its commit" in proc.stderr, f"{phase}: {proc.stderr}")
            checks.check(len(now) == 8 and count(os.path.join(ds, "s-*")) == 800,
                         f"{phase}: not the whole new set: {sorted(now)}")
        else:
            checks.check("undid it: the old set of 16 files is back" in proc.stderr,
                         f"{phase}: {proc.stderr}")
            checks.check(now == old, f"{phase}: not the whole old set: {sorted(now)}")
        checks.check(not os.path.exists(staging_of(ds)), f"{phase}: staging folder left")
        # And a failed rename at that phase: the old set, and a message that says so.
        ds2 = ds + "-fail"
        old, proc = faulted_reshard(ds2, phase, "fail")
        if phase == "committed":
            checks.check(proc.returncode == 0 and len(digest(ds2)) == 8, f"{phase}: fail: {proc}")
        else:
            checks.check(proc.returncode == 1 and digest(ds2) == old,
                         f"{phase}: fail: exit {proc.returncode}: {proc.stderr}")
            checks.check("the outputs are as they were" in proc.stderr or
                         "the old set" in proc.stderr, f"{phase}: fail message: {proc.stderr}")


def test_concurrent_writers(tmp):
    src = os.path.join(tmp, "src")
    os.mkdir(src)
    gen(src, 4, 500)
    for force in ([], ["--force"]):
        out = os.path.join(tmp, "conc" + ("-force" if force else ""))
        os.mkdir(out)
        procs = [subprocess.Popen([checks.TFDIST, "reshard", os.path.join(src, "s-*"), "-o",
                                   os.path.join(out, "s"), "--num-shards", str(n), "--no-fsync", *force],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for n in (7, 5)]
        results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
        codes = sorted(rc for rc, _ in results)
        names = sorted(os.listdir(out))
        sets = {n.rsplit("-of-", 1)[1] for n in names}
        checks.check(len(sets) == 1, f"two writers {force}: a mix: {names}")
        checks.check(count(os.path.join(out, "s-*")) == 2000,
                     f"two writers {force}: the glob does not hold the dataset once")
        if force:
            checks.check(codes == [0, 0], f"two writers --force: {results}")
        else:
            checks.check(codes == [0, 2], f"two writers: {results}")
            refused = [err for rc, err in results if rc == 2][0]
            checks.check("a new set beside them would double the dataset" in refused, refused)


def test_reshard_beside_old_set(tmp):
    r2 = os.path.join(tmp, "r2")
    os.mkdir(r2)
    gen(r2, 16, 30)
    proc = run("reshard", os.path.join(r2, "s-*"), "-o", os.path.join(r2, "s"),
               "--num-shards", "8")
    checks.check(proc.returncode == 2, f"16 -> 8 beside the old set: exit {proc.returncode}")
    checks.check("-*-of-00016.tfrecord: 16 shards of the prefix" in proc.stderr and "use --force" in proc.stderr,
                 f"16 -> 8 message: {proc.stderr}")
    checks.check(count(os.path.join(r2, "s-*")) == 480, "the refused reshard changed the folder")
    proc = run("reshard", os.path.join(r2, "s-*"), "-o", os.path.join(r2, "s"),
               "--num-shards", "8",
               "--force")
    checks.check(proc.returncode == 0, f"16 -> 8 --force: {proc.stderr}")
    checks.check(len(os.listdir(r2)) == 8 and count(os.path.join(r2, "s-*")) == 480,
                 f"16 -> 8 --force: {sorted(os.listdir(r2))}")


def test_sighup_through_a_terminal(tmp):
    """tfdist runs on a pseudo-terminal as its controlling terminal; the
    terminal hangs up (its master side closes) while tfdist writes."""
    src = os.path.join(tmp, "hup-src")
    out = os.path.join(tmp, "hup-out")
    os.mkdir(src)
    os.mkdir(out)
    proc = run("gen", "-o", os.path.join(src, "big"), "--records", "300000", "--size", "1k",
               "--kind", "random", "--no-fsync")
    assert proc.returncode == 0, proc.stderr
    pid, master = pty.fork()
    if pid == 0:  # a session leader with the terminal as its controlling one
        os.execv(checks.TFDIST, [checks.TFDIST, "reshard", os.path.join(src, "big"), "-o",
                                 os.path.join(out, "s"), "--num-shards", "4", "--seed", "1"])
    staging = staging_of(out)
    deadline = time.monotonic() + 60
    while not os.path.exists(staging) and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.05)
    os.close(master)  # the hang-up: the kernel sends SIGHUP to the session
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    checks.check(code == 129, f"hang-up: exit {code}, expected 129")
    checks.check(os.listdir(out) == [], f"hang-up left {os.listdir(out)}")
    checks.check(not os.path.exists(staging), "hang-up left the staging folder")


def test_ulimit_f(tmp):
    """A real `ulimit -f`: SIGXFSZ at its default, as a shell leaves it."""
    src = os.path.join(tmp, "fsize-src")
    out = os.path.join(tmp, "fsize-out")
    os.mkdir(src)
    os.mkdir(out)
    gen(src, 1, 20000)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    for args in (["reshard", os.path.join(src, "s"), "-o", os.path.join(out, "s"),
                  "--num-shards", "2"],
                 ["gen", "-o", os.path.join(out, "g"), "--records", "1000", "--size", "1k"]):
        proc = subprocess.run([checks.TFDIST, *args], capture_output=True, text=True,
                              timeout=120, preexec_fn=limit)
        checks.check(proc.returncode == 5, f"{args[0]} past ulimit -f: exit {proc.returncode}: "
                                           f"{proc.stderr}")
        checks.check("File too large" in proc.stderr, f"{args[0]}: message {proc.stderr}")
        checks.check(os.listdir(out) == [], f"{args[0]} past ulimit -f left {os.listdir(out)}")
        checks.check(not os.path.exists(staging_of(out)), f"{args[0]}: staging folder left")


def children_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def test_no_orphan_interpreter(tmp):
    script = os.path.join(tmp, "slow_input.py")
    with open(script, "w") as f:
        f.write("import tensorflow as tf\nwhile True:\n    pass\n")
    p = subprocess.Popen([checks.TFDIST, "layout", "--python", script], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    kids = []
    while not kids and time.monotonic() < deadline:
        kids = children_of(p.pid)
        time.sleep(0.01)
    checks.check(bool(kids), "the trace's interpreter did not start")
    time.sleep(0.2)
    p.kill()
    p.wait()
    deadline = time.monotonic() + 10
    alive = kids
    while alive and time.monotonic() < deadline:
        alive = [k for k in kids if os.path.exists(f"/proc/{k}") and
                 open(f"/proc/{k}/stat").read().split()[2] != "Z"]
        time.sleep(0.05)
    checks.check(not alive, f"interpreters {alive} outlived tfdist")
    for k in alive:
        os.kill(k, signal.SIGKILL)


def test_writer_without_rights_on_the_parent(tmp):
    """A writer killed in its commit as root (staged beside the folder),
    then a writer as nobody, who cannot write the parent (and would stage
    inside the folder): it must not commit over the cut commit, and the
    next root writer must not then put the old set back beside a new one."""
    if os.geteuid() != 0 or subprocess.run(["which", "setpriv"],
                                           capture_output=True).returncode != 0:
        print("skipped: needs root and setpriv")
        return
    top = tempfile.mkdtemp(prefix="tfdist-rights-")
    try:
        os.chmod(top, 0o755)
        ds = os.path.join(top, "ds")
        os.mkdir(ds)
        os.chmod(ds, 0o777)
        gen(ds, 4, 5)
        old = digest(ds)
        env = dict(os.environ, TFDIST_COMMIT_FAULT="old-moved:kill")
        proc = run("gen", "-o", os.path.join(ds, "s"), "--files", "3", "--records", "5",
                   "--force", "--no-fsync", env=env)
        checks.check(proc.returncode == -signal.SIGKILL, f"killed writer: {proc.returncode}")
        nobody = subprocess.run(
            ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", checks.TFDIST,
             "gen", "-o", os.path.join(ds, "s"), "--files", "2", "--records", "5", "--force",
             "--no-fsync"], capture_output=True, text=True, timeout=300)
        print(f"writer as nobody: exit {nobody.returncode}: {nobody.stderr.strip()}")
        # The next writer as root (another prefix) recovers what is left.
        proc = run("gen", "-o", os.path.join(ds, "t"), "--files", "1", "--records", "1",
                   "--no-fsync")
        checks.check(proc.returncode == 0, f"next writer: {proc.stderr}")
        now = digest(ds)
        sets = {n.rsplit("-of-", 1)[1] for n in now}
        checks.check(len(sets) == 1, f"two sets of the prefix in one folder: {sorted(now)}")
        checks.check(now == old or nobody.returncode == 0,
                     f"neither the old set nor the new one: {sorted(now)}")
    finally:
        subprocess.run(["rm", "-rf", top])


def test_convert_into_two_folders_killed(tmp):
    """A convert writing beside inputs in two folders, killed in its commit;
    then a writer into the second folder alone, then one into the first:
    the second writer's committed file must stay as it wrote it."""
    top = os.path.join(tmp, "two-folders")
    a, b = os.path.join(top, "a"), os.path.join(top, "b")
    os.makedirs(a)
    os.makedirs(b)
    for folder, name in ((a, "x"), (b, "y")):
        proc = run("gen", "-o", os.path.join(folder, name), "--files", "1", "--records", "10",
                   "--no-fsync")
        checks.check(proc.returncode == 0, proc.stderr)
    args = ["convert", "--output-compression", "gzip", "--no-fsync", os.path.join(a, "x"),
            os.path.join(b, "y")]
    checks.check(run(*args).returncode == 0, "first convert")
    env = dict(os.environ, TFDIST_COMMIT_FAULT="new-renamed-1:kill")
    proc = run(*args, "--force", env=env)
    checks.check(proc.returncode == -signal.SIGKILL, f"killed convert: {proc.returncode}")
    proc = run("gen", "-o", os.path.join(b, "y.gz"), "--files", "1", "--records", "3",
               "--output-compression", "gzip", "--force", "--no-fsync")
    checks.check(proc.returncode == 0, f"writer into b: {proc.stderr}")
    proc = run("gen", "-o", os.path.join(a, "z"), "--files", "1", "--records", "1", "--no-fsync")
    checks.check(proc.returncode == 0, f"writer into a: {proc.stderr}")
    checks.check(count(os.path.join(b, "y.gz")) == 3,
                 f"b/y.gz holds {count(os.path.join(b, 'y.gz'))} records, not the 3 written last")
    checks.check(count(os.path.join(a, "x.gz")) == 10, "a/x.gz is not the old set's")
    checks.check(sorted(os.listdir(top)) == ["a", "b"], f"left: {sorted(os.listdir(top))}")


def test_planted_staging_folder(tmp):
    """In a shared parent, another user may put a link or a folder of theirs
    where the staging folder goes: the writer refuses it, writing nothing."""
    out = os.path.join(tmp, "planted")
    evil = os.path.join(tmp, "evil")
    os.mkdir(out)
    os.mkdir(evil)
    staging = staging_of(out)
    os.symlink(evil, staging)
    proc = run("gen", "-o", os.path.join(out, "x"), "--records", "3")
    checks.check(proc.returncode == 2 and "is not tfdist's staging folder" in proc.stderr,
                 f"a link at the staging folder: exit {proc.returncode}: {proc.stderr}")
    checks.check(os.listdir(evil) == [] and os.listdir(out) == [],
                 f"a link at the staging folder: wrote {os.listdir(evil)} {os.listdir(out)}")
    os.unlink(staging)
    if os.geteuid() == 0:
        os.mkdir(staging)
        os.chown(staging, 65534, 65534)
        proc = run("gen", "-o", os.path.join(out, "x"), "--records", "3")
        checks.check(proc.returncode == 2 and "belongs to another user" in proc.stderr,
                     f"another user's staging folder: exit {proc.returncode}: {proc.stderr}")
        checks.check(os.listdir(staging) == [] and os.listdir(out) == [],
                     f"another user's staging folder: wrote {os.listdir(staging)}")
        os.rmdir(staging)
    proc = run("gen", "-o", os.path.join(out, "x"), "--records", "3")
    checks.check(proc.returncode == 0 and os.listdir(out) == ["x"], f"then: {proc.stderr}")


def main():
    checks.TFDIST = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="tfdist-commit-") as tmp:
        for test in (test_reshard_beside_old_set, test_concurrent_writers,
                     test_killed_after_each_phase, test_in_place_sigint_in_commit,
                     test_sighup_through_a_terminal, test_ulimit_f, test_no_orphan_interpreter,
                     test_writer_without_rights_on_the_parent, test_convert_into_two_folders_killed,
                     test_planted_staging_folder):
            test(tmp)
        left = [n for n in os.listdir(os.path.dirname(tmp))
                if n == ".tfdist-staging." + os.path.basename(tmp)]
        checks.check(not left, f"staging folder left beside the test folder: {left}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
