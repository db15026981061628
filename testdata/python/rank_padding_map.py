# A map function that pads every feature to rank 4 with a loop on its shape,
# as sequence-model libraries normalise features for their models: the loop
# ends on the tensor's real rank, which a symbolic element does not have.
# Written for tfdist's tests; it runs only under tfdist's stand-in.
import tensorflow as tf


def _to_rank4(features):
  out = {}
  for name, value in features.items():
    try:
      while len(value.get_shape()) < 4:
        value = tf.expand_dims(value, axis=-1)
    except Exception:  # a shape that cannot be measured stays as it is
      pass
    out[name] = value
  return out


def input_fn(pattern, batch_size):
  ds = tf.data.Dataset.list_files(pattern, shuffle=False)
  ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=2)
  ds = ds.map(lambda r: {"inputs": r, "targets": r})
  ds = ds.map(_to_rank4)
  return ds.batch(batch_size)
