# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""The stand-in modules: `tensorflow` (tf.data, tf.io, tf.distribute as far
as a layout needs them, everything else a permissive tensor), absl.flags
with DEFINE_* defaults, and a permissive module for any other import the
machine cannot satisfy (numpy without numpy, the project's own packages)."""

import importlib.abc
import importlib.machinery
import sys
import types

from . import data, datasets, experimental_ops, seeds, session, tf_io, tfx
from .render import PACKAGE_DIR, is_library, user_site
from .values import ContextInt, TraceError, Unknown, WorkerIndex, setting, tensor

def forget_user_modules():
    """The user's modules and the permissive ones made for their imports are
    imported afresh by the next trace (Python's own and the stand-ins stay);
    what the code set is the session's (session.py)."""
    for name in set(sys.modules) - _installed_modules:
        module = sys.modules[name]
        path = getattr(module, "__file__", None)
        if isinstance(module, Module) or (path and not is_library(path)):
            del sys.modules[name]


# sys.modules once the stand-ins are in: the process's, not a trace's (the
# stand-ins are installed once and serve every trace).
_installed_modules = set()


class Module(types.ModuleType):
    """A stand-in module: names it defines, and for any other an Unknown
    (a tensor op under tensorflow; a setting elsewhere), or, for a module
    whose every name matters to a layout (tf.data), a refusal."""

    def __init__(self, name, tensors, members=None, strict=False):
        super().__init__(name)
        self.__dict__["_tensors"] = tensors
        self.__dict__["_strict"] = strict
        self.__dict__["__path__"] = []  # a package: submodules may be imported
        if members:
            self.__dict__.update(members)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        full = f"{self.__name__}.{attr}"
        if full in sys.modules:
            return sys.modules[full]
        if self.__dict__["_strict"]:
            value = Unmodelled(full.replace("tensorflow.", "tf.", 1))
        else:
            value = Unknown(full, tensor=self.__dict__["_tensors"])
        self.__dict__[attr] = value
        return value


class Unmodelled:
    """A name of tf.data the stand-in does not model: using it is an error
    that names it (a permissive stand-in would fail later, elsewhere)."""

    def __init__(self, name):
        self._name = name

    def _fail(self):
        raise TraceError(f"{self._name} is not modelled by tfdist; a layout would need to know "
                         f"what it does to the elements")

    def __call__(self, *args, **kwargs):
        self._fail()

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Unmodelled(f"{self._name}.{attr}")


def _shaped(name):
    """tf.zeros([n, ...]) and the like: a tensor of n rows, which
    from_tensor_slices slices into n elements."""

    def make(shape=None, *args, **kwargs):
        if shape is None:
            shape = kwargs.get("shape", kwargs.get("dims"))
        out = tensor(f"tf.{name}(...)")
        rows = shape[0] if isinstance(shape, (list, tuple)) and shape else None
        if isinstance(rows, int) and not isinstance(rows, bool):
            out._rows = rows  # kept among its attributes
        return out

    return make


def _nest_module():
    """tf.nest: structures of lists, tuples and dicts, anything else a leaf."""

    def flatten(structure, expand_composites=False):
        if isinstance(structure, dict):
            return [x for k in sorted(structure) for x in flatten(structure[k])]
        if isinstance(structure, (list, tuple)):
            return [x for item in structure for x in flatten(item)]
        return [structure]

    def pack_sequence_as(structure, flat, expand_composites=False):
        items = iter(flat)

        def pack(s):
            if isinstance(s, dict):
                return {k: pack(s[k]) for k in sorted(s)}
            if isinstance(s, (list, tuple)):
                return type(s)(pack(x) for x in s)
            return next(items)

        return pack(structure)

    def map_structure(fn, *structures, **kwargs):
        flats = [flatten(s) for s in structures]
        return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])

    def is_nested(structure):
        return isinstance(structure, (list, tuple, dict))

    return Module("tensorflow.nest", True, {
        "flatten": flatten, "pack_sequence_as": pack_sequence_as, "map_structure": map_structure,
        "is_nested": is_nested, "is_sequence": is_nested,
        "assert_same_structure": lambda *a, **k: None})


