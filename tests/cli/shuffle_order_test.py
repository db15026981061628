#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# A random differential test of seeded shuffles: an independent model of
# TensorFlow's rules (written from TensorFlow's source, in Python, sharing
# no code with tfdist) against `tfdist take --json` and `tfdist layout`
# over a few hundred random pipelines: op seeds or none, a global seed and
# op-seed offset or none, buffers smaller and larger than the data,
# reshuffle_each_iteration both ways, shuffles in a row, repeat() after,
# several passes, and DATA and FILE sharding.
# Usage: shuffle_order_test.py TFDIST [CASES]
import json
import os
import random
import shutil
import sys
import tempfile

import checks
from checks import check, tfdist

MASK = 0xFFFFFFFF
MAX_SEED = 2**31 - 1


class Philox:
    """Philox4x32-10 as TensorFlow's PhiloxRandom + SingleSampleAdapter."""

    def __init__(self, seed, seed2):
        self.key = (seed & MASK, (seed >> 32) & MASK)
        self.counter = (seed2 << 64) & ((1 << 128) - 1)  # words 2-3 from seed2
        self.pending = []

    def __call__(self):
        if not self.pending:
            c = [(self.counter >> (32 * i)) & MASK for i in range(4)]
            k0, k1 = self.key
            for _ in range(10):
                hi_a, lo_a = divmod(0xD2511F53 * c[0], 1 << 32)
                hi_b, lo_b = divmod(0xCD9E8D57 * c[2], 1 << 32)
                c = [hi_b ^ c[1] ^ k0, lo_b, hi_a ^ c[3] ^ k1, lo_a]
                k0, k1 = (k0 + 0x9E3779B9) & MASK, (k1 + 0xBB67AE85) & MASK
            self.pending = c
            self.counter = (self.counter + 1) % (1 << 128)
        return self.pending.pop(0)


def get_seed(global_seed, op_seed, counter):
    """python/framework/random_seed.py get_seed, eager."""
    if global_seed is not None:
        if op_seed is None:
            op_seed = counter.randint(0, MAX_SEED)
        pair = (global_seed % MAX_SEED, op_seed % MAX_SEED)
    elif op_seed is not None:
        pair = (87654321, op_seed % MAX_SEED)
    else:
        return None
    return (0, MAX_SEED) if pair == (0, 0) else pair


class Shuffle:
    """A shuffle dataset: it owns its seed generator."""

    def __init__(self, inner, buffer_size, pair, reshuffle):
        self.inner, self.buffer_size, self.pair, self.reshuffle = inner, buffer_size, pair, reshuffle
        self.generator = Philox(*pair)

    def __iter__(self):
        pair = (self.generator(), self.generator()) if self.reshuffle else self.pair
        rng = Philox(*pair)
        source = iter(self.inner)
        buffer, done = [], False
        while True:
            while not done and len(buffer) < self.buffer_size:
                try:
                    buffer.append(next(source))
                except StopIteration:
                    done = True
            if not buffer:
                return
            k = rng() % len(buffer)
            yield buffer[k]
            buffer[k] = buffer[0]
            del buffer[0]


class Repeat:
    def __init__(self, inner, count):
        self.inner, self.count = inner, count

    def __iter__(self):
        for _ in range(self.count):
            yield from self.inner


def random_case(rng):
    """A pipeline expression, its tfdist arguments, and the model's output."""
    n = rng.randint(0, 40)
    global_seed = rng.choice([None, rng.randint(-5, 2**33)])
    offset = rng.randint(0, 3) if global_seed is not None else 0
    counter = random.Random(global_seed if global_seed is not None else 0)
    for _ in range(offset):
        counter.randint(0, MAX_SEED)
    expr, model = f"range({n})", list(range(n))
    for _ in range(rng.randint(1, 3)):
        buffer_size = rng.choice([1, 2, 3, 7, n or 1, n + 5, 1000])
        op_seed = rng.choice([None, 0, rng.randint(0, 2**40), -rng.randint(1, 100)])
        if global_seed is None and op_seed is None:
            op_seed = rng.randint(0, 100)  # an order TensorFlow fixes
        reshuffle = rng.random() < 0.6
        pair = get_seed(global_seed, op_seed, counter)
        args = [str(buffer_size)]
        if op_seed is not None:
            args.append(f"seed={op_seed}")
        if not reshuffle:
            args.append("reshuffle_each_iteration=False")
        expr += f".shuffle({', '.join(args)})"
        model = Shuffle(model, buffer_size, pair, reshuffle)
        if rng.random() < 0.3:
            count = rng.randint(1, 3)
            expr += f".repeat({count})"
            model = Repeat(model, count)
    epochs = rng.randint(1, 3)
    want = [x for _ in range(epochs) for x in model]
    args = ["take", "-n", "-1", "--json", "--epochs", str(epochs)]
    if global_seed is not None:
        args += ["--global-seed", str(global_seed), "--op-seed-offset", str(offset)]
    return expr, args, [str(x) for x in want]


