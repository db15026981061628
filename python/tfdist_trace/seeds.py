# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""Seeds as TensorFlow draws them: the op-seed counter of
tf.random.set_seed, and seeds that differ in each worker's process (drawn at
random by the program)."""

import random

from . import session
from .data import assume, plain_int
from .render import user_site
from .values import Unknown


# TensorFlow's op-seed counter: tf.random.set_seed(G) makes random.Random(G),
# and each random op made eagerly without a seed takes randint(0, 2**31 - 1)
# as its op seed (ops inside dataset functions count in the function's own
# graph, not here).
MAX_SEED = 2**31 - 1


def start_op_seeds(global_seed, offset):
    """The counter before the program runs: --global-seed's, skipping the
    --op-seed-offset draws of ops the trace does not see."""
    session.current.op_seed_offset = offset
    set_global_seed(global_seed)


def known_seed(seed):
    """`seed` as an int that every process of the job computes alike, else
    None (a symbol, a value the trace cannot know, one drawn at random)."""
    if isinstance(seed, RandomInt):
        return None
    try:
        return plain_int(seed)
    except TypeError:
        return None


def set_global_seed(seed):
    """tf.random.set_seed(seed): a new counter (none for a seed not known)."""
    counter = None
    if known_seed(seed) is not None:
        counter = random.Random(known_seed(seed))
        for _ in range(session.current.op_seed_offset):
            counter.randint(0, MAX_SEED)
    session.current.op_seed_counter = counter


def draw_op_seed():
    """The op seed of a random op made eagerly without one: the counter's
    next, or None without a global seed (or inside a dataset function)."""
    counter = session.current.op_seed_counter
    if counter is None or session.current.parse_events:
        return None
    return counter.randint(0, MAX_SEED)


class RandomInt(int):
    """A number Python's random module drew: each process of a training
    job draws its own."""


def per_process_seed(seed, op):
    """A seed drawn at random in the program (random.randint, numpy.random)
    differs in each worker's process: TensorFlow's shuffle is then as
    unseeded, which is how it is laid out."""
    drawn = isinstance(seed, RandomInt)
    if isinstance(seed, Unknown):
        name = seed.origin()._name
        drawn = name.startswith("numpy.random.") or name.startswith("random.")
    if not drawn:
        return seed
    assume(f"{op}(seed=...): the seed is drawn at random in each worker's process; laid out "
           f"as an unseeded shuffle", user_site())
    return None
