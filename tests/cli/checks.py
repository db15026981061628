# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# What the CLI tests share: checks that report every failure rather than
# stopping at the first, and running tfdist with an expected exit status.
import json
import os
import shlex
import signal
import subprocess
import time

FAILURES = []
TFDIST = "tfdist"
# Under the sanitizers (tools/test sets it): a process starts and runs
# several times slower, so the longest tests take fewer random cases or rank
# counts there; the build-test run keeps them all.
SANITIZED = bool(os.environ.get("TFDIST_SANITIZED"))


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print("FAIL:", what)


def tfdist(*args, expect=0, env=None):
    """Runs tfdist with ARGS (in `env` when given), checking its exit status."""
    proc = subprocess.run([TFDIST, *args], capture_output=True, text=True, timeout=120, env=env)
    check(proc.returncode == expect,
          f"tfdist {' '.join(args)}: exit {proc.returncode}, expected {expect}\n{proc.stderr}")
    return proc


def layout_parts(*args):
    """`tfdist layout --format json ARGS` as (the layout, without what only a
    trace adds; the trace's input; its assumptions)."""
    out = json.loads(tfdist("layout", "--format", "json", *args).stdout)
    return out, out.pop("input", None), out.pop("assumptions", [])


def same_layout(name, traced_args, chain_args):
    """Checks that the layout of `traced_args` (a --python trace) equals the
    layout of `chain_args` (the chain that says what it builds); returns the
    traced layout, its input (a dict) and its assumptions."""
    traced, source, assumed = layout_parts(*traced_args)
    direct, _, _ = layout_parts(*chain_args)
    check(traced == direct, f"{name}: the traced layout differs from the chain's\n"
                            f"traced: {json.dumps(traced)[:2000]}\nchain:  {json.dumps(direct)[:2000]}")
    return traced, source or {}, assumed


# tfdist check's exit status when a finding is an error.
FINDING_EXIT = 6


def run_check(args, expect=None):
    """tfdist check --json ARGS: the object, with its exit status as "exit"
    (checked to be `expect` when given)."""
    proc = subprocess.run([TFDIST, "check", "--json", *args], capture_output=True, text=True,
                          timeout=120)
    if expect is not None:
        check(proc.returncode == expect,
              f"check {shlex.join(args)}: exit {proc.returncode}, expected {expect}\n"
              f"{proc.stdout[:3000]}{proc.stderr}")
    empty = {"result": None, "findings": [], "steps_per_epoch": None, "exit": proc.returncode}
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError:
        check(False, f"check {shlex.join(args)}: no JSON: {proc.stdout!r}{proc.stderr}")
        return empty
    if "findings" not in out:
        return empty
    out["exit"] = proc.returncode
    return out


def finding(out, kind):
    """The one finding of `kind` in a check's object (a blank one, and a
    failure, when there is not exactly one)."""
    found = [f for f in out["findings"] if f["kind"] == kind]
    check(len(found) == 1, f"one {kind} finding: {[f['kind'] for f in out['findings']]}")
    return found[0] if found else {"kind": kind, "severity": None, "tensorflow": "",
                                   "other_versions": "", "evidence": "", "fix": "",
                                   "fix_flags": []}


def with_flags(args, flags):
    """`args` with the flags of a printed fix ("--steps-per-epoch 4") given,
    replacing the same flags' earlier values."""
    new = shlex.split(flags)
    names = {a for a in new if a.startswith("--")}
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in names:
            skip = True
            continue
        out.append(a)
    return out + new


def finish():
    """The exit status of the test: 1 if any check failed."""
    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


def block_interrupts():
    """A preexec_fn: the child starts with SIGINT and SIGTERM blocked, which
    tfdist unblocks once its handlers are installed."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT, signal.SIGTERM])


def check_interrupt_stops(*args, after=0.5, timeout=20):
    """Runs tfdist ARGS, sends SIGINT after `after` seconds, and checks that it
    exits with 130 within `timeout` seconds. SIGINT is blocked across exec:
    on a loaded machine tfdist may not reach main() (its handlers) within
    `after`, and the signal is held until it does (see interrupt_early_test)."""
    proc = subprocess.Popen([TFDIST, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, preexec_fn=block_interrupts)
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=timeout)
        check(proc.returncode == 130, f"{list(args)}: exit {proc.returncode} after SIGINT, "
                                      f"expected 130: {err}")
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        check(False, f"{list(args)}: still running {timeout} s after SIGINT")


def mpi_env():
    """The environment of tfdist under mpirun in the tests: as root (CI runs
    as root), on the loopback, oversubscribed on few cores. Under
    AddressSanitizer, LeakSanitizer's full unwinder: Open MPI's libraries have
    no frame pointers, and only full stacks reach the libraries that
    tools/lsan.supp names for its start-up allocations."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl="self,tcp", OMPI_MCA_btl_tcp_if_include="lo",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":fast_unwind_on_malloc=0"
    return env
