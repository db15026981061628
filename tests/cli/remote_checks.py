# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# What the remote-storage CLI tests share: the test dataset (written by
# tfdist gen, kept on local disk and put in a bucket), running tfdist against
# a store with the test's credentials, and the comparison of an answer about
# URLs with the answer about the same files on disk.
#
# Every run goes through run(), which looks for the test credentials in
# everything tfdist printed (stdout, stderr, --json) and fails the test if
# one is there: so every output of every remote test is checked, and no
# test can forget to.
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "remote"))
import servers  # noqa: E402

sys.path.insert(0, HERE)
import checks  # noqa: E402
from checks import check  # noqa: E402

BUCKET = "tfdist-test"
# The credentials the tests give tfdist. s3rver checks no SigV4 signature,
# so these secrets are accepted; nothing tfdist prints may contain them.
SECRET = "tfdistTestSecret+Kq7vXw9/Zr3nLm2Pq8sT"
TOKEN = "tfdistTestToken/Bv4Jd8Hs1Wq6Ny0Rf5Tc3Xe7Ua2Gk9MpZ"
SECRETS = (SECRET, TOKEN)

# The flag that limits the time one remote request may take, retries included.
TIMEOUT_FLAG = "--remote-timeout"
# Flags that make one object's ranges be read one after another.
READ_AHEAD = ["--read-ahead", str(8 << 20)]
# A command that sends nothing for this long hangs: a failure.
HANG_SECONDS = 300
OUTPUTS_CHECKED = [0]


def secrets_in(text):
    """The test credentials in `text`, plain or URL-encoded."""
    return [form for secret in SECRETS
            for form in (secret, secret.replace("/", "%2F").replace("+", "%2B")) if form in text]


def scan_for_secrets(what, *texts):
    """Fails when a test credential (or its URL-encoded form) is in `texts`."""
    OUTPUTS_CHECKED[0] += 1
    for text in texts:
        for form in secrets_in(text):
            check(False, f"{what}: a credential is in the output: ...{form[:12]}...")


def run(args, env, expect=0, what=None, timeout=HANG_SECONDS):
    """tfdist ARGS under `env`, checked to exit `expect` (None: any) and to
    print no credential; a hang is a failure (returncode None)."""
    what = what or "tfdist " + " ".join(args)
    try:
        proc = subprocess.run([checks.TFDIST, *args], env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr or ""
        scan_for_secrets(what, out, err)
        check(False, f"{what}: no answer in {timeout} s (a hang)\n{err[-1500:]}")
        return subprocess.CompletedProcess(args, None, out, err)
    scan_for_secrets(what, proc.stdout, proc.stderr)
    if expect is not None:
        check(proc.returncode == expect,
              f"{what}: exit {proc.returncode}, expected {expect}\n"
              f"{proc.stdout[-1500:]}{proc.stderr[-1500:]}")
    return proc


class Dataset:
    """The test data, on local disk under `root` (its files under
    root/data/) and listed by key (data/...) for putting in a bucket:
      data/train-0000K-of-00004.tfrecord  uneven text records (printable
                                          labels), FILE sharding's files
      data/gz/part.tfrecord.gz            GZIP, tf.train.Examples
      data/big.tfrecord                   20 MB of 100 KiB random records:
                                          more than one ranged read
      data/odd/a b+c%41.tfrecord          a key that needs escaping
    """

    def __init__(self, root):
        self.root = root
        self.dir = os.path.join(root, "data")
        os.makedirs(os.path.join(self.dir, "gz"))
        os.makedirs(os.path.join(self.dir, "odd"))
        self._gen("-o", os.path.join(self.dir, "train"), "--files", "4", "--records", "5-30",
                  "--kind", "text", "--text", "rec {f}.{i} ({g})", "--seed", "7")
        self._gen("-o", os.path.join(self.dir, "gz", "part.tfrecord.gz"), "--records", "300",
                  "--size", "50-500", "--output-compression", "gzip", "--seed", "2")
        self._gen("-o", os.path.join(self.dir, "big.tfrecord"), "--kind", "random",
                  "--size", "100k", "--records", "200", "--seed", "3")
        self._gen("-o", os.path.join(self.dir, "odd", "a b+c%41.tfrecord"), "--kind", "text",
                  "--records", "3", "--seed", "4")
        self.objects = {}
        for folder, _, files in os.walk(self.dir):
            for name in files:
                path = os.path.join(folder, name)
                self.objects[os.path.relpath(path, self.root)] = path

    def _gen(self, *args):
        proc = subprocess.run([checks.TFDIST, "gen", "--no-fsync", *args],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"tfdist gen {args}: {proc.stderr}")

    def local(self):
        """The prefix of the data's names on disk (with a trailing /)."""
        return self.dir + "/"


def normalized(text, *prefixes):
    """`text` with each data prefix (a folder, a URL, as given or JSON- or
    percent-escaped) as DATA/, and runs of spaces as one (tables pad to the
    longest name)."""
    for prefix in prefixes:
        for form in (prefix, json.dumps(prefix)[1:-1]):
            text = text.replace(form, "DATA/")
    # A URL's key is printed escaped where a path is not (a%20b), or not.
    return re.sub(r" +", " ", text)


def without(value, keys):
    """A JSON value without the keys (at any depth) that measure time."""
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without(v, keys) for v in value]
    return value


# run's report keys that depend on the clock (or on where bytes came from).
TIMING = {"seconds", "records_per_s", "mb_per_s", "per_worker", "wait_seconds", "wait_share",
          "first_batch_seconds", "steady", "wait_per_step_ms", "stages", "copy_seconds",
          "h2d_gb_per_s", "pinned", "notes", "warnings", "cold"}


def compare(name, local_proc, remote_proc, local_prefix, remote_prefix, json_keys_out=None):
    """Checks that two runs' outputs are the same modulo the data's names:
    exit status, stdout (JSON compared as values, without `json_keys_out`)
    and stderr."""
    check(local_proc.returncode == remote_proc.returncode,
          f"{name}: exit {remote_proc.returncode}, on local files {local_proc.returncode}\n"
          f"{remote_proc.stderr[-1500:]}")
    lo = normalized(local_proc.stdout, local_prefix)
    ro = normalized(remote_proc.stdout, remote_prefix)
    if json_keys_out is not None:
        try:
            lo = json.dumps(without(json.loads(lo), json_keys_out), sort_keys=True)
            ro = json.dumps(without(json.loads(ro), json_keys_out), sort_keys=True)
        except json.JSONDecodeError as e:
            check(False, f"{name}: not JSON ({e}):\nlocal: {lo[:500]}\nremote: {ro[:500]}")
            return
    check(lo == ro, f"{name}: the output differs from the local files'\n"
                    f"local:  {lo[:3000]}\nremote: {ro[:3000]}")
    le = normalized(local_proc.stderr, local_prefix)
    re_ = normalized(remote_proc.stderr, remote_prefix)
    check(le == re_, f"{name}: stderr differs from the local files'\n"
                     f"local:  {le[:2000]}\nremote: {re_[:2000]}")


def fresh_env(env, home):
    """`env` with an empty HOME and cache of the test's own (no index cache
    of an earlier run, no ~/.aws)."""
    os.makedirs(home, exist_ok=True)
    return dict(env, HOME=home, XDG_CACHE_HOME=os.path.join(home, ".cache"))


def temp_root(prefix):
    return tempfile.TemporaryDirectory(prefix=prefix)
