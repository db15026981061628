# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""The object stores the remote-storage tests and tools/bench-remote talk to,
started on 127.0.0.1 and stopped again (standard library only).

  S3Server():    s3rver (tests/servers, npm), an S3-compatible server
  GcsEmulator(): the firebase-tools Cloud Storage emulator, through
                 tests/servers/gcs-emu.js (no Java, no network)

Each is a context manager: entering starts the server on a free port in a
temporary folder of its own, leaving stops it (SIGTERM, then SIGKILL) and
removes the folder, on an error too. A server also dies with the process
that started it (PR_SET_PDEATHSIG), so a test killed by its timeout leaves
nothing running. Objects are put with curl, the way a user would:

    with S3Server() as s3:
        s3.create_bucket("b")
        s3.put_files("b", {"data/x.tfrecord": "/tmp/x.tfrecord"})
        subprocess.run(["tfdist", "count", "s3://b/data/*"], env=s3.env())

missing() says why the servers cannot run here (None when they can): the
tests skip (exit 77) on that alone. Nothing here talks to an address other
than 127.0.0.1.
"""
import ctypes
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVERS = os.path.join(ROOT, "tests", "servers")
MODULES = os.path.join(SERVERS, "node_modules")
S3RVER = os.path.join(MODULES, "s3rver", "bin", "s3rver.js")
FIREBASE = os.path.join(MODULES, "firebase-tools", "package.json")
GCS_EMU = os.path.join(SERVERS, "gcs-emu.js")

# s3rver accepts the access key S3RVER and checks no SigV4 signature, so the
# secret key and session token can be anything: the tests give distinctive
# ones and look for them in every output.
S3_ACCESS_KEY = "S3RVER"
SKIP = 77
START_TIMEOUT = 60  # seconds for a server to say it listens (a loaded machine)


def node_version():
    """Node.js's major version, or None when there is no node."""
    try:
        out = subprocess.run(["node", "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.match(r"v(\d+)\.", out.strip())
    return int(m.group(1)) if m else None


def missing(kind):
    """Why the server `kind` ("s3" or "gs") cannot run here, or None.
    Only what tools/setup --servers installs counts: curl, node, the npm
    packages. (gcs-emu.js is part of the source tree: its absence is a
    failure, not a skip.)"""
    if shutil.which("curl") is None:
        return "curl is not installed (tools/setup --servers installs it)"
    major = node_version()
    if major is None:
        return "node is not installed (tools/setup --servers installs it)"
    if kind == "s3":
        if not os.path.exists(S3RVER):
            return (f"s3rver is not installed in {MODULES} "
                    "(tools/setup --servers runs npm ci there)")
        return None
    if major < 20:
        return (f"the Cloud Storage emulator (firebase-tools 15) needs Node.js 20 or newer; "
                f"this node is {major}")
    if not os.path.exists(FIREBASE):
        return (f"firebase-tools is not installed in {MODULES} "
                "(tools/setup --servers runs npm ci there)")
    return None


def skip_unless_available(*kinds):
    """Exits 77 (a skipped test), saying why, when a server of `kinds` cannot run."""
    for kind in kinds:
        why = missing(kind)
        if why:
            print(f"SKIP: the {kind}:// tests need their test server: {why}")
            raise SystemExit(SKIP)


def _die_with_parent():
    """preexec_fn: the server gets SIGTERM when the process that started it
    ends, however it ends (PR_SET_PDEATHSIG = 1)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)


def terminate_on_sigterm():
    """Makes SIGTERM (meson's timeout, a user's kill) raise SystemExit, so
    that the `with` blocks stop their servers and remove their folders."""
    def handler(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, handler)


class Server:
    """A server process in a temporary folder of its own, on a free port."""

    name = "server"

    def __init__(self):
        self.proc = None
        self.port = None
        self.tmp = None
        self._log = []

    def __enter__(self):
        self.tmp = tempfile.mkdtemp(prefix=f"tfdist-{self.name}-")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def _spawn(self, argv, env, ready):
        """Starts argv and waits for a line matching `ready` (a regex whose
        group 1 is the port)."""
        self.proc = subprocess.Popen(argv, env=env, cwd=self.tmp, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, preexec_fn=_die_with_parent,
                                     start_new_session=True)
        found = []

        def read():
            for line in self.proc.stdout:
                self._log.append(line)
                if not found:
                    m = re.search(ready, line)
                    if m:
                        found.append(int(m.group(1)))
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not found:
            if self.proc.poll() is not None:
                time.sleep(0.2)  # the reader's last lines
                raise RuntimeError(f"{self.name} exited {self.proc.returncode} before it "
                                   f"listened:\n{''.join(self._log)[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not listen within {START_TIMEOUT} s:\n"
                                   f"{''.join(self._log)[-3000:]}")
            time.sleep(0.05)
        self.port = found[0]

    def log(self):
        """What the server printed."""
        return "".join(self._log)

    def stop(self):
        """Stops the server (SIGTERM, SIGKILL after 10 s) and removes its folder."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        self.proc = None
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def _curl_all(self, requests, parallel=8):
        """Runs curl over `requests` (lists of curl config lines, one
        transfer each), `parallel` at a time; raises naming the first failure."""
        if not requests:
            return
        config = os.path.join(self.tmp, "curl-config")
        with open(config, "w") as f:
            for i, lines in enumerate(requests):
                if i:
                    f.write("next\n")
                for line in lines:
                    f.write(line + "\n")
                f.write('write-out = "%{http_code} %{url_effective}\\n"\n')
                f.write('output = "/dev/null"\n')
        proc = subprocess.run(["curl", "--silent", "--show-error", "--no-progress-meter", "--parallel",
                               "--parallel-max", str(parallel), "--config", config],
                              capture_output=True, text=True, timeout=1800)
        bad = [line for line in proc.stdout.splitlines() if not line.startswith("2")]
        if proc.returncode != 0 or bad:
            raise RuntimeError(f"{self.name}: curl failed (exit {proc.returncode}): "
                               f"{bad[:3]} {proc.stderr[-2000:]}")


def quote_config(value):
    """A value for a curl config file: quoted, with \\ and " escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class S3Server(Server):
    """s3rver 3.7.1 on 127.0.0.1: path-style, any bucket, SigV4 not checked."""

    name = "s3rver"

    def _start(self):
        env = dict(os.environ)
        # s3rver makes ListObjectsV2 continuation tokens with DES, which
        # OpenSSL 3 refuses by default: every truncated listing would be 500.
        env["NODE_OPTIONS"] = (env.get("NODE_OPTIONS", "") + " --openssl-legacy-provider").strip()
        data = os.path.join(self.tmp, "data")
        os.mkdir(data)
        self._spawn(["node", S3RVER, "--directory", data, "--address", "127.0.0.1",
                     "--port", "0", "--silent"], env,
                    r"listening on [0-9.]+:(\d+)")

    def env(self, secret="S3RVER", token=None, **extra):
        """The environment of a tfdist that reads this server: static keys
        from the environment, no metadata server, no shared files of the
        user's (HOME is left alone; AWS_CONFIG_FILE and the credentials file
        point nowhere)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")
               and k not in ("S3_ENDPOINT", "S3_USE_HTTPS", "S3_VERIFY_SSL")}
        env.update(AWS_ENDPOINT_URL=self.endpoint, AWS_ACCESS_KEY_ID=S3_ACCESS_KEY,
                   AWS_SECRET_ACCESS_KEY=secret, AWS_REGION="us-east-1",
                   AWS_EC2_METADATA_DISABLED="true",
                   AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull)
        if token:
            env["AWS_SESSION_TOKEN"] = token
        env.update(extra)
        return env

    def url(self, bucket, key=None):
        """The path-style URL of `key` in `bucket` (of the bucket without a key)."""
        if key is None:
            return f"{self.endpoint}/{bucket}"
        return f"{self.endpoint}/{bucket}/{urllib.parse.quote(key, safe='/~')}"

    def curl_auth(self):
        """curl's options for a request signed as the tests sign it."""
        return ["--aws-sigv4", "aws:amz:us-east-1:s3", "--user",
                f"{S3_ACCESS_KEY}:{S3_ACCESS_KEY}", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]

    def _signed(self):
        return ['aws-sigv4 = "aws:amz:us-east-1:s3"', f'user = "{S3_ACCESS_KEY}:{S3_ACCESS_KEY}"',
                'header = "x-amz-content-sha256: UNSIGNED-PAYLOAD"']

    def create_bucket(self, bucket):
        self._curl_all([self._signed() + ['request = "PUT"',
                                          f"url = {quote_config(self.url(bucket))}"]])

    def put_files(self, bucket, objects, parallel=8):
        """Puts each {key: local path} as an object of `bucket`."""
        self._curl_all([self._signed() + [f"upload-file = {quote_config(path)}",
                                          f"url = {quote_config(self.url(bucket, key))}"]
                        for key, path in objects.items()], parallel)

    def put_bytes(self, bucket, key, data):
        path = os.path.join(self.tmp, "put-bytes")
        with open(path, "wb") as f:
            f.write(data)
        self.put_files(bucket, {key: path})
        os.remove(path)

    def put_command(self, bucket, key, path):
        """A shell command that puts the file `path` as `key` (for the fault
        proxy's replace)."""
        return shlex.join(["curl", "-sS", "--fail", "-o", os.devnull, *self.curl_auth(),
                           "-T", path, self.url(bucket, key)])


