#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Unknown values of the stand-in tensorflow under random use: sequences of
# operations drawn with a fixed seed (attribute chains, calls, indexing,
# arithmetic, comparison, `in`, len, iteration, formatting, copies, naming
# as a map/filter/interleave function) always end, in a value or in an
# error whose message says what the code needed; never a RecursionError.
# A chain of operations is stored in linear space (each value refers to the
# one it was computed from; its name is spelled only when asked, and short).
# Usage: unknown_property_test.py PYTHON_FOLDER
import copy
import functools
import math
import os
import pickle
import random
import signal
import sys
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from tfdist_trace import data, render, run, session, standin, values  # noqa: E402

tf = standin.install()
SEED = 20261126
SEQUENCES = 400
STEPS = 40
# What an operation on an unknown may end in besides a value: the trace's
# own errors, which say what the code needed.
EXPECTED = (values.NeedValue, values.TraceError)


def unary_ops():
    """(label, function of one value)."""
    return [
        ("attribute", lambda u: u.some_attribute),
        ("func attribute", lambda u: u.func),
        ("attribute chain", lambda u: u.a.b.c),
        ("call", lambda u: u(1, key="v")),
        ("call with a function", lambda u: u(lambda x: x)),
        ("index", lambda u: u[0]),
        ("index by unknown", lambda u: u[u]),
        ("slice", lambda u: u[1:3]),
        ("add", lambda u: u + 1),
        ("radd", lambda u: "text" + u),
        ("self add", lambda u: u + u),
        ("mul", lambda u: u * 3),
        ("pow", lambda u: 2 ** u),
        ("neg", lambda u: -u),
        ("abs", abs),
        ("invert", lambda u: ~u),
        ("divmod", lambda u: divmod(u, 7)),
        ("round", round),
        ("floor", math.floor),
        ("eq", lambda u: u == "train"),
        ("ne", lambda u: u != 0),
        ("lt", lambda u: u < 3),
        ("ge", lambda u: 3 >= u),
        ("bool", bool),
        ("not", lambda u: not u),
        ("if", lambda u: 1 if u else 0),
        ("in", lambda u: "key" in u),
        ("in a tuple", lambda u: u in ("a", "b")),
        ("len", len),
        ("iterate", list),
        ("unpack", lambda u: [*u]),
        ("unpack three", lambda u: tuple(_unpack3(u))),
        ("int", int),
        ("float", float),
        ("index()", lambda u: [0, 1][u]),
        ("str", str),
        ("repr", repr),
        ("format", lambda u: f"{u}"),
        ("format spec", lambda u: f"{u:>8}"),
        ("percent", lambda u: "%s" % (u,)),
        ("hash", hash),
        ("copy", copy.copy),
        ("pickle", pickle.dumps),
        ("deepcopy", copy.deepcopy),
        ("dict key", lambda u: {u: 1}[u]),
        ("isinstance", lambda u: isinstance(3, u)),
        ("callable", callable),
        ("getattr default", lambda u: getattr(u, "missing", None)),
        ("hasattr dunder", lambda u: hasattr(u, "__wrapped__")),
        ("setattr", lambda u: setattr(u, "x", 3) or u.x),
        ("setitem", lambda u: u.__setitem__("k", 1)),
        ("with", _with),
        ("sorted", sorted),
        ("max", lambda u: max(u, 1)),
        ("path", os.fspath),
        ("partial name", lambda u: render.function_name(functools.partial(u, 1))),
        ("function name", render.function_name),
        ("map", lambda u: _pipeline().map(u)),
        ("filter", lambda u: _pipeline().filter(u)),
        ("interleave", lambda u: _names().interleave(u, cycle_length=2)),
        ("flat_map", lambda u: _names().flat_map(u)),
        ("map of an attribute", lambda u: _pipeline().map(u.parse)),
        ("from_tensor_slices", tf.data.Dataset.from_tensor_slices),
        ("list_files", tf.data.Dataset.list_files),
        ("batch size", lambda u: _pipeline().batch(u)),
    ]


def _unpack3(u):
    a, b, c = u
    return a, b, c


def _with(u):
    with u as v:
        return v


def _pipeline():
    return tf.data.TFRecordDataset(["a.tfrecord", "b.tfrecord"])


def _names():
    return tf.data.Dataset.list_files(["a.tfrecord", "b.tfrecord"], shuffle=False)


def roots():
    """Unknown values as the trace makes them."""
    return [
        values.setting("FLAGS.batch_size"),
        values.setting("self.parse"),
        values.tensor("record"),
        values.tensor("image").shape,
        values.setting("preprocess.parse_record"),
    ]


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


