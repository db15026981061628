# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""tf.data.experimental's transformations (for Dataset.apply) and its
functions that make datasets (make_batched_features_dataset)."""

from .data import AUTOTUNE, Options, assume
from .datasets import TFRecordDataset, features_text, list_files
from .render import render, user_site
from .values import Unknown, tensor


def batch_and_drop_remainder(batch_size):
    return lambda ds: ds.batch(batch_size, drop_remainder=True)


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    return lambda ds: ds.padded_batch(batch_size, padded_shapes, padding_values,
                                      drop_remainder=True)


def ignore_errors(log_warning=False):
    return lambda ds: ds.ignore_errors()


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    return lambda ds: ds.interleave(map_func, cycle_length=cycle_length,
                                    block_length=block_length, num_parallel_calls=cycle_length,
                                    deterministic=not sloppy)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    return lambda ds: ds.map(map_func, num_parallel_calls=num_parallel_calls).batch(
        batch_size, drop_remainder=drop_remainder)


# TF1's map_and_batch whose function is traced as a legacy Defun: the same
# elements in the same order.
map_and_batch_with_legacy_function = map_and_batch


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    return lambda ds: ds.shuffle(buffer_size, seed=seed).repeat(count)


def unbatch():
    return lambda ds: ds.unbatch()


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    return lambda ds: ds.group_by_window(key_func, reduce_func, window_size, window_size_func)


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    return lambda ds: ds.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
        padding_values, pad_to_bucket_boundary, no_padding, drop_remainder)


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=None):
    return lambda ds: ds.batch(batch_size, drop_remainder=drop_remainder)


def dense_to_sparse_batch(batch_size, row_shape):
    return lambda ds: ds.batch(batch_size)


def enumerate_dataset(start=0):
    return lambda ds: ds.enumerate(start)


def assert_cardinality(expected_cardinality):
    def identity(ds):
        assume(f"assert_cardinality({expected_cardinality!r}): not checked", user_site())
        return ds
    return identity


def device_copy(*args, **kwargs):
    return lambda ds: ds


def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """tf.data.experimental.parse_example_dataset: TensorFlow's
    ParseExampleDataset, which keeps a batch size visible to tf.distribute."""

    def apply(ds):
        site = user_site()
        if isinstance(features, dict):
            text = features_text(features, "the feature spec", site)
            element = {key: tensor(f"parsed[{key!r}]") for key in features}
        else:  # a spec another library computes (tf.transform, feature columns)
            name = features._name if isinstance(features, Unknown) else type(features).__name__
            assume(f"the feature spec {name} is not known to the trace: batches are parsed as "
                   f"TensorFlow's ParseExampleDataset keeps them, into no columns", site)
            text, element = None, tensor("parsed")
        if text is None:
            return ds._then("apply", 'apply(parse_example_dataset(opaque("feature spec")))',
                            element, site, count=ds._count)
        calls = "" if num_parallel_calls in (None, 1) else \
            f", num_parallel_calls={render(num_parallel_calls, 'parse_example_dataset()')}"
        return ds._then("apply", f"apply(parse_example_dataset({text}{calls}))", element, site,
                        count=ds._count)

    return apply


def make_batched_features_dataset(file_pattern, batch_size, features, reader=None,
                                  label_key=None, reader_args=None, num_epochs=None,
                                  shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                                  prefetch_buffer_size=None, reader_num_threads=None,
                                  parser_num_threads=None, sloppy_ordering=False,
                                  drop_final_batch=False):
    """What TensorFlow builds (readers.py, make_batched_features_dataset_v2)."""
    if reader is None:
        reader = TFRecordDataset
    reader_num_threads = 1 if reader_num_threads is None else reader_num_threads
    parser_num_threads = 2 if parser_num_threads is None else parser_num_threads
    prefetch_buffer_size = AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size
    reader_args = list(reader_args or [])
    ds = list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    read = (lambda f: reader(f, *reader_args))
    if reader_num_threads == AUTOTUNE:
        ds = ds.interleave(read, num_parallel_calls=AUTOTUNE)
        if sloppy_ordering:
            options = Options()
            options.deterministic = False
            ds = ds.with_options(options)
    else:
        ds = ds.interleave(read, cycle_length=reader_num_threads, block_length=1,
                           num_parallel_calls=reader_num_threads,
                           deterministic=not sloppy_ordering)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=bool(drop_final_batch or num_epochs is None))
    ds = ds.apply(parse_example_dataset(features, num_parallel_calls=parser_num_threads))
    if label_key:
        if not isinstance(features, dict):
            # A spec another library computes (tf.Transform's
            # transformed_feature_spec()): TensorFlow checks the key there.
            assume(f"make_batched_features_dataset(): the label {label_key!r} is popped from "
                   f"the parsed features (not checked against the feature spec, which the "
                   f"trace cannot see)", user_site())
        elif label_key not in features:
            raise ValueError(f"The `label_key` provided ({label_key}) must be one of the "
                             f"`features` keys.")
        ds = ds.map(lambda x: (x, x.pop(label_key)))
    return ds.prefetch(prefetch_buffer_size)
