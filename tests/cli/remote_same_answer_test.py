#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# A dataset in a bucket gives exactly the answers the same files give on
# local disk: count, verify, digest, cat, take, layout (several pipelines:
# list_files of a URL, sharding over workers, a GZIP object, a --python
# input function), index and run --device cpu. The store is a real server
# started here (s3rver for s3://, the Cloud Storage emulator for gs://),
# read directly and then through the fault-injecting proxy in each of its
# faults (bursts of 503 and 429, connections cut mid-body, a slow first
# byte): retries must give the same records, never a repeated or skipped one.
# The outputs are compared modulo the data's names (the folder on disk, the
# URL of the bucket); every output is also searched for the credentials.
# Usage: remote_same_answer_test.py TFDIST s3|gs
# Skips (exit 77) only when the test server cannot run here: node or the
# npm packages of tests/servers missing (tools/setup --servers).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
import remote_checks as rc  # noqa: E402
from checks import check  # noqa: E402
from remote_checks import servers  # noqa: E402

# The --python input function: its data's prefix comes from the environment,
# so that the local and the remote runs trace the same file.
PYTHON_INPUT = '''\
import os
import tensorflow as tf

ROOT = os.environ["TFDIST_TEST_DATA"]

def input_fn(ctx):
    files = tf.data.Dataset.list_files(ROOT + "train-*", shuffle=False)
    files = files.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=2)
    return ds.batch(ctx.get_per_replica_batch_size(8))
'''


def commands(p, tmp):
    """(name, args, JSON keys left out or None for text) of each comparison,
    for the data under prefix `p` (a folder with / or a URL prefix)."""
    train = f'list_files("{p}train-*", shuffle=False)'
    every = [p + "train-*", p + "gz/*", p + "big.tfrecord", p + "odd/*"]
    python_file = os.path.join(tmp, "input.py")
    with open(python_file, "w") as f:
        f.write(PYTHON_INPUT)
    return [
        ("count --json", ["count", "--json", *every], set()),
        ("count", ["count", p + "train-*", p + "gz/*"], None),
        ("verify --json", ["verify", "--json", *every], set()),
        ("verify", ["verify", *every], None),
        ("digest --json", ["digest", "--json", *every], set()),
        ("digest", ["digest", p + "train-*", p + "gz/*"], None),
        ("cat of an escaped key", ["cat", "--json", p + "odd/*"], None),  # JSON lines
        ("cat of GZIP", ["cat", "-n", "20", "--skip", "100", p + "gz/part.tfrecord.gz"], None),
        ("take", ["take", "-n", "-1", "--json",
                  train + ".interleave(tfrecord, cycle_length=2, block_length=3).batch(5)"],
         set()),
        ("layout FILE over 2 workers",
         ["layout", "--format", "json", "--label", "ref", "--workers", "2", "--replicas", "2",
          train + ".interleave(tfrecord, cycle_length=2).batch(4)"], set()),
        ("layout DATA over 3 workers",
         ["layout", "--format", "json", "--workers", "3", "--policy", "DATA",
          train + ".interleave(tfrecord, cycle_length=4).batch(6)"], set()),
        ("layout summary, shuffled",
         ["layout", "--format", "summary", "--workers", "2", "--seed", "1",
          f'list_files("{p}train-*", seed=5).interleave(tfrecord, cycle_length=2)'
          ".shuffle(16, seed=3).batch(4, drop_remainder=True)"], None),
        ("layout of a GZIP object, DATA",
         ["layout", "--format", "json", "--label", "ref", "--workers", "2", "--policy", "DATA",
          f'tfrecord("{p}gz/part.tfrecord.gz", compression_type="GZIP").batch(32)'], set()),
        ("layout of list_files of two patterns",
         ["layout", "--format", "json", "--label", "ref", "--workers", "2",
          f'list_files(["{p}odd/*", "{p}train-0000[13]-*"], shuffle=False)'
          ".interleave(tfrecord).batch(2)"], set()),
        ("layout --python",
         ["layout", "--format", "json", "--workers", "2", "--api", "from-function",
          "--python", python_file, "--entry", "input_fn"], set()),
        ("run --device cpu over 2 workers",
         ["run", "--device", "cpu", "--json", "--verify", "--workers", "2", "--replicas", "2",
          "--all-workers", train + ".interleave(tfrecord, cycle_length=2).batch(4)"], rc.TIMING),
        ("run --device cpu of the big object",
         ["run", "--device", "cpu", "--json", "--verify",
          f'tfrecord("{p}big.tfrecord").batch(8)'], rc.TIMING),
        ("run --device cpu of GZIP",
         ["run", "--device", "cpu", "--json", "--verify",
          f'tfrecord("{p}gz/part.tfrecord.gz", compression_type="GZIP").batch(50)'], rc.TIMING),
    ]


