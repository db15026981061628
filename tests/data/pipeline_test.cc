// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Pipeline expressions and tf.data stages: TensorFlow's order, every rule of
// doc/semantics.md, "Element order", and the parser's messages.

#include "tfdist/data/pipeline.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "test_util.h"
#include "tfdist/base/text.h"
#include "tfdist/distribute/layout.h"
#include "tfdist/io/record_writer.h"
#include "tfdist/proto/synthetic.h"

namespace tfdist::data {
namespace {

struct Run {
  Status status;
  std::vector<std::string> out;
};

Run Evaluate(const std::string& expr, BuildOptions options = {}, int64_t limit = 100000) {
  Run run;
  if (!options.default_seed) options.default_seed = 1;
  if (options.cpus == 0) options.cpus = 4;
  Result<Pipeline> p = ParsePipeline(expr);
  if (!p.ok()) {
    run.status = p.status();
    return run;
  }
  Result<std::shared_ptr<const Dataset>> ds = BuildDataset(*p, options);
  if (!ds.ok()) {
    run.status = ds.status();
    return run;
  }
  auto it = (*ds)->MakeIterator();
  REQUIRE(it.ok());
  Element e;
  for (int64_t n = 0; n < limit; ++n) {
    bool end = false;
    run.status = (*it)->GetNext(e, end);
    if (!run.status.ok() || end) break;
    run.out.push_back(testing::ElementText(e));
  }
  return run;
}

std::vector<std::string> Out(const std::string& expr, BuildOptions options = {}) {
  Run r = Evaluate(expr, options);
  INFO(expr);
  INFO(r.status.ToString());
  REQUIRE(r.status.ok());
  return r.out;
}

std::string Error(const std::string& expr, BuildOptions options = {}) {
  Run r = Evaluate(expr, options);
  INFO(expr);
  REQUIRE_FALSE(r.status.ok());
  return r.status.message();
}

std::vector<std::string> Seq(std::initializer_list<const char*> items) {
  return std::vector<std::string>(items.begin(), items.end());
}

// Files with the given records, in a temporary folder.
class Files {
 public:
  std::string Add(const std::string& name, const std::vector<std::string>& records,
                  io::Compression c = io::Compression::kNone) {
    const std::string path = dir_.File(name);
    io::RecordWriterOptions o;
    o.compression = c;
    auto w = io::RecordWriter::Open(path, o);
    REQUIRE(w.ok());
    for (const std::string& r : records) REQUIRE((*w)->Write(r).ok());
    REQUIRE((*w)->Close().ok());
    return path;
  }
  std::string Repeat(const std::string& name, const std::string& value, int n) {
    return Add(name, std::vector<std::string>(n, value));
  }
  const std::string& dir() const { return dir_.path(); }

