# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""One trace's state: what the trace learns (assumptions, the datasets the
code iterated or handed to Keras, the parse calls and ops a traced function
made) and what the traced code set (the tf.distribute API it used, its
global seed, its absl flags). The runner starts a fresh session for each
trace (one per worker when the code computes with the worker's index); the
other modules read and write `session.current`, never a global of their own.

This module imports nothing of the package, so any module may import it."""


class Session:
    """The state of one trace (see the module's docstring)."""

    def __init__(self):
        # What the trace learns beside the chain (data.py), read by the runner.
        self.assumptions = []  # text lines, each once, in the order said
        self.parse_events = []  # stack of lists: parse calls seen while a function runs
        self.op_events = []  # stack of lists: (tf op, site) a function computes with
        self.load_uses = []  # datasets.LoadUse, in the order the file made them
        self.iterated = []  # (dataset, site) whose iterators the code asked for
        self.loading = False  # the user's file is being loaded (not the entry called)
        # TensorFlow's op-seed counter (seeds.py): a random.Random, or None
        # without a known global seed; `op_seed_offset` draws skipped first.
        self.op_seed_counter = None
        self.op_seed_offset = 0
        # Unknown values a function run on a symbolic element may still make
        # (values.py); None outside such a function.
        self.budget = None
        # What the code set that the runner reports (standin.py).
        self.api = None  # "distribute", "from-function" or None
        self.global_seed = None  # (seed, site) of tf.random.set_seed
        self.random_seeded = False  # random.seed(K) made every process draw alike
        self.context = None  # the worker's tf.distribute.InputContext
        self.strategy_replicas = 1
        # absl's FLAGS (standin.FlagValues): --define values, DEFINE_*
        # defaults, flags marked required, and those whose None default the
        # code read.
        self.flag_values = {}
        self.flag_defaults = {}
        self.flags_required = set()
        self.flags_none_read = []


current = Session()


def start():
    """A fresh session, for one trace: nothing of the last one is kept."""
    global current
    current = Session()
    return current
