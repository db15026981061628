#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# The stand-in tensorflow (python/tfdist_trace) on its own: unknown values,
# the grammar text of Python values, tf.io.gfile.glob's order and matching,
# absl flags, the chains that tf.data calls record.
# Usage: standin_test.py PYTHON_FOLDER
import os
import sys
import sysconfig
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from tfdist_trace import data, datasets, render, session, standin, tf_io, values  # noqa: E402

tf = standin.install()


def chain(ds):
    return [line.split("  #@ ")[0] for line in data.chain_of(ds).splitlines()]


def _length(element):
    return element


class UnknownTest(unittest.TestCase):
    def test_a_setting_fails_where_its_value_is_needed(self):
        flag = values.setting("FLAGS.batch_size")
        derived = flag * 2 + 1  # computing with it is fine
        self.assertIsInstance(derived, values.Unknown)
        with self.assertRaises(values.NeedValue) as e:
            bool(derived)
        self.assertIn("decides a branch", e.exception.why)
        for use in (int, str, len, lambda v: [*v], lambda v: os.fspath(v)):
            with self.assertRaises(values.NeedValue):
                use(flag)

    def test_a_setting_compared_with_eq_needs_its_value(self):
        mode = values.setting("FLAGS.mode")
        with self.assertRaises(values.NeedValue):
            bool(mode == "train")
        with self.assertRaises(values.NeedValue):
            bool(mode != "eval")
        with self.assertRaises(values.NeedValue):
            bool(mode in ("train", "eval"))
        self.assertIn(mode, {mode: 1})  # a dict lookup by the same object

    def test_a_tensor_accepts_anything(self):
        t = values.tensor("record")
        self.assertTrue(bool(t))
        self.assertIsInstance(t.shape[0] + 1, values.Unknown)
        a, b, c = t  # unpacking gives as many as asked
        self.assertIsInstance(c, values.Unknown)
        self.assertEqual(list(t), [])

    def test_attributes_are_stable_and_settable(self):
        root = values.setting("FLAGS")
        self.assertIs(root.batch_size, root.batch_size)
        root.batch_size = 32
        self.assertEqual(root.batch_size, 32)

    def test_the_worker_index_is_refused_in_arithmetic(self):
        ctx = standin.context_for(4, 0, 2)
        self.assertEqual(ctx.num_input_pipelines + 1, 5)
        self.assertEqual(ctx.get_per_replica_batch_size(64), 8)
        self.assertEqual(repr(ctx.get_per_replica_batch_size(64)),
                         "ctx.get_per_replica_batch_size(64)")
        for use in (lambda i: i + 1, lambda i: ["a", "b"][i:], lambda i: i == 0, bool,
                    lambda i: f"shard{i}"):
            with self.assertRaises(values.WorkerDependent):
                use(ctx.input_pipeline_id)
        # Traced once per worker, the index is its number, also as text.
        concrete = standin.context_for(4, 3, 2, concrete=True)
        self.assertEqual(f"shard{concrete.input_pipeline_id}", "shard3")
        self.assertEqual(repr(concrete.input_pipeline_id), "ctx.input_pipeline_id")
        with self.assertRaises(ValueError):
            ctx.get_per_replica_batch_size(60)


class RenderTest(unittest.TestCase):
    def test_values_as_grammar_text(self):
        cases = [(None, "None"), (True, "True"), (3, "3"), (0.5, "0.5"), (1e-05, "1e-05"),
                 ('a"b\\c\nd', '"a\\"b\\\\c\\nd"'), ([1, (2,)], "[1, (2,)]"),
                 ({"k": [1]}, '{"k": [1]}'), (b"x", '"x"')]
        for value, text in cases:
            self.assertEqual(render.render(value, "t()"), text)

    def test_values_it_cannot_write(self):
        for value in (float("nan"), {1, 2}, object(), values.tensor("t")):
            with self.assertRaises(values.TraceError):
                render.render(value, "t()")
        with self.assertRaises(values.NeedValue):
            render.render(values.setting("FLAGS.x"), "t()")


class GlobTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        for name in ["b.rec", "a.rec", ".hidden.rec", "c.txt", "x[1].rec"]:
            open(os.path.join(self.dir, name), "w").close()
        os.mkdir(os.path.join(self.dir, "sub"))
        open(os.path.join(self.dir, "sub", "d.rec"), "w").close()

    def names(self, pattern):
        return [os.path.relpath(p, self.dir) for p in tf_io.glob_one(os.path.join(self.dir, pattern))]

    def test_matches_as_fnmatch_does_and_keeps_the_listing_order(self):
        got = self.names("*.rec")
        listing = [n for n in os.listdir(self.dir) if n.endswith(".rec")]
        self.assertEqual(got, listing)  # not sorted: the folder's order
        self.assertIn(".hidden.rec", got)  # a wildcard matches a leading dot
        self.assertEqual(self.names("[ab].rec"), [n for n in os.listdir(self.dir)
                                                  if n in ("a.rec", "b.rec")])
        self.assertEqual(self.names("[!ab].txt"), ["c.txt"])
        self.assertEqual(self.names("x\\[1\\].rec"), ["x[1].rec"])
        self.assertEqual(self.names("*/d.rec"), ["sub/d.rec"])
        self.assertEqual(sorted(self.names("?.rec")), ["a.rec", "b.rec"])
        self.assertEqual(self.names("none*"), [])
        self.assertEqual(self.names("a.rec"), ["a.rec"])

    def test_matching_files_sorts(self):
        got = tf_io.matching_files(os.path.join(self.dir, "*.rec"))
        self.assertEqual(got, sorted(got))
        with self.assertRaises(values.TraceError):
            tf_io.matching_files(os.path.join(self.dir, "none*"))


class FlagsTest(unittest.TestCase):
    def test_define_defaults_and_unknown_flags(self):
        flags = sys.modules["absl.flags"]
        flags.DEFINE_integer("epochs_for_test", 3, "help")
        flags.DEFINE_string("dir_for_test", None, "help")
        flags.DEFINE_integer("steps_for_test", None, "help", required=True)
        flags.DEFINE_string("out_for_test", None, "help")
        flags.mark_flag_as_required("out_for_test")
        self.assertEqual(flags.FLAGS.epochs_for_test, 3)
        # A None default is absl's value (repeat(None): forever), unless
        # the flag is required: then it needs a --define.
        self.assertIsNone(flags.FLAGS.dir_for_test)
        self.assertIsInstance(flags.FLAGS.steps_for_test, values.Unknown)
        self.assertIsInstance(flags.FLAGS.out_for_test, values.Unknown)
        self.assertIsInstance(flags.FLAGS.never_defined_for_test, values.Unknown)
        self.assertIs(tf.compat.v1.flags.FLAGS, flags.FLAGS)
        self.assertIs(tf.app.flags.FLAGS, flags.FLAGS)