class PropertyTest(unittest.TestCase):
    def setUp(self):
        session.current.assumptions.clear()
        self.previous = signal.signal(signal.SIGALRM, _alarm)

    def tearDown(self):
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.previous)
        session.current.assumptions.clear()

    def check_error(self, e, steps):
        self.assertNotIsInstance(e, RecursionError, steps)
        self.assertIsInstance(e, EXPECTED, f"{steps}: {type(e).__name__}: {e}")
        if isinstance(e, values.NeedValue):
            # The message the user sees: the value as the code spells it,
            # what the code needs it for, and the define that gives it.
            message = run.describe_exception(e, [("", {"FLAGS": None})])
            self.assertIn("--define", message, steps)
            self.assertIn(e.why, message, steps)
            self.assertLess(len(message), 1000, steps)
        else:
            self.assertRegex(str(e), r"is used as a path|before the pipeline runs|pickled",
                             steps)

    def test_random_operation_sequences_end_with_a_value_or_a_clear_error(self):
        rng = random.Random(SEED)
        ops = unary_ops()
        for sequence in range(SEQUENCES):
            value = rng.choice(roots())
            steps = [f"sequence {sequence}: {value!r}"]
            signal.alarm(20)  # a hang fails here, naming the steps (never expected)
            try:
                for _ in range(STEPS):
                    label, op = rng.choice(ops)
                    steps.append(label)
                    try:
                        out = op(value)
                    except Timeout:
                        raise
                    except BaseException as e:  # noqa: B902 - RecursionError included
                        self.check_error(e, steps)
                        continue
                    if isinstance(out, values.Unknown):
                        value = out
                    # Every value reached can be named, briefly.
                    self.assertLessEqual(len(value._name), values.NAME_LIMIT + 3, steps)
            except Timeout:
                self.fail(f"no end: {steps}")
            finally:
                signal.alarm(0)

    def test_a_map_of_an_unknown_function_is_opaque_and_said(self):
        for make, fn in [(_pipeline, values.setting("self.parse")),
                         (_pipeline, values.setting("preprocess.parse_record")),
                         (_pipeline, functools.partial(values.setting("parse"), 1))]:
            session.current.assumptions.clear()
            ds = make().map(fn).filter(values.setting("self.keep"))
            text = data.chain_of(ds)
            self.assertIn("map(opaque(", text)
            self.assertIn("filter(opaque(", text)
            said = " ".join(str(a) for a in session.current.assumptions)
            self.assertIn("cannot see this function", said)
            self.assertIn("one element in, one out", said)
            self.assertIn("keeping every element", said)
        session.current.assumptions.clear()
        ds = _names().interleave(values.setting("reader_fn"), cycle_length=2)
        self.assertIn("interleave(tfrecord, cycle_length=2)", data.chain_of(ds))
        self.assertIn("TFRecord", " ".join(str(a) for a in session.current.assumptions))

    def test_a_long_chain_is_stored_in_linear_space(self):
        for build in (lambda u: u + 1, lambda u: u.attribute, lambda u: u[0], lambda u: u(),
                      lambda u: u + u):
            value = values.setting("FLAGS.n")
            chain = [value]
            for _ in range(2000):
                value = build(value)
                chain.append(value)
            stored = sum(_own_text(u) for u in chain)
            self.assertLess(stored, 2000 * 40, "each value holds a copy of the chain")
            self.assertLessEqual(len(value._name), values.NAME_LIMIT + 3)
            self.assertTrue(value._name.startswith(("FLAGS.n", "(")), value._name)

    def test_a_deep_chain_is_named_without_recursion(self):
        value = values.setting("FLAGS")
        for _ in range(200000):
            value = value.deeper
        self.assertTrue(value._name.startswith("FLAGS.deeper.deeper"))
        message = run.describe_exception(values.NeedValue(value, "decides a branch"),
                                         [("", {"FLAGS": value.origin()})])
        self.assertIn("--define", message)
        self.assertLess(len(message), 1000)


def _own_text(u):
    """The characters an unknown stores itself (not those of the values it
    refers to, nor the name spelled on demand, at most NAME_LIMIT)."""
    try:
        held = object.__getattribute__(u, "_parts")
    except AttributeError:  # a name stored as text
        held = (object.__getattribute__(u, "_name"),)
    return sum(len(part) for part in held if isinstance(part, str))


if __name__ == "__main__":
    unittest.main()
