# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""tf.data as the traced code sees it: every Dataset records the ops that
made it, with their arguments as Python evaluated them, and writes them as
one tfdist method chain (see the manual's PIPELINES)."""

import os
import random

from . import render as r
from . import session
from . import values
from .render import render, user_site
from .values import NeedValue, TraceError, Unknown, WorkerDependent, is_unknown, tensor

AUTOTUNE = -1
SHARD_HINT = -1

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
        return _plain(seed)
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


def _call_text(op, positional=(), keywords=()):
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
# Datasets.

def _element_call(fn, element):
    """Calls a function of map/filter/interleave on one element, as
    tf.data does: a tuple element is spread over the arguments."""
    if isinstance(element, tuple):
        return fn(*element)
    return fn(element)


# What an assumption about a function the trace cannot see begins with.
_UNSEEN = "the trace cannot see this function (an unknown value); "


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


# Keras methods that iterate the dataset they are given (distributing it
# with the strategy in scope).
_KERAS_USES = {"fit": 1, "evaluate": 2, "predict": 2}


def _on_unknown_call(unknown, args, kwargs):
    if session.current.op_events:
        # tf.reshape, tf.image.decode_jpeg: an attribute path from a module
        # of the stand-in tensorflow (not a method of a computed tensor).
        keys, root = [], unknown
        while root._parent is not None:
            keys.append(str(root._key))
            root = root._parent
        text = root._parts[0] if len(root._parts) == 1 else None
        if isinstance(text, str) and text.startswith("tensorflow."):
            record_op(".".join(["tf." + text[len("tensorflow."):]] + keys[::-1]))
    if session.current.loading:
        dataset = args[0] if args else kwargs.get("x")
        if isinstance(dataset, Dataset):
            method = unknown._name.rsplit(".", 1)[-1]
            if method in _KERAS_USES:
                record_use(dataset, f"model.{method}(...)", _KERAS_USES[method], user_site(),
                           api="distribute")


values.call_hook = _on_unknown_call


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


# Elements a loading file's iterator gives at most (of a dataset whose
# count Python does not know, or knows to be larger).
LOAD_ELEMENTS = 100


class LoadStopped(BaseException):
    """A loop of the loading file asked an iterator for more than
    LOAD_ELEMENTS elements: the file stops loading there (a BaseException,
    so the user's `except Exception` does not hold it)."""


class _LoadIterator:
    """iter(dataset) while the file loads (a training loop at the top
    level, a peek at a batch): symbolic elements, as many as Python counts
    (or take() bounds) when it can, else LOAD_ELEMENTS, then LoadStopped."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._given = 0
        site = user_site()
        record_use(dataset, "iter(...)", 2, site)
        assume(f"the file iterates over a dataset while it loads; the trace gives it symbolic "
               f"elements, at most {LOAD_ELEMENTS}", site)

    def __iter__(self):
        return self

    def __next__(self):
        count = self._dataset._count
        if count is None or count < 0:
            count = self._dataset._most
        if count is not None and 0 <= count <= self._given:
            raise StopIteration
        if self._given >= LOAD_ELEMENTS:
            raise LoadStopped()
        self._given += 1
        return self._dataset._element

    def get_next(self, name=None):
        return self.__next__()

    def get_next_as_optional(self):
        return tensor("iterator.get_next_as_optional()")


class Dataset:
    """A tf.data.Dataset: the steps of its chain (a source, then methods),
    the structure of one element (symbolic tensors), and the options set
    with with_options()."""

    def __init__(self, steps, element, options=(), reader_of=None, count=None):
        self._steps = tuple(steps)
        self._element = element
        self._options = tuple(options)
        # A per-file reader made inside an interleave/flat_map function:
        # the name tensor it reads and its reader text.
        self._reader_of = reader_of
        # The number of elements when Python knows it (len(dataset)), else None.
        self._count = count
        # At most this many elements (a take(k) of an unknown count), else None:
        # how many a loop of the loading file gets (for x in ds.take(1)).
        self._most = None

    # -- building ------------------------------------------------------
    def _then(self, kind, text, element=None, site=None, count=None):
        step = Step(kind, text, site or user_site())
        out = Dataset(self._steps + (step,), self._element if element is None else element,
                      self._options, self._reader_of, count)
        if kind in _NEVER_MORE:
            out._most = self._most
        return out

    def _method(self, op, positional=(), keywords=(), element=None, count=None):
        if op in _NUMBER_ARGUMENTS and any(p is None for p in positional):
            # TensorFlow converts these to int64 tensors, and None is none;
            # raised here, the error names a flag whose DEFINE default it is.
            raise ValueError(f"{op}(): Attempt to convert a value (None) with an unsupported "
                             f"type (<class 'NoneType'>) to a Tensor.")
        return self._then(op, _call_text(op, positional, keywords), element, user_site(), count)

    def _counted(self, f):
        """f(count) when the count is known and the arguments are plain ints."""
        try:
            return f(self._count) if self._count is not None else None
        except (TypeError, ValueError, ZeroDivisionError, TraceError):
            return None

    def __len__(self):
        if self._count is None or self._count < 0:
            raise TypeError("The dataset length is unknown." if self._count is None
                            else "The dataset is infinite.")
        return self._count

    def cardinality(self):
        return Cardinality(-2 if self._count is None else self._count)

    # -- methods TensorFlow users write ---------------------------------
    def shard(self, num_shards, index, name=None):
        # SHARD_HINT is -1 in TensorFlow too: shard(-1, ...) can only mean it.
        if _is_hint(num_shards):
            idx = "SHARD_HINT" if _is_hint(index) else render(index, "shard(index)")
            return self._then("shard", f"shard(SHARD_HINT, {idx})", site=user_site())
        return self._method("shard", [num_shards, index],
                            count=self._counted(lambda n: n if n < 0 else
                                                _plain(n - index + num_shards - 1)
                                                // _plain(num_shards)))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        seed = per_process_seed(seed, "shuffle")
        if seed is None:
            seed = draw_op_seed()
        return self._method("shuffle", [buffer_size],
                            [("seed", seed), ("reshuffle_each_iteration", reshuffle_each_iteration)],
                            count=self._count)

    def repeat(self, count=None, name=None):
        times = -1 if count is None else count
        return self._method("repeat", [count] if count is not None else [],
                            count=self._counted(lambda n: n * _plain(times) if times >= 0 or n == 0
                                                else -1))

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        return self._method("batch", [batch_size],
                            [("drop_remainder", drop_remainder or None),
                             ("num_parallel_calls", num_parallel_calls),
                             ("deterministic", deterministic)],
                            count=self._counted(lambda n: _batches(n, batch_size, drop_remainder)))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        return self._method("padded_batch", [batch_size],
                            [("drop_remainder", drop_remainder or None)])

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=None, name=None):
        return self.batch(batch_size, drop_remainder)

    def sparse_batch(self, batch_size, row_shape=None, name=None):
        return self.batch(batch_size)

    def unbatch(self, name=None):
        return self._method("unbatch")

    def rebatch(self, batch_size, drop_remainder=False, name=None):
        return self._method("rebatch", [batch_size], [("drop_remainder", drop_remainder or None)])

    def take(self, count, name=None):
        out = self._method("take", [count], count=self._counted(
            lambda n: n if _plain(count) < 0 else (_plain(count) if n < 0 else min(n, count))))
        if type(count) is int and count >= 0:
            out._most = count if self._most is None else min(count, self._most)
        return out

    def skip(self, count, name=None):
        return self._method("skip", [count], count=self._counted(
            lambda n: 0 if _plain(count) < 0 else (n if n < 0 else max(n - count, 0))))

    def enumerate(self, start=0, name=None):
        return self._method("enumerate", [start] if start else [],
                            element=(tensor("index"), self._element))

    def prefetch(self, buffer_size, name=None):
        return self._method("prefetch", [buffer_size], count=self._count)

    def cache(self, filename="", name=None):
        return self._method("cache", [filename] if filename else [], count=self._count)

    def ignore_errors(self, log_warning=False, name=None):
        return self._method("ignore_errors")

    def filter(self, predicate, name=None):
        site = user_site()
        trace_function(predicate, self._element)  # its reads of the element's structure
        label = r.function_name(predicate)
        unseen = _UNSEEN if isinstance(predicate, Unknown) else ""
        assume(f"filter({label}): {unseen}counted as keeping every element; the counts after "
               f"it are upper bounds", site)
        return self._then("filter", f"filter(opaque({r.quote(label)}))", site=site)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None,
            use_legacy_function=False):
        site = user_site()
        traced = trace_function(map_func, self._element)
        label = r.function_name(map_func)
        if isinstance(map_func, Unknown):
            assume(f"map({label}): {_UNSEEN}counted as one element in, one out, order kept",
                   site)
            function = f"opaque({r.quote(label)})"
        else:
            function = self._map_function(traced, label, site)
        calls = "" if num_parallel_calls is None else \
            f", num_parallel_calls={render(num_parallel_calls, 'map(num_parallel_calls)')}"
        text = f"map({function}{calls})"
        element = traced.result if traced.error is None else tensor(f"{label}(...)")
        return self._then("map", text, element=element, site=site, count=self._count)

    def _map_function(self, traced, label, site):
        """parse_example({...}) when the function parses its element, else
        opaque("label")."""
        mine = [p for p in traced.parses if p[0] is self._element]
        if traced.error is not None:
            where = f" at {traced.site[0]}:{traced.site[1]}" if traced.site else ""
            assume(f"map({label}): running it on a symbolic element raised "
                   f"{type(traced.error).__name__}{where} ({traced.error}); counted as one "
                   f"element in, one out", site)
        if not mine:
            if traced.error is None:
                left_out = (f"; tfdist runs none of its work, left out: {traced.left_out()} (a "
                            f"run measures less than the function does)") if traced.ops else ""
                assume(f"map({label}): one element in, one out, order kept{left_out}", site)
            return f"opaque({r.quote(label)})"
        features = {}
        single = mine[0][2]
        for _, spec, one in mine:
            if isinstance(spec, dict):
                features.update(spec)
            single = single and one
        dict_text = features_text(features, f"map({label})", site)
        if dict_text is None:
            return f"opaque({r.quote(label)})"
        name = "parse_single_example" if single else "parse_example"
        if traced.ops:
            assume(f"map({label}): tfdist runs its {name} only; left out: {traced.left_out()} "
                   f"(a run measures less than the function does)", site)
        return f"{name}({dict_text})"

    # -- grouping by the data: laid out as bounds ------------------------
    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None,
                        name=None):
        site = user_site()
        if (window_size is not None and window_size_func is not None) or \
                (window_size is None and window_size_func is None):
            # TensorFlow's own check (dataset_ops.py).
            raise ValueError("Either the `window_size` argument or the `window_size_func` "
                             "argument must be specified.")
        key = self._grouping_key(key_func, "group_by_window", "key_func", site)
        reduce_text = self._window_batch(reduce_func, site)
        if window_size is not None:
            size = f"window_size={render(window_size, 'group_by_window(window_size)')}"
        else:
            size = f"window_size_func=opaque({r.quote(r.function_name(window_size_func))})"
        return self._then("group_by_window",
                          f"group_by_window({key}, {reduce_text}, {size})",
                          element=self._element, site=site)

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries,
                                  bucket_batch_sizes, padded_shapes=None, padding_values=None,
                                  pad_to_bucket_boundary=False, no_padding=False,
                                  drop_remainder=False, name=None):
        site = user_site()
        what = "bucket_by_sequence_length"
        # Their values first: an unknown one asks for a define.
        boundaries_text = render(bucket_boundaries, f"{what}(bucket_boundaries)")
        sizes_text = render(bucket_batch_sizes, f"{what}(bucket_batch_sizes)")
        try:
            boundaries, sizes = list(bucket_boundaries), list(bucket_batch_sizes)
        except TypeError:
            raise TraceError(f"{what}(): bucket_boundaries and bucket_batch_sizes are lists of "
                             f"numbers") from None
        if len(sizes) != len(boundaries) + 1:
            # TensorFlow's own check (dataset_ops.py).
            raise ValueError(f"`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` "
                             f"but `len(bucket_batch_sizes)={len(sizes)}` and "
                             f"`len(bucket_boundaries)={len(boundaries)}`.")
        key = self._grouping_key(element_length_func, "bucket_by_sequence_length",
                                 "element_length_func", site)
        if pad_to_bucket_boundary:
            assume(f"{what}(pad_to_bucket_boundary=True): an element as long as the last "
                   f"boundary or longer fails in TensorFlow; tfdist cannot tell whether one is",
                   site)
        args = [key, boundaries_text, sizes_text]
        if no_padding:
            args.append("no_padding=True")
        if drop_remainder:
            args.append(f"drop_remainder={render(drop_remainder, f'{what}(drop_remainder)')}")
        return self._then(what, f"{what}({', '.join(args)})", element=self._element, site=site)

    def _grouping_key(self, fn, op, what, site):
        """opaque("name") for a grouping's key function, which the layout
        never runs: the batches after it are bounds."""
        trace_function(fn, self._element)  # its reads of the element's structure
        label = r.function_name(fn)
        unseen = _UNSEEN if isinstance(fn, Unknown) else ""
        assume(f"{op}({label}): {unseen}tfdist does not run its {what}; the records read up to "
               f"it are exact, its batches and steps are laid out as bounds (fewest..most)",
               site)
        return f"opaque({r.quote(label)})"

    def _window_batch(self, reduce_func, site):
        """The text of a reduce_func that batches its window, as the
        grammar takes it: lambda key, window: window.batch(N, ...)."""
        window = Dataset((), self._element)
        if isinstance(reduce_func, Unknown):
            out = None
        else:
            try:
                out = reduce_func(tensor("key"), window)
            except (NeedValue, WorkerDependent):
                raise
            except Exception as e:
                where = r.exception_site(e)
                at = f" at {where[0]}:{where[1]}" if where else ""
                raise TraceError(f"group_by_window(): running reduce_func on a window raised "
                                 f"{type(e).__name__}{at}: {e}") from None
        if not isinstance(out, Dataset) or len(out._steps) != 1 or \
                out._steps[0].kind not in ("batch", "padded_batch"):
            made = "something else" if not isinstance(out, Dataset) else \
                ".".join(step.text.split("(")[0] + "()" for step in out._steps) or "the window"
            raise TraceError(f"group_by_window(): tfdist lays out a reduce_func that batches its "
                             f"window (lambda key, window: window.batch(N), or padded_batch); "
                             f"{r.function_name(reduce_func)} makes {made}")
        return f"lambda key, window: window.{out._steps[0].text}"

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None):
        site = user_site()
        reader, after = self._reader_function("interleave", map_func, site)
        keywords = [("cycle_length", cycle_length), ("block_length", block_length),
                    ("num_parallel_calls", num_parallel_calls), ("deterministic", deterministic)]
        args = "".join(f", {k}={render(v, f'interleave({k})')}" for k, v in keywords
                       if v is not None)
        if deterministic is False:
            assume("interleave(deterministic=False): TensorFlow's order depends on the timing of "
                   "its reads; the layout shows one such order", site)
        out = self._then("interleave", f"interleave({reader}{args})", element=tensor("record"),
                         site=site)
        return out._hoist(after)

    def flat_map(self, map_func, name=None):
        site = user_site()
        reader, after = self._reader_function("flat_map", map_func, site)
        out = self._then("flat_map", f"flat_map({reader})", element=tensor("record"), site=site)
        return out._hoist(after)

    def _hoist(self, steps):
        ds = self
        for step in steps:
            ds = Dataset(ds._steps + (step,), ds._element, ds._options)
        return ds

    def _reader_function(self, op, fn, site):
        """The reader text of an interleave/flat_map function, and the
        per-file element-wise steps that follow it (moved after the op)."""
        traced = trace_function(fn, self._element)
        names = isinstance(self._element, Unknown) and self._element._name == "file name"
        if not names:
            what = "integers" if isinstance(self._element, Unknown) and \
                self._element._name == "int" else "elements that are not file names"
            raise TraceError(f"{op}(): its function runs on {what}; tfdist's {op} reads each "
                             f"element as a TFRecord file name (lambda f: "
                             f"tf.data.TFRecordDataset(f, ...)); lay out the datasets it builds "
                             f"on their own")
        if isinstance(fn, Unknown):
            assume(f"{op}({r.function_name(fn)}): {_UNSEEN}assumed it reads each file name "
                   f"as one uncompressed TFRecord file, as tf.data.TFRecordDataset does", site)
            return _reader_text(None, None), []
        if traced.error is not None:
            where = f" at {traced.site[0]}:{traced.site[1]}" if traced.site else ""
            raise TraceError(f"{op}(): running its function on a file name raised "
                             f"{type(traced.error).__name__}{where}: {traced.error}")
        ds = traced.result
        if not isinstance(ds, Dataset):
            raise TraceError(f"{op}(): its function returns {type(ds).__name__}, not a dataset; "
                             f"tfdist's {op} reads TFRecord files")
        if ds._reader_of is None:
            first = ds._steps[0].text.split("(")[0] if ds._steps else "?"
            raise TraceError(f"{op}(): its function makes {first}(...) for each element; "
                             f"tfdist's {op} reads each element as a TFRecord file name "
                             f"(lambda f: tf.data.TFRecordDataset(f, ...))")
        if ds._reader_of[0] is not self._element:
            raise TraceError(f"{op}(): its function reads a file name computed from its "
                             f"argument; tfdist reads the names the dataset holds")
        for step in ds._steps:
            if step.kind not in _PER_FILE_OK:
                raise TraceError(f"{op}(): its function applies {step.kind}() to each file's "
                                 f"records; tfdist can only move element-wise ops (map, filter, "
                                 f"prefetch) out of a reader function")
        return ds._reader_of[1], list(ds._steps)

    def apply(self, transformation_func):
        if isinstance(transformation_func, Unknown):
            raise TraceError(f"apply({transformation_func._name}): tfdist does not know this "
                             f"transformation")
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TraceError(f"apply(): the transformation returned {type(out).__name__}, "
                             f"not a dataset")
        return out

    def with_options(self, options, name=None):
        if not isinstance(options, Options):
            raise TraceError("with_options() takes a tf.data.Options")
        snapshot = options._explicit()
        return Dataset(self._steps, self._element,
                       self._options + ((snapshot, user_site()),), self._reader_of)

    def options(self):
        merged = Options()
        for snapshot, _ in self._options:
            if "auto_shard_policy" in snapshot:
                merged.experimental_distribute.auto_shard_policy = snapshot["auto_shard_policy"]
            if "deterministic" in snapshot:
                merged.deterministic = snapshot["deterministic"]
        return merged

    def map_with_legacy_function(self, map_func, num_parallel_calls=None, deterministic=None):
        return self.map(map_func, num_parallel_calls, deterministic)

    # -- what the trace cannot follow -----------------------------------
    def concatenate(self, dataset, name=None):
        site = user_site()
        if not isinstance(dataset, Dataset):
            raise TypeError(f"concatenate() takes a dataset; got {type(dataset).__name__}")
        # The joined chain goes in the argument, a line per op, each with
        # its own line's marker.
        inner = "".join(f"  {line}\n" for line in chain_of(dataset).rstrip("\n").split("\n"))
        text = f"concatenate(  #@ {marker(site)}\n{inner})"
        out = self._then("concatenate", text, site=site)
        out._options = self._options + dataset._options  # TensorFlow merges its inputs'
        return out

    def __iter__(self):
        if session.current.loading:
            # A script peeking at a batch, or its training loop, while it loads.
            return _LoadIterator(self)
        raise TraceError("the code iterates over the dataset while building it; tfdist traces "
                         "how datasets are built, without reading data")

    def as_numpy_iterator(self):
        return self.__iter__()

    # TF1 input functions return an iterator's next element: the layout is
    # the dataset's (said as an assumption).
    def make_one_shot_iterator(self):
        return _Iterator(self)

    make_initializable_iterator = make_one_shot_iterator

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr in ("element_spec", "output_shapes", "output_types", "output_classes"):
            return element_structure(self, attr)
        if attr in ("cardinality", "reduce", "get_single_element"):
            return lambda *a, **k: tensor(f"dataset.{attr}()")
        why = _REFUSED.get(attr, "tfdist does not know what it does to a layout")
        raise TraceError(f"Dataset.{attr}(): {why}")


# The methods whose positional arguments TensorFlow makes int64 tensors of
# (repeat(None) is "forever"; these have no None).
_NUMBER_ARGUMENTS = {"shard", "shuffle", "batch", "padded_batch", "rebatch", "take", "skip",
                     "prefetch"}


def _is_hint(value):
    return type(value) is int and value == SHARD_HINT


# Ops after which a dataset has no more elements than before.
_NEVER_MORE = {"map", "filter", "prefetch", "cache", "batch", "padded_batch", "shard", "skip",
               "take"}

# Ops that act on each element alone: moved out of a reader function.
_PER_FILE_OK = {"map", "filter", "prefetch"}

_REFUSED = {
    "zip": "pairs the elements of several datasets; tfdist lays out one chain from one source "
           "(lay out each input on its own)",
    "window": "makes datasets of elements; batch() gives a layout the same counts without "
              "overlap",
    "group_by_reducer": "groups by keys the data decides",
    "snapshot": "reads or writes a snapshot on disk tfdist cannot see",
    "save": "writes the dataset to disk",
    "scan": "carries state computed from the data",
    "take_while": "stops where the data decides",
    "unique": "drops elements the data decides",
    "random": "is a stream of random numbers",
    "sample_from_datasets": "mixes several datasets at random; lay out each input on its own",
    "choose_from_datasets": "mixes several datasets as the data decides",
    "distributed_save": "writes the dataset to disk",
}




class Cardinality(int):
    """Dataset.cardinality(): an int, with TensorFlow's numpy()."""

    def numpy(self):
        return int(self)


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


def _plain(value):
    """`value` as an int when it is a plain one (not a symbol); else raises."""
    if type(value) is bool or not isinstance(value, int) or hasattr(value, "symbol"):
        raise TypeError("not a plain int")
    return int(value)


def _batches(n, size, drop):
    size = _plain(size)
    if n < 0:
        return n
    return n // size if drop else -(-n // size)


class _Iterator:
    def __init__(self, dataset):
        self._dataset = dataset
        session.current.iterated.append((dataset, user_site()))

    def get_next(self, name=None):
        return tensor("iterator.get_next()")

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return tensor(f"iterator.{attr}")


def make_one_shot_iterator(dataset):
    return _Iterator(dataset)


def refused(name, why=None):
    """A function the stand-in knows but cannot follow."""

    def fail(*args, **kwargs):
        raise TraceError(f"{name}(): {why or _REFUSED.get(name.rsplit('.', 1)[-1], 'tfdist does not lay it out')}")

    fail.__name__ = name
    return fail


# -- sources ----------------------------------------------------------------

def _source(text, element, site, count=None):
    return Dataset([Step("source", text, site)], element, count=count)


def _patterns(file_pattern, what):
    if isinstance(file_pattern, Dataset):
        raise TraceError(f"{what}: file_pattern is a dataset; tfdist takes patterns as strings")
    if isinstance(file_pattern, (list, tuple)):
        return list(file_pattern)
    if hasattr(file_pattern, "tolist") and not is_unknown(file_pattern):
        value = file_pattern.tolist()
        return value if isinstance(value, list) else [value]
    return file_pattern


def list_files(file_pattern, shuffle=None, seed=None, name=None):
    site = user_site()
    seed = per_process_seed(seed, "list_files")
    if seed is None and shuffle is not False:
        seed = draw_op_seed()
    patterns = _patterns(file_pattern, "list_files()")
    text = _call_text("list_files", [patterns],
                      [("shuffle", shuffle), ("seed", seed)])
    return _source(text, tensor("file name"), site)


def _slices(value, what):
    """The elements from_tensor_slices makes of a Python value (sliced on
    its first dimension), and the structure of one element."""
    if isinstance(value, Unknown):
        rows = (value._attrs or {}).get("_rows")
        if rows is not None:  # tf.zeros([n, ...]) and the like: n tensors
            return ["tensor"] * rows, tensor("element")
        if value._tensor:
            raise TraceError(f"{what} slices a tensor computed by the program ({value._name}); "
                             f"tfdist needs values known before the pipeline runs")
        raise NeedValue(value, f"is what {what} slices")
    if isinstance(value, Dataset):
        raise TraceError(f"{what} takes values, not a dataset")
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, (list, tuple, dict)):
        value = tolist()
    if isinstance(value, dict):
        keys = list(value)
        columns = [_slices(value[k], what)[0] for k in keys]
        _same_length(columns, what)
        items = [dict(zip(keys, row)) for row in zip(*columns)]
        return items, {k: tensor(f"element[{k!r}]") for k in keys}
    if isinstance(value, tuple):
        columns = [_slices(v, what)[0] for v in value]
        _same_length(columns, what)
        return [tuple(row) for row in zip(*columns)], tuple(tensor(f"element[{i}]") for i in range(len(value)))
    if isinstance(value, list):
        return value, tensor("file name" if value and all(isinstance(v, str) for v in value)
                             else "element")
    raise TraceError(f"{what} slices {type(value).__name__} {value!r:.40} on its first "
                     f"dimension, which it does not have")