def compare_all(label, env_local, env_remote, local_prefix, remote_prefix, tmp,
                stderr_too=True, proxy=None):
    """Runs each command on the local files and on the objects; with a
    proxy, its faults are armed again before each remote run."""
    local = commands(local_prefix, tmp)
    remote = commands(remote_prefix, tmp)
    env_local = dict(env_local, TFDIST_TEST_DATA=local_prefix)
    env_remote = dict(env_remote, TFDIST_TEST_DATA=remote_prefix)
    for (name, largs, keys), (_, rargs, _) in zip(local, remote):
        lp = rc.run(largs, env_local, expect=None, what=f"local: {name}")
        check(lp.returncode == 0, f"local: {name}: exit {lp.returncode}\n{lp.stderr[-1500:]}")
        if proxy is not None:
            proxy.arm()
        rp = rc.run(rargs, env_remote, expect=None, what=f"{label}: {name}")
        if not stderr_too:  # retries may be reported: the answer must not change
            lp.stderr = rp.stderr = ""
        rc.compare(f"{label}: {name}", lp, rp, local_prefix, remote_prefix, keys)


def check_index(label, env_local, env_remote, local_prefix, remote_prefix):
    """index of the objects (into the local index cache), then count and
    layout --format summary from the index: the local files' answers."""
    for prefix, env in ((local_prefix, env_local), (remote_prefix, env_remote)):
        rc.run(["index", prefix + "train-*"], env, what=f"{label}: index")
    for name, args in (("count from the index", ["count", "--json"]),
                       ("layout summary from the index",
                        ["layout", "--format", "summary", "--json", "--workers", "2"])):
        def args_of(p):
            if args[0] == "count":
                return args + [p + "train-*", p + "gz/*"]
            return args + [f'list_files("{p}train-*", shuffle=False)'
                           ".interleave(tfrecord).batch(4)"]
        lp = rc.run(args_of(local_prefix), env_local, what=f"local: {name}")
        rp = rc.run(args_of(remote_prefix), env_remote, what=f"{label}: {name}")
        rc.compare(f"{label}: {name}", lp, rp, local_prefix, remote_prefix, set())


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    scheme = sys.argv[2]
    servers.skip_unless_available(scheme)
    servers.terminate_on_sigterm()
    server_class = servers.S3Server if scheme == "s3" else servers.GcsEmulator
    with rc.temp_root("tfdist-remote-same-") as tmp:
        data = rc.Dataset(tmp)
        # Each group of runs starts with an empty index cache, local and remote.
        def env_local(name):
            return rc.fresh_env(os.environ, os.path.join(tmp, "home-local-" + name))
        remote_prefix = f"{scheme}://{rc.BUCKET}/data/"
        with server_class() as server:
            server.create_bucket(rc.BUCKET)
            server.put_files(rc.BUCKET, data.objects)

            def env_for(endpoint_server, name):
                base = (endpoint_server.env(secret=rc.SECRET, token=rc.TOKEN) if scheme == "s3"
                        else endpoint_server.env(AWS_SECRET_ACCESS_KEY=rc.SECRET,
                                                 AWS_SESSION_TOKEN=rc.TOKEN))
                return rc.fresh_env(base, os.path.join(tmp, "home-" + name))

            compare_all(f"{scheme} direct", env_local("direct"), env_for(server, "direct"),
                        data.local(), remote_prefix, tmp)
            for mode in servers.FAULT_MODES:
                with servers.FaultProxy(server, mode) as proxy:
                    compare_all(f"{scheme} through the proxy ({mode})", env_local(mode),
                                env_for(proxy, "proxy-" + mode), data.local(), remote_prefix,
                                tmp, stderr_too=False, proxy=proxy)
                    check(proxy.faults() > 0,
                          f"{scheme}: the proxy's {mode} mode injected no fault")
            check_index(f"{scheme} indexed", env_local("index"), env_for(server, "index"),
                        data.local(), remote_prefix)
    print(f"{rc.OUTPUTS_CHECKED[0]} outputs searched for the test credentials")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