 private:
  testing::TempDir dir_;
};

std::string List(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", \"" : "\"") + names[i] + "\"";
  return out + "]";
}

TEST_CASE("worked example 9: interleave fills slots from the cursor, block by block") {
  Files f;
  const std::string names =
      List({f.Repeat("f4", "4", 4), f.Repeat("f5", "5", 5), f.Repeat("f6", "6", 6)});
  const auto want =
      Seq({"4", "5", "4", "5", "4", "5", "4", "5", "5", "6", "6", "6", "6", "6", "6"});
  CHECK(Out("from_tensor_slices(" + names +
            ").interleave(tfrecord, cycle_length=2, block_length=1)") == want);
  // Parallel reading keeps the order, whatever the thread count
  // (TensorFlow takes at most cycle_length of them when it is fixed).
  for (int threads : {1, 2}) {
    CHECK(Out("from_tensor_slices(" + names +
              ").interleave(tfrecord, cycle_length=2, "
              "block_length=1, num_parallel_calls=" +
              std::to_string(threads) + ")") == want);
  }
}

// Each of these was refused before (cycle_length over 65536, block_length
// over 2^30, num_parallel_calls or num_parallel_reads over 256, map's
// num_parallel_calls over 256), or laid out in another order (AUTOTUNE's
// cycle length with num_parallel_calls): TensorFlow takes them all.
TEST_CASE("interleave takes every value TensorFlow takes, in TensorFlow's order") {
  Files f;
  const std::string names =
      List({f.Repeat("f4", "4", 4), f.Repeat("f5", "5", 5), f.Repeat("f6", "6", 6)});
  const std::string files = "from_tensor_slices(" + names + ")";
  // A cycle longer than the input is the cycle of the input's length.
  const auto three = Out(files + ".interleave(tfrecord, cycle_length=3, block_length=2)");
  CHECK(three == Seq({"4", "4", "5", "5", "6", "6", "4", "4", "5", "5", "6", "6", "5", "6", "6"}));
  CHECK(Out(files + ".interleave(tfrecord, cycle_length=1000000000000, block_length=2)") == three);
  CHECK(Out(files + ".interleave(tfrecord, cycle_length=100000, block_length=2, "
                    "num_parallel_calls=1024)") == three);
  CHECK(Out(files + ".interleave(tfrecord, cycle_length=3, block_length=4611686018427387904)") ==
        Out(files + ".flat_map(tfrecord)"));
  CHECK(Out(files + ".interleave(tfrecord, cycle_length=3, block_length=4611686018427387904, "
                    "num_parallel_calls=3)") == Out(files + ".flat_map(tfrecord)"));
  CHECK(Out("tfrecord(" + names + ", num_parallel_reads=1024)") ==
        Out(files + ".interleave(tfrecord, cycle_length=3)"));
  CHECK(Out(files + ".interleave(tfrecord, cycle_length=2).map(opaque(\"f\"), "
                    "num_parallel_calls=1024)")
            .size() == 15);

  // AUTOTUNE's cycle length is TensorFlow's: the CPUs without
  // num_parallel_calls, min(num_parallel_calls, CPUs) with it, ceil(CPUs / 3)
  // when both are AUTOTUNE (tfrecord's num_parallel_reads=AUTOTUNE too).
  BuildOptions six;
  six.cpus = 6;
  const auto cycle2 = Out(files + ".interleave(tfrecord, cycle_length=2)");
  const auto cycle3 = Out(files + ".interleave(tfrecord, cycle_length=3)");
  CHECK(cycle2 != cycle3);
  CHECK(Out(files + ".interleave(tfrecord)", six) == cycle3);
  CHECK(Out(files + ".interleave(tfrecord, num_parallel_calls=2)", six) == cycle2);
  CHECK(Out(files + ".interleave(tfrecord, cycle_length=None, num_parallel_calls=AUTOTUNE)", six) ==
        cycle2);
  CHECK(Out("tfrecord(" + names + ", num_parallel_reads=AUTOTUNE)", six) == cycle2);
  // AUTOTUNE against a fixed cycle_length.
  CHECK(Out(files + ".interleave(tfrecord, cycle_length=2, num_parallel_calls=AUTOTUNE)", six) ==
        cycle2);
  BuildOptions three_cpus;
  three_cpus.cpus = 3;
  CHECK(Out(files + ".interleave(tfrecord, num_parallel_calls=AUTOTUNE)", three_cpus) ==
        Out(files + ".interleave(tfrecord, cycle_length=1)"));
}

TEST_CASE("interleave refuses what TensorFlow refuses, with TensorFlow's rule") {
  const std::pair<const char*, const char*> cases[] = {
      {"range(2).interleave(tfrecord, cycle_length=0)",
       "column 44: interleave(): cycle_length must be greater than zero or AUTOTUNE; got 0"},
      {"range(2).interleave(tfrecord, cycle_length=-2)",
       "column 44: interleave(): cycle_length must be greater than zero or AUTOTUNE; got -2"},
      {"range(2).interleave(tfrecord, block_length=0)",
       "column 44: interleave(): block_length must be greater than zero; got 0"},
      {"range(2).interleave(tfrecord, num_parallel_calls=0)",
       "column 50: interleave(): num_parallel_calls must be greater than zero or AUTOTUNE; got 0"},
      {"range(2).interleave(tfrecord, cycle_length=2, num_parallel_calls=4)",
       "column 66: interleave(): if cycle_length is set to a fixed value, num_parallel_calls must "
       "be either AUTOTUNE or a value less than or equal to cycle_length; got num_parallel_calls "
       "4 and cycle_length 2"},
      {"tfrecord(['a'], num_parallel_reads=0)",
       "column 36: tfrecord(): num_parallel_reads must be greater than zero or AUTOTUNE; got 0"},
      {"range(2).map(opaque('f'), num_parallel_calls=-3)",
       "column 46: map(): num_parallel_calls must be greater than zero or AUTOTUNE; got -3"},
      {"range(2).batch(2, num_parallel_calls=0)",
       "column 38: batch(): num_parallel_calls must be greater than zero or AUTOTUNE; got 0"},
      {"range(2).shuffle(0)", "column 18: shuffle(): buffer_size must be greater than zero; got 0"},
      {"range(2).batch(-1)", "column 16: batch(): batch_size must be greater than zero; got -1"},
      {"range(2).prefetch(-2)",
       "column 19: prefetch(): buffer_size must be at least 0 or AUTOTUNE; got -2"},
  };
  for (auto [expr, message] : cases) CHECK(Error(expr) == message);
}

TEST_CASE("AutotunedArguments and ThreadNotes say what the CPUs and tfdist's limit decide") {
  auto parse = [](const std::string& text) {
    Result<Pipeline> p = ParsePipeline(text);
    REQUIRE(p.ok());
    return *p;
  };
  using Args = std::vector<std::pair<std::string, int64_t>>;
  CHECK(AutotunedArguments(parse("range(2).interleave(tfrecord)"), 16) ==
        Args{{"interleave(cycle_length)", 16}});
  CHECK(AutotunedArguments(parse("range(2).interleave(tfrecord, num_parallel_calls=4)"), 16) ==
        Args{{"interleave(cycle_length)", 4}});
  CHECK(
      AutotunedArguments(parse("range(2).interleave(tfrecord, num_parallel_calls=AUTOTUNE)"), 16) ==
      Args{{"interleave(cycle_length)", 6}, {"interleave(num_parallel_calls)", 16}});
  CHECK(AutotunedArguments(parse("tfrecord(['a'], num_parallel_reads=AUTOTUNE)"), 16) ==
        Args{{"tfrecord(num_parallel_reads): cycle_length", 6}});
  CHECK(AutotunedArguments(parse("range(2).interleave(tfrecord, cycle_length=4)"), 16).empty());

  BuildOptions o;
  o.cpus = 8;
  CHECK(ThreadNotes(parse("range(2).interleave(tfrecord, cycle_length=4, num_parallel_calls=4)"), o)
            .empty());
  CHECK(
      ThreadNotes(parse("range(2).interleave(tfrecord, num_parallel_calls=AUTOTUNE)"), o).empty());
  CHECK(ThreadNotes(parse("range(2).interleave(tfrecord, cycle_length=1024, "
                          "num_parallel_calls=1024)"),
                    o) == std::vector<std::string>{
                              "interleave(num_parallel_calls=1024): read by 256 threads (tfdist's "
                              "limit); the order is TensorFlow's, which does not depend on them"});
  CHECK(ThreadNotes(parse("range(2).interleave(tfrecord, num_parallel_calls=100)"), o) ==
        std::vector<std::string>{
            "interleave(num_parallel_calls=100): read by 16 threads (twice its cycle length 8: "
            "every input it reads at once); the order is TensorFlow's, which does not depend on "
            "them"});
  CHECK(ThreadNotes(parse("tfrecord(['a'], num_parallel_reads=300)"), o).size() == 1);
  o.cpus = 1000;
  CHECK(ThreadNotes(parse("tfrecord(['a'], num_parallel_reads=AUTOTUNE)"), o) ==
        std::vector<std::string>{
            "tfrecord(num_parallel_reads=AUTOTUNE, 1000 CPUs): read by 256 threads (tfdist's "
            "limit); the order is TensorFlow's, which does not depend on them"});
}

TEST_CASE("interleave: block_length, short inputs, empty inputs, cycle longer than the input") {
  Files f;
  const std::string a = f.Add("a", {"a0", "a1", "a2", "a3", "a4"});
  const std::string b = f.Add("b", {"b0"});
  const std::string e = f.Add("e", {});
  const std::string c = f.Add("c", {"c0", "c1", "c2"});
  const std::string names = List({a, e, b, c});
  CHECK(Out("from_tensor_slices(" + names +
            ").interleave(tfrecord, cycle_length=2, block_length=2)") ==
        Seq({"a0", "a1", "a2", "a3", "b0", "a4", "c0", "c1", "c2"}));
  CHECK(Out("from_tensor_slices(" + names + ").interleave(tfrecord, cycle_length=8)") ==
        Seq({"a0", "b0", "c0", "a1", "c1", "a2", "c2", "a3", "a4"}));
  CHECK(Out("from_tensor_slices(" + names + ").flat_map(tfrecord)") ==
        Seq({"a0", "a1", "a2", "a3", "a4", "b0", "c0", "c1", "c2"}));
  CHECK(Out("tfrecord(" + names + ")") ==
        Out("from_tensor_slices(" + names + ").flat_map(tfrecord)"));
  // num_parallel_reads is a deterministic interleave with that cycle_length.
  CHECK(Out("tfrecord(" + names + ", num_parallel_reads=2)") ==
        Out("from_tensor_slices(" + names + ").interleave(tfrecord, cycle_length=2)"));
}

TEST_CASE("parallel interleave gives the sequential order over many uneven files") {
  Files f;
  Rng rng(5);
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) {
    std::vector<std::string> records;
    const uint64_t n = rng.Uniform(0, 300);
    for (uint64_t r = 0; r < n; ++r) records.push_back(fmt::format("f{}r{}", i, r));
    names.push_back(f.Add(fmt::format("u{:02}", i), records,
                          i % 3 == 0 ? io::Compression::kGzip : io::Compression::kNone));
  }
  for (const char* shape : {"cycle_length=1", "cycle_length=3, block_length=7", "cycle_length=16",
                            "cycle_length=5, block_length=1"}) {
    CAPTURE(shape);
    const std::string base = "from_tensor_slices(" + List(names) +
                             ").interleave(tfrecord(compression_type=\"auto\"), " + shape;
    const auto sequential = Out(base + ")");
    CHECK(sequential.size() > 1000);
    // At most cycle_length threads, as TensorFlow requires.
    const int cycle = std::atoi(std::strchr(shape, '=') + 1);
    for (int threads : {1, 2, 4}) {
      if (threads > cycle) continue;
      CHECK(Out(base + ", num_parallel_calls=" + std::to_string(threads) + ")") == sequential);
    }
    // Without determinism the order may change, never the elements.
    auto sloppy = Out(base + ", num_parallel_calls=" + std::to_string(std::min(cycle, 3)) +
                      ", deterministic=False)");
    auto sorted_seq = sequential;
    std::sort(sloppy.begin(), sloppy.end());
    std::sort(sorted_seq.begin(), sorted_seq.end());
    CHECK(sloppy == sorted_seq);
  }
}

TEST_CASE("list_files sorts byte-wise, shuffles as a full permutation, and needs a match") {
  Files f;
  for (const char* name : {"x.2", "x.10", "x.1"}) f.Add(name, {});
  const std::string pattern = f.dir() + "/x.*";
  CHECK(Out("list_files(\"" + pattern + "\", shuffle=False)") ==
        std::vector<std::string>{f.dir() + "/x.1", f.dir() + "/x.10", f.dir() + "/x.2"});
  auto shuffled = Out("list_files(\"" + pattern + "\", seed=4)");
  CHECK(shuffled.size() == 3);
  CHECK(std::set<std::string>(shuffled.begin(), shuffled.end()).size() == 3);
  CHECK(Out("list_files(\"" + pattern + "\", seed=4)") == shuffled);
  CHECK(Error("list_files(\"" + f.dir() + "/nope*\")") ==
        "column 1: list_files: No files matched pattern: " + f.dir() + "/nope*");
  // Several patterns: only none matching at all is an error (TensorFlow
  // asserts on the pooled matches), and a name matched twice is listed twice.
  CHECK(Out("list_files([\"" + f.dir() + "/nope*\", \"" + f.dir() + "/x.1*\", \"" + f.dir() +
            "/x.1\"], shuffle=False)") ==
        std::vector<std::string>{f.dir() + "/x.1", f.dir() + "/x.1", f.dir() + "/x.10"});
  CHECK(Error("list_files([\"" + f.dir() + "/nope*\", \"" + f.dir() + "/none\"])") ==
        "column 1: list_files: No files matched pattern: " + f.dir() + "/nope*, " + f.dir() +
            "/none");
  CHECK(Error("list_files([])") ==
        "column 1: list_files: no files match an empty list of patterns");
}