def _same_length(columns, what):
    if len({len(c) for c in columns}) > 1:
        raise TraceError(f"{what}: the components have different lengths "
                         f"({', '.join(str(len(c)) for c in columns)})")


def from_tensor_slices(tensors, name=None):
    site = user_site()
    items, element = _slices(tensors, "from_tensor_slices()")
    return _source(f"from_tensor_slices({render(items, 'from_tensor_slices()')})", element, site,
                   count=len(items))


def _label(value):
    """A value for from_tensors: tensors the program computes are "tensor"."""
    if isinstance(value, Unknown):
        if not value._tensor:
            raise NeedValue(value, "is what from_tensors() holds")
        return "tensor"
    if isinstance(value, (list, tuple)):
        return type(value)(_label(v) for v in value)
    if isinstance(value, dict):
        return {k: _label(v) for k, v in value.items()}
    return value


def from_tensors(tensors, name=None):
    site = user_site()
    text = render(_label(tensors), "from_tensors()")
    return _source(f"from_tensors({text})", _structure(tensors), site, count=1)


def element_structure(dataset, what):
    """The element's structure (tuples and dicts as they are) with a tensor
    for each component: what element_spec, output_shapes and
    tf.compat.v1.data.get_output_shapes give, so code may read its keys."""
    def walk(value):
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return tuple(walk(v) for v in value)
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return tensor(f"dataset.{what}")
    if not isinstance(dataset, Dataset):
        raise TypeError(f"{what}() takes a tf.data.Dataset; got {type(dataset).__name__}")
    return walk(dataset._element)


