// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The ops traced input functions bring: from_tensors and value slices,
// unbatch, rebatch, padded_batch, cache, filter, ignore_errors, apply, map
// of an opaque function; and "#@ FILE:LINE" positions.

#include <doctest/doctest.h>

#include "test_util.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/distribute/decide.h"
#include "tfdist/distribute/shape.h"
#include "tfdist/io/record_writer.h"

namespace tfdist::data {
namespace {

Result<std::vector<std::string>> Run(const std::string& expr, uint64_t seed = 1, int passes = 1) {
  TFDIST_ASSIGN_OR_RETURN(Pipeline p, ParsePipeline(expr));
  BuildOptions options;
  options.default_seed = seed;
  options.cpus = 2;
  TFDIST_ASSIGN_OR_RETURN(auto ds, BuildDataset(p, options));
  std::vector<std::string> out;
  for (int pass = 0; pass < passes; ++pass) {
    TFDIST_ASSIGN_OR_RETURN(auto it, ds->MakeIterator());
    for (;;) {
      Element e;
      bool end = false;
      TFDIST_RETURN_IF_ERROR(it->GetNext(e, end));
      if (end) break;
      out.push_back(testing::ElementText(e));
    }
  }
  return out;
}

std::vector<std::string> Out(const std::string& expr, uint64_t seed = 1, int passes = 1) {
  Result<std::vector<std::string>> r = Run(expr, seed, passes);
  INFO(expr);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

std::string Error(const std::string& expr) {
  Result<std::vector<std::string>> r = Run(expr);
  INFO(expr);
  REQUIRE_FALSE(r.ok());
  return r.status().message();
}

using V = std::vector<std::string>;

dist::PipelineShape ShapeOf(const std::string& expr) {
  Result<Pipeline> p = ParsePipeline(expr);
  INFO(expr);
  REQUIRE(p.ok());
  return dist::Analyze(*p);
}

TEST_CASE("from_tensors and from_tensor_slices of values: integers, strings, other values") {
  CHECK(Out("from_tensor_slices([3, 1, 2])") == V{"3", "1", "2"});
  CHECK(Out("from_tensor_slices(['a', 'b'])") == V{"a", "b"});
  CHECK(Out("from_tensor_slices([1.5, 2.0, (1, 'a'), {'k': [1, 2]}])") ==
        V{"1.5", "2.0", "(1, 'a')", "{'k': [1, 2]}"});
  CHECK(Out("from_tensors(([1.0], [1.0])).repeat(2)") == V{"([1.0], [1.0])", "([1.0], [1.0])"});
  CHECK(Out("from_tensors(7)") == V{"7"});
  CHECK(Out("from_tensor_slices([])").empty());
  CHECK(Error("from_tensor_slices(3)").find("takes a list") != std::string::npos);
  CHECK(Error("from_tensor_slices([lambda x: x])").find("expected a value") != std::string::npos);
  // Integers are integers: range-like ops apply, parse_example does not.
  CHECK(Error("from_tensor_slices([1, 2]).map(parse_example({'a': FixedLenFeature([], "
              "tf.int64)}))")
            .find("integers") != std::string::npos);
}

TEST_CASE("unbatch gives each batch's items; it needs batches") {
  CHECK(Out("range(7).batch(3).unbatch()") == V{"0", "1", "2", "3", "4", "5", "6"});
  CHECK(Out("range(7).batch(3).batch(2).unbatch()") == V{"[0,1,2]", "[3,4,5]", "[6]"});
  CHECK(Error("range(7).unbatch()") ==
        "column 10: unbatch() takes batches; here the elements are not batches (batch() them "
        "first)");
  CHECK(Error("range(7).batch(2).unbatch().unbatch()").find("takes batches") != std::string::npos);
  CHECK(Error("range(4).batch(2).enumerate().unbatch()").find("takes batches") !=
        std::string::npos);
}

TEST_CASE("rebatch regroups across batch boundaries, cycling through its sizes") {
  CHECK(Out("range(10).batch(3).rebatch(4)") == V{"[0,1,2,3]", "[4,5,6,7]", "[8,9]"});
  CHECK(Out("range(10).batch(3).rebatch(4, drop_remainder=True)") == V{"[0,1,2,3]", "[4,5,6,7]"});
  CHECK(Out("range(6).batch(4).rebatch([2, 0, 1])") ==
        V{"[0,1]", "[]", "[2]", "[3,4]", "[]", "[5]"});
  CHECK(Out("range(0).batch(4).rebatch(2)").empty());
  // TensorFlow's rebatch_test.py: a size of 0 reads nothing, so the end is
  // found by the next size above 0 (testEmptyLastSplits,
  // testEmptyFirstSplits); a short last batch ends it at once.
  CHECK(Out("range(4).batch(4).rebatch([1, 0])") ==
        V{"[0]", "[]", "[1]", "[]", "[2]", "[]", "[3]", "[]"});
  CHECK(Out("range(4).batch(4).rebatch([0, 1])") ==
        V{"[]", "[0]", "[]", "[1]", "[]", "[2]", "[]", "[3]", "[]"});
  CHECK(Out("range(3).batch(4).rebatch([2, 0, 0])") == V{"[0,1]", "[]", "[]", "[2]"});
  CHECK(Out("range(1).batch(4).rebatch([2, 0, 0])") == V{"[0]"});
  CHECK(Out("range(0).batch(4).rebatch([0, 1])") == V{"[]"});
  CHECK(Error("range(4).batch(2).rebatch(0)") ==
        "column 19: rebatch(): every batch size is 0 (TensorFlow would give empty batches "
        "forever, never reading its input)");
  CHECK(Error("range(4).batch(2).rebatch([1, -1])").find("batch_size must be at least 0") !=
        std::string::npos);
}

TEST_CASE("padded_batch groups as batch does") {
  CHECK(Out("range(5).padded_batch(2, padded_shapes=[None])") == V{"[0,1]", "[2,3]", "[4]"});
  CHECK(Out("range(5).padded_batch(2, drop_remainder=True)") == V{"[0,1]", "[2,3]"});
  Result<Pipeline> p = ParsePipeline("range(5).padded_batch(2)");
  REQUIRE(p.ok());
  CHECK(std::get<BatchOp>(p->ops[1].params).padded);
}

TEST_CASE("cache: later passes give the first pass's order, without holding the elements") {
  // Unseeded shuffles draw per pass; after cache() every pass is the first.
  const V cached = Out("range(8).shuffle(8).cache().repeat(3)", 4);
  REQUIRE(cached.size() == 24);
  CHECK(V(cached.begin(), cached.begin() + 8) == V(cached.begin() + 8, cached.begin() + 16));
  CHECK(V(cached.begin(), cached.begin() + 8) == V(cached.begin() + 16, cached.end()));
  const V plain = Out("range(8).shuffle(8).repeat(3)", 4);
  CHECK(V(plain.begin(), plain.begin() + 8) == V(cached.begin(), cached.begin() + 8));
  CHECK(V(plain.begin(), plain.begin() + 8) != V(plain.begin() + 8, plain.begin() + 16));
  // Passes of the whole pipeline (run --epochs) replay it too.
  const V passes = Out("range(6).shuffle(6).cache(\"/tmp/c\")", 9, 2);
  CHECK(V(passes.begin(), passes.begin() + 6) == V(passes.begin() + 6, passes.end()));
  // A shuffle after the cache reshuffles each pass.
  const V after = Out("range(8).cache().shuffle(8).repeat(2)", 4);
  CHECK(V(after.begin(), after.begin() + 8) != V(after.begin() + 8, after.end()));
}

TEST_CASE("cache: the input's files are read (and counted) once, as TensorFlow reads them") {
  testing::TempDir dir;
  const std::string a = dir.File("a");
  testing::WriteFile(a, testing::Frame({"a0", "a1"}));
  Result<Pipeline> p = ParsePipeline("tfrecord('" + a + "').cache().repeat(3)");
  REQUIRE(p.ok());
  BuildOptions options;
  options.default_seed = 1;
  options.counters = std::make_shared<ReadCounters>();
  Result<std::shared_ptr<const Dataset>> ds = BuildDataset(*p, options);
  REQUIRE(ds.ok());
  Result<std::unique_ptr<Iterator>> it = (*ds)->MakeIterator();
  REQUIRE(it.ok());
  int n = 0;
  for (bool end = false;;) {
    Element e;
    REQUIRE((*it)->GetNext(e, end).ok());
    if (end) break;
    ++n;
  }
  it->reset();
  CHECK(n == 6);
  CHECK(options.counters->files == 1);
  CHECK(options.counters->bytes_read == testing::Frame({"a0", "a1"}).size());
  CHECK(options.counters->records_read == 2);
}

TEST_CASE("a file read tally counts records read by anyone and by more than one worker") {
  FileReadTally tally;
  const std::string* a = InternPath("tally/a");
  const std::string* b = InternPath("tally/b");
  const std::string* c = InternPath("tally/c");
  tally.Add(a, 0, 10);  // worker 0 reads a whole, twice
  tally.Add(a, 0, 10);
  tally.Add(b, 1, 4);  // b: 4 by worker 1, 7 by worker 0, 6 by worker 2
  tally.Add(b, 0, 7);
  tally.Add(b, 2, 6);
  tally.Add(c, 2, 3);  // c: one worker, part then whole
  tally.Add(c, 2, 5);
  const FileReadTally::Totals t = tally.totals();
  CHECK(t.distinct == 10 + 7 + 5);
  CHECK(t.shared == 6);  // b's first 6, read by workers 0 and 2
}

TEST_CASE("filter counts as keeping everything; map of an opaque function passes elements") {
  CHECK(Out("range(4).filter(opaque(\"odd\")).map(opaque(\"f\"))") == V{"0", "1", "2", "3"});
  CHECK(Out("range(3).filter(is_valid)") == V{"0", "1", "2"});
  CHECK(Out("range(3).filter(lambda x: tf.math.greater(x, 1))") == V{"0", "1", "2"});
  CHECK(Error("range(3).map(opaque(3))") ==
        "column 14: opaque() takes the function's name as a string: opaque(\"parse_fn\")");
  const dist::PipelineShape shape = ShapeOf("range(3).filter(opaque(\"keep\")).batch(2)");
  CHECK(shape.filter == "filter(keep) (column 10)");
  CHECK(shape.global_batch_size == 2);  // compute_batch_size looks through filter
}

TEST_CASE("ignore_errors ends a damaged or missing file at its error and goes on") {
  testing::TempDir dir;
  auto write = [&](const std::string& name, const std::vector<std::string>& records) {
    const std::string path = dir.File(name);
    testing::WriteFile(path, testing::Frame(records));
    return path;
  };
  const std::string a = write("a", {"a0", "a1"});
  const std::string b = dir.File("b");
  testing::WriteFile(b, testing::FlipByte(testing::Frame({"b0", "b1", "b2"}), 40));
  const std::string c = write("c", {"c0"});
  const std::string files =
      "['" + a + "', '" + b + "', '" + dir.File("missing") + "', '" + c + "']";
  CHECK(Out("tfrecord(" + files + ").ignore_errors()") == V{"a0", "a1", "b0", "b1", "c0"});
  CHECK(Out("tfrecord(" + files +
            ", num_parallel_reads=2).apply(tf.data.experimental."
            "ignore_errors())") == V{"a0", "b0", "a1", "b1", "c0"});
  CHECK(Out("from_tensor_slices(" + files +
            ").interleave(tfrecord, cycle_length=2, "
            "num_parallel_calls=2).ignore_errors(log_warning=True)") ==
        V{"a0", "b0", "a1", "b1", "c0"});
  // It reaches the readers a cache() rebuilds and those of a joined dataset.
  CHECK(Out("tfrecord(['" + b + "']).cache().ignore_errors().repeat(2)") ==
        V{"b0", "b1", "b0", "b1"});
  CHECK(Out("tfrecord(['" + a + "']).concatenate(tfrecord(['" + b + "'])).ignore_errors()") ==
        V{"a0", "a1", "b0", "b1"});
  // Without it the damage is an error, as before.
  CHECK(Run("tfrecord(" + files + ")").status().code() == StatusCode::kDataLoss);
}

TEST_CASE("apply() takes parse_example_dataset, ignore_errors and unbatch") {
  Result<Pipeline> p = ParsePipeline(
      "tfrecord('x').batch(4).apply(tf.data.experimental.parse_example_dataset("
      "{'a': FixedLenFeature([], tf.int64)}, num_parallel_calls=2))");
  REQUIRE(p.ok());
  const auto& map = std::get<MapOp>(p->ops[2].params);
  CHECK(map.parse_dataset);
  CHECK_FALSE(map.single_example);
  REQUIRE(map.features.size() == 1);
  // ParseExampleDataset keeps the batch size static; a map() hides it.
  CHECK(dist::Analyze(*p).global_batch_size == 4);
  Result<Pipeline> mapped = ParsePipeline(
      "tfrecord('x').batch(4).map(parse_example({'a': FixedLenFeature([], "
      "tf.int64)}))");
  REQUIRE(mapped.ok());
  CHECK_FALSE(dist::Analyze(*mapped).global_batch_size);
  CHECK(Out("range(4).batch(2).apply(unbatch())") == V{"0", "1", "2", "3"});
  // A spec tfdist cannot see: the batch size stays static, nothing is parsed.
  Result<Pipeline> unseen =
      ParsePipeline("tfrecord('x').batch(4).apply(parse_example_dataset(opaque(\"spec\")))");
  REQUIRE(unseen.ok());
  CHECK(std::get<MapOp>(unseen->ops[2].params).opaque == "spec");
  CHECK(dist::Analyze(*unseen).global_batch_size == 4);
  CHECK(Error("range(4).apply(shuffle_and_repeat(2))")
            .starts_with("column 16: apply() takes tf.data.experimental.parse_example_dataset"));
}

TEST_CASE("auto-sharding sees through cache, filter and rebatch, not unbatch or ignore_errors") {
  const std::string reader = "list_files('x*').interleave(tfrecord)";
  CHECK(ShapeOf(reader + ".cache().filter(opaque('f')).batch(4).rebatch(2)").file_blocker.empty());
  CHECK(ShapeOf(reader + ".padded_batch(4)").global_batch_size == 4);
  CHECK(ShapeOf(reader + ".batch(4).unbatch()").file_blocker.starts_with("unbatch() after the"));
  CHECK(ShapeOf(reader + ".ignore_errors()").file_blocker.starts_with("ignore_errors() after"));
  const dist::PipelineShape rebatched = ShapeOf(reader + ".batch(4).rebatch(2)");
  CHECK(rebatched.batched);
  CHECK_FALSE(rebatched.global_batch_size);  // compute_batch_size stops at RebatchDatasetV2
  CHECK_FALSE(ShapeOf(reader + ".batch(4).unbatch()").batched);
  CHECK_FALSE(ShapeOf(reader + ".batch(4).ignore_errors()").global_batch_size);
  // tf.distribute asks the element spec first: drop_remainder makes the
  // batch dimension static through ops that keep it.
  CHECK(ShapeOf(reader + ".batch(4, drop_remainder=True).ignore_errors()").global_batch_size == 4);
  CHECK(ShapeOf(reader + ".batch(3).rebatch(4, drop_remainder=True)").global_batch_size == 4);
  CHECK_FALSE(ShapeOf(reader + ".batch(3).rebatch([4, 2], drop_remainder=True)").global_batch_size);
}

TEST_CASE("concatenate joins a pipeline written in its argument") {
  CHECK(Out("range(2).concatenate(range(10, 12)).batch(3)") == V{"[0,1,10]", "[11]"});
  CHECK(Out("range(2).concatenate(from_tensor_slices([5]).repeat(2)).concatenate(range(1))") ==
        V{"0", "1", "5", "5", "0"});
  CHECK(Out("range(2).concatenate(range(2).shuffle(2)).repeat(2)", 3).size() == 8);
  // The joined pipeline is checked as one: its positions are in the text.
  CHECK(Error("range(2).concatenate(range(3).batch(0))") ==
        "column 37: batch(): batch_size must be greater than zero; got 0");
  CHECK(Error("range(2).concatenate(3)").starts_with("column 22: concatenate() takes a dataset"));
  CHECK(Error("range(2).concatenate(range(3).unbatch())").find("takes batches") !=
        std::string::npos);
}

TEST_CASE("concatenate and auto-sharding: FILE shards each joined dataset's files") {
  const std::string files = "tfrecord(['a', 'b'])";
  // A joined input without files: TensorFlow cannot FILE-shard it (AUTO: DATA).
  dist::PipelineShape s = ShapeOf(files + ".concatenate(range(3))");
  CHECK(
      s.file_blocker.starts_with("concatenate() (column 22) joins a dataset where the "
                                 "pipeline reads no files"));
  // Both read files: TensorFlow shards the file names of each.
  s = ShapeOf(files + ".concatenate(list_files('c*').interleave(tfrecord))");
  CHECK(s.file_blocker.empty());
  Result<Pipeline> p = ParsePipeline(files + ".concatenate(list_files('c*').interleave(tfrecord))");
  REQUIRE(p.ok());
  const Pipeline sharded = dist::ShardFiles(*p, s, 2, 1);
  const auto& joined = std::get<ConcatenateOp>(sharded.ops.back().params);
  REQUIRE(joined.dataset->ops.size() == 4);  // list_files, shard, shuffle, interleave
  const auto& shard = std::get<ShardOp>(joined.dataset->ops[1].params);
  CHECK(shard.num_shards.value == 2);
  CHECK(shard.index.value == 1);
  CHECK(std::holds_alternative<ShuffleOp>(joined.dataset->ops[2].params));
  // compute_batch_size: the inputs' batch sizes must agree.
  CHECK(ShapeOf(files + ".batch(4).concatenate(tfrecord('c').batch(4))").global_batch_size == 4);
  CHECK_FALSE(ShapeOf(files + ".batch(4).concatenate(tfrecord('c').batch(3))").global_batch_size);
  CHECK(ShapeOf(files + ".batch(4).concatenate(tfrecord('c').batch(3))").batched);
}

TEST_CASE("a line ending in #@ FILE:LINE is named by it in messages") {
  const std::string chain =
      "range(4)  #@ train.py:12\n"
      ".batch(0)  #@ train.py:15\n";
  CHECK(Error(chain) == "train.py:15: batch(): batch_size must be greater than zero; got 0");
  CHECK(SourceMarker(chain, 0) == "train.py:12");
  CHECK(SourceMarker(chain, chain.size() - 1) == "train.py:15");
  CHECK(DescribePosition("range(4)\n.batch(0)", 10) == "line 2, column 2");
  CHECK(SourceMarker("range(4)", 3).empty());
  // The comment starts at the first '#' outside a string literal.
  CHECK(SourceMarker("list_files(\"a#@ b\")  #@ t.py:3", 0) == "t.py:3");
  CHECK(SourceMarker("range(4)  #@ we#@ ird.py:3", 0) == "we#@ ird.py:3");
  CHECK(SourceMarker("range(4)  # a comment #@ x:1", 0).empty());
}

}  // namespace
}  // namespace tfdist::data
