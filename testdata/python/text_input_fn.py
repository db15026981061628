# An input function over testdata/text-*.tfrecord in the shape training
# scripts write them: absl flags, an is_training branch, an optional input
# context, a parse function the layout does not look into.
import tensorflow as tf
from absl import flags

flags.DEFINE_string('data_dir', 'testdata', 'Where the TFRecord files are.')
flags.DEFINE_integer('batch_size', 4, 'Global batch size.')
FLAGS = flags.FLAGS


def _parse(record):
  return tf.strings.to_number(record, out_type=tf.int64)


def input_fn(is_training, input_context=None):
  files = tf.data.Dataset.list_files(FLAGS.data_dir + '/text-*.tfrecord', shuffle=False)
  if input_context:
    files = files.shard(input_context.num_input_pipelines,
                        input_context.input_pipeline_id)
  dataset = files.interleave(tf.data.TFRecordDataset, cycle_length=2,
                             num_parallel_calls=tf.data.AUTOTUNE)
  if is_training:
    dataset = dataset.shuffle(64, seed=1).repeat()
  dataset = dataset.map(_parse, num_parallel_calls=tf.data.AUTOTUNE)
  if input_context:
    batch_size = input_context.get_per_replica_batch_size(FLAGS.batch_size)
  else:
    batch_size = FLAGS.batch_size
  return dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)