TEST_CASE("list_files lowers to the ops it stands for, which the builder builds") {
  Files f;
  for (const char* name : {"x.2", "x.10", "x.1"}) f.Add(name, {});
  const std::vector<std::string> sorted{f.dir() + "/x.1", f.dir() + "/x.10", f.dir() + "/x.2"};
  const std::string text = "  list_files(\"" + f.dir() + "/x.*\", seed=4)";
  Result<Pipeline> p = ParsePipeline(text);
  REQUIRE(p.ok());
  Result<std::vector<Op>> ops = LowerListFiles(p->ops[0], p->text);
  REQUIRE(ops.ok());
  REQUIRE(ops->size() == 2);
  const auto* names = std::get_if<FromTensorSlicesOp>(&(*ops)[0].params);
  REQUIRE(names != nullptr);
  CHECK(names->names == sorted);
  CHECK((*ops)[0].name == "list_files");
  CHECK((*ops)[0].pos == 2);
  const auto* shuffle = std::get_if<ShuffleOp>(&(*ops)[1].params);
  REQUIRE(shuffle != nullptr);
  CHECK(shuffle->buffer_size.value == 3);
  CHECK(shuffle->seed == std::optional<int64_t>(4));
  CHECK(shuffle->reshuffle_each_iteration);
  CHECK((*ops)[1].pos == 2);
  // The builder's list_files is these ops built.
  CHECK(Out(text) == Out("from_tensor_slices(" + List(sorted) + ").shuffle(3, seed=4)"));
  // shuffle=False: the sorted names alone.
  p = ParsePipeline("list_files(\"" + f.dir() + "/x.*\", shuffle=False)");
  REQUIRE(p.ok());
  ops = LowerListFiles(p->ops[0], p->text);
  REQUIRE(ops.ok());
  CHECK(ops->size() == 1);
}

TEST_CASE("list_files' error keeps its cause's code, at list_files' position") {
  Files f;
  // A folder that cannot be listed (a symbolic link loop) is a data error,
  // NotFound, not the pipeline's InvalidArgument.
  const std::string loop = f.dir() + "/loop";
  REQUIRE(symlink(loop.c_str(), loop.c_str()) == 0);
  const std::string text = "\n  list_files(\"" + loop + "/*\")";
  Result<Pipeline> p = ParsePipeline(text);
  REQUIRE(p.ok());
  const Op& op = p->ops[0];
  Result<std::vector<Op>> ops = LowerListFiles(op, p->text);
  REQUIRE_FALSE(ops.ok());
  CHECK(ops.status().code() == StatusCode::kNotFound);
  CHECK(ops.status().position() == std::optional<size_t>(3));
  CHECK(ops.status().message().starts_with("line 2, column 3: list_files: " + loop));
  // The builder's error is the same.
  Run r = Evaluate(text);
  CHECK(r.status == ops.status());
}

TEST_CASE("shard keeps positions p % n == i and checks its arguments") {
  CHECK(Out("range(10).shard(3, 1)") == Seq({"1", "4", "7"}));
  CHECK(Out("range(2).shard(3, 2)").empty());
  CHECK(Error("range(10).shard(0, 0)") ==
        "column 17: shard(): num_shards must be greater than zero; got 0");
  CHECK(Error("range(10).shard(2, 2)") ==
        "column 20: shard(): index must be in [0, num_shards); got index 2 for 2 shards");
  CHECK(Error("range(10).shard(2, -1)") ==
        "column 20: shard(): index must be in [0, num_shards); got index -1 for 2 shards");
}

TEST_CASE("batch emits a short last batch unless drop_remainder") {
  CHECK(Out("range(7).batch(3)") == Seq({"[0,1,2]", "[3,4,5]", "[6]"}));
  CHECK(Out("range(7).batch(3, drop_remainder=True)") == Seq({"[0,1,2]", "[3,4,5]"}));
  CHECK(Out("range(6).batch(3, True)") == Seq({"[0,1,2]", "[3,4,5]"}));
  CHECK(Out("range(0).batch(3)").empty());
  CHECK(Out("range(5).batch(2).batch(2)") == Seq({"[[0,1],[2,3]]", "[[4]]"}));
}

TEST_CASE("repeat, take and skip follow TensorFlow's edge cases") {
  CHECK(Out("range(3).repeat(2)") == Seq({"0", "1", "2", "0", "1", "2"}));
  CHECK(Out("range(3).repeat(0)").empty());
  CHECK(Out("range(0).repeat()").empty());  // repeat() of an empty dataset ends
  CHECK(Out("range(2).repeat().take(5)") == Seq({"0", "1", "0", "1", "0"}));
  CHECK(Out("range(2).repeat(-1).take(3)") == Seq({"0", "1", "0"}));
  CHECK(Out("range(4).take(-1)") == Seq({"0", "1", "2", "3"}));
  CHECK(Out("range(4).take(0)").empty());
  CHECK(Out("range(4).skip(-1)").empty());
  CHECK(Out("range(4).skip(3)") == Seq({"3"}));
  CHECK(Out("range(4).skip(9)").empty());
  // TensorFlow takes any count: below 0, repeat() is forever, take() is
  // everything and skip() skips everything (tfdist refused below -1).
  CHECK(Out("range(4).take(-2)") == Seq({"0", "1", "2", "3"}));
  CHECK(Out("range(4).skip(-7)").empty());
  CHECK(Out("range(2).repeat(-5).take(5)") == Seq({"0", "1", "0", "1", "0"}));
}

TEST_CASE("range takes stop, or start, stop and step, as Python's") {
  CHECK(Out("range(3)") == Seq({"0", "1", "2"}));
  CHECK(Out("range(2, 5)") == Seq({"2", "3", "4"}));
  CHECK(Out("range(5, 0, -2)") == Seq({"5", "3", "1"}));
  CHECK(Out("tf.data.Dataset.range(1, 2)") == Seq({"1"}));
  CHECK(Error("range(1, 5, 0)") == "column 13: range(): step must be a non-zero integer; got 0");
}

TEST_CASE("enumerate labels elements index:label") {
  CHECK(Out("range(3, 5).enumerate()") == Seq({"0:3", "1:4"}));
  CHECK(Out("range(2).enumerate(start=10)") == Seq({"10:0", "11:1"}));
  CHECK(Out("range(2).enumerate(-1)") == Seq({"-1:0", "0:1"}));
  // range(start, int64 max) ends the zip before the index would reach the max.
  CHECK(Out("range(5).enumerate(9223372036854775805)") ==
        Seq({"9223372036854775805:0", "9223372036854775806:1"}));
  CHECK(Out("range(5).enumerate(9223372036854775807)").empty());
  CHECK(Out("range(5).enumerate(9223372036854775806).repeat(2)") ==
        Seq({"9223372036854775806:0", "9223372036854775806:0"}));
}