def _structure(value):
    if isinstance(value, tuple):
        return tuple(_structure(v) for v in value)
    if isinstance(value, dict):
        return {k: _structure(v) for k, v in value.items()}
    return tensor("element")


def range_(*args, output_type=None, name=None):
    site = user_site()
    if not 1 <= len(args) <= 3:
        raise TypeError(f"range() takes 1 to 3 positional arguments; got {len(args)}")
    try:
        count = len(range(*[_plain(a) for a in args]))
    except (TypeError, ValueError, TraceError):
        count = None
    return _source(_call_text("range", list(args)), tensor("int"), site, count=count)


def _reader_text(compression_type, buffer_size):
    keywords = [("compression_type", compression_type), ("buffer_size", buffer_size)]
    args = ", ".join(f"{k}={render(v, f'TFRecordDataset({k})')}" for k, v in keywords
                     if v is not None)
    return f"tfrecord({args})" if args else "tfrecord"


def TFRecordDataset(filenames, compression_type=None, buffer_size=None,
                    num_parallel_reads=None, name=None):
    site = user_site()
    if isinstance(filenames, Unknown) and filenames._tensor:
        # Inside an interleave/flat_map function: one file's records.
        return Dataset([], tensor("record"), (),
                       reader_of=(filenames, _reader_text(compression_type, buffer_size)))
    if isinstance(filenames, Dataset):
        reader = _reader_text(compression_type, buffer_size)
        if num_parallel_reads is None:
            return filenames._then("flat_map", f"flat_map({reader})", tensor("record"), site)
        n = render(num_parallel_reads, "TFRecordDataset(num_parallel_reads)")
        if num_parallel_reads == AUTOTUNE:
            text = f"interleave({reader}, block_length=1, num_parallel_calls={n})"
        else:
            text = (f"interleave({reader}, cycle_length={n}, block_length=1, "
                    f"num_parallel_calls={n}, deterministic=True)")
        return filenames._then("interleave", text, tensor("record"), site)
    # TensorFlow's readers take path-like names (pathlib.Path) as their
    # os.fspath (readers.py, _normalise_fspath), in a list too.
    if isinstance(filenames, (list, tuple)):
        filenames = type(filenames)(_fspath(f) for f in filenames)
    files = _patterns(_fspath(filenames), "TFRecordDataset()")
    text = _call_text("tfrecord", [files], [("compression_type", compression_type),
                                            ("buffer_size", buffer_size),
                                            ("num_parallel_reads", num_parallel_reads)])
    return _source(text, tensor("record"), site)


