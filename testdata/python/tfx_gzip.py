# A TFX trainer module's input function: ExampleGen writes GZIP TFRecords,
# read by a reader function given to make_batched_features_dataset, with a
# feature spec from a schema-like dict and a label key.
import tensorflow as tf

_LABEL_KEY = 'label'
_FEATURE_KEYS = ['id']


def _gzip_reader_fn(filenames):
  """Small utility returning a record reader that can read gzip'ed files."""
  return tf.data.TFRecordDataset(filenames, compression_type='GZIP')


def _feature_spec():
  spec = {key: tf.io.FixedLenFeature([], tf.int64) for key in _FEATURE_KEYS}
  spec[_LABEL_KEY] = tf.io.FixedLenFeature([], tf.int64)
  return spec


def _input_fn(file_pattern, batch_size=200, num_epochs=None):
  """Generates features and label for tuning/training."""
  dataset = tf.data.experimental.make_batched_features_dataset(
      file_pattern=file_pattern,
      batch_size=batch_size,
      features=_feature_spec(),
      reader=_gzip_reader_fn,
      label_key=_LABEL_KEY,
      num_epochs=num_epochs,
      shuffle=False)
  return dataset