def _function(*args, **kwargs):
    """tf.function: the decorator returns the function itself."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


def _value(value, *args, **kwargs):
    return value


def _cast(x, *args, **kwargs):
    if isinstance(x, Unknown):
        data.record_op("tf.cast")
        return tensor("cast(...)")
    return x


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


def context_for(workers, worker, replicas, concrete=False):
    """The context of worker `worker`: its input_pipeline_id a symbol that
    refuses computation, or with `concrete`, the number (a trace per worker)."""
    index = ContextInt(worker, "ctx.input_pipeline_id") if concrete else WorkerIndex(worker)
    return InputContext(ContextInt(workers, "ctx.num_input_pipelines"), index,
                        ContextInt(workers * replicas, "ctx.num_replicas_in_sync"))


class Strategy:
    """A tf.distribute strategy of the modelled topology."""

    def __init__(self, *args, **kwargs):
        # Its own devices (MirroredStrategy(devices=...), a TPU resolver)
        # are not tfdist's: --workers and --replicas decide the layout.
        self._made = (type(self).__name__, user_site())

    def _origin(self):
        """(class name, site) of the code's strategy (a subclass's own
        __init__ may not have called this one)."""
        return self.__dict__.get("_made") or (type(self).__name__, None)

    @property
    def num_replicas_in_sync(self):
        return session.current.strategy_replicas

    def scope(self):
        return Unknown("strategy.scope()", tensor=True)

    def experimental_distribute_dataset(self, dataset, options=None):
        session.current.api = "distribute"
        if isinstance(dataset, datasets.Dataset):
            data.record_use(dataset, "experimental_distribute_dataset(...)", 0, user_site(),
                            "distribute", self._origin())
        return dataset

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        session.current.api = "from-function"
        site = user_site()
        dataset = dataset_fn(session.current.context or InputContext())
        if isinstance(dataset, datasets.Dataset):
            data.record_use(dataset, f"distribute_datasets_from_function"
                            f"({getattr(dataset_fn, '__name__', 'fn')})", 0, site,
                            "from-function", self._origin())
        return dataset

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Unknown(f"strategy.{attr}", tensor=True)


def _set_seed(seed):
    session.current.global_seed = (seed, user_site())
    seeds.set_global_seed(seed)


def _random_op(name):
    """tf.random.uniform and the like: made eagerly without a seed, each
    takes an op seed from tf.random.set_seed's counter."""
    make = _shaped(name)

    def op(*args, seed=None, **kwargs):
        if seed is None:
            seeds.draw_op_seed()
        return make(*args, **kwargs)
    return op


# -- absl.flags --------------------------------------------------------------

