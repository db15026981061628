# A builder that returns its input function together with what it learned
# about the data (here the file count), used as
# `input_fn, info = get_input_fn(...)` by language-model training scripts.
# Written for tfdist's tests; it runs only under tfdist's stand-in.
import os

import tensorflow as tf


def get_input_fn(data_dir, split, per_core_batch):
  names = sorted(tf.io.gfile.glob(os.path.join(data_dir, split + "-*")))
  info = {"files": len(names), "split": split}

  def input_fn(params):
    batch = params.get("batch_size", per_core_batch)
    ds = tf.data.Dataset.from_tensor_slices(names)
    if split == "train":
      ds = ds.repeat()
    ds = tf.data.TFRecordDataset(ds)
    return ds.batch(batch, drop_remainder=True)

  return input_fn, info
