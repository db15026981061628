# A Keras dataset_fn for distribute_datasets_from_function whose map applies
# a preprocessing layer made under the strategy's scope (the pattern of the
# distributed input tutorial's Keras preprocessing section), over words held
# in memory. Written for tfdist's tests; it runs only under tfdist's stand-in.
import tensorflow as tf

WORDS = ["ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen"]
GLOBAL_BATCH = 4

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
  lookup = tf.keras.layers.StringLookup(vocabulary=WORDS[:5])


def dataset_fn(input_context):
  per_replica = input_context.get_per_replica_batch_size(GLOBAL_BATCH)
  words = tf.data.Dataset.from_tensor_slices(WORDS).repeat(3)
  words = words.shard(input_context.num_input_pipelines,
                      input_context.input_pipeline_id)
  batches = words.batch(per_replica)
  return batches.map(lambda batch: lookup(batch),
                     num_parallel_calls=tf.data.AUTOTUNE)


train_data = strategy.distribute_datasets_from_function(dataset_fn)
