# A data loader in the shape of recommender-system training scripts: the file
# list is pathlib.Path objects, read with num_parallel_reads, each process
# keeps its shard by rank, and the options are set through option groups made
# on their own (tf.data.ThreadingOptions, the experimental
# MapVectorizationOptions of TensorFlow releases before 2.9).
# Written for tfdist's tests; it runs only under tfdist's stand-in.
import pathlib

import tensorflow as tf


def _tuned_options():
  options = tf.data.Options()
  threading = tf.data.ThreadingOptions()
  threading.private_threadpool_size = 4
  options.threading = threading
  vectorize = tf.data.experimental.MapVectorizationOptions()
  vectorize.enabled = True
  options.experimental_optimization.map_vectorization = vectorize
  return options


def make_loader(data_dir, batch_size, num_procs=1, rank=0, readers=2):
  paths = sorted(pathlib.Path(data_dir).glob("train-*.tfrecord"))
  ds = tf.data.TFRecordDataset(paths, num_parallel_reads=readers)
  ds = ds.shard(num_procs, rank)
  ds = ds.batch(batch_size, drop_remainder=True)
  return ds.with_options(_tuned_options())
