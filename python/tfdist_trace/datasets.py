# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""tf.data.Dataset as the traced code sees it (each op a step of the
chain), its iterators, and its sources (list_files, TFRecordDataset,
from_tensor_slices, ...)."""

import os

from . import render as r
from . import session
from . import values
from .data import (AUTOTUNE, SHARD_HINT, UNSEEN, Options, Step, assume, call_text, chain_of,
                   marker, plain_int, record_op, record_use, trace_function)
from .render import render, user_site
from .seeds import draw_op_seed, per_process_seed
from .values import NeedValue, TraceError, Unknown, WorkerDependent, is_unknown, tensor


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
        return self._then(op, call_text(op, positional, keywords), element, user_site(), count)

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
                                                plain_int(n - index + num_shards - 1)
                                                // plain_int(num_shards)))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        seed = per_process_seed(seed, "shuffle")
        if seed is None:
            seed = draw_op_seed()
        return self._method("shuffle", [buffer_size],
                            [("seed", seed), ("reshuffle_each_iteration", reshuffle_each_iteration)],
                            count=self._count)

    def repeat(self, count=None, name=None):
        times = -1 if count is None else count
        try:
            forever = plain_int(times) < 0
        except (TypeError, TraceError):
            forever = False
        # TensorFlow's rule: repeat() forever of an input of unknown size
        # is INFINITE (only an input known to be empty gives 0).
        counted = self._counted(lambda n: n * plain_int(times) if times >= 0 or n == 0 else -1)
        return self._method("repeat", [count] if count is not None else [],
                            count=-1 if forever and self._count is None else counted)

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
            lambda n: n if plain_int(count) < 0
            else (plain_int(count) if n < 0 else min(n, count))))
        if type(count) is int and count >= 0:
            out._most = count if self._most is None else min(count, self._most)
        return out

    def skip(self, count, name=None):
        return self._method("skip", [count], count=self._counted(
            lambda n: 0 if plain_int(count) < 0 else (n if n < 0 else max(n - count, 0))))

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
        unseen = UNSEEN if isinstance(predicate, Unknown) else ""
        assume(f"filter({label}): {unseen}counted as keeping every element; the counts after "
               f"it are upper bounds", site)
        return self._then("filter", f"filter(opaque({r.quote(label)}))", site=site)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None,
            use_legacy_function=False):
        site = user_site()
        traced = trace_function(map_func, self._element)
        label = r.function_name(map_func)
        if isinstance(map_func, Unknown):
            assume(f"map({label}): {UNSEEN}counted as one element in, one out, order kept",
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
        unseen = UNSEEN if isinstance(fn, Unknown) else ""
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
            assume(f"{op}({r.function_name(fn)}): {UNSEEN}assumed it reads each file name "
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


def _batches(n, size, drop):
    size = plain_int(size)
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
    text = call_text("list_files", [patterns],
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
        count = len(range(*[plain_int(a) for a in args]))
    except (TypeError, ValueError, TraceError):
        count = None
    return _source(call_text("range", list(args)), tensor("int"), site, count=count)


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
    text = call_text("tfrecord", [files], [("compression_type", compression_type),
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
