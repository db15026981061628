# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""tf.data as the traced code sees it: every Dataset records the ops that
made it, with their arguments as Python evaluated them, and writes them as
one tfdist method chain (see the manual's PIPELINES). This module holds what
the others share: assumptions, the chain's steps, tf.data.Options, the
functions a dataset runs, and the chain text; the Dataset class and its
sources are in datasets.py, tf.data.experimental's functions in
experimental_ops.py, the seeds in seeds.py."""

from . import render as r
from . import session
from . import values
from .render import render, user_site
from .values import NeedValue, TraceError, Unknown, WorkerDependent

AUTOTUNE = -1
SHARD_HINT = -1


def assume(text, site=None):
    where = ""
    if site and site[0].startswith("--define"):
        where = f"{site[0]}: "
    elif site:
        where = f"{site[0]}:{site[1]}: "
    line = where + text
    if line not in session.current.assumptions:
        session.current.assumptions.append(line)


class Step:
    """One op of the chain: its kind, its text in the grammar, and where
    the user's code made it."""

    __slots__ = ("kind", "text", "site")

    def __init__(self, kind, text, site):
        self.kind = kind
        self.text = text
        self.site = site


def call_text(op, positional=(), keywords=()):
    """op(a, b, key=value): None keywords left out (TensorFlow's default)."""
    parts = [render(v, f"{op}()") for v in positional]
    parts += [f"{k}={render(v, f'{op}({k})')}" for k, v in keywords if v is not None]
    return f"{op}({', '.join(parts)})"


# ---------------------------------------------------------------------------
# Options (tf.data.Options), as far as a layout needs them.

AUTO_SHARD_NAMES = {-1: "OFF", 0: "AUTO", 1: "FILE", 2: "DATA", 3: "HINT"}


class _Namespace:
    """Options sub-objects tfdist does not read: any attribute may be set."""

    def __init__(self, name):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_values", {})

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        values = object.__getattribute__(self, "_values")
        if attr not in values:
            values[attr] = None
        return values[attr]

    def __setattr__(self, attr, value):
        self._values[attr] = value


def options_group(name):
    """An option group made on its own (tf.data.ThreadingOptions(),
    tf.data.experimental.MapVectorizationOptions(), ...) to be set on an
    Options: any attribute may be set; tfdist reads none of them."""
    def make():
        return _Namespace(name)

    make.__name__ = name
    return make


OPTION_GROUPS = ["AutotuneOptions", "OptimizationOptions", "ThreadingOptions"]
# Groups TensorFlow has had only under tf.data.experimental (some removed
# since 2.9, still in code written for older releases).
EXPERIMENTAL_OPTION_GROUPS = OPTION_GROUPS + ["MapVectorizationOptions", "StatsOptions"]


class DistributeOptions(_Namespace):
    def __init__(self, auto_shard_policy=None, num_devices=None):
        super().__init__("experimental_distribute")
        if auto_shard_policy is not None:
            self.auto_shard_policy = auto_shard_policy
        if num_devices is not None:
            self.num_devices = num_devices

    def __getattr__(self, attr):
        if attr == "auto_shard_policy":
            return self._values.get(attr, AutoShardPolicy.AUTO)
        return super().__getattr__(attr)


class Options(_Namespace):
    """tf.data.Options: the auto-shard policy and determinism are read;
    everything else is accepted and ignored."""

    def __init__(self):
        super().__init__("options")
        self._values["experimental_distribute"] = DistributeOptions()

    def __setattr__(self, attr, value):
        if attr == "experimental_deterministic":
            attr = "deterministic"
        super().__setattr__(attr, value)

    # Options that hold a value; every other name is a group of options
    # (experimental_optimization, threading, autotune, ...).
    _SCALARS = {"deterministic", "experimental_slack", "experimental_external_state_policy",
                "experimental_warm_start", "experimental_symbolic_checkpoint"}

    def __getattr__(self, attr):
        if attr == "experimental_deterministic":
            attr = "deterministic"
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr not in self._values and attr not in self._SCALARS:
            self._values[attr] = _Namespace(attr)
        return super().__getattr__(attr)

    def _explicit(self):
        """The settings a layout reads that were set: {"auto_shard_policy": .., "deterministic": ..}."""
        out = {}
        dist = self._values.get("experimental_distribute")
        if isinstance(dist, _Namespace) and "auto_shard_policy" in dist._values:
            out["auto_shard_policy"] = dist._values["auto_shard_policy"]
        if self._values.get("deterministic") is not None:
            out["deterministic"] = self._values["deterministic"]
        return out


class _PolicyEnum(int):
    def __new__(cls, value, name):
        obj = super().__new__(cls, value)
        obj._name = name
        return obj

    def __repr__(self):
        return f"AutoShardPolicy.{self._name}"

    name = property(lambda self: self._name)
    value = property(lambda self: int(self))


class AutoShardPolicy:
    OFF = _PolicyEnum(-1, "OFF")
    AUTO = _PolicyEnum(0, "AUTO")
    FILE = _PolicyEnum(1, "FILE")
    DATA = _PolicyEnum(2, "DATA")
    HINT = _PolicyEnum(3, "HINT")


# ---------------------------------------------------------------------------
# The functions datasets run, and the datasets the loading file uses.

def _element_call(fn, element):
    """Calls a function of map/filter/interleave on one element, as
    tf.data does: a tuple element is spread over the arguments."""
    if isinstance(element, tuple):
        return fn(*element)
    return fn(element)


# What an assumption about a function the trace cannot see begins with.
UNSEEN = "the trace cannot see this function (an unknown value); "


class _Traced:
    """What running a function on a symbolic element showed."""

    def __init__(self, result=None, parses=(), error=None, site=None, ops=()):
        self.result = result
        self.parses = list(parses)
        self.error = error
        self.site = site
        self.ops = list(ops)  # (name, site) of the tf ops it computes with

    def left_out(self):
        """The tf ops the function computes with, each once with its first
        line: work a layout's pipeline does not run."""
        seen = {}
        for name, site in self.ops:
            seen.setdefault(name, site)
        shown = [f"{name} (line {site[1]})" for name, site in list(seen.items())[:6]]
        return ", ".join(shown) + (", ..." if len(seen) > 6 else "")


def trace_function(fn, element):
    """Runs `fn` on `element`, collecting the parse calls it makes. An
    exception is kept (with the user's line), not raised."""
    events, ops = [], []
    session.current.parse_events.append(events)
    session.current.op_events.append(ops)
    outermost = session.current.budget is None
    try:
        return _Traced(values.run_with_budget(_element_call, fn, element), events, ops=ops)
    except (NeedValue, WorkerDependent):
        raise
    except Exception as e:  # the function's own failure: it stays opaque
        return _Traced(None, events, e, r.exception_site(e), ops)
    except values.SymbolicLoop as e:  # opaque too, said (by the outermost function)
        if not outermost:
            raise
        return _Traced(None, events, e, r.exception_site(e), ops)
    finally:
        session.current.parse_events.pop()
        session.current.op_events.pop()


def record_parse(serialized, features, single):
    if session.current.parse_events:
        session.current.parse_events[-1].append((serialized, features, single))


# tf.* names that do no work on the data (logging, shapes, asserts).
_NOT_WORK = ("tf.logging.", "tf.compat.v1.logging.", "tf.debugging.", "tf.print",
             "tf.summary.", "tf.shape", "tf.rank", "tf.size", "tf.ensure_shape",
             "tf.name_scope", "tf.device", "tf.control_dependencies", "tf.assert_",
             "tf.get_logger", "tf.autograph.")


def record_op(name):
    """A tf op (tf.io.decode_raw, tf.cast) called while a function of map
    runs: work tfdist's pipeline leaves out."""
    if session.current.op_events and not name.startswith(_NOT_WORK):
        session.current.op_events[-1].append((name, user_site()))


class LoadUse:
    """A dataset the file distributes, hands to Keras or iterates while it
    loads: `rank` 0 distributed, 1 fit, 2 evaluated, predicted or iterated;
    `strategy`: (class name, site) of the strategy that distributed it."""

    def __init__(self, dataset, how, rank, site, api=None, strategy=None):
        self.dataset = dataset
        self.how = how
        self.rank = rank
        self.site = site
        self.api = api
        self.strategy = strategy


def record_use(dataset, how, rank, site, api=None, strategy=None):
    if session.current.loading:
        session.current.load_uses.append(LoadUse(dataset, how, rank, site, api, strategy))


def plain_int(value):
    """`value` as an int when it is a plain one (not a symbol); else raises."""
    if type(value) is bool or not isinstance(value, int) or hasattr(value, "symbol"):
        raise TypeError("not a plain int")
    return int(value)


# -- the entry's result -----------------------------------------------------

def chain_of(ds):
    """The chain text, one op per line, each ending in `#@ FILE:LINE`."""
    if ds._reader_of is not None or not ds._steps:
        raise TraceError("the function returns a dataset that reads a tensor's files; return the "
                         "dataset built from file names")
    lines = []
    for i, step in enumerate(ds._steps):
        text = step.text if i == 0 else "." + step.text
        lines.append(f"{text}  #@ {marker(step.site)}")
    return "\n".join(lines) + "\n"


def marker(site):
    """FILE:LINE for a '#@' comment: control characters in the name escaped,
    so a name cannot end the line."""
    name = "".join(c if c.isprintable() else repr(c)[1:-1] for c in site[0])
    return f"{name}:{site[1]}"


def merged_options(ds):
    """{"auto_shard_policy": "DATA", "auto_shard_policy_site": "f:3", "deterministic": False}"""
    out = {}
    for snapshot, site in ds._options:
        if "auto_shard_policy" in snapshot:
            policy = snapshot["auto_shard_policy"]
            if isinstance(policy, Unknown):
                raise NeedValue(policy, "is the auto-shard policy")
            try:
                out["auto_shard_policy"] = AUTO_SHARD_NAMES[int(policy)]
            except (KeyError, TypeError, ValueError):
                raise TraceError(f"auto_shard_policy {policy!r} is not an AutoShardPolicy") from None
            out["auto_shard_policy_site"] = f"{site[0]}:{site[1]}"
        if "deterministic" in snapshot:
            out["deterministic"] = bool(snapshot["deterministic"])
            out["deterministic_site"] = f"{site[0]}:{site[1]}"
    return out