class DatasetTest(unittest.TestCase):
    def test_methods_record_the_chain(self):
        ds = tf.data.Dataset.list_files(["a*", "b*"], shuffle=False)
        ds = ds.shard(2, 1).interleave(lambda f: tf.data.TFRecordDataset(f, "GZIP"),
                                       cycle_length=4, num_parallel_calls=tf.data.AUTOTUNE)
        ds = ds.shuffle(100, seed=3).repeat().batch(8, drop_remainder=True).prefetch(2)
        self.assertEqual(chain(ds), [
            'list_files(["a*", "b*"], shuffle=False)', ".shard(2, 1)",
            '.interleave(tfrecord(compression_type="GZIP"), cycle_length=4, num_parallel_calls=-1)',
            ".shuffle(100, seed=3)", ".repeat()", ".batch(8, drop_remainder=True)",
            ".prefetch(2)"])

    def test_a_reader_over_a_dataset_of_names(self):
        names = tf.data.Dataset.from_tensor_slices(["x", "y"])
        self.assertEqual(chain(tf.data.TFRecordDataset(names))[1], ".flat_map(tfrecord)")
        self.assertEqual(chain(tf.data.TFRecordDataset(names, num_parallel_reads=3))[1],
                         ".interleave(tfrecord, cycle_length=3, block_length=1, "
                         "num_parallel_calls=3, deterministic=True)")
        self.assertEqual(chain(tf.data.TFRecordDataset(names, num_parallel_reads=-1))[1],
                         ".interleave(tfrecord, block_length=1, num_parallel_calls=-1)")

    def test_a_map_that_parses_its_element(self):
        spec = {"x": tf.io.FixedLenFeature([2], tf.float32),
                "y": tf.io.VarLenFeature(tf.int64),
                "z": tf.io.SparseFeature("i", "v", tf.float32, 10)}

        def parse(record):
            parsed = tf.io.parse_single_example(record, spec)
            return parsed["x"] * 2, parsed["y"]

        ds = tf.data.TFRecordDataset(["f"]).map(parse).map(lambda x, y: x)
        self.assertEqual(chain(ds)[1:], [
            '.map(parse_single_example({"x": FixedLenFeature(shape=[2], dtype=tf.float32), '
            '"y": VarLenFeature(dtype=tf.int64)}))', '.map(opaque("DatasetTest.'
            'test_a_map_that_parses_its_element.lambda"))'])
        self.assertTrue(any("'z' (SparseFeature) is not parsed" in a for a in session.current.assumptions))

    def test_sources_of_values(self):
        self.assertEqual(chain(tf.data.Dataset.from_tensor_slices(([1, 2], ["a", "b"])))[0],
                         "from_tensor_slices([(1, \"a\"), (2, \"b\")])")
        self.assertEqual(chain(tf.data.Dataset.from_tensor_slices({"k": [1, 2]}))[0],
                         'from_tensor_slices([{"k": 1}, {"k": 2}])')
        self.assertEqual(chain(tf.data.Dataset.from_tensors([1.0]))[0], "from_tensors([1.0])")
        self.assertEqual(chain(tf.data.Dataset.range(2, 8, 2))[0], "range(2, 8, 2)")
        with self.assertRaises(values.TraceError):
            tf.data.Dataset.from_tensor_slices(([1, 2], [3]))

    def test_shard_hint_and_options(self):
        ds = tf.data.Dataset.range(4).shard(tf.data.experimental.SHARD_HINT,
                                            tf.data.experimental.SHARD_HINT)
        self.assertEqual(chain(ds)[1], ".shard(SHARD_HINT, SHARD_HINT)")
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = \
            tf.data.experimental.AutoShardPolicy.OFF
        options.experimental_deterministic = False
        merged = data.merged_options(ds.with_options(options))
        self.assertEqual(merged["auto_shard_policy"], "OFF")
        self.assertIs(merged["deterministic"], False)

    def test_refused_ops_name_themselves(self):
        ds = tf.data.Dataset.range(3)
        for call in (lambda: ds.window(2), lambda: tf.data.Dataset.zip((ds, ds)),
                     lambda: tf.data.TextLineDataset("f"),
                     lambda: ds.interleave(lambda x: tf.data.Dataset.range(2))):
            with self.assertRaises(values.TraceError):
                call()

    def test_concatenate_writes_the_joined_chain_in_its_argument(self):
        joined = tf.data.Dataset.range(3).concatenate(tf.data.Dataset.range(5).take(2))
        lines = data.chain_of(joined).splitlines()
        self.assertEqual([line.split("  #@ ")[0] for line in lines],
                         ["range(3)", ".concatenate(", "  range(5)", "  .take(2)", ")"])
        self.assertTrue(all("  #@ " in line for line in lines))

    def test_groupings_write_their_key_as_opaque_and_their_batch(self):
        ds = tf.data.Dataset.range(9)
        by_length = ds.apply(tf.data.experimental.bucket_by_sequence_length(
            _length, [3, 5], [2, 2, 4], drop_remainder=True))
        self.assertEqual(chain(by_length)[1:], ['.bucket_by_sequence_length(opaque("_length"), '
                                                '[3, 5], [2, 2, 4], drop_remainder=True)'])
        keyed = ds.group_by_window(_length, lambda k, w: w.padded_batch(3), window_size=3)
        self.assertEqual(chain(keyed)[1:], ['.group_by_window(opaque("_length"), lambda key, '
                                            'window: window.padded_batch(3), window_size=3)'])
        with self.assertRaises(values.TraceError):  # a reduce that does not batch
            ds.group_by_window(lambda x: x, lambda k, w: w.take(2), window_size=3)
        with self.assertRaises(ValueError):  # TensorFlow's checks, with its messages
            ds.group_by_window(lambda x: x, lambda k, w: w.batch(2))
        with self.assertRaises(ValueError):
            ds.bucket_by_sequence_length(lambda x: x, [3], [2, 2, 2])

    def test_interleave_moves_element_wise_ops_out(self):
        names = tf.data.Dataset.from_tensor_slices(["a"])
        ds = names.interleave(lambda f: tf.data.TFRecordDataset(f).prefetch(1), cycle_length=2)
        self.assertEqual(chain(ds)[1:], [".interleave(tfrecord, cycle_length=2)", ".prefetch(1)"])
        with self.assertRaises(values.TraceError):
            names.interleave(lambda f: tf.data.TFRecordDataset(f).take(3), cycle_length=2)

    def test_path_like_names_read_as_their_fspath(self):
        import pathlib
        self.assertEqual(chain(tf.data.TFRecordDataset(pathlib.Path("d/a"))),
                         ['tfrecord("d/a")'])
        self.assertEqual(chain(tf.data.TFRecordDataset([pathlib.Path("d/a"), "d/b"])),
                         ['tfrecord(["d/a", "d/b"])'])

    def test_structure_functions_keep_the_element_structure(self):
        ds = tf.data.Dataset.from_tensors(({"a": 1, "b": 2}, 3))
        for fn in (tf.compat.v1.data.get_output_shapes, tf.compat.v1.data.get_output_types,
                   tf.compat.v1.data.get_output_classes, tf.data.experimental.get_structure):
            features, label = fn(ds)
            self.assertEqual(sorted(features), ["a", "b"])
            self.assertIsInstance(label, values.Unknown)
        self.assertEqual(sorted(ds.output_shapes[0]), ["a", "b"])
        with self.assertRaises(TypeError):
            tf.compat.v1.data.get_output_shapes([1, 2])

    def test_option_groups_and_the_legacy_map_and_batch(self):
        options = tf.data.Options()
        options.threading = tf.data.ThreadingOptions()
        options.threading.private_threadpool_size = 2
        vectorize = tf.data.experimental.MapVectorizationOptions()
        vectorize.enabled = True
        options.experimental_optimization.map_vectorization = vectorize
        self.assertIs(options.experimental_optimization.map_vectorization.enabled, True)
        for module in (tf.data.experimental, tf.contrib.data):
            ds = tf.data.TFRecordDataset(["f"]).apply(
                module.map_and_batch_with_legacy_function(lambda x: x, 4, drop_remainder=True))
            self.assertEqual(chain(ds)[2], ".batch(4, drop_remainder=True)")
            self.assertTrue(chain(ds)[1].startswith(".map(opaque("), chain(ds))


