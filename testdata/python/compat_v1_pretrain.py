# A pretraining reader written against tf.compat.v1, as TF1 models that were
# ported to TF2 keep it: a builder closure over the file list, the legacy
# fused map-and-batch whose function is a Defun, the feature names read back
# from tf.compat.v1.data.get_output_shapes, casts with TF1's tf.to_int32.
# Written for tfdist's tests; it runs only under tfdist's stand-in.
import tensorflow.compat.v1 as tf

SEQ_LEN = 16


def _features():
  return {
      "id": tf.FixedLenFeature([1], tf.int64),
      "label": tf.FixedLenFeature([1], tf.int64),
  }


def _to_int32(record):
  example = tf.parse_single_example(record, _features())
  return {key: tf.to_int32(value) for key, value in example.items()}


def _keep_columns(dataset, wanted):
  shapes = tf.data.get_output_shapes(dataset)
  missing = [key for key in wanted if key not in shapes]
  if missing:
    raise ValueError("no such columns: %s" % missing)
  return dataset.map(lambda row: {key: row[key] for key in wanted})


def make_input_fn(files, training, threads=2):
  """Returns the input_fn an Estimator calls with its params."""

  def input_fn(params):
    ds = tf.data.TFRecordDataset(files)
    if training:
      ds = ds.repeat()
    ds = ds.apply(
        tf.data.experimental.map_and_batch_with_legacy_function(
            _to_int32, batch_size=params["batch_size"],
            num_parallel_batches=threads, drop_remainder=True))
    return _keep_columns(ds, ["id", "label"])

  return input_fn