class FlagValues:
    """absl's FLAGS: --define values, else the DEFINE_* default (said as an
    assumption), else an unknown setting. One object for every trace (the
    code imports it once from the stand-in absl.flags); what it holds is the
    session's (flag_values, flag_defaults, flags_required: their None
    default is no value to use, flags_none_read: those whose None default
    the code read)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        current = session.current
        values = current.flag_values
        if name in values:
            return values[name]
        defaults = current.flag_defaults
        required = current.flags_required
        if name in defaults and (defaults[name] is not None or name not in required):
            # None too: absl gives it (repeat(FLAGS.num_epochs) repeats forever).
            data.assume(f"FLAGS.{name} = {defaults[name]!r} (its DEFINE default)", user_site())
            if defaults[name] is None:
                none_read = current.flags_none_read
                if name not in none_read:
                    none_read.append(name)
            return defaults[name]
        unknown = setting(f"FLAGS.{name}")
        values[name] = unknown
        return unknown

    def __setattr__(self, name, value):
        session.current.flag_values[name] = value

    def __getitem__(self, name):
        return types.SimpleNamespace(value=getattr(self, name))

    def __call__(self, argv, known_only=False):
        return list(argv)

    def __contains__(self, name):
        return name in session.current.flag_defaults or name in session.current.flag_values

    def is_parsed(self):
        return True

    def mark_as_parsed(self):
        pass

    def unparse_flags(self):
        pass


FLAGS = FlagValues()


def _define(name, default=None, *args, required=False, **kwargs):
    session.current.flag_defaults[name] = default
    if required:
        session.current.flags_required.add(name)
    return types.SimpleNamespace(value=default, name=name)


def _mark_required(*names, **kwargs):
    """mark_flag_as_required(name), mark_flags_as_required([names])."""
    for name in names:
        session.current.flags_required.update([name] if isinstance(name, str) else name)


def _flags_module(name):
    members = {"FLAGS": FLAGS}
    for kind in ["string", "integer", "float", "bool", "boolean", "enum", "enum_class", "list",
                 "spaceseplist", "multi_string", "multi_integer", "multi_float", "multi_enum",
                 "multi_enum_class", "alias", "flag"]:
        members[f"DEFINE_{kind}"] = _define
    members["mark_flag_as_required"] = members["mark_flags_as_required"] = _mark_required
    for fn in ["mark_flags_as_mutual_exclusive",
               "mark_bool_flags_as_mutual_exclusive", "register_validator", "validator",
               "declare_key_flag", "adopt_module_key_flags", "disclaim_key_flags"]:
        members[fn] = lambda *a, **k: (a[0] if a and callable(a[0]) else None)
    return Module(name, False, members)


# -- tensorflow --------------------------------------------------------------

def _data_module():
    ds = datasets.Dataset
    for name, fn in [("list_files", datasets.list_files),
                     ("from_tensor_slices", datasets.from_tensor_slices),
                     ("from_tensors", datasets.from_tensors), ("range", datasets.range_)]:
        setattr(ds, name, staticmethod(fn))
    for name in ["zip", "sample_from_datasets", "choose_from_datasets", "random", "load",
                 "counter"]:
        setattr(ds, name, staticmethod(datasets.refused(f"Dataset.{name}")))
    ds.from_generator = staticmethod(datasets.refused(
        "Dataset.from_generator", "runs a Python generator; tfdist does not run the code that "
        "produces data"))
    experimental = {
        "AUTOTUNE": data.AUTOTUNE, "SHARD_HINT": data.SHARD_HINT,
        "AutoShardPolicy": data.AutoShardPolicy, "DistributeOptions": data.DistributeOptions,
        "Options": data.Options, "ignore_errors": experimental_ops.ignore_errors,
        "parallel_interleave": experimental_ops.parallel_interleave,
        "map_and_batch": experimental_ops.map_and_batch,
        "map_and_batch_with_legacy_function": experimental_ops.map_and_batch_with_legacy_function,
        "shuffle_and_repeat": experimental_ops.shuffle_and_repeat, "unbatch": experimental_ops.unbatch,
        "group_by_window": experimental_ops.group_by_window,
        "bucket_by_sequence_length": experimental_ops.bucket_by_sequence_length,
        "batch_and_drop_remainder": experimental_ops.batch_and_drop_remainder,
        "dense_to_ragged_batch": experimental_ops.dense_to_ragged_batch,
        "dense_to_sparse_batch": experimental_ops.dense_to_sparse_batch,
        "enumerate_dataset": experimental_ops.enumerate_dataset,
        "assert_cardinality": experimental_ops.assert_cardinality,
        "prefetch_to_device": experimental_ops.device_copy,
        "copy_to_device": experimental_ops.device_copy,
        "parse_example_dataset": experimental_ops.parse_example_dataset,
        "make_batched_features_dataset": experimental_ops.make_batched_features_dataset,
        "TFRecordDataset": datasets.TFRecordDataset,
        "make_one_shot_iterator": datasets.make_one_shot_iterator,
        "make_initializable_iterator": datasets.make_one_shot_iterator,
        "cardinality": lambda ds: tensor("cardinality"),
        "INFINITE_CARDINALITY": -1, "UNKNOWN_CARDINALITY": -2,
        "get_structure": lambda ds: datasets.element_structure(ds, "element_spec"),
    }
    for name in data.EXPERIMENTAL_OPTION_GROUPS:
        experimental[name] = data.options_group(name)
    for name in ["sample_from_datasets", "choose_from_datasets", "group_by_reducer", "scan",
                 "take_while", "snapshot",
                 "unique", "save", "load", "Counter", "RandomDataset", "from_variant",
                 "make_csv_dataset", "CsvDataset", "SqlDataset", "make_saveable_from_iterator",
                 "distributed_save", "rejection_resample", "get_single_element",
                 "make_tf_record_dataset"]:
        experimental[name] = datasets.refused(f"tf.data.experimental.{name}")
    members = {
        "Dataset": ds, "TFRecordDataset": datasets.TFRecordDataset, "Options": data.Options,
        "make_one_shot_iterator": datasets.make_one_shot_iterator,
        "make_initializable_iterator": datasets.make_one_shot_iterator,
        "AUTOTUNE": data.AUTOTUNE, "INFINITE_CARDINALITY": -1, "UNKNOWN_CARDINALITY": -2,
        "TextLineDataset": datasets.refused_reader("TextLineDataset", "lines of text"),
        "FixedLengthRecordDataset": datasets.refused_reader("FixedLengthRecordDataset",
                                                            "fixed-length records"),
        "experimental": Module("tensorflow.data.experimental", True, experimental, strict=True),
        "DatasetSpec": tensor("tf.data.DatasetSpec"),
        "Iterator": tensor("tf.data.Iterator"),
        # tf.compat.v1.data's structure functions (the stand-in's v1 is its tf)
        "get_output_shapes": lambda ds: datasets.element_structure(ds, "output_shapes"),
        "get_output_types": lambda ds: datasets.element_structure(ds, "output_types"),
        "get_output_classes": lambda ds: datasets.element_structure(ds, "output_classes"),
    }
    for name in data.OPTION_GROUPS:
        members[name] = data.options_group(name)
    return Module("tensorflow.data", True, members, strict=True)


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
                 "OneDeviceStrategy", "ParameterServerStrategy", "CentralStorageStrategy"]:
        members[name] = type(name, (Strategy,), {})  # named as the code made it
    members["Strategy"] = Strategy
    experimental = Module("tensorflow.distribute.experimental", True, {
        name: members[name] for name in ["MultiWorkerMirroredStrategy", "TPUStrategy",
                                         "CentralStorageStrategy", "ParameterServerStrategy"]})
    members["experimental"] = experimental
    return Module("tensorflow.distribute", True, members)


def build_tensorflow(flags_module):
    """The `tensorflow` module and its submodules, registered in sys.modules."""
    data_module = _data_module()
    io_module, gfile = _io_module()
    distribute = _distribute_module()
    dtypes = Module("tensorflow.dtypes", True, {
        **tf_io.DTYPES, "DType": tf_io.DType, "as_dtype": tf_io.as_dtype})
    random = Module("tensorflow.random", True, {
        "set_seed": _set_seed, "set_random_seed": _set_seed,
        "uniform": _random_op("random.uniform"), "normal": _random_op("random.normal"),
        "truncated_normal": _random_op("random.truncated_normal"),
        "shuffle": _random_op("random.shuffle"),
        "categorical": _random_op("random.categorical"),
        "gamma": _random_op("random.gamma"), "poisson": _random_op("random.poisson")})
    nest = _nest_module()
    estimator = Module("tensorflow.estimator", True, {
        "ModeKeys": types.SimpleNamespace(TRAIN="train", EVAL="eval", PREDICT="infer")})
    contrib_data = Module("tensorflow.contrib.data", True, {
        "parallel_interleave": experimental_ops.parallel_interleave,
        "map_and_batch": experimental_ops.map_and_batch,
        "map_and_batch_with_legacy_function": experimental_ops.map_and_batch_with_legacy_function,
        "shuffle_and_repeat": experimental_ops.shuffle_and_repeat,
        "ignore_errors": experimental_ops.ignore_errors,
        "unbatch": experimental_ops.unbatch, "group_by_window": experimental_ops.group_by_window,
        "bucket_by_sequence_length": experimental_ops.bucket_by_sequence_length,
        "AUTOTUNE": data.AUTOTUNE,
        "batch_and_drop_remainder": experimental_ops.batch_and_drop_remainder,
        "padded_batch_and_drop_remainder": experimental_ops.padded_batch_and_drop_remainder,
        "TFRecordDataset": datasets.TFRecordDataset}, strict=True)
    contrib = Module("tensorflow.contrib", True, {"data": contrib_data})
    version = types.SimpleNamespace(VERSION="2.15.0 (tfdist stand-in)", GIT_VERSION="")
    members = {
        "data": data_module, "io": io_module, "distribute": distribute, "dtypes": dtypes,
        "nest": nest, "zeros": _shaped("zeros"), "ones": _shaped("ones"),
        "fill": _shaped("fill"), "random_uniform": _random_op("random_uniform"),
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
                   compat, nest]:
        sys.modules[module.__name__] = module
    sys.modules["tensorflow.compat.v1"] = tf
    sys.modules["tensorflow.compat.v2"] = tf
    return tf


def _importer_is_library():
    """Whether the import being resolved comes from Python's library (an
    optional import it probes for), not from the user's code."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<frozen") and not name.startswith(PACKAGE_DIR):
            return is_library(name)
        frame = frame.f_back
    return False