def check_file_sharding(rng, tmp):
    """FILE: each worker's share of the sorted names, shuffled by one
    shuffle re-inserted after the shard with list_files' seeds."""
    names = sorted(f"{tmp}/f{i:02d}.tfrecord" for i in range(rng.randint(2, 9)))
    # The second shuffle of names is dropped by the rewrite; list_files'
    # seeds are the one re-inserted after the shard.
    for name in names:
        tfdist("gen", "-o", name, "--files", "1", "--records", "1")
    workers = rng.randint(2, len(names))  # one worker: nothing is rewritten
    global_seed = rng.choice([None, rng.randint(0, 1000)])
    seed = rng.choice([None, rng.randint(0, 1000)]) if global_seed is not None else rng.randint(0, 1000)
    counter = random.Random(global_seed or 0)
    pair = get_seed(global_seed, seed, counter)
    epochs = rng.randint(1, 2)
    expr = (f'list_files("{tmp}/f*.tfrecord"{"" if seed is None else f", seed={seed}"})'
            f'.shuffle(3).interleave(tfrecord).batch(1)')
    args = ["layout", "--format", "json", "--label", "ref", "--policy", "FILE", "--workers",
            str(workers), "--epochs", str(epochs)]
    if global_seed is not None:
        args += ["--global-seed", str(global_seed)]
    out = json.loads(tfdist(*args, expr).stdout)
    for w in range(workers):
        shuffled = Shuffle(names[w::workers], len(names), pair, True)
        want = [name for _ in range(epochs) for name in shuffled]
        got = [e.rsplit(":", 1)[0] for s in out["steps"] for b in s["batches"]
               if b["worker"] == w for e in b["elements"]]
        check(got == want, f"FILE worker {w}: {expr} {args}\n got  {got}\n want {want}")


def check_data_sharding(rng):
    """DATA: every worker runs the whole pipeline with the same seeds and
    keeps every W-th element of its order, epoch after epoch."""
    workers = rng.randint(2, 4)
    n = rng.randint(workers, 30)  # fewer elements than workers is an error
    buffer_size, seed, global_seed = rng.randint(1, 12), rng.randint(0, 99), rng.randint(0, 99)
    epochs = rng.randint(1, 3)
    expr = f"range({n}).shuffle({buffer_size}, seed={seed})"  # unbatched: elements sharded
    model = Shuffle(list(range(n)), buffer_size, get_seed(global_seed, seed, None), True)
    orders = [list(model) for _ in range(epochs)]
    out = json.loads(tfdist("layout", "--format", "json", "--policy", "DATA", "--workers",
                            str(workers), "--epochs", str(epochs), "--global-seed",
                            str(global_seed), expr).stdout)
    for w in range(workers):
        want = [str(x) for order in orders for x in order[w::workers]]
        got = out["workers"][w]["elements"]
        check(got == want, f"DATA worker {w}: {expr} x{workers} --global-seed {global_seed} "
                           f"--epochs {epochs}\n got  {got}\n want {want}")


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    # 300 cases; under the sanitizers (several times slower) 60.
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else (60 if checks.SANITIZED else 300)
    rng = random.Random(20261125)
    for _ in range(cases):
        expr, args, want = random_case(rng)
        got = json.loads(tfdist(*args, expr).stdout)["elements"]
        check(got == want, f"{expr} {args}\n got  {got}\n want {want}")
    for _ in range(20):
        check_data_sharding(rng)
    # A shuffle without any seed is said to be random in TensorFlow; a global
    # seed gives it one.
    unseeded = "TensorFlow's order differs on every run"
    check(unseeded in tfdist("take", "range(4).shuffle(4)").stderr, "an unseeded shuffle is said")
    check(unseeded not in tfdist("take", "--global-seed", "1", "range(4).shuffle(4)").stderr,
          "under a global seed a seedless shuffle has TensorFlow's order")
    check(unseeded not in tfdist("take", "range(4).shuffle(4, seed=0)").stderr,
          "an op seed alone fixes the order")
    tmp = tempfile.mkdtemp(prefix="tfdist-shuffle-")
    try:
        for _ in range(8):
            check_file_sharding(rng, tmp)
            for f in os.listdir(tmp):
                os.remove(os.path.join(tmp, f))
    finally:
        shutil.rmtree(tmp)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