TEST_CASE("shuffle is a seeded permutation, reshuffled per epoch unless told not to") {
  const auto a = Out("range(50).shuffle(10, seed=7)");
  CHECK(a == Out("range(50).shuffle(10, seed=7)"));
  CHECK(a != Out("range(50).shuffle(10, seed=8)"));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end(),
            [](auto& x, auto& y) { return std::stoi(x) < std::stoi(y); });
  CHECK(sorted == Out("range(50)"));
  const auto two = Out("range(20).shuffle(20, seed=1).repeat(2)");
  CHECK(std::vector<std::string>(two.begin(), two.begin() + 20) !=
        std::vector<std::string>(two.begin() + 20, two.end()));
  const auto same = Out("range(20).shuffle(20, seed=1, reshuffle_each_iteration=False).repeat(2)");
  CHECK(std::vector<std::string>(same.begin(), same.begin() + 20) ==
        std::vector<std::string>(same.begin() + 20, same.end()));
  // Without a seed, runs differ (the run's seed is random).
  BuildOptions r1, r2;
  r1.default_seed = 11;
  r2.default_seed = 12;
  CHECK(Out("range(50).shuffle(50)", r1) != Out("range(50).shuffle(50)", r2));
}

TEST_CASE("shuffle never holds more than buffer_size elements") {
  // The element output at position i was among the first i + buffer_size read.
  const auto out = Out("range(20000).shuffle(16, seed=3)");
  for (size_t i = 0; i < out.size(); ++i) {
    REQUIRE(std::stoll(out[i]) < static_cast<long long>(i + 16));
  }
}

// A dataset that counts how many elements its iterators produced.
class CountingDataset final : public Dataset {
 public:
  explicit CountingDataset(std::atomic<int64_t>* produced) : produced_(produced) {}
  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    class It final : public Iterator {
     public:
      explicit It(std::atomic<int64_t>* produced) : produced_(produced) {}
      Status GetNext(Element& out, bool& end) override {
        end = next_ >= 100000;
        if (!end) {
          out = Element::Int(next_++);
          ++*produced_;
        }
        return Status::OK();
      }

     private:
      std::atomic<int64_t>* produced_;
      int64_t next_ = 0;
    };
    return std::unique_ptr<Iterator>(std::make_unique<It>(produced_));
  }

 private:
  std::atomic<int64_t>* produced_;
};

}  // namespace

// Test access to the private stage factory (src/data/stages.h).
std::shared_ptr<const Dataset> NewPrefetchDataset(std::shared_ptr<const Dataset> input,
                                                  int64_t buffer_size);

