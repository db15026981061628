# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""The TFX stand-ins a trainer module's input function imports: tfx's
DataAccessor and FnArgs (tfx.v1.components, tfx.components.trainer.
fn_args_utils), tfx_bsl's TensorFlowDatasetOptions and TFExampleRecord
(tfx_bsl.public.tfxio, tfx_bsl.tfxio.*) and tf.Transform's
TFTransformOutput (tensorflow_transform), whose feature spec and schema are
opaque. DATA_ACCESSOR is the DataAccessor TFX's Trainer passes for the
tf.Example records ExampleGen writes (doc/python.md, "TFX input
functions")."""

import collections
import os
import sys

from . import data, datasets, experimental_ops, tf_io
from .render import user_site
from .values import TraceError, Unknown, setting, tensor

_DATASET_OPTION_DEFAULTS = collections.OrderedDict([
    ("batch_size", None), ("drop_final_batch", False), ("num_epochs", None),
    ("shuffle", True), ("shuffle_buffer_size", 10000), ("shuffle_seed", None),
    ("prefetch_buffer_size", data.AUTOTUNE), ("reader_num_threads", data.AUTOTUNE),
    ("parser_num_threads", data.AUTOTUNE), ("sloppy_ordering", False), ("label_key", None)])


class TensorFlowDatasetOptions(collections.namedtuple("TensorFlowDatasetOptions",
                                                      list(_DATASET_OPTION_DEFAULTS))):
    """tfx_bsl.tfxio.dataset_options.TensorFlowDatasetOptions, with its
    defaults (batch_size is required)."""

    __slots__ = ()

    def __new__(cls, batch_size, *args, **kwargs):
        values = dict(_DATASET_OPTION_DEFAULTS)
        names = list(_DATASET_OPTION_DEFAULTS)[1:]
        if len(args) > len(names):
            raise TypeError(f"TensorFlowDatasetOptions() takes at most {len(names) + 1} "
                            f"arguments ({len(args) + 1} given)")
        values.update(zip(names, args))
        for key, value in kwargs.items():
            if key not in values or key == "batch_size":
                raise TypeError(f"TensorFlowDatasetOptions() got an unexpected keyword "
                                f"argument {key!r}")
            values[key] = value
        values["batch_size"] = batch_size
        return super().__new__(cls, **values)


class RecordBatchesOptions(collections.namedtuple(
        "RecordBatchesOptions", ["batch_size", "drop_final_batch", "num_epochs", "shuffle",
                                 "shuffle_buffer_size", "shuffle_seed"])):
    """tfx_bsl's RecordBatchesOptions (Arrow record batches: no dataset)."""

    __slots__ = ()

    def __new__(cls, batch_size, drop_final_batch=False, num_epochs=None, shuffle=True,
                shuffle_buffer_size=10000, shuffle_seed=None):
        return super().__new__(cls, batch_size, drop_final_batch, num_epochs, shuffle,
                               shuffle_buffer_size, shuffle_seed)


def detect_compression(file_pattern):
    """tfx_bsl's detect_compression_type: "GZIP" when every matching name
    ends in .gz, "" when none does; TensorFlow looks at the names only."""
    names = tf_io.matching_files(file_pattern)
    gz = [n for n in names if n.endswith(".gz")]
    if gz and len(gz) != len(names):
        plain = next(n for n in names if not n.endswith(".gz"))
        raise TraceError(f"the files of tf_dataset_factory() mix names that end in .gz ({gz[0]}) "
                         f"and names that do not ({plain}): tfx_bsl decides the compression by "
                         f"the names, gets INVALID_MIXED_COMPRESSION_TYPES and TensorFlow's "
                         f"reader refuses it")
    return "GZIP" if gz else ""


def _opaque_map(ds, label, element):
    """A map of tfx_bsl's own (renaming the parsed features, popping the
    label): one element in, one out, order kept; its work is TensorFlow's."""
    return ds._then("map", f'map(opaque("{label}"))', element=element, site=user_site(),
                    count=ds._count)


def tf_example_dataset(file_pattern, options, schema=None):
    """TFExampleRecord(file_pattern, schema).TensorFlowDataset(options), as
    tfx_bsl builds it (tf_example_record.py, dataset_util.py's
    make_tf_record_dataset)."""
    site = user_site()
    if not isinstance(options, TensorFlowDatasetOptions):
        raise TraceError(f"tf_dataset_factory() takes a tfxio.TensorFlowDatasetOptions; got "
                         f"{type(options).__name__}")
    if isinstance(file_pattern, (list, tuple)) and not file_pattern:
        raise TraceError("tf_dataset_factory(): the file pattern list is empty (tfx_bsl: "
                         "\"Must provide at least one file pattern.\")")
    if not isinstance(file_pattern, (list, tuple)):
        file_pattern = [file_pattern]
    compression = detect_compression(file_pattern)
    o = options
    ds = datasets.list_files(list(file_pattern), shuffle=o.shuffle, seed=o.shuffle_seed)
    ds = ds.interleave(lambda name: datasets.TFRecordDataset(name, compression_type=compression),
                       num_parallel_calls=o.reader_num_threads)
    # TFExampleRecord passes no sloppy_ordering: make_tf_record_dataset's
    # default, an order that is deterministic.
    deterministic = data.Options()
    deterministic.deterministic = True
    ds = ds.with_options(deterministic)
    if o.shuffle:
        ds = ds.shuffle(o.shuffle_buffer_size, seed=o.shuffle_seed)
    if o.num_epochs != 1:
        ds = ds.repeat(o.num_epochs)
    ds = ds.batch(o.batch_size, drop_remainder=bool(o.drop_final_batch or o.num_epochs is None))
    if schema is None or isinstance(schema, Unknown):
        spec = schema if schema is not None else setting("the feature spec of no schema")
    else:
        spec = setting(f"the feature spec of the schema {type(schema).__name__}")
    ds = ds.apply(experimental_ops.parse_example_dataset(spec))
    features = tensor("parsed")
    ds = _opaque_map(ds, "TFExampleRecord: rename features", features)
    if o.label_key is not None:
        data.assume(f"tf_dataset_factory(): the label {o.label_key!r} is popped from the "
                    f"parsed features (not checked against the schema, which the trace "
                    f"cannot see)", site)
        ds = _opaque_map(ds, f"pop label {o.label_key}",
                         (tensor("features"), tensor("label")))
    return ds.prefetch(data.AUTOTUNE)


class TFExampleRecord:
    """tfx_bsl.public.tfxio.TFExampleRecord: tf.Example records in TFRecord
    files; only its TensorFlowDataset is modelled."""

    def __init__(self, file_pattern, validate=True, schema=None, raw_record_column_name=None,
                 telemetry_descriptors=None):
        self._file_pattern = file_pattern
        self._schema = schema

    def TensorFlowDataset(self, options):
        return tf_example_dataset(self._file_pattern, options, self._schema)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Unknown(f"TFExampleRecord.{attr}", tensor=True)


class DataAccessor(collections.namedtuple(
        "DataAccessor", ["tf_dataset_factory", "record_batch_factory", "data_view_decode_fn"])):
    """tfx.v1.components.DataAccessor (a NamedTuple of three factories)."""

    __slots__ = ()

    def __repr__(self):
        if self is DATA_ACCESSOR:
            return "DATA_ACCESSOR"
        return super().__repr__()


def _record_batches(*args, **kwargs):
    raise TraceError("data_accessor.record_batch_factory() makes Arrow record batches, not a "
                     "tf.data.Dataset; tfdist lays out datasets (tf_dataset_factory)")


# The DataAccessor TFX's Trainer passes (fn_args_utils.get_common_fn_args):
# tfxio_utils makes a TFExampleRecord for the FORMAT_TF_EXAMPLE payload.
DATA_ACCESSOR = DataAccessor(tf_dataset_factory=tf_example_dataset,
                             record_batch_factory=_record_batches, data_view_decode_fn=None)

_FN_ARGS_FIELDS = ["working_dir", "train_files", "eval_files", "train_steps", "eval_steps",
                   "schema_path", "schema_file", "transform_graph_path", "transform_output",
                   "data_accessor", "serving_model_dir", "eval_model_dir", "model_run_dir",
                   "base_model", "hyperparameters", "custom_config"]


class FnArgs:
    """tfx.v1.components.FnArgs: the fields a run_fn reads, None unless given."""

    def __init__(self, **kwargs):
        for key in kwargs:
            if key not in _FN_ARGS_FIELDS:
                raise TypeError(f"FnArgs.__init__() got an unexpected keyword argument {key!r}")
        for key in _FN_ARGS_FIELDS:
            setattr(self, key, kwargs.get(key))

    def __repr__(self):
        return "FnArgs(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in _FN_ARGS_FIELDS
                                     if getattr(self, k) is not None) + ")"