def _fspath(name):
    return os.fspath(name) if isinstance(name, os.PathLike) and not isinstance(name, Unknown) \
        else name


def refused_reader(name, what):
    def fail(*args, **kwargs):
        raise TraceError(f"{name}(): reads {what}; tfdist reads TFRecord files")

    fail.__name__ = name
    return fail


# -- tf.data.experimental transformations (for Dataset.apply) ------------

def batch_and_drop_remainder(batch_size):
    return lambda ds: ds.batch(batch_size, drop_remainder=True)


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    return lambda ds: ds.padded_batch(batch_size, padded_shapes, padding_values,
                                      drop_remainder=True)


def ignore_errors(log_warning=False):
    return lambda ds: ds.ignore_errors()


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    return lambda ds: ds.interleave(map_func, cycle_length=cycle_length,
                                    block_length=block_length, num_parallel_calls=cycle_length,
                                    deterministic=not sloppy)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    return lambda ds: ds.map(map_func, num_parallel_calls=num_parallel_calls).batch(
        batch_size, drop_remainder=drop_remainder)


# TF1's map_and_batch whose function is traced as a legacy Defun: the same
# elements in the same order.
map_and_batch_with_legacy_function = map_and_batch


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    return lambda ds: ds.shuffle(buffer_size, seed=seed).repeat(count)