namespace {

TEST_CASE("prefetch reads at most buffer_size elements ahead, in order") {
  std::atomic<int64_t> produced{0};
  auto ds = NewPrefetchDataset(std::make_shared<CountingDataset>(&produced), 8);
  auto it = ds->MakeIterator();
  REQUIRE(it.ok());
  Element e;
  for (int64_t consumed = 1; consumed <= 20000; ++consumed) {
    bool end = false;
    REQUIRE((*it)->GetNext(e, end).ok());
    REQUIRE(e.int_value() == consumed - 1);
    // Queue of 8, plus the one being produced.
    REQUIRE(produced.load() - consumed <= 9);
  }
  CHECK(Out("range(1000).prefetch(3)") == Out("range(1000)"));
  CHECK(Out("range(10).prefetch(AUTOTUNE)") == Out("range(10)"));
  CHECK(Out("range(10).prefetch(tf.data.AUTOTUNE)") == Out("range(10)"));
}

TEST_CASE("ctx.* names take the input context's values") {
  BuildOptions o;
  o.context = InputContext{4, 1, 8};
  CHECK(Out("range(10).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)", o) ==
        Seq({"1", "5", "9"}));
  CHECK(Out("range(8).batch(ctx.get_per_replica_batch_size(16))", o) ==
        Seq({"[0,1]", "[2,3]", "[4,5]", "[6,7]"}));
  CHECK(Error("range(8).batch(ctx.get_per_replica_batch_size(12))", o) ==
        "column 16: get_per_replica_batch_size(): the global batch size 12 is not divisible by "
        "num_replicas_in_sync 8");
  CHECK(
      Error("range(8).batch(input_context.num_replicas_in_sync)") ==
      "column 16: ctx.num_replicas_in_sync is only known inside distribute_datasets_from_function");
  CHECK(Evaluate("range(8).batch(ctx.num_replicas_in_sync)", {}).status.advice().remedy ==
        Remedy::kFromFunction);
}

TEST_CASE("SHARD_HINT is filled in only by the HINT policy") {
  CHECK(Error("range(8).shard(SHARD_HINT, SHARD_HINT)") ==
        "column 16: shard(): SHARD_HINT stands for the worker count and index only under the HINT "
        "auto-shard policy");
  CHECK(Evaluate("range(8).shard(SHARD_HINT, 0)", {}).status.advice().remedy ==
        Remedy::kHintPolicy);
  BuildOptions o;
  o.shard_hint = std::make_pair(int64_t{3}, int64_t{2});
  CHECK(Out("range(8).shard(tf.data.experimental.SHARD_HINT, SHARD_HINT)", o) == Seq({"2", "5"}));
}

TEST_CASE("HINT rewrites every shard(SHARD_HINT, i) to shard(W, w), ignoring i") {
  BuildOptions o;
  o.shard_hint = std::make_pair(int64_t{3}, int64_t{2});
  // auto_shard matches num_shards by its value, -1, and replaces both
  // arguments whatever the index says.
  CHECK(Out("range(8).shard(SHARD_HINT, 0)", o) == Seq({"2", "5"}));
  CHECK(Out("range(8).shard(SHARD_HINT, 7)", o) == Seq({"2", "5"}));
  CHECK(Out("range(8).shard(-1, 1)", o) == Seq({"2", "5"}));
  // Every such shard, and nothing else: a numbered shard stays as written.
  CHECK(Out("range(18).shard(SHARD_HINT, 0).shard(2, 1).shard(SHARD_HINT, 1)", o) == Seq({"17"}));
  // A numbered num_shards is not rewritten, so SHARD_HINT as its index
  // stays -1: out of range, whatever the policy.
  const std::string index =
      "column 19: shard(): index must be in [0, num_shards); got SHARD_HINT "
      "for 2 shards (the HINT policy fills in only shard(SHARD_HINT, ...))";
  CHECK(Error("range(8).shard(2, SHARD_HINT)", o) == index);
  CHECK(Error("range(8).shard(2, SHARD_HINT)") == index);
  CHECK(Evaluate("range(8).shard(2, SHARD_HINT)", o).status.advice().remedy == Remedy::kNone);
}

TEST_CASE("a HINT shard must not be empty: TensorFlow's error when 0 < elements < workers") {
  const std::string too_few =
      "column 10: shard(): Could not apply FILE based sharding: the "
      "dataset only has 2 file(s), which is not enough for the required "
      "3 shards/workers.";
  for (int64_t w = 0; w < 3; ++w) {
    CAPTURE(w);
    BuildOptions o;
    o.shard_hint = std::make_pair(int64_t{3}, w);
    const Run r = Evaluate("range(2).shard(SHARD_HINT, SHARD_HINT)", o);
    CHECK(r.status.message() == too_few);
    CHECK(r.status.advice().remedy == Remedy::kMoreFilesFewerWorkers);
    CHECK(r.status.position() == 9);
    // A worker that gets an element fails before giving it, as TensorFlow's
    // first GetNext does; the one that gets none fails at the end.
    CHECK(r.out.empty());
    // Enough elements, or none at all: no error.
    CHECK(Out("range(3).shard(SHARD_HINT, SHARD_HINT)", o) ==
          std::vector<std::string>{std::to_string(w)});
    CHECK(Out("range(7).shard(SHARD_HINT, 0)", o).size() == (w == 0 ? 3 : 2));
    CHECK(Out("range(0).shard(SHARD_HINT, SHARD_HINT)", o).empty());
    // Checked again on each pass of a repeat after it.
    CHECK(Evaluate("range(2).shard(SHARD_HINT, 0).repeat(2)", o).status.message() == too_few);
  }
  // A shard written with numbers is the user's: it may be empty.
  CHECK(Out("range(2).shard(3, 2)").empty());
  BuildOptions one;
  one.shard_hint = std::make_pair(int64_t{1}, int64_t{0});
  CHECK(Out("range(1).shard(SHARD_HINT, 0)", one) == Seq({"0"}));
}

TEST_CASE("records carry their origin; non-text payloads are labelled file:index") {
  Files f;
  const std::string path = f.Add("bin", {std::string("\xff\x01", 2), "ok"});
  CHECK(Out("tfrecord(\"" + path + "\")") == std::vector<std::string>{path + ":0", "ok"});
  const std::string bad = f.dir() + "/bad";
  std::string bytes = testing::ReadFile(path);
  bytes[20] ^= 1;
  testing::WriteFile(bad, bytes);
  Run r = Evaluate("tfrecord(\"" + bad + "\")");
  CHECK(r.status.code() == StatusCode::kDataLoss);
  CHECK(r.status.message().find("corrupted record at 18") != std::string::npos);
}

// An element as its id: "file:index@offset/size" (a record or a record id),
// then its label (LabelMode::kPayload); batches looked through.
std::string IdText(const Element& e) {
  if (e.kind == Element::Kind::kBatch) {
    std::string out = "[";
    for (const Element& item : e.items) out += IdText(item) + ",";
    return out + "]";
  }
  if (e.kind != Element::Kind::kRecord && e.kind != Element::Kind::kRecordId) return e.Label();
  return fmt::format("{}:{}@{}/{} {}", *e.origin.file, e.origin.index, e.origin.offset,
                     e.PayloadBytes(), e.Label());
}

// The elements of `expr` as IdText shows them, or the error that ends them.
std::vector<std::string> Ids(const std::string& expr, RecordIds record_ids) {
  BuildOptions options;
  options.default_seed = 1;
  options.cpus = 3;
  options.record_ids = record_ids;
  auto p = ParsePipeline(expr);
  REQUIRE(p.ok());
  auto ds = BuildDataset(*p, options);
  REQUIRE(ds.ok());
  auto it = (*ds)->MakeIterator();
  REQUIRE(it.ok());
  std::vector<std::string> out;
  for (;;) {
    Element e;
    bool end = false;
    Status s = (*it)->GetNext(e, end);
    if (!s.ok()) {
      out.push_back("error: " + s.ToString());
      break;
    }
    if (end) break;
    if (record_ids != RecordIds::kNone) {
      for (const Element* leaf = &e; leaf != nullptr;
           leaf = leaf->items.empty() ? nullptr : &leaf->items.front()) {
        CHECK(leaf->kind != Element::Kind::kRecord);  // no payload held
      }
    }
    out.push_back(IdText(e));
  }
  return out;
}

TEST_CASE("record ids: the records' origins, sizes and labels, read and checked as records are") {
  Files f;
  Rng rng(3);
  std::vector<std::string> names;
  for (int i = 0; i < 12; ++i) {
    std::vector<std::string> records;
    const uint64_t n = rng.Uniform(0, 40);
    for (uint64_t r = 0; r < n; ++r) {
      switch (rng.Uniform(0, 4)) {
        case 0:  // short text: its label
          records.push_back(fmt::format("f{}r{}", i, r));
          break;
        case 1:  // long text, across reading blocks: its first kLabelChars characters
          records.push_back(std::string(rng.Uniform(60, 200000), 'a') + "\xc3\xa9");
          break;
        case 2: {  // binary, of any size
          std::string b(rng.Uniform(0, 300000), '\0');
          for (char& c : b) c = static_cast<char>(rng.Next());
          records.push_back(b);
          break;
        }
        default:  // text, then a control character at the end
          records.push_back(std::string(rng.Uniform(0, 100000), 't') + "\n");
      }
    }
    names.push_back(f.Add(fmt::format("ids{:02}", i), records,
                          i % 4 == 3 ? io::Compression::kGzip : io::Compression::kNone));
  }
  // A damaged file last: a payload byte of its 3rd record, which only its CRC tells.
  const std::string good = f.Add("damaged", {"one", "two", std::string(70000, 'x'), "four"});
  std::string bytes = testing::ReadFile(good);
  bytes[2 * 19 + 12 + 500] ^= 1;
  const std::string damaged = f.dir() + "/damaged.bad";
  testing::WriteFile(damaged, bytes);
  for (bool with_damage : {false, true}) {
    std::vector<std::string> files = names;
    if (with_damage) files.push_back(damaged);
    for (const char* reader :
         {"interleave(tfrecord(compression_type=\"auto\"), cycle_length=3)",
          "interleave(tfrecord(compression_type=\"auto\"), cycle_length=3, num_parallel_calls=2)",
          "interleave(tfrecord(compression_type=\"auto\"), cycle_length=4, num_parallel_calls=3)"
          ".batch(5)"}) {
      CAPTURE(reader);
      CAPTURE(with_damage);
      const std::string expr = "from_tensor_slices(" + List(files) + ")." + reader;
      const std::vector<std::string> kept = Ids(expr, RecordIds::kNone);
      // Labels as layouts cut them: at kLabelChars characters.
      std::vector<std::string> want;
      for (const std::string& k : kept) {
        if (k.starts_with("error: ")) {
          want.push_back(k);
          continue;
        }
        std::string w;
        for (size_t at = 0; at < k.size();) {
          const size_t space = k.find(' ', at);
          if (space == std::string::npos) {
            w += k.substr(at);
            break;
          }
          w += k.substr(at, space + 1 - at);
          const size_t stop = std::min(k.find(',', space), k.size());
          const std::string label = k.substr(space + 1, stop - space - 1);
          // A payload's label, not a "file:index" one (the paths are absolute).
          w += label.starts_with('/') ? label : Abbreviate(label, kLabelChars);
          at = stop;
        }
        want.push_back(w);
      }
      const std::vector<std::string> labelled = Ids(expr, RecordIds::kLabelled);
      REQUIRE(labelled.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        const bool same = labelled[i] == want[i];
        CHECK_MESSAGE(same, i, ": ", Abbreviate(labelled[i], 300),
                      " != ", Abbreviate(want[i], 300));
      }
      // Without labels: "file:index" for every record.
      std::vector<std::string> ids = Ids(expr, RecordIds::kPlain);
      REQUIRE(ids.size() == kept.size());
      if (with_damage) {
        CHECK(kept.back().find("corrupted record at 50") != std::string::npos);
        CHECK(ids.back() == kept.back());
      }
    }
  }
}

// Runs `read` in a child process (its stderr discarded) and returns how it
// ended: -signal when a signal ended it, else its exit status.
template <typename Read>
int InChild(Read read) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    read();
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST_CASE("an element's number is read as what its kind says it is, and only so") {
  const Element i = Element::Int(-7);
  CHECK(i.int_value() == -7);
  Element pair;
  pair.kind = Element::Kind::kPair;
  pair.set_pair_index(3);
  pair.items.push_back(Element::Int(9));
  CHECK(pair.pair_index() == 3);
  CHECK(pair.Label() == "3:9");
  Element id;
  id.kind = Element::Kind::kRecordId;
  id.set_payload_size(uint64_t{5} << 32);
  CHECK(id.payload_size() == uint64_t{5} << 32);
  CHECK(id.PayloadBytes() == uint64_t{5} << 32);
#ifndef NDEBUG
  // Asking for another meaning is a bug that the assertions catch.
  CHECK(InChild([&] { (void)id.int_value(); }) == -SIGABRT);
  CHECK(InChild([&] { (void)i.payload_size(); }) == -SIGABRT);
  CHECK(InChild([&] { (void)i.pair_index(); }) == -SIGABRT);
  CHECK(InChild([&] { Element::Int(1).set_pair_index(2); }) == -SIGABRT);
  CHECK(InChild([&] { (void)pair.int_value(); }) == -SIGABRT);
  CHECK(InChild([&] { (void)i.int_value(); }) == 0);
#endif
}

TEST_CASE("a record label in pieces: printable payloads up to kLabelChars characters") {
  auto label = [](const std::string& payload, size_t piece) {
    RecordLabel l;
    for (size_t at = 0; at < payload.size(); at += piece) {
      l.Add(std::string_view(payload).substr(at, piece));
    }
    std::string out = "(none)";
    if (!l.Finish(out)) return std::string("(not printable)");
    return out;
  };
  const std::string e = "\xc3\xa9";  // one character of two bytes
  std::string sixty_four;
  for (size_t i = 0; i < kLabelChars; ++i) sixty_four += e;
  for (size_t piece : {size_t{1}, size_t{3}, size_t{1000}}) {
    CAPTURE(piece);
    CHECK(label("", piece) == "");
    CHECK(label("abc", piece) == "abc");
    CHECK(label(sixty_four, piece) == sixty_four);
    CHECK(label(sixty_four + "z", piece) == sixty_four + "...");
    CHECK(label(std::string(1 << 20, 'q'), piece) == std::string(kLabelChars, 'q') + "...");
    CHECK(label(std::string(300, 'q') + "\x01", piece) == "(not printable)");
    CHECK(label(std::string(300, 'q') + "\xc3", piece) == "(not printable)");
  }
  // Ready for the next payload after Finish.
  RecordLabel l;
  l.Add("\x01");
  std::string out;
  CHECK_FALSE(l.Finish(out));
  l.Add("next");
  CHECK(l.Finish(out));
  CHECK(out == "next");
}

TEST_CASE("expressions accept what TensorFlow users paste") {
  Files f;
  const std::string a = f.Add("a.gz", {"x", "y"}, io::Compression::kGzip);
  const std::string list = List({a});
  const auto want = Seq({"x", "y"});
  CHECK(Out("tf.data.TFRecordDataset(" + list + ", compression_type=\"GZIP\")") == want);
  CHECK(Out("tf.data.Dataset.from_tensor_slices(" + list +
            ").interleave(lambda f: tf.data.TFRecordDataset(f, compression_type='GZIP'), "
            "cycle_length=tf.data.AUTOTUNE, num_parallel_calls=tf.data.experimental.AUTOTUNE, "
            "deterministic=True)") == want);
  CHECK(Out("dataset = (\n  from_tensor_slices(" + list +
            ")  # the files\n"
            "  .flat_map(tfrecord(compression_type=\"GZIP\"))\n"
            "  .prefetch(2)\n)") == want);
  CHECK(Out("range(3) \\\n .take(2)") == Seq({"0", "1"}));
}

TEST_CASE("syntax and argument errors name the column and what was expected") {
  const std::pair<const char*, const char*> cases[] = {
      {"range(6).batch(4",
       "column 17: expected ',' or ')' in the arguments of batch(); got the end of the expression"},
      {"range(6).bach(4)",
       "column 10: unknown method 'bach'; expected shard, interleave, flat_map, shuffle, repeat, "
       "batch, padded_batch, unbatch, rebatch, take, skip, enumerate, prefetch, cache, map, "
       "filter, ignore_errors, apply, concatenate, group_by_window or "
       "bucket_by_sequence_length"},
      {"ranges(6)",
       "column 1: unknown source 'ranges'; expected list_files, from_tensor_slices, "
       "from_tensors, tfrecord or range"},
      {"range(6).batch()",
       "column 10: batch() takes batch_size (and optionally drop_remainder, num_parallel_calls, "
       "deterministic); got 0 arguments"},
      {"range(6).batch(4, drop=True)",
       "column 19: batch() has no argument 'drop'; batch() takes batch_size (and optionally "
       "drop_remainder, num_parallel_calls, deterministic)"},
      {"range(6).batch(batch_size=2, batch_size=3)", "column 30: batch() got batch_size twice"},
      {"range(6).batch(batch_size=2, True)",
       "column 30: a positional argument cannot follow a keyword argument"},
      {"range(6).batch(\"4\")", "column 16: expected an integer for batch_size; got \"4\""},
      {"range(6).batch(4, drop_remainder=1)",
       "column 34: expected True or False for drop_remainder; got 1"},
      {"range(6).shard(2, 0, 1)", "column 10: shard() takes num_shards and index; got 3 arguments"},
      {"range(6) batch(4)", "column 10: expected '.' and a method, or the end; got 'batch'"},
      {"range(6).", "column 10: expected a method name after '.'; got the end of the expression"},
      {"range(6).batch(4) $", "column 19: unexpected character '$'"},
      {"list_files('a)", "column 12: this string is not closed"},
      {"range(6).interleave(open)",
       "column 21: expected the reader function tfrecord (or tf.data.TFRecordDataset); got open"},
      {"range(6).interleave(lambda f: open(f))",
       "column 21: the lambda must read its argument as TFRecords: lambda f: "
       "tf.data.TFRecordDataset(f, ...)"},
      {"tfrecord(\"a\", compression_type=\"LZ4\")",
       "column 32: unknown compression 'LZ4'; expected one of \"\", none, GZIP, ZLIB, auto"},
      {"tfrecord('a', buffer_size=-7)",
       "column 27: tfrecord(): buffer_size must be at least 0; got -7"},
      {"tfrecord('a', '', -1)", "column 19: tfrecord(): buffer_size must be at least 0; got -1"},
      {"tfrecord('a', buffer_size='8M')",
       "column 27: expected an integer for buffer_size; got \"8M\""},
      {"range(6).interleave(lambda f: tf.data.TFRecordDataset(f, buffer_size=AUTOTUNE))",
       "column 70: tfrecord(): buffer_size must be at least 0; got AUTOTUNE"},
      {"range(6).flat_map(tfrecord(buffer_size=-2))",
       "column 40: tfrecord(): buffer_size must be at least 0; got -2"},
      {"tfrecord('a').map(parse)",
       "column 19: tfdist only supports map(parse_example(...)); got parse"},
      {"range(6)\n  .batch(0)",
       "line 2, column 10: batch(): batch_size must be greater than zero; got 0"},
      {"",
       "column 1: expected a source such as list_files(...), tfrecord(...) or range(...); got the "
       "end of the expression"},
  };
  for (auto [expr, message] : cases) {
    CHECK(Error(expr) == message);
  }
}

TEST_CASE("a chain of more than 1000 method calls is an error at the call past the limit") {
  // Each stage recurses into its input: 50,000 calls overflowed the stack.
  std::string chain = "range(3)";
  for (int i = 0; i < 1000; ++i) chain += ".batch(1)";
  CHECK(Out(chain).size() == 3);
  CHECK(Error(chain + ".prefetch(1)") ==
        fmt::format("column {}: a pipeline takes at most 1000 method calls after its source",
                    chain.size() + 2));
  std::string prefetches = "range(5)";
  for (int i = 0; i < 50000; ++i) prefetches += ".prefetch(1)";
  auto p = ParsePipeline(prefetches);
  CHECK(p.status().code() == StatusCode::kInvalidArgument);
  CHECK(p.status().position() == 8 + 1000 * 12 + 1);
  // A pipeline made in code, not parsed, is bounded as well.
  auto take = ParsePipeline("range(5).take(1)");
  REQUIRE(take.ok());
  take->ops.resize(2001, take->ops[1]);
  CHECK(BuildDataset(*take, {}).status().message() ==
        "the pipeline has 2001 stages; tfdist builds at most 2000");
}

TEST_CASE("tfrecord's buffer_size may be 0 or more, or None: it does not change the records") {
  Files f;
  const std::string a = f.Add("a", {"x", "y"});
  for (const char* size : {"None", "0", "1", "262144"}) {
    CHECK(Out(fmt::format("tfrecord(\"{}\", buffer_size={})", a, size)) == Seq({"x", "y"}));
    CHECK(Out(fmt::format("from_tensor_slices([\"{}\"]).flat_map(tfrecord(buffer_size={}))", a,
                          size)) == Seq({"x", "y"}));
  }
}

TEST_CASE("the error position points at the mistake, as data beside the message") {
  auto p = ParsePipeline("range(6).shard(2)");
  CHECK_FALSE(p.ok());
  CHECK(p.status().position() == 9);
  CHECK(p.status().message().starts_with("column 10: "));
  // Built: an argument the context fills in.
  auto ctx = ParsePipeline("range(6).batch(ctx.num_replicas_in_sync)");
  REQUIRE(ctx.ok());
  CHECK(BuildDataset(*ctx, {}).status().position() == 15);
  CHECK(DescribePosition("ab\ncd", 4) == "line 2, column 2");
}

}  // namespace
}  // namespace tfdist::data