class TFTransformOutput:
    """tensorflow_transform.TFTransformOutput(dir): what it reads from the
    folder (feature specs, schema, vocabularies) is opaque to the trace."""

    def __init__(self, transform_output_dir):
        self._dir = os.fspath(transform_output_dir) \
            if isinstance(transform_output_dir, os.PathLike) else transform_output_dir
        self._text = f"TFTransformOutput({self._dir!r})"

    def transformed_feature_spec(self):
        return setting(f"{self._text}.transformed_feature_spec()")

    def raw_feature_spec(self):
        return setting(f"{self._text}.raw_feature_spec()")

    @property
    def transformed_metadata(self):
        return setting(f"{self._text}.transformed_metadata")

    @property
    def raw_metadata(self):
        return setting(f"{self._text}.raw_metadata")

    @property
    def transform_savedmodel_dir(self):
        return os.path.join(str(self._dir), "transform_fn")

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Unknown(f"{self._text}.{attr}", tensor=True)

    def __repr__(self):
        return self._text


def install(module_type):
    """Registers tfx, tfx_bsl and tensorflow_transform in sys.modules;
    `module_type(name, tensors, members)` makes a stand-in module."""
    components = {"DataAccessor": DataAccessor, "FnArgs": FnArgs}
    fn_args_utils = module_type("tfx.components.trainer.fn_args_utils", False, components)
    trainer = module_type("tfx.components.trainer", False, {"fn_args_utils": fn_args_utils})
    tfx_components = module_type("tfx.components", False, {"trainer": trainer})
    v1_components = module_type("tfx.v1.components", False, components)
    v1 = module_type("tfx.v1", False, {"components": v1_components})
    tfx = module_type("tfx", False, {"v1": v1, "components": tfx_components})
    options = {"TensorFlowDatasetOptions": TensorFlowDatasetOptions,
               "RecordBatchesOptions": RecordBatchesOptions}
    dataset_options = module_type("tfx_bsl.tfxio.dataset_options", False, options)
    tf_example_record = module_type("tfx_bsl.tfxio.tf_example_record", False,
                                    {"TFExampleRecord": TFExampleRecord})
    bsl_tfxio = module_type("tfx_bsl.tfxio", False, {
        "dataset_options": dataset_options, "tf_example_record": tf_example_record})
    public_tfxio = module_type("tfx_bsl.public.tfxio", False,
                               {**options, "TFExampleRecord": TFExampleRecord})
    public = module_type("tfx_bsl.public", False, {"tfxio": public_tfxio})
    bsl = module_type("tfx_bsl", False, {"tfxio": bsl_tfxio, "public": public})
    schema_utils = module_type("tensorflow_transform.tf_metadata.schema_utils", False)
    tf_metadata = module_type("tensorflow_transform.tf_metadata", False,
                              {"schema_utils": schema_utils})
    tft = module_type("tensorflow_transform", False,
                      {"TFTransformOutput": TFTransformOutput, "tf_metadata": tf_metadata})
    for module in [tfx, v1, v1_components, tfx_components, trainer, fn_args_utils, bsl,
                   bsl_tfxio, dataset_options, tf_example_record, public, public_tfxio, tft,
                   tf_metadata, schema_utils]:
        sys.modules[module.__name__] = module