def unbatch():
    return lambda ds: ds.unbatch()


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    return lambda ds: ds.group_by_window(key_func, reduce_func, window_size, window_size_func)


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    return lambda ds: ds.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
        padding_values, pad_to_bucket_boundary, no_padding, drop_remainder)


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=None):
    return lambda ds: ds.batch(batch_size, drop_remainder=drop_remainder)


def dense_to_sparse_batch(batch_size, row_shape):
    return lambda ds: ds.batch(batch_size)


def enumerate_dataset(start=0):
    return lambda ds: ds.enumerate(start)


def assert_cardinality(expected_cardinality):
    def identity(ds):
        assume(f"assert_cardinality({expected_cardinality!r}): not checked", user_site())
        return ds
    return identity


def device_copy(*args, **kwargs):
    return lambda ds: ds


def features_text(features, what, site):
    """The grammar text of a feature dict, keeping the kinds tfdist parses
    (the others said as assumptions); None when nothing is left or a shape
    needs an undefined value."""
    kept = {}
    for key, value in features.items():
        kind = type(value).__name__
        if kind not in ("FixedLenFeature", "VarLenFeature"):
            assume(f"{what}: feature {key!r} ({kind}) is not parsed into columns "
                   f"(tfdist parses FixedLenFeature and VarLenFeature)", site)
            continue
        kept[key] = value
    if not kept:
        return None
    try:
        return render(kept, what)
    except NeedValue as e:
        assume(f"{what}: its features need {e.unknown._name}, which nothing defines; counted "
               f"as one element in, one out, not parsed", site)
        return None


