# A TFX Trainer module's input functions: the Trainer hands them a
# DataAccessor whose tf_dataset_factory reads the GZIP'd tf.Example records
# ExampleGen wrote, and a tf.Transform output whose schema parses them.
# Written for tfdist's tests; it runs only under tfdist's stand-in.
from typing import List

import tensorflow as tf
import tensorflow_transform as tft
from tfx import v1 as tfx
from tfx.components.trainer import fn_args_utils
from tfx_bsl.public import tfxio
from tfx_bsl.tfxio import dataset_options

LABEL = 'label'


def _xf(key):
  return key + '_xf'


def train_input_fn(file_pattern: List[str],
                   data_accessor: tfx.components.DataAccessor,
                   tf_transform_output: tft.TFTransformOutput,
                   batch_size: int) -> tf.data.Dataset:
  """Batches of transformed features and their label, forever."""
  options = tfxio.TensorFlowDatasetOptions(batch_size=batch_size, label_key=_xf(LABEL))
  return data_accessor.tf_dataset_factory(
      file_pattern, options, tf_transform_output.transformed_metadata.schema).repeat()


def eval_input_fn(file_pattern, data_accessor: fn_args_utils.DataAccessor,
                  tf_transform_output, batch_size=4):
  """One pass, in order, with the last short batch."""
  return data_accessor.tf_dataset_factory(
      file_pattern,
      dataset_options.TensorFlowDatasetOptions(batch_size, shuffle=False, num_epochs=1,
                                               reader_num_threads=1),
      tf_transform_output.transformed_metadata.schema)


def run_fn_dataset(fn_args: tfx.components.FnArgs):
  """What a run_fn builds from its FnArgs."""
  transform = tft.TFTransformOutput(fn_args.transform_output)
  return fn_args.data_accessor.tf_dataset_factory(
      fn_args.train_files,
      tfxio.TensorFlowDatasetOptions(batch_size=8, shuffle_seed=5, shuffle_buffer_size=64),
      transform.transformed_metadata.schema)


def _gzip_reader_fn(filenames):
  return tf.data.TFRecordDataset(filenames, compression_type='GZIP')


def legacy_input_fn(filenames, tf_transform_output, batch_size=200):
  """The older templates: make_batched_features_dataset over the transformed spec."""
  spec = tf_transform_output.transformed_feature_spec().copy()
  return tf.data.experimental.make_batched_features_dataset(
      file_pattern=filenames, batch_size=batch_size, features=spec,
      reader=_gzip_reader_fn, label_key=_xf(LABEL))
