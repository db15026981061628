#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# The documented errors of remote data, each driven as a user meets it:
#   * an unsupported scheme (hdfs://, az://) or a URL without a bucket:
#     exit 2 naming the supported schemes;
#   * an object-store URL as an output (gen, reshard, convert beside its
#     input, index --index-dir): exit 2, outputs are local;
#   * as for local files, a name or glob that matches nothing: exit 2; a
#     missing object a pipeline opens: exit 3 (NOT_FOUND) naming the URL; a
#     missing bucket: exit 3 naming it;
#   * no server (the endpoint's port closed) and a server that never answers
#     (a listener that sends nothing): exit 7 (UNAVAILABLE in --json) naming
#     the URL, within the configured time limit;
#   * an object replaced while it is read (the fault proxy's "replace"): exit
#     3 (DATA_LOSS), never a mix of two versions;
# for s3:// against s3rver and, where the Cloud Storage emulator runs, gs://.
# Every output is searched for the test credentials (remote_checks.run).
# Usage: remote_errors_test.py TFDIST
import json
import os
import socket
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
import remote_checks as rc  # noqa: E402
from checks import check  # noqa: E402
from remote_checks import servers  # noqa: E402

# The time limit given to the no-network runs, and what a run may take past
# it (process start, the machine's load): a run that reaches HANG_SECONDS is
# a hang whatever the limit.
LIMIT = 4
SLACK = 60


def expect_error(proc, code, what, *words):
    err = proc.stderr
    check(proc.returncode == code, f"{what}: exit {proc.returncode}, expected {code}\n{err[-1500:]}")
    for w in words:
        check(w in err, f"{what}: stderr lacks {w!r}\n{err[-1500:]}")


def json_code(proc, what, code):
    try:
        got = json.loads(proc.stdout)["error"]["code"]
    except (json.JSONDecodeError, KeyError, TypeError):
        check(False, f"{what}: no JSON error object on stdout: {proc.stdout[:500]!r}")
        return
    check(got == code, f"{what}: JSON error code {got}, expected {code}")


def usage_errors(env, tmp):
    for url in ("hdfs://namenode/data/train-*", "az://container/train.tfrecord",
                "http://127.0.0.1:1/x.tfrecord", "file:///tmp/x.tfrecord"):
        p = rc.run(["count", url], env, expect=2, what=f"count {url}")
        expect_error(p, 2, f"count {url}", "s3://", "gs://")
        p = rc.run(["layout", f'list_files("{url}").interleave(tfrecord).batch(2)'], env,
                   expect=2, what=f"layout of {url}")
        expect_error(p, 2, f"layout of {url}", "s3://", "gs://")
    for url in ("s3://", "s3:///key", "gs://"):
        rc.run(["count", url], env, expect=2, what=f"count {url!r} (no bucket)")
    local = os.path.join(tmp, "local.tfrecord")
    rc.run(["gen", "-o", local, "--records", "3"], env)
    outputs = [
        ("gen to a bucket", ["gen", "-o", f"s3://{rc.BUCKET}/gen.tfrecord"]),
        ("reshard to a bucket", ["reshard", "--num-shards", "2", "-o", f"gs://{rc.BUCKET}/out",
                                 local]),
        ("convert into a bucket", ["convert", "--output-compression", "gzip", "--output-dir",
                                   f"s3://{rc.BUCKET}/out", local]),
        ("convert beside a remote input", ["convert", "--output-compression", "gzip",
                                           f"s3://{rc.BUCKET}/data/train-00000-of-00004.tfrecord"]),
        ("index into a bucket", ["index", "--index-dir", f"s3://{rc.BUCKET}/idx", local]),
    ]
    for what, args in outputs:
        p = rc.run(args, env, expect=2, what=what)
        check("local" in p.stderr, f"{what}: the error does not say outputs are local\n"
                                   f"{p.stderr[-800:]}")
        check(not os.path.exists(os.path.join(tmp, "s3:")) and
              not os.path.exists(os.path.join(tmp, "gs:")),
              f"{what}: wrote a local folder named after the URL")


def missing_things(scheme, env):
    """As for local files: a name that matches nothing is exit 2 ("no files
    match"), a missing file a pipeline opens exit 3 (NOT_FOUND)."""
    url = f"{scheme}://{rc.BUCKET}/data/nope.tfrecord"
    p = rc.run(["count", url], env, expect=2, what=f"{scheme}: count of a missing object")
    expect_error(p, 2, f"{scheme}: count of a missing object", "no files match", url)
    p = rc.run(["take", f'tfrecord("{url}")'], env, expect=3,
               what=f"{scheme}: take of a missing object")
    expect_error(p, 3, f"{scheme}: take of a missing object", url)
    p = rc.run(["take", "--json", f'tfrecord("{url}")'], env, expect=3,
               what=f"{scheme}: take --json of a missing object")
    json_code(p, f"{scheme}: take --json of a missing object", "NOT_FOUND")
    pattern = f"{scheme}://{rc.BUCKET}/data/nope-*"
    p = rc.run(["count", pattern], env, expect=2, what=f"{scheme}: a glob matching nothing")
    expect_error(p, 2, f"{scheme}: a glob matching nothing", "no files match", pattern)
    if scheme == "s3":  # the emulator makes any bucket on its first use
        url = "s3://no-such-bucket-here/train-*"
        p = rc.run(["count", url], env, expect=3, what="s3: a missing bucket")
        expect_error(p, 3, "s3: a missing bucket", "no-such-bucket-here")