class GcsEmulator(Server):
    """The firebase-tools Cloud Storage emulator (JSON API) on 127.0.0.1,
    started by tests/servers/gcs-emu.js: GCS_EMU_PORT=0 picks a free port,
    it prints "READY PORT", and SIGTERM deletes what it stored. Buckets exist
    as soon as an object is put in them; no credentials are checked."""

    name = "gcs-emulator"

    def _start(self):
        if not os.path.exists(GCS_EMU):
            raise RuntimeError(f"{GCS_EMU} is missing (the emulator's launcher)")
        env = dict(os.environ, GCS_EMU_PORT="0", TMPDIR=self.tmp)
        self._spawn(["node", GCS_EMU], env, r"^READY (\d+)")

    def env(self, **extra):
        """The environment of a tfdist that reads this emulator."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("GOOGLE_APPLICATION_CREDENTIALS", "GCE_METADATA_HOST",
                            "GCE_METADATA_IP", "CLOUDSDK_CONFIG")}
        env.update(STORAGE_EMULATOR_HOST=self.endpoint, NO_GCE_CHECK="true")
        env.update(extra)
        return env

    def upload_url(self, bucket, key):
        return (f"{self.endpoint}/upload/storage/v1/b/{urllib.parse.quote(bucket, safe='')}/o"
                f"?uploadType=media&name={urllib.parse.quote(key, safe='')}")

    def create_bucket(self, bucket):
        """Nothing to do: the emulator makes a bucket on its first object."""

    def put_files(self, bucket, objects, parallel=8):
        self._curl_all([['request = "POST"', f"data-binary = {quote_config('@' + path)}",
                         'header = "Content-Type: application/octet-stream"',
                         f"url = {quote_config(self.upload_url(bucket, key))}"]
                        for key, path in objects.items()], parallel)

    def put_bytes(self, bucket, key, data):
        path = os.path.join(self.tmp, "put-bytes")
        with open(path, "wb") as f:
            f.write(data)
        self.put_files(bucket, {key: path})
        os.remove(path)

    def put_command(self, bucket, key, path):
        return shlex.join(["curl", "-sS", "--fail", "-o", os.devnull, "-X", "POST",
                           "-H", "Content-Type: application/octet-stream",
                           "--data-binary", "@" + path, self.upload_url(bucket, key)])


FAULT_PROXY = os.path.join(ROOT, "tests", "remote", "fault_proxy.py")

# The faults the tests put between tfdist and a server, as fault_proxy.py
# rules, armed again before each command (so each command meets them):
#   errors  a burst of three 503s, then, two requests on, two 429s
#   cut     ranged reads cut after 100,000 bytes of their body (twice),
#           then any answer cut after 300 bytes (listings too), twice
#   slow    the first byte of three answers late (1.5 s each)
FAULT_MODES = {
    "errors": ["kind=503&count=3", "kind=429&count=2&skip=2"],
    "cut": ["kind=cut&after=100000&ranged=1&count=2", "kind=cut&after=300&count=2&skip=1"],
    "slow": ["kind=slow&seconds=1.5&count=3"],
}


class FaultProxy(Server):
    """tests/remote/fault_proxy.py between the tests and `upstream` (a
    Server), injecting the faults of FAULT_MODES[mode] (or a list of rules).
    env() is the upstream's, with the proxy as the endpoint."""

    name = "fault-proxy"

    def __init__(self, upstream, mode):
        super().__init__()
        self.upstream = upstream
        self.rules = FAULT_MODES[mode] if isinstance(mode, str) else list(mode)

    def _start(self):
        if not os.path.exists(FAULT_PROXY):
            raise RuntimeError(f"{FAULT_PROXY} is missing (the fault-injecting proxy)")
        argv = ["python3", "-u", FAULT_PROXY, "--port", "0"]
        for rule in self.rules:
            argv += ["--fault", rule]
        self._spawn(argv + [self.upstream.endpoint], dict(os.environ), r"^(\d+)\s*$")

    def _control(self, path):
        # No proxy of the environment's may stand between us and 127.0.0.1.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(self.endpoint + path, timeout=60) as r:
            return r.read()

    def arm(self, rules=None):
        """Sets the rules again (each with its full count)."""
        self._control("/__fault__?clear=1")
        for rule in self.rules if rules is None else rules:
            self._control("/__fault__?" + rule)

    def stats(self):
        return json.loads(self._control("/__stats__"))

    def faults(self):
        """The requests broken so far."""
        return self.stats()["faults"]

    def env(self, *args, **extra):
        env = self.upstream.env(*args, **extra)
        for key in ("AWS_ENDPOINT_URL", "STORAGE_EMULATOR_HOST"):
            if key in env:
                env[key] = self.endpoint
        return env


def free_port():
    """A TCP port of 127.0.0.1 nothing listens on now (for a closed-port test)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