def _six_module(name):
    """six, whose site package the isolated trace does not see."""
    moves = Module("six.moves", False, {
        "range": range, "xrange": range, "zip": zip, "map": map, "filter": filter,
        "input": input, "reduce": __import__("functools").reduce,
        "cPickle": __import__("pickle"), "queue": __import__("queue")})
    if name == "six.moves":
        return moves

    def with_metaclass(meta, *bases):
        return meta("_SixBase", bases or (object,), {})

    def add_metaclass(meta):
        return lambda cls: meta(cls.__name__, cls.__bases__, dict(vars(cls)))

    return Module("six", False, {
        "PY2": False, "PY3": True, "moves": moves, "string_types": (str,),
        "integer_types": (int,), "text_type": str, "binary_type": bytes,
        "iteritems": lambda d, **k: iter(d.items()), "itervalues": lambda d, **k: iter(d.values()),
        "iterkeys": lambda d, **k: iter(d.keys()), "with_metaclass": with_metaclass,
        "add_metaclass": add_metaclass, "ensure_str": str, "ensure_text": str})


class _PermissiveFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: an import of the user's code that nothing else
    can satisfy becomes a permissive stand-in module (said as an
    assumption). Python's library probing for optional modules gets its
    ImportError as usual."""

    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith("tensorflow") and _importer_is_library():
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        name = spec.name
        if name in ("six", "six.moves"):
            return _six_module(name)
        tensors = name.split(".")[0] in ("tensorflow", "keras", "tf_keras")
        if name.split(".")[0] not in ("tensorflow",):
            data.assume(f"import {name}: not available to the trace; a stand-in that accepts "
                        f"any use")
        return Module(name, tensors)

    def exec_module(self, module):
        pass


# -- horovod -----------------------------------------------------------------

def _horovod_module(name):
    """horovod.tensorflow (and .keras): one process per GPU, each building
    its own pipeline, so tfdist's workers are Horovod's processes and the
    layout is distribute_datasets_from_function's."""

    def used():
        if session.current.api != "from-function":
            session.current.api = "from-function"
            data.assume("Horovod: each process builds its own pipeline; laid out a worker per "
                        "process (--workers), as distribute_datasets_from_function does",
                        user_site())

    def size():
        used()
        return session.current.context.num_input_pipelines

    def rank():
        used()
        return session.current.context.input_pipeline_id

    members = {"init": lambda *a, **k: None, "size": size, "rank": rank,
               "local_rank": lambda: ContextInt(0, "0"), "local_size": lambda: ContextInt(1, "1"),
               "is_initialized": lambda: True, "shutdown": lambda: None}
    return Module(name, True, members)