def unreachable(scheme, server, env_of, what, endpoint):
    """tfdist against `endpoint` (nothing answers there): exit 7 within the limit."""
    env = env_of(endpoint)
    url = f"{scheme}://{rc.BUCKET}/data/train-00000-of-00004.tfrecord"
    for args in (["count", url], ["count", "--json", f"{scheme}://{rc.BUCKET}/data/train-*"],
                 ["layout", "--format", "json", f'list_files("{scheme}://{rc.BUCKET}/data/*")'
                                                ".interleave(tfrecord).batch(2)"]):
        start = time.monotonic()
        p = rc.run([args[0], rc.TIMEOUT_FLAG, str(LIMIT), *args[1:]], env, expect=7,
                   what=f"{scheme}: {what}: {' '.join(args)}")
        took = time.monotonic() - start
        check(took < LIMIT + SLACK, f"{scheme}: {what}: {args[0]} took {took:.0f} s with "
                                    f"{rc.TIMEOUT_FLAG} {LIMIT}")
        if "--json" in args or "--format" in args:
            json_code(p, f"{scheme}: {what}: {args[0]} --json", "UNAVAILABLE")
        else:
            check(f"{scheme}://{rc.BUCKET}" in p.stderr,
                  f"{scheme}: {what}: the error does not name the URL\n{p.stderr[-800:]}")


def no_network(scheme, server):
    def env_of(endpoint):
        if scheme == "s3":
            return server.env(secret=rc.SECRET, token=rc.TOKEN, AWS_ENDPOINT_URL=endpoint)
        return server.env(STORAGE_EMULATOR_HOST=endpoint)
    unreachable(scheme, server, env_of, "no server (a closed port)",
                f"http://127.0.0.1:{servers.free_port()}")
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        unreachable(scheme, server, env_of, "a server that never answers",
                    f"http://127.0.0.1:{silent.getsockname()[1]}")


def replaced_mid_read(scheme, server, data, env_base, tmp):
    """The object replaced (same size, other bytes) once the first range of
    a read is answered: the next range meets another version, DataLoss.
    The read-ahead is one range, so that a range is asked for after the
    first is answered (with the default, all of a 20 MB object's ranges are
    asked for at once)."""
    key = "data/big.tfrecord"
    url = f"{scheme}://{rc.BUCKET}/{key}"
    other = os.path.join(tmp, "big-other.tfrecord")
    rc.run(["gen", "--no-fsync", "--force", "-o", other, "--kind", "random", "--size", "100k",
            "--records", "200", "--seed", "99"], dict(os.environ, **env_base))
    original = data.objects[key]
    for args, what, code_word in ((["verify", url], "verify", None),
                                  (["count", "--json", "--no-index", url], "count --json",
                                   "DATA_LOSS")):
        server.put_files(rc.BUCKET, {key: original})  # the first version again
        rule = ("kind=replace&ranged=1&match=" + urllib.parse.quote("big.tfrecord") +
                "&command=" + urllib.parse.quote(server.put_command(rc.BUCKET, key, other)))
        with servers.FaultProxy(server, [rule]) as proxy:
            env = proxy.env(**env_base)
            p = rc.run([args[0], *rc.READ_AHEAD, *args[1:]], env, expect=3,
                       what=f"{scheme}: {what} of an object replaced mid-read")
            if code_word:
                json_code(p, f"{scheme}: {what} of a replaced object", code_word)
            else:
                expect_error(p, 3, f"{scheme}: {what} of a replaced object", url)
            check(proxy.stats()["commands"] == 1, f"{scheme}: {what}: the proxy replaced "
                                                  f"nothing: {proxy.stats()}")


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    servers.skip_unless_available("s3")
    servers.terminate_on_sigterm()
    schemes = ["s3"] + (["gs"] if servers.missing("gs") is None else [])
    if "gs" not in schemes:
        print(f"note: gs:// left out: {servers.missing('gs')}")
    with rc.temp_root("tfdist-remote-errors-") as tmp:
        data = rc.Dataset(tmp)
        env_plain = rc.fresh_env(os.environ, os.path.join(tmp, "home"))
        usage_errors(env_plain, tmp)
        for scheme in schemes:
            server_class = servers.S3Server if scheme == "s3" else servers.GcsEmulator
            with server_class() as server:
                server.create_bucket(rc.BUCKET)
                server.put_files(rc.BUCKET, data.objects)
                extra = {"HOME": env_plain["HOME"], "XDG_CACHE_HOME": env_plain["XDG_CACHE_HOME"]}
                env = (server.env(secret=rc.SECRET, token=rc.TOKEN, **extra) if scheme == "s3"
                       else server.env(**extra))
                missing_things(scheme, env)
                no_network(scheme, server)
                if scheme == "s3":
                    extra.update(AWS_SECRET_ACCESS_KEY=rc.SECRET, AWS_SESSION_TOKEN=rc.TOKEN)
                replaced_mid_read(scheme, server, data, extra, tmp)
    print(f"{rc.OUTPUTS_CHECKED[0]} outputs searched for the test credentials")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
