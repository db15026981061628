# A reader class in the shape of EfficientDet's and the object detection
# models' InputReader: the file pattern and mode are attributes set by
# __init__, __call__(params, input_context) builds the dataset, and a
# nested function reads each file.
import functools

import tensorflow as tf


class InputReader:
  """Input reader for dataset."""

  def __init__(self, file_pattern, is_training, use_fake_data=False,
               max_instances_per_image=None):
    self._file_pattern = file_pattern
    self._is_training = is_training
    self._use_fake_data = use_fake_data
    self._max_instances_per_image = max_instances_per_image or 100

  def _parse(self, value):
    keys_to_features = {
        'id': tf.io.FixedLenFeature((), tf.int64, -1),
        'label': tf.io.FixedLenFeature((), tf.int64, -1),
    }
    parsed = tf.io.parse_single_example(value, keys_to_features)
    return parsed['id'], parsed['label']

  def __call__(self, params, input_context=None, batch_size=None):
    batch_size = batch_size or params['batch_size']
    dataset = tf.data.Dataset.list_files(
        self._file_pattern, shuffle=self._is_training, seed=params.get('seed'))
    if input_context:
      dataset = dataset.shard(input_context.num_input_pipelines,
                              input_context.input_pipeline_id)
    if self._is_training:
      dataset = dataset.repeat()

    def _prefetch_dataset(filename):
      dataset = tf.data.TFRecordDataset(filename).prefetch(1)
      return dataset

    dataset = dataset.interleave(
        _prefetch_dataset, cycle_length=params.get('cycle_length', 2),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=not self._is_training)
    dataset = dataset.map(self._parse, num_parallel_calls=tf.data.AUTOTUNE)
    dataset = dataset.batch(batch_size, drop_remainder=params['drop_remainder'])
    dataset = dataset.prefetch(tf.data.AUTOTUNE)
    options = tf.data.Options()
    options.experimental_deterministic = not self._is_training
    dataset = dataset.with_options(options)
    return dataset
