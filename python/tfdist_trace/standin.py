# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""The stand-in modules: `tensorflow` (tf.data, tf.io, tf.distribute as far
as a layout needs them, everything else a permissive tensor), absl.flags
with DEFINE_* defaults, and a permissive module for any other import the
machine cannot satisfy (numpy without numpy, the project's own packages)."""

import importlib.abc
import importlib.machinery
import sys
import types

from . import data, tf_io
from .render import user_site
from .values import ContextInt, Unknown, WorkerIndex, setting, tensor

# What the code set that the runner reports.
state = {"api": None, "global_seed": None, "context": None, "strategy_replicas": 1}


class Module(types.ModuleType):
    """A stand-in module: names it defines, and for any other an Unknown
    (a tensor op under tensorflow; a setting elsewhere)."""

    def __init__(self, name, tensors, members=None):
        super().__init__(name)
        self.__dict__["_tensors"] = tensors
        self.__dict__["__path__"] = []  # a package: submodules may be imported
        if members:
            self.__dict__.update(members)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        full = f"{self.__name__}.{attr}"
        if full in sys.modules:
            return sys.modules[full]
        value = Unknown(full, tensor=self.__dict__["_tensors"])
        self.__dict__[attr] = value
        return value


def _function(*args, **kwargs):
    """tf.function: the decorator returns the function itself."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


def _value(value, *args, **kwargs):
    return value


def _cast(x, *args, **kwargs):
    return tensor("cast(...)") if isinstance(x, Unknown) else x


class InputContext:
    """tf.distribute.InputContext; tfdist passes one whose ints it fills in
    per worker (values.ContextInt)."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    num_input_pipelines = property(lambda self: self._num_input_pipelines)
    input_pipeline_id = property(lambda self: self._input_pipeline_id)
    num_replicas_in_sync = property(lambda self: self._num_replicas_in_sync)

    def get_per_replica_batch_size(self, global_batch_size):
        n = int(self._num_replicas_in_sync)
        if global_batch_size % n != 0:
            raise ValueError(f"The `global_batch_size` {global_batch_size!r} is not divisible "
                             f"by `num_replicas_in_sync` {n!r} ")
        if isinstance(self._num_replicas_in_sync, ContextInt):
            return ContextInt(global_batch_size // n,
                              f"ctx.get_per_replica_batch_size({int(global_batch_size)})")
        return global_batch_size // n

    def __bool__(self):
        return True

    def __repr__(self):
        return "InputContext(tfdist)"


def context_for(workers, worker, replicas):
    return InputContext(ContextInt(workers, "ctx.num_input_pipelines"),
                        WorkerIndex(worker),
                        ContextInt(workers * replicas, "ctx.num_replicas_in_sync"))


class Strategy:
    """A tf.distribute strategy of the modelled topology."""

    def __init__(self, *args, **kwargs):
        pass

    @property
    def num_replicas_in_sync(self):
        return state["strategy_replicas"]

    def scope(self):
        return Unknown("strategy.scope()", tensor=True)

    def experimental_distribute_dataset(self, dataset, options=None):
        state["api"] = "distribute"
        return dataset

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        state["api"] = "from-function"
        return dataset_fn(state["context"] or InputContext())

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Unknown(f"strategy.{attr}", tensor=True)


def _set_seed(seed):
    state["global_seed"] = (seed, user_site())


# -- absl.flags --------------------------------------------------------------

class FlagValues:
    """absl's FLAGS: --define values, else the DEFINE_* default (said as an
    assumption), else an unknown setting."""

    def __init__(self):
        object.__setattr__(self, "_defaults", {})
        object.__setattr__(self, "_values", {})

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        defaults = object.__getattribute__(self, "_defaults")
        if name in defaults and defaults[name] is not None:
            data.assume(f"FLAGS.{name} = {defaults[name]!r} (its DEFINE default)", user_site())
            return defaults[name]
        unknown = setting(f"FLAGS.{name}")
        values[name] = unknown
        return unknown

    def __setattr__(self, name, value):
        self._values[name] = value

    def __getitem__(self, name):
        return types.SimpleNamespace(value=getattr(self, name))

    def __call__(self, argv, known_only=False):
        return list(argv)

    def __contains__(self, name):
        return name in self._defaults or name in self._values

    def is_parsed(self):
        return True

    def mark_as_parsed(self):
        pass

    def unparse_flags(self):
        pass


FLAGS = FlagValues()


def _define(name, default=None, *args, **kwargs):
    FLAGS._defaults[name] = default
    return types.SimpleNamespace(value=default, name=name)


def _flags_module(name):
    members = {"FLAGS": FLAGS}
    for kind in ["string", "integer", "float", "bool", "boolean", "enum", "enum_class", "list",
                 "spaceseplist", "multi_string", "multi_integer", "multi_float", "multi_enum",
                 "multi_enum_class", "alias", "flag"]:
        members[f"DEFINE_{kind}"] = _define
    for fn in ["mark_flag_as_required", "mark_flags_as_required", "mark_flags_as_mutual_exclusive",
               "mark_bool_flags_as_mutual_exclusive", "register_validator", "validator",
               "declare_key_flag", "adopt_module_key_flags", "disclaim_key_flags"]:
        members[fn] = lambda *a, **k: (a[0] if a and callable(a[0]) else None)
    return Module(name, False, members)


# -- tensorflow --------------------------------------------------------------

def _data_module():
    ds = data.Dataset
    for name, fn in [("list_files", data.list_files),
                     ("from_tensor_slices", data.from_tensor_slices),
                     ("from_tensors", data.from_tensors), ("range", data.range_)]:
        setattr(ds, name, staticmethod(fn))
    for name in ["zip", "sample_from_datasets", "choose_from_datasets", "random", "load",
                 "counter"]:
        setattr(ds, name, staticmethod(data.refused(f"Dataset.{name}")))
    ds.from_generator = staticmethod(data.refused(
        "Dataset.from_generator", "runs a Python generator; tfdist does not run the code that "
        "produces data"))
    experimental = {
        "AUTOTUNE": data.AUTOTUNE, "SHARD_HINT": data.SHARD_HINT,
        "AutoShardPolicy": data.AutoShardPolicy, "DistributeOptions": data.DistributeOptions,
        "Options": data.Options, "ignore_errors": data.ignore_errors,
        "parallel_interleave": data.parallel_interleave, "map_and_batch": data.map_and_batch,
        "shuffle_and_repeat": data.shuffle_and_repeat, "unbatch": data.unbatch,
        "dense_to_ragged_batch": data.dense_to_ragged_batch,
        "dense_to_sparse_batch": data.dense_to_sparse_batch,
        "enumerate_dataset": data.enumerate_dataset,
        "assert_cardinality": data.assert_cardinality,
        "prefetch_to_device": data.device_copy, "copy_to_device": data.device_copy,
        "parse_example_dataset": data.parse_example_dataset,
        "make_batched_features_dataset": data.make_batched_features_dataset,
        "TFRecordDataset": data.TFRecordDataset,
        "make_one_shot_iterator": data.make_one_shot_iterator,
        "make_initializable_iterator": data.make_one_shot_iterator,
        "cardinality": lambda ds: tensor("cardinality"),
        "INFINITE_CARDINALITY": -1, "UNKNOWN_CARDINALITY": -2,
    }
    for name in ["sample_from_datasets", "choose_from_datasets", "bucket_by_sequence_length",
                 "group_by_window", "group_by_reducer", "scan", "take_while", "snapshot",
                 "unique", "save", "load", "Counter", "RandomDataset", "from_variant",
                 "make_csv_dataset", "CsvDataset", "SqlDataset", "make_saveable_from_iterator",
                 "distributed_save", "rejection_resample", "get_single_element",
                 "make_tf_record_dataset"]:
        experimental[name] = data.refused(f"tf.data.experimental.{name}")
    members = {
        "Dataset": ds, "TFRecordDataset": data.TFRecordDataset, "Options": data.Options,
        "make_one_shot_iterator": data.make_one_shot_iterator,
        "make_initializable_iterator": data.make_one_shot_iterator,
        "AUTOTUNE": data.AUTOTUNE, "INFINITE_CARDINALITY": -1, "UNKNOWN_CARDINALITY": -2,
        "TextLineDataset": data.refused_reader("TextLineDataset", "lines of text"),
        "FixedLengthRecordDataset": data.refused_reader("FixedLengthRecordDataset",
                                                        "fixed-length records"),
        "experimental": Module("tensorflow.data.experimental", True, experimental),
        "DatasetSpec": tensor("tf.data.DatasetSpec"),
        "Iterator": tensor("tf.data.Iterator"),
    }
    return Module("tensorflow.data", True, members)


def _io_module():
    gfile = Module("tensorflow.io.gfile", True, {
        "glob": tf_io.gfile_glob, "exists": tf_io.gfile_exists, "isdir": tf_io.gfile_isdir,
        "listdir": tf_io.gfile_listdir, "join": tf_io.gfile_join, "GFile": tf_io.gfile_open,
        # TF1 spellings (tf.gfile.Glob, ...)
        "Glob": tf_io.gfile_glob, "Exists": tf_io.gfile_exists, "IsDirectory": tf_io.gfile_isdir,
        "ListDirectory": tf_io.gfile_listdir, "Open": tf_io.gfile_open,
    })
    members = {
        "parse_example": tf_io.parse_example, "parse_single_example": tf_io.parse_single_example,
        "parse_sequence_example": tf_io.parse_sequence_example,
        "parse_single_sequence_example": tf_io.parse_single_sequence_example,
        "FixedLenFeature": tf_io.FixedLenFeature, "VarLenFeature": tf_io.VarLenFeature,
        "SparseFeature": tf_io.SparseFeature, "RaggedFeature": tf_io.RaggedFeature,
        "FixedLenSequenceFeature": tf_io.FixedLenSequenceFeature,
        "matching_files": tf_io.matching_files, "gfile": gfile,
        "TFRecordOptions": Unknown("tf.io.TFRecordOptions", tensor=True),
    }
    return Module("tensorflow.io", True, members), gfile


def _distribute_module():
    members = {"InputContext": InputContext, "get_strategy": lambda: Strategy(),
               "has_strategy": lambda: False, "in_cross_replica_context": lambda: True}
    for name in ["MirroredStrategy", "MultiWorkerMirroredStrategy", "TPUStrategy",
                 "OneDeviceStrategy", "ParameterServerStrategy", "CentralStorageStrategy",
                 "Strategy"]:
        members[name] = Strategy
    experimental = Module("tensorflow.distribute.experimental", True, {
        "MultiWorkerMirroredStrategy": Strategy, "TPUStrategy": Strategy,
        "CentralStorageStrategy": Strategy, "ParameterServerStrategy": Strategy})
    members["experimental"] = experimental
    return Module("tensorflow.distribute", True, members)


def build_tensorflow(flags_module):
    """The `tensorflow` module and its submodules, registered in sys.modules."""
    data_module = _data_module()
    io_module, gfile = _io_module()
    distribute = _distribute_module()
    dtypes = Module("tensorflow.dtypes", True, {
        **tf_io.DTYPES, "DType": tf_io.DType, "as_dtype": tf_io.as_dtype})
    random = Module("tensorflow.random", True, {"set_seed": _set_seed, "set_random_seed": _set_seed})
    estimator = Module("tensorflow.estimator", True, {
        "ModeKeys": types.SimpleNamespace(TRAIN="train", EVAL="eval", PREDICT="infer")})
    contrib_data = Module("tensorflow.contrib.data", True, {
        "parallel_interleave": data.parallel_interleave, "map_and_batch": data.map_and_batch,
        "shuffle_and_repeat": data.shuffle_and_repeat, "ignore_errors": data.ignore_errors,
        "unbatch": data.unbatch, "AUTOTUNE": data.AUTOTUNE,
        "TFRecordDataset": data.TFRecordDataset})
    contrib = Module("tensorflow.contrib", True, {"data": contrib_data})
    version = types.SimpleNamespace(VERSION="2.15.0 (tfdist stand-in)", GIT_VERSION="")
    members = {
        "data": data_module, "io": io_module, "distribute": distribute, "dtypes": dtypes,
        "random": random, "estimator": estimator, "contrib": contrib, "gfile": gfile,
        "flags": flags_module, "app": Module("tensorflow.app", True, {"flags": flags_module}),
        "version": version, "__version__": version.VERSION,
        "function": _function, "constant": _value, "convert_to_tensor": _value,
        "identity": _value, "cast": _cast, "TensorShape": lambda dims=None: list(dims or []),
        "set_random_seed": _set_seed, "executing_eagerly": lambda: True,
        "print": lambda *a, **k: None, "DType": tf_io.DType, "as_dtype": tf_io.as_dtype,
        # TF1 names at the top level
        "parse_example": tf_io.parse_example, "parse_single_example": tf_io.parse_single_example,
        "FixedLenFeature": tf_io.FixedLenFeature, "VarLenFeature": tf_io.VarLenFeature,
        "SparseFeature": tf_io.SparseFeature,
        "FixedLenSequenceFeature": tf_io.FixedLenSequenceFeature,
        "matching_files": tf_io.matching_files,
    }
    members.update(tf_io.DTYPES)
    tf = Module("tensorflow", True, members)
    compat = Module("tensorflow.compat", True, {"v1": tf, "v2": tf})
    tf.__dict__["compat"] = compat
    for module in [tf, data_module, data_module.experimental, io_module, gfile, distribute,
                   distribute.experimental, dtypes, random, estimator, contrib, contrib_data,
                   compat]:
        sys.modules[module.__name__] = module
    sys.modules["tensorflow.compat.v1"] = tf
    sys.modules["tensorflow.compat.v2"] = tf
    return tf


class _PermissiveFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: an import nothing else can satisfy becomes a
    permissive stand-in module (said as an assumption)."""

    def find_spec(self, fullname, path, target=None):
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        name = spec.name
        tensors = name.split(".")[0] in ("tensorflow", "keras", "tf_keras")
        if name.split(".")[0] not in ("tensorflow",):
            data.assume(f"import {name}: not available to the trace; a stand-in that accepts "
                        f"any use")
        return Module(name, tensors)

    def exec_module(self, module):
        pass


def install():
    """Registers the stand-ins; returns the tensorflow module."""
    flags_module = _flags_module("absl.flags")
    absl = Module("absl", False, {"flags": flags_module})
    sys.modules["absl"] = absl
    sys.modules["absl.flags"] = flags_module
    tf = build_tensorflow(flags_module)
    sys.modules["tensorflow.flags"] = flags_module
    sys.modules["tensorflow.app"] = tf.app
    sys.meta_path.append(_PermissiveFinder())
    return tf