def install():
    """Registers the stand-ins (once); returns the tensorflow module."""
    if "tensorflow" in sys.modules and isinstance(sys.modules["tensorflow"], Module):
        return sys.modules["tensorflow"]
    flags_module = _flags_module("absl.flags")
    absl = Module("absl", False, {"flags": flags_module})
    sys.modules["absl"] = absl
    sys.modules["absl.flags"] = flags_module
    tf = build_tensorflow(flags_module)
    sys.modules["tensorflow.flags"] = flags_module
    horovod = Module("horovod", False, {})
    sys.modules["horovod"] = horovod
    for name in ("horovod.tensorflow", "horovod.tensorflow.keras", "horovod.keras"):
        sys.modules[name] = _horovod_module(name)
    horovod.__dict__["tensorflow"] = sys.modules["horovod.tensorflow"]
    horovod.__dict__["keras"] = sys.modules["horovod.keras"]
    sys.modules["horovod.tensorflow"].__dict__["keras"] = sys.modules["horovod.tensorflow.keras"]
    sys.modules["tensorflow.app"] = tf.app
    tfx.install(lambda name, tensors, members=None: Module(name, tensors, members))
    sys.meta_path.append(_PermissiveFinder())
    _mark_random_draws()
    _installed_modules.update(sys.modules)
    return tf


def _mark_random_draws():
    """random.randint and the like return numbers marked as drawn at random
    (seeds.RandomInt): a seed drawn so differs in each worker's process."""
    import random

    def marked(draw):
        def wrapper(*args, **kwargs):
            value = draw(*args, **kwargs)
            if isinstance(value, int) and not session.current.random_seeded:
                return seeds.RandomInt(value)
            return value
        return wrapper

    for name in ("randint", "randrange", "getrandbits"):
        setattr(random, name, marked(getattr(random, name)))
    seed = random.seed

    def seeded(a=None, *args, **kwargs):
        # random.seed(K): every process draws the same numbers after it.
        session.current.random_seeded = a is not None
        return seed(a, *args, **kwargs)

    random.seed = seeded