class RealCodeTest(unittest.TestCase):
    """What input functions in public projects do around their pipelines."""

    def test_horovod_rank_and_size_are_the_input_context(self):
        import horovod.tensorflow as hvd
        session.current.context = standin.context_for(4, 0, 1)
        hvd.init()
        ds = tf.data.Dataset.list_files("x*", shuffle=False).shard(hvd.size(), hvd.rank())
        self.assertEqual(chain(ds)[1], ".shard(ctx.num_input_pipelines, ctx.input_pipeline_id)")
        self.assertEqual(session.current.api, "from-function")
        session.current.api = None

    def test_a_seed_drawn_at_random_is_an_unseeded_shuffle(self):
        import random
        seed = random.randint(0, 2**31 - 1)
        ds = tf.data.Dataset.range(4).shuffle(4, seed=seed)
        self.assertEqual(chain(ds)[1], ".shuffle(4)")
        self.assertEqual(chain(tf.data.Dataset.range(4).shuffle(4, seed=seed + 1))[1],
                         ".shuffle(4, seed=%d)" % (seed + 1))  # computed: a plain number
        self.assertTrue(any("drawn at random in each worker's process" in a
                            for a in session.current.assumptions))

    def test_isinstance_against_a_class_the_trace_cannot_see(self):
        unknown_class = values.setting("protos.InputReader")
        self.assertTrue(isinstance(object(), unknown_class))
        self.assertFalse(isinstance("a path", unknown_class))
        self.assertFalse(isinstance({"a": 1}, unknown_class))

        class Config(unknown_class):  # a base from a module that is not there
            pass

        config = Config(1, key=2)
        self.assertIsInstance(config.anything, values.Unknown)
        self.assertFalse(config.anything._tensor)

    def test_six_and_the_librarys_optional_imports(self):
        import six
        from six.moves import xrange
        self.assertEqual(list(xrange(3)), [0, 1, 2])
        self.assertTrue(six.PY3)
        # An optional import of Python's own library gets its ImportError;
        # the same import in the user's code gets a stand-in.
        library = os.path.join(sysconfig.get_paths()["stdlib"], "probe.py")
        probe = compile("import org_python_core_probe", library, "exec")
        with self.assertRaises(ImportError):
            exec(probe, {})
        exec(compile("import org_python_core_probe", "/tmp/user.py", "exec"), {})

    def test_tf_nest_walks_structures_with_datasets_as_leaves(self):
        ds = tf.data.Dataset.range(3)
        out = tf.nest.map_structure(lambda d: d.batch(2), {"a": ds, "b": [ds]})
        self.assertEqual(chain(out["b"][0])[1], ".batch(2)")
        self.assertEqual(len(tf.nest.flatten({"a": 1, "b": (2, 3)})), 3)
        self.assertFalse(tf.nest.is_nested(ds))

    def test_len_of_a_dataset_python_can_count(self):
        files = tf.data.Dataset.from_tensor_slices(["a", "b", "c"])
        self.assertEqual(len(files), 3)
        self.assertEqual(len(files.repeat(2).batch(4)), 2)
        self.assertEqual(len(tf.data.Dataset.range(10).shard(3, 1)), 3)
        self.assertEqual(int(tf.data.Dataset.range(5).cardinality().numpy()), 5)
        with self.assertRaises(TypeError):
            len(tf.data.TFRecordDataset(["a"]))
        # TensorFlow: repeat() forever of an input of unknown size is INFINITE,
        # and a filter() after it makes it unknown again.
        records = tf.data.TFRecordDataset(["a"])
        self.assertEqual(int(records.repeat().cardinality()), -1)
        self.assertEqual(int(records.repeat(2).cardinality()), -2)
        self.assertEqual(int(records.repeat().filter(lambda r: True).cardinality()), -2)
        with self.assertRaisesRegex(TypeError, "infinite"):
            len(records.repeat().batch(2))

    def test_unmodelled_tf_data_names_fail_where_used(self):
        with self.assertRaises(values.TraceError) as e:
            tf.data.experimental.service.distribute(processing_mode="parallel_epochs")
        self.assertIn("tf.data.experimental.service.distribute is not modelled", str(e.exception))
        ds = tf.data.TFRecordDataset(["a"]).apply(tf.contrib.data.batch_and_drop_remainder(4))
        self.assertEqual(chain(ds)[1], ".batch(4, drop_remainder=True)")

    def test_synthetic_data_made_of_tensors(self):
        ds = tf.data.Dataset.from_tensors((tf.random.uniform([8, 3]), tf.zeros([8])))
        self.assertEqual(chain(ds)[0], 'from_tensors(("tensor", "tensor"))')
        ds = tf.data.Dataset.from_tensor_slices(tf.zeros([5, 3]))
        self.assertEqual(len(ds), 5)

    def test_tensors_are_never_paths_and_pass_shape_checks(self):
        image = values.tensor("image")
        with self.assertRaises(values.TraceError):
            os.path.join(image, "x")
        self.assertFalse(image.get_shape().ndims != 3)
        self.assertTrue(image.shape[0] == 224)

    def test_iterating_while_the_file_loads_is_bounded(self):
        ds = tf.data.Dataset.range(3).batch(2)
        session.current.loading = True
        try:
            # As many symbolic elements as Python counts...
            self.assertEqual(len(list(ds)), 2)
            # ... or take() bounds (a peek at a batch of files) ...
            files = tf.data.Dataset.list_files("x*").interleave(tf.data.TFRecordDataset)
            self.assertEqual(len(list(files.take(1).batch(4).prefetch(1))), 1)
            # ... else LOAD_ELEMENTS, then the file stops loading.
            it = iter(ds.repeat())
            for _ in range(datasets.LOAD_ELEMENTS):
                next(it)
            with self.assertRaises(datasets.LoadStopped):
                next(it)
        finally:
            session.current.loading = False
        with self.assertRaises(values.TraceError):
            next(iter(ds))


if __name__ == "__main__":
    unittest.main()