namespace tfdist::data {
namespace {

// The features of the single map() of `expr`.
std::vector<data::FeatureSpec> MapFeatures(const std::string& expr, bool* single = nullptr) {
  auto p = ParsePipeline(expr);
  INFO(expr);
  INFO(p.status().ToString());
  REQUIRE(p.ok());
  for (const Op& op : p->ops) {
    if (const auto* m = std::get_if<MapOp>(&op.params)) {
      if (single != nullptr) *single = m->single_example;
      return m->features;
    }
  }
  FAIL("no map()");
  return {};
}

data::FeatureSpec Feature(std::string name, data::FeatureType type, std::vector<int64_t> shape,
                          std::optional<data::FeatureValues> dflt = std::nullopt) {
  return data::FeatureSpec{std::move(name), type, std::move(shape), std::move(dflt)};
}

TEST_CASE("map(parse_example) takes the feature dicts TensorFlow users write") {
  using data::FeatureType;
  const auto want = std::vector<data::FeatureSpec>{
      Feature("image/encoded", FeatureType::kBytes, {}),
      Feature("label", FeatureType::kInt64, {}, data::FeatureValues{{-1}, {}, {}}),
      Feature("bbox", FeatureType::kFloat, {2, 2}, data::FeatureValues{{}, {0, 0.5f, 1, -2}, {}}),
  };
  const std::string dict =
      "{'image/encoded': tf.io.FixedLenFeature([], tf.string),\n"
      " \"label\": tf.io.FixedLenFeature(shape=(), dtype=tf.int64, default_value=-1),\n"
      " 'bbox': FixedLenFeature((2, 2), tf.float32, [[0, .5], [1., -2e0]]),}";
  bool single = true;
  CHECK(MapFeatures("tfrecord('a').map(parse_example(" + dict + "))", &single) == want);
  CHECK_FALSE(single);
  CHECK(MapFeatures("tfrecord('a').map(lambda x: tf.io.parse_single_example(x, " + dict +
                        "), num_parallel_calls=tf.data.AUTOTUNE)",
                    &single) == want);
  CHECK(single);
  CHECK(MapFeatures("tfrecord('a').batch(8).map(lambda r: tf.io.parse_example(serialized=r, "
                    "features=" +
                    dict + "))") == want);
  CHECK(MapFeatures("tfrecord('a').map(tf.io.parse_single_example(features=" + dict + "))") ==
        want);
  // A flat default fills a [2, 2] shape, as TensorFlow reshapes it; an int
  // shape is one dimension; bytes defaults may be b"...".
  CHECK(MapFeatures("tfrecord('a').map(parse_example({'m': FixedLenFeature([2, 2], tf.int64, "
                    "default_value=[1, 2, 3, 4]), 's': FixedLenFeature(2, tf.string, "
                    "[b'x', \"\"])}))") ==
        std::vector<data::FeatureSpec>{
            Feature("m", FeatureType::kInt64, {2, 2}, data::FeatureValues{{1, 2, 3, 4}, {}, {}}),
            Feature("s", FeatureType::kBytes, {2}, data::FeatureValues{{}, {}, {"x", ""}})});
}

TEST_CASE("map(parse_example) takes VarLenFeatures beside FixedLenFeatures") {
  using data::FeatureType;
  auto var_len = [](std::string name, FeatureType type) {
    data::FeatureSpec s = Feature(std::move(name), type, {});
    s.var_len = true;
    return s;
  };
  const auto want = std::vector<data::FeatureSpec>{
      var_len("ids", FeatureType::kInt64),
      Feature("label", FeatureType::kInt64, {}, data::FeatureValues{{-1}, {}, {}}),
      var_len("weights", FeatureType::kFloat),
      var_len("tags", FeatureType::kBytes),
  };
  CHECK(MapFeatures("tfrecord('a').batch(4).map(lambda r: tf.io.parse_example(r, {\n"
                    "  'ids': tf.io.VarLenFeature(tf.int64),\n"
                    "  'label': tf.io.FixedLenFeature([], tf.int64, default_value=-1),\n"
                    "  'weights': tf.VarLenFeature(dtype=tf.float32),\n"
                    "  'tags': VarLenFeature(tf.string)}))") == want);
  // VarLen and FixedLen specs of the same name and dtype differ.
  CHECK_FALSE(var_len("x", FeatureType::kInt64) == Feature("x", FeatureType::kInt64, {}));
}

TEST_CASE("map(parse_example) errors name the column and the rule") {
  const std::string src = "tfrecord('a').map(";  // the function starts at column 19
  const std::pair<std::string, std::string> cases[] = {
      {"parse_example({'x': FixedLenFeature([], tf.float)}))",
       "column 59: feature 'x': unknown dtype tf.float (TensorFlow has no tf.float; use "
       "tf.float32)"},
      {"parse_example({'x': FixedLenFeature([], tf.int32)}))",
       "column 59: feature 'x': parse_example parses tf.int64, tf.float32 and tf.string; got "
       "tf.int32"},
      {"parse_example({'x': FixedLenFeature([None], tf.int64)}))",
       "column 56: feature 'x': a FixedLenFeature shape must be fully defined; got None"},
      {"parse_example({'x': FixedLenFeature([-2], tf.int64)}))",
       "column 56: feature 'x': dimensions must be non-negative; got -2"},
      {"parse_example({'x': FixedLenFeature('3', tf.int64)}))",
       "column 55: feature 'x': expected a shape such as [], [3] or (2, 2); got \"3\""},
      {"parse_example({'x': FixedLenFeature([3], tf.float32, 0.0)}))",
       "column 72: feature 'x': default_value has 1 value; shape [3] needs 3 (TensorFlow reshapes "
       "the default to the shape)"},
      {"parse_example({'x': FixedLenFeature([2], tf.int64, [1, 2.5])}))",
       "column 74: feature 'x': default_value for tf.int64 cannot hold 2.5"},
      {"parse_example({'x': FixedLenFeature([2, 2], tf.int64, [[1, 2], [3]])}))",
       "column 82: feature 'x': default_value is not rectangular (rows of 2 and 1 values)"},
      {"parse_example({'x': FixedLenFeature([], tf.int64), 'x': FixedLenFeature([], "
       "tf.int64)}))",
       "column 70: feature 'x' is declared twice"},
      {"parse_example({'x': tf.io.SparseFeature('i', 'v', tf.int64, 3)}))",
       "column 39: feature 'x': tfdist parses tf.io.FixedLenFeature and tf.io.VarLenFeature; got "
       "SparseFeature"},
      {"parse_example({'x': FixedLenSequenceFeature([], tf.int64)}))",
       "column 39: feature 'x': tfdist parses tf.io.FixedLenFeature and tf.io.VarLenFeature; got "
       "FixedLenSequenceFeature"},
      {"parse_example({'x': VarLenFeature(tf.bool)}))",
       "column 53: feature 'x': parse_example parses tf.int64, tf.float32 and tf.string; got "
       "tf.bool"},
      {"parse_example({'x': VarLenFeature()}))",
       "column 39: VarLenFeature() takes dtype; got 0 arguments"},
      {"parse_example({'x': FixedLenFeature([])}))",
       "column 39: FixedLenFeature() takes shape and dtype (and optionally default_value); got 1 "
       "argument"},
      {"parse_example({x: FixedLenFeature([], tf.int64)}))",
       "column 34: feature names are strings; got x"},
      {"parse_example({}))", "column 33: parse_example needs at least one feature"},
      {"parse_example(['x']))",
       "column 33: expected a dict of feature names to tf.io.FixedLenFeature(...); got a list"},
      {"lambda x: x + 1)", "column 31: unexpected character '+'"},
      {"lambda x: tf.io.decode_raw(x, tf.uint8))",
       "column 29: tfdist only supports map(parse_example(...)); the lambda computes "
       "tf.io.decode_raw(...)"},
      {"lambda x: tf.io.parse_example(y, {'a': FixedLenFeature([], tf.int64)}))",
       "column 49: the lambda must parse its argument: lambda x: tf.io.parse_example(x, {...})"},
      {"parse_example({'a' FixedLenFeature([], tf.int64)}))",
       "column 38: expected ':' after a dict key; got 'FixedLenFeature'"},
  };
  for (const auto& [fn, message] : cases) CHECK(Error(src + fn) == message);
  const std::string spec = "parse_example({'a': FixedLenFeature([], tf.int64)})";
  CHECK(Error("list_files('*').map(" + spec + ")") ==
        "column 17: map(parse_example) parses records; here the elements are file names; apply "
        "it after the reader (tfrecord, interleave or flat_map)");
  CHECK(Error("range(3).map(" + spec + ")") ==
        "column 10: map(parse_example) parses records; here the elements are integers from "
        "range()");
  CHECK(Error("tfrecord('a').enumerate().map(" + spec + ")") ==
        "column 27: map(parse_example) parses records; here the elements are (index, element) "
        "pairs from enumerate(); apply it before enumerate()");
  CHECK(Error("tfrecord('a').batch(2).map(parse_single_example({'a': FixedLenFeature([], "
              "tf.int64)}))") ==
        "column 24: parse_single_example parses one record, but after batch() each element is a "
        "batch; use parse_example");
  // A second map would parse dicts, as TensorFlow's would fail to.
  CHECK(Error("tfrecord('a').map(" + spec + ").map(" + spec + ")") ==
        "column 72: map(parse_example) parses records; here the elements are already parsed by an "
        "earlier map(parse_example); declare every feature in one");
}

TEST_CASE("literals: floats, negative numbers, tuples and dicts leave old syntax alone") {
  CHECK(Out("range(-3, 3, 2)") == Seq({"-3", "-1", "1"}));
  CHECK(Out("(range(2))") == Seq({"0", "1"}));
  CHECK(Out("range((4))") == Seq({"0", "1", "2", "3"}));
  CHECK(Error("range(1.5)") == "column 7: expected an integer for range; got 1.5");
  CHECK(Error("range(1e3)") == "column 7: expected an integer for range; got 1000");
  CHECK(Error("range(12abc)") == "column 7: '12abc' is not an integer tfdist can use");
  CHECK(Error("range((1, 2))") == "column 7: expected an integer for range; got a tuple");
  CHECK(Error("range({1: 2})") == "column 7: expected an integer for range; got a dict");
}

TEST_CASE("map(parse_example) passes records through: take and layout label them as before") {
  Files f;
  const std::string a = f.Add("a", {"a0", "a1", "a2"});
  const std::string b = f.Add("b", {"b0", "b1"});
  const std::string spec =
      ".map(lambda x: tf.io.parse_single_example(x, {'id': "
      "tf.io.FixedLenFeature([], tf.int64)}))";
  CHECK(Out("tfrecord(" + List({a, b}) + ")" + spec) == Seq({"a0", "a1", "a2", "b0", "b1"}));
  CHECK(Out("tfrecord(" + List({a, b}) + ")" + spec + ".batch(2)") ==
        Seq({"[a0,a1]", "[a2,b0]", "[b1]"}));
}

// TensorFlow's graph rewrites treat MapDataset as pass-through for
// auto-sharding (auto_shard.cc) but not for the static batch size
// (compute_batch_size_op.cc).
dist::Layout LayoutOf(const std::string& expr, int64_t workers, int64_t replicas) {
  auto p = ParsePipeline(expr);
  REQUIRE(p.ok());
  dist::DistributeOptions o;
  o.topology = {workers, replicas};
  BuildOptions b;
  b.default_seed = 7;
  b.cpus = 2;
  auto l = dist::PlanLayout(*p, o, b);
  INFO(l.status().ToString());
  REQUIRE(l.ok());
  return *l;
}

TEST_CASE("map() does not hide the files from FILE sharding (auto_shard passes MapDataset)") {
  Files f;
  const std::string files = List({f.Add("a", {"a0", "a1"}), f.Add("b", {"b0", "b1"})});
  const std::string map = ".map(parse_example({'x': FixedLenFeature([], tf.int64)}))";
  const dist::Layout l = LayoutOf("tfrecord(" + files + ")" + map + ".batch(2)", 2, 1);
  CHECK(l.decision.applied == dist::AutoShardPolicy::kFile);
  const dist::Layout after = LayoutOf("tfrecord(" + files + ").batch(2)" + map, 2, 1);
  CHECK(after.decision.applied == dist::AutoShardPolicy::kFile);
}

TEST_CASE("a layout's list_files pools the matches of its patterns, as TensorFlow's") {
  Files f;
  f.Add("a", {"a0", "a1"});
  f.Add("b", {"b0"});
  const std::string patterns = "['" + f.dir() + "/nope*', '" + f.dir() + "/[ab]']";
  const dist::Layout l = LayoutOf(
      "list_files(" + patterns + ", shuffle=False).interleave(tfrecord, cycle_length=1)", 1, 1);
  REQUIRE(l.workers.size() == 1);
  std::string seen;
  for (const auto& e : l.workers[0].elements) seen += e.Label() + " ";
  CHECK(seen == "a0 a1 b0 ");
  auto p = ParsePipeline("list_files(['" + f.dir() + "/nope*', '" + f.dir() + "/none'])");
  REQUIRE(p.ok());
  auto none = dist::PlanLayout(*p, dist::DistributeOptions(), BuildOptions());
  CHECK(none.status().message() == "column 1: list_files: No files matched pattern: " + f.dir() +
                                       "/nope*, " + f.dir() + "/none");
}

TEST_CASE("map() after batch() hides the static batch size (compute_batch_size stops at it)") {
  const std::string map = ".map(parse_example({'x': FixedLenFeature([], tf.int64)}))";
  Files f;
  const std::string files = List({f.Add("a", {"a0", "a1", "a2", "a3"})});
  const dist::Layout before = LayoutOf("tfrecord(" + files + ")" + map + ".batch(4)", 1, 2);
  CHECK(before.decision.split == dist::Split::kBatchSizes);
  CHECK(before.decision.global_batch_size == 4);
  const dist::Layout after = LayoutOf("tfrecord(" + files + ").batch(4)" + map, 1, 2);
  CHECK(after.decision.split == dist::Split::kLegacy);
  CHECK_FALSE(after.decision.global_batch_size.has_value());
  CHECK(after.decision.batched);
}

TEST_CASE("the parser survives arbitrary text: an error, never a crash") {
  const std::string valid =
      "list_files(['a*', \"b\"], shuffle=False).shard(2, 0).interleave(lambda f: "
      "tf.data.TFRecordDataset(f, compression_type='GZIP'), cycle_length=AUTOTUNE).batch(4)";
  Rng rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = valid;
    for (uint64_t i = 0, n = rng.Uniform(1, 6); i < n; ++i) {
      const size_t at = rng.Uniform(0, text.size() - 1);
      switch (rng.Uniform(0, 2)) {
        case 0:
          text[at] = static_cast<char>(rng.Uniform(0, 255));
          break;
        case 1:
          text.erase(at, 1);
          break;
        default:
          text.insert(at, 1, "()[],.=:'\"-x1 {}"[rng.Uniform(0, 16)]);
          break;
      }
    }
    auto p = ParsePipeline(text);
    if (!p.ok()) {
      CHECK(p.status().code() == StatusCode::kInvalidArgument);
      REQUIRE(p.status().position().has_value());
      CHECK(*p.status().position() <= text.size());
    }
  }
  const std::string deep = "range(3).batch(" + std::string(100000, '[') + ")";
  auto p = ParsePipeline(deep);
  CHECK(p.status().code() == StatusCode::kInvalidArgument);
  CHECK(p.status().message().find("nest more than 64 deep") != std::string::npos);
}

}  // namespace
}  // namespace tfdist::data
