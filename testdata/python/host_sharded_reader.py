# A TPU-host reader in the shape of the reference image models: a base class
# builds the batches in input_fn(self, params), asking params for the host's
# place when TPUEstimator passes a context, and a subclass supplies the
# records of one host through make_source_dataset(index, num_hosts).
# Written for tfdist's tests; it runs only under tfdist's stand-in.
import abc
import functools
import os

import tensorflow as tf


class HostReader(abc.ABC):

  def __init__(self, is_training, parallel_calls=4):
    self.is_training = is_training
    self.parallel_calls = parallel_calls

  def parse(self, serialized):
    spec = {"id": tf.io.FixedLenFeature([], tf.int64),
            "label": tf.io.FixedLenFeature([], tf.int64)}
    row = tf.io.parse_single_example(serialized, spec)
    return row["id"], row["label"]

  def fix_shapes(self, batch_size, ids, labels):
    ids.set_shape([batch_size])
    labels.set_shape([batch_size])
    return ids, labels

  @abc.abstractmethod
  def make_source_dataset(self, index, num_hosts):
    """The records host `index` of `num_hosts` reads."""

  def input_fn(self, params):
    batch_size = params["batch_size"]
    if "context" in params:
      index, num_hosts = params["context"].current_host, params["context"].num_hosts
    else:
      index, num_hosts = 0, 1
    ds = self.make_source_dataset(index, num_hosts)
    ds = ds.apply(tf.data.experimental.map_and_batch(
        self.parse, batch_size=batch_size,
        num_parallel_batches=self.parallel_calls, drop_remainder=True))
    ds = ds.map(functools.partial(self.fix_shapes, batch_size))
    return ds.prefetch(tf.data.experimental.AUTOTUNE)


class FolderReader(HostReader):

  def __init__(self, is_training, folder):
    super().__init__(is_training)
    self.folder = folder

  def make_source_dataset(self, index, num_hosts):
    pattern = os.path.join(self.folder, "train-*" if self.is_training else "eval-*")
    names = tf.data.Dataset.list_files(pattern, shuffle=False).shard(num_hosts, index)
    if self.is_training:
      names = names.repeat()

    def read(name):
      return tf.data.TFRecordDataset(name, buffer_size=1 << 20)

    return names.interleave(read, cycle_length=2, num_parallel_calls=2)
