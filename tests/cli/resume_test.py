#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# tfdist resume, checked against tfdist layout over random cases: seeded
# shuffles (of names and of records), FILE and DATA, several epochs, uneven
# files, drop_remainder, and resume points anywhere. For each case:
#   * the cursor's counts equal what the layout's steps say: records
#     received up to step N in its epoch, and after it to the epoch's end,
#     per worker and replica;
#   * `layout --python DIR/input_fn.py --api from-function` of the written
#     remainder equals the layout's steps N + 1 to the epoch's end, replica
#     by replica (every record by its payload);
#   * the same resume found with --epoch E (only that epoch replayed) is
#     the same cursor;
#   * under a new topology (--to-workers, --to-replicas) the remainder's
#     records are exactly the unseen ones (a multiset, by payload), each
#     global batch full but the last, and dealt in the global order.
# Then the refusals: an unseeded shuffle, a filter, an endless repeat, a
# step past the end, and a manifest of a dataset that changed since.
# Usage: resume_test.py TFDIST [CASES]
import collections
import glob
import json
import os
import random
import re
import resource
import subprocess
import shutil
import sys
import tempfile

import checks
from checks import check, tfdist


STATS = collections.Counter()


def layout_steps(args):
    """The layout's steps as (epoch, [[labels of replica r of worker w]
    for each worker and replica in order]), dropped steps left out."""
    out = json.loads(tfdist("layout", "--format", "json", *args).stdout)
    steps = []
    for s in out.get("steps", []):
        if s.get("dropped"):
            continue
        batches = [list(b["elements"]) for b in s["batches"]]
        steps.append((s.get("epoch", 1), batches))
    return steps


def case(rng, tmp, n):
    workers = rng.randint(1, 4)
    replicas = rng.randint(1, 3)
    policy = rng.choice(["FILE", "DATA"])
    files = rng.randint(workers if policy == "FILE" else 1, 7)
    data = os.path.join(tmp, f"d{n}")
    os.makedirs(data)
    tfdist("gen", "-o", os.path.join(data, "p"), "--files", str(files), "--records",
           f"{rng.randint(0, 5)}-{rng.randint(6, 30)}", "--kind", "text", "--text",
           f"c{n}f{{f}}r{{i}}", "--seed", str(rng.randint(0, 1000)), "--no-fsync")
    pattern = os.path.join(data, "p*")  # one file is "p", more "p-00000-of-0000N"
    if rng.random() < 0.4:
        # Indexed files give their record ids without a read.
        tfdist("index", *sorted(glob.glob(pattern)))
        STATS["indexed"] += 1
    names = (f'list_files("{pattern}", seed={rng.randint(0, 99)})' if rng.random() < 0.6 else
             f'list_files("{pattern}", shuffle=False)')
    reader = rng.choice([".interleave(tfrecord)",
                         f".interleave(tfrecord, cycle_length={rng.randint(1, 3)}, "
                         f"block_length={rng.randint(1, 3)})", ".flat_map(tfrecord)"])
    shuffle = ""
    if rng.random() < 0.6:
        shuffle = (f".shuffle({rng.randint(1, 40)}, seed={rng.randint(0, 99)}"
                   f"{', reshuffle_each_iteration=False' if rng.random() < 0.2 else ''})")
    middle = ""
    if rng.random() < 0.2:
        middle += '.map(opaque("parse"))'
    if rng.random() < 0.2:
        middle += f".repeat({rng.randint(1, 2)})"
        if rng.random() < 0.5:
            middle += f".shuffle({rng.randint(1, 10)}, seed={rng.randint(0, 99)})"
    batch = rng.randint(1, 9)
    drop = rng.random() < 0.3
    pipeline = (f"{names}{reader}{shuffle}{middle}.batch({batch}"
                f"{', drop_remainder=True' if drop else ''})"
                f"{'.prefetch(2)' if rng.random() < 0.2 else ''}")
    epochs = rng.randint(1, 3)
    topo = ["--workers", str(workers), "--replicas", str(replicas), "--policy", policy]
    if rng.random() < 0.2:
        topo += ["--rebatch", "legacy"]
    to = []
    if rng.random() < 0.25:
        to = ["--to-workers", str(rng.randint(1, 4)), "--to-replicas", str(rng.randint(1, 3))]
    spe = None
    if rng.random() < 0.15 and ".repeat(" not in pipeline and not drop:
        # fit(steps_per_epoch=S) over a pipeline that repeats forever.
        pipeline = pipeline.replace(".batch(", ".repeat().batch(", 1)
        spe = rng.randint(1, 12)
        STATS["steps per epoch"] += 1
    compare(f"case {n}", topo, epochs, pipeline, lambda steps: rng.randint(0, len(steps)), to,
            os.path.join(tmp, f"r{n}"), rng.random() < 0.3, rng.random() < 0.3, spe)


