# An Estimator input function over examples that tf.Transform wrote: the
# feature spec comes from the transform output (an object of a library the
# trace does not have), the records are batched before they are parsed with
# parse_example_dataset, and the mode decides the shuffle.
# Written for tfdist's tests; it runs only under tfdist's stand-in.
import tensorflow as tf
import tensorflow_transform as tft

LABEL = "label"


def build_input_fn(transform_dir, file_glob, batch_size, mode):
  transform_output = tft.TFTransformOutput(transform_dir)

  def input_fn():
    names = tf.data.Dataset.list_files(file_glob, shuffle=False)
    records = tf.data.TFRecordDataset(names, num_parallel_reads=2)
    if mode == tf.estimator.ModeKeys.TRAIN:
      records = records.shuffle(32, seed=11).repeat()
    batches = records.batch(batch_size)
    spec = transform_output.transformed_feature_spec().copy()
    parsed = batches.apply(tf.data.experimental.parse_example_dataset(spec))
    return parsed.map(lambda features: (features, features.pop(LABEL)))

  return input_fn