def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """tf.data.experimental.parse_example_dataset: TensorFlow's
    ParseExampleDataset, which keeps a batch size visible to tf.distribute."""

    def apply(ds):
        site = user_site()
        if isinstance(features, dict):
            text = features_text(features, "the feature spec", site)
            element = {key: tensor(f"parsed[{key!r}]") for key in features}
        else:  # a spec another library computes (tf.transform, feature columns)
            name = features._name if isinstance(features, Unknown) else type(features).__name__
            assume(f"the feature spec {name} is not known to the trace: batches are parsed as "
                   f"TensorFlow's ParseExampleDataset keeps them, into no columns", site)
            text, element = None, tensor("parsed")
        if text is None:
            return ds._then("apply", 'apply(parse_example_dataset(opaque("feature spec")))',
                            element, site, count=ds._count)
        calls = "" if num_parallel_calls in (None, 1) else \
            f", num_parallel_calls={render(num_parallel_calls, 'parse_example_dataset()')}"
        return ds._then("apply", f"apply(parse_example_dataset({text}{calls}))", element, site,
                        count=ds._count)

    return apply


def make_batched_features_dataset(file_pattern, batch_size, features, reader=None,
                                  label_key=None, reader_args=None, num_epochs=None,
                                  shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                                  prefetch_buffer_size=None, reader_num_threads=None,
                                  parser_num_threads=None, sloppy_ordering=False,
                                  drop_final_batch=False):
    """What TensorFlow builds (readers.py, make_batched_features_dataset_v2)."""
    if reader is None:
        reader = TFRecordDataset
    reader_num_threads = 1 if reader_num_threads is None else reader_num_threads
    parser_num_threads = 2 if parser_num_threads is None else parser_num_threads
    prefetch_buffer_size = AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size
    reader_args = list(reader_args or [])
    ds = list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    read = (lambda f: reader(f, *reader_args))
    if reader_num_threads == AUTOTUNE:
        ds = ds.interleave(read, num_parallel_calls=AUTOTUNE)
        if sloppy_ordering:
            options = Options()
            options.deterministic = False
            ds = ds.with_options(options)
    else:
        ds = ds.interleave(read, cycle_length=reader_num_threads, block_length=1,
                           num_parallel_calls=reader_num_threads,
                           deterministic=not sloppy_ordering)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=bool(drop_final_batch or num_epochs is None))
    ds = ds.apply(parse_example_dataset(features, num_parallel_calls=parser_num_threads))
    if label_key:
        if not isinstance(features, dict):
            # A spec another library computes (tf.Transform's
            # transformed_feature_spec()): TensorFlow checks the key there.
            assume(f"make_batched_features_dataset(): the label {label_key!r} is popped from "
                   f"the parsed features (not checked against the feature spec, which the "
                   f"trace cannot see)", user_site())
        elif label_key not in features:
            raise ValueError(f"The `label_key` provided ({label_key}) must be one of the "
                             f"`features` keys.")
        ds = ds.map(lambda x: (x, x.pop(label_key)))
    return ds.prefetch(prefetch_buffer_size)


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