def compare(name, topo, epochs, pipeline, pick, to, out, also_epoch, ahead=False, spe=None,
            batch=None):
    """Resumes `pipeline` (an expression, or a list of arguments such as
    --python FILE) at the step pick(steps) picks, writes the remainder to
    `out` (with the new topology `to`, when given) and checks it against
    the layout. With `spe`, the pipeline repeats forever and an epoch is
    `spe` steps of its one pass (--steps-per-epoch)."""
    source = pipeline if isinstance(pipeline, list) else [pipeline]
    name = f"{name}: {' '.join(topo)} --epochs {epochs} {' '.join(source)}"
    if batch is None:
        batch = int(re.search(r"\.batch\((\d+)", source[-1]).group(1))
    workers, replicas = int(topo[1]), int(topo[3])
    from_function = "from-function" in topo
    per_epoch = ["--steps-per-epoch", str(spe)] if spe else []
    if spe:
        steps = [(i // spe + 1, b) for i, (_, b) in
                 enumerate(layout_steps([*topo, "--steps", str(epochs * spe), *source]))]
    else:
        steps = layout_steps([*topo, "--epochs", str(epochs), *source])
    if not steps:
        STATS["no steps"] += 1
        return
    at = pick(steps)
    epoch = steps[at - 1][0] if at > 0 else 1
    # The resume point at the end of an epoch ends that epoch.
    in_epoch = [s for s in steps if s[0] == epoch]
    first = next(i for i, s in enumerate(steps) if s[0] == epoch)
    before = steps[first:at]
    after = steps[max(at, first):first + len(in_epoch)]

    os.makedirs(out)
    change = bool(to)
    # --epochs-ahead: the epochs after this one, whole, each its own files.
    ahead = ahead and not to and epoch < epochs
    more = ["--epochs-ahead", str(epochs - epoch)] if ahead else []
    res = tfdist("resume", *topo, "--epochs", str(epochs), *per_epoch, "--at-step", str(at),
                 "--json", "--detail", "--write", out, "--no-fsync", *to, *more, *source)
    if res.returncode != 0:
        return
    cursor = json.loads(res.stdout)
    summary = {k: v for k, v in cursor.items() if k not in ("workers", "to_workers", "after",
                                                              "shuffle_buffers",
                                                              "wrote")}
    check(len(json.dumps(summary)) <= 1024, f"{name}: summary over 1 KB")
    check(cursor["epoch"] == epoch and cursor["at_step"] == at and
          cursor["epoch_steps"] == len(in_epoch) and cursor["step_in_epoch"] == at - first,
          f"{name} at {at}: cursor {summary}, expected epoch {epoch}, {len(in_epoch)} steps")
    for w in range(workers):
        for r in range(replicas):
            i = w * replicas + r
            consumed = sum(len(s[1][i]) for s in before)
            remaining = sum(len(s[1][i]) for s in after)
            got = cursor["workers"][w]
            check(got["replica_consumed"][r] == consumed and
                  got["replica_remaining"][r] == remaining,
                  f"{name} at {at}: worker {w} replica {r}: {got['replica_consumed'][r]}/"
                  f"{got['replica_remaining'][r]}, layout {consumed}/{remaining}")

    # --epoch E: the same cursor from a replay of that epoch alone.
    if epoch > 1 or also_epoch:
        again = tfdist("resume", *topo, "--epochs", str(epochs), *per_epoch, "--epoch",
                       str(epoch), "--at-step", str(at - first), "--json", "--detail", *source)
        if again.returncode == 0:
            STATS["--epoch"] += 1
            a = json.loads(again.stdout)
            check(a["workers"] == cursor["workers"] and a["epoch_steps"] == len(in_epoch),
                  f"{name}: --epoch {epoch} --at-step {at - first} gives another cursor")

    # The written remainder, laid out by tfdist from the input function.
    new_w = int(to[1]) if to else workers
    new_r = int(to[3]) if to else replicas
    resumed = layout_steps(["--python", os.path.join(out, "input_fn.py"), "--api",
                            "from-function", "--workers", str(new_w), "--replicas", str(new_r)])
    if not change:
        want = [s[1] for s in after]
        got = [[b for b in s[1]] for s in resumed]
        check(got == want, f"{name} at {at}: the remainder's layout differs\n"
                           f"got  {got[:4]}\nwant {want[:4]}")
        STATS["same topology"] += 1
        for e in range(epoch + 1, epochs + 1) if ahead else []:
            want = [s[1] for s in steps if s[0] == e]
            fn = os.path.join(out, f"epoch-{e:05d}-input_fn.py")
            got = [s[1] for s in layout_steps(["--python", fn, "--api", "from-function",
                                               "--workers", str(workers),
                                               "--replicas", str(replicas)])]
            check(got == want, f"{name} at {at}: epoch {e} written ahead differs\n"
                               f"got  {got[:4]}\nwant {want[:4]}")
            STATS["epochs ahead"] += 1
        return
    STATS["new topology"] += 1
    unseen = [label for s in after for b in s[1] for label in b]
    got = [label for s in resumed for b in s[1] for label in b]
    check(collections.Counter(got) == collections.Counter(unseen),
          f"{name} at {at} {' '.join(to)}: the remainder's records are not the unseen ones")
    check(got == unseen, f"{name} at {at} {' '.join(to)}: not in the uninterrupted order")
    sizes = [sum(len(b) for b in s[1]) for s in resumed]
    # experimental_distribute_dataset: batch(G) is the global batch; from a
    # function, batch(b) is each replica's, kept on the new topology.
    g = batch * new_w * new_r if from_function else batch
    check(all(x == g for x in sizes[:-1]) and (not sizes or sizes[-1] <= g),
          f"{name} at {at} {' '.join(to)}: global batches {sizes}, expected {g}")


def readme_example(tmp):
    """README's example (Resuming a preempted job), whole."""
    data = os.path.join(tmp, "readme")
    os.makedirs(data)
    tfdist("gen", "-o", os.path.join(data, "shards"), "--files", "5", "--records", "6-14",
           "--kind", "text", "--text", "s{f}-{i}", "--seed", "2", "--no-fsync")
    pipeline = (f'list_files("{data}/shards-*", seed=7).interleave(tfrecord, cycle_length=2)'
                f'.shuffle(16, seed=7).batch(8)')
    topo = ["--workers", "2", "--replicas", "2"]
    for at in (11, 0, 8, 16):
        compare(f"README at {at}", topo, 2, pipeline, lambda steps: at, [],
                os.path.join(tmp, f"readme-{at}"), True)
    compare("README to 1 x 4", topo, 2, pipeline, lambda steps: 11,
            ["--to-workers", "1", "--to-replicas", "4"], os.path.join(tmp, "readme-to"), False)


def python_cases(tmp):
    """An input function whose workers build different pipelines (one
    repeats after its shuffle), laid out from the function itself; and a
    new topology from a function, whose batch(b) is each replica's."""
    data = os.path.join(tmp, "py")
    os.makedirs(data)
    tfdist("gen", "-o", os.path.join(data, "p"), "--files", "4", "--records", "5-12", "--kind",
           "text", "--text", "y{f}-{i}", "--seed", "4", "--no-fsync")
    fn = os.path.join(data, "input.py")
    with open(fn, "w") as f:
        f.write(f"""import tensorflow as tf
def input_fn(ctx):
    files = tf.data.Dataset.list_files("{data}/p-*", seed=3)
    files = files.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=2)
    ds = ds.shuffle(8, seed=5)
    if ctx.input_pipeline_id == 1:
        ds = ds.repeat(2)
    return ds.batch(ctx.get_per_replica_batch_size(8))
""")
    topo = ["--workers", "2", "--replicas", "2", "--api", "from-function"]
    for at in (0, 3, 9, 13):
        compare(f"per-worker function at {at}", topo, 2, ["--python", fn], lambda steps: at, [],
                os.path.join(tmp, f"py-{at}"), True, True, batch=2)
    compare("per-worker function to 3 x 1", topo, 2, ["--python", fn], lambda steps: 5,
            ["--to-workers", "3", "--to-replicas", "1"], os.path.join(tmp, "py-to"), True,
            batch=2)


def refusals(tmp):
    data = os.path.join(tmp, "refuse")
    os.makedirs(data)
    tfdist("gen", "-o", os.path.join(data, "p"), "--files", "2", "--records", "10", "--kind",
           "text", "--no-fsync")
    pattern = os.path.join(data, "p-*")
    seeded = f'list_files("{pattern}", shuffle=False).interleave(tfrecord).batch(2)'
    for pipeline, words in [
        (f'list_files("{pattern}").interleave(tfrecord).batch(2)', "no seed"),
        (f'list_files("{pattern}", shuffle=False).interleave(tfrecord).shuffle(4).batch(2)',
         "no seed"),
        (f'list_files("{pattern}", shuffle=False).interleave(tfrecord).filter(opaque("f"))'
         f'.batch(2)', "filter"),
        (f'list_files("{pattern}", shuffle=False).interleave(tfrecord).repeat().batch(2)',
         "never ends"),
        (f'list_files("{pattern}", shuffle=False).interleave(tfrecord, num_parallel_calls=2, '
         f'deterministic=False).batch(2)', "timing"),
        (f'list_files("{pattern}", shuffle=False).interleave(tfrecord)', "no batch"),
    ]:
        proc = tfdist("resume", "--at-step", "1", pipeline, expect=2)
        check(words in proc.stderr, f"refusal of {pipeline}: {proc.stderr!r} lacks {words!r}")
    # A global seed seeds an unseeded shuffle: no refusal.
    tfdist("resume", "--at-step", "1", "--global-seed", "7",
           f'list_files("{pattern}").interleave(tfrecord).batch(2)')
    proc = tfdist("resume", "--at-step", "11", seeded, expect=2)
    check("past the end" in proc.stderr, f"step past the end: {proc.stderr!r}")
    # The manifest of an earlier resume: accepted while the files are the
    # same, refused (naming the file) once one changed.
    out = os.path.join(tmp, "refuse-out")
    os.makedirs(out)
    tfdist("resume", "--at-step", "3", "--write", out, "--no-fsync", seeded)
    tfdist("resume", "--at-step", "3", "--manifest", os.path.join(out, "manifest.json"), seeded)
    summary = tfdist("resume", "--at-step", "3", "--json", seeded).stdout
    with open(os.path.join(tmp, "cursor.json"), "w") as f:
        f.write(summary)
    with open(os.path.join(data, "p-00001-of-00002.tfrecord"), "ab") as f:
        f.write(b"")
    os.utime(os.path.join(data, "p-00001-of-00002.tfrecord"), ns=(1, 1))
    proc = tfdist("resume", "--at-step", "3", "--manifest", os.path.join(out, "manifest.json"),
                  seeded, expect=2)
    check("p-00001-of-00002.tfrecord changed" in proc.stderr, f"changed file: {proc.stderr!r}")
    proc = tfdist("resume", "--at-step", "3", "--manifest", os.path.join(tmp, "cursor.json"),
                  seeded, expect=2)
    check("not the one" in proc.stderr, f"changed dataset by --json: {proc.stderr!r}")
    # Compressed files cannot be fetched by offset: --write says so, the
    # cursor is still given.
    tfdist("gen", "-o", os.path.join(data, "z"), "--files", "2", "--records", "10", "--kind",
           "text", "--output-compression", "gzip", "--no-fsync")
    gz = (f'tfrecord(["{data}/z-00000-of-00002.tfrecord.gz", "{data}/z-00001-of-00002.tfrecord.gz"]'
          f', compression_type="GZIP").batch(2)')
    tfdist("resume", "--at-step", "1", gz)
    proc = tfdist("resume", "--at-step", "1", "--write", out, "--force", gz, expect=2)
    check("compressed" in proc.stderr, f"--write of compressed files: {proc.stderr!r}")
    # A file open per worker: past the hard limit on open files, exit 5
    # before anything is written; under it, the soft limit is raised.
    def limit(n):
        return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    many = os.path.join(tmp, "many")
    os.makedirs(many)
    proc = subprocess.run([checks.TFDIST, "resume", "--at-step", "1", "--to-workers", "300",
                           "--write", many, "--no-fsync", seeded], capture_output=True, text=True,
                          timeout=120, preexec_fn=limit(200))
    check(proc.returncode == 5 and "open files" in proc.stderr and not os.listdir(many),
          f"--write past the open-file limit: exit {proc.returncode}, {proc.stderr!r}")
    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] >= 1024:  # room to raise the soft one
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        soft = subprocess.run([checks.TFDIST, "resume", "--at-step", "1", "--to-workers", "300",
                               "--write", many, "--no-fsync", seeded], capture_output=True,
                              text=True, timeout=120, preexec_fn=lambda: resource.setrlimit(
                                  resource.RLIMIT_NOFILE, (200, hard)))
        check(soft.returncode == 0 and len(os.listdir(many)) == 302,
              f"--write over the soft open-file limit: exit {soft.returncode}, {soft.stderr!r}")
    # All or none: a failing write leaves the folder as it was.
    before = sorted(os.listdir(out))
    tfdist("resume", "--at-step", "2", "--write", out, "--no-fsync", seeded, expect=2)
    check(sorted(os.listdir(out)) == before, "a refused --write changed the folder")


def main():
    checks.TFDIST = sys.argv[1]
    # 200 cases; under the sanitizers (several times slower) 20.
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else (20 if checks.SANITIZED else 200)
    tmp = tempfile.mkdtemp(prefix="tfdist-resume-")
    os.environ["XDG_CACHE_HOME"] = tmp  # the index cache of this test alone
    try:
        refusals(tmp)
        readme_example(tmp)
        python_cases(tmp)
        rng = random.Random(31)
        for n in range(cases):
            case(rng, tmp, n)
    finally:
        shutil.rmtree(tmp)
    if checks.FAILURES:
        print(f"{len(checks.FAILURES)} failures")
        sys.exit(1)
    print(f"{cases} cases: ok ({dict(STATS)})")


if __name__ == "__main__":
    main()
