// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Distribution: TensorFlow's batch sizes per worker, both splits, launcher
// environments, and properties over random topologies.

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include "file_index_internal.h"
#include "test_util.h"
#include "tfdist/distribute/launcher.h"
#include "tfdist/distribute/layout.h"
#include "tfdist/distribute/split.h"
#include "tfdist/io/directory_index.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/record_reader.h"
#include "tfdist/io/record_writer.h"
#include "tfdist/proto/synthetic.h"

namespace tfdist::dist {
namespace {

using Batches = std::vector<std::vector<data::Element>>;

Batches Ints(std::initializer_list<std::initializer_list<int64_t>> batches) {
  Batches out;
  for (auto b : batches) {
    out.emplace_back();
    for (int64_t v : b) out.back().push_back(data::Element::Int(v));
  }
  return out;
}

std::string Text(const Batches& batches) {
  std::string out;
  for (const auto& b : batches) out += testing::BatchLabels(b);
  return out;
}

TEST_CASE("batch_sizes_for_worker spreads the remainder and rotates by worker") {
  CHECK(BatchSizesForWorker(7, 2, 2, 0) == std::vector<int64_t>{2, 2, 2, 1});
  CHECK(BatchSizesForWorker(7, 2, 2, 1) == std::vector<int64_t>{2, 1, 2, 2});
  CHECK(BatchSizesForWorker(4, 1, 5, 0) == std::vector<int64_t>{1, 1, 1, 1, 0});
  CHECK(BatchSizesForWorker(3, 2, 1, 1) == std::vector<int64_t>{1, 2});
  CHECK(BatchSizesForWorker(8, 4, 1, 3) == std::vector<int64_t>{2, 2, 2, 2});
}

TEST_CASE("the batch-sizes split crosses batch boundaries, as RebatchDatasetV2 does") {
  // TensorFlow's docstring: range(8).batch(4).rebatch([2, 1, 1]).
  CHECK(Text(RebatchBySizes(Ints({{0, 1, 2, 3}, {4, 5, 6, 7}}), {2, 1, 1}, false)) ==
        "[0,1][2][3][4,5][6][7]");
  CHECK(Text(RebatchBySizes(Ints({{0, 1, 2}, {3, 4}}), {2, 1}, false)) == "[0,1][2][3,4]");
  CHECK(Text(RebatchBySizes(Ints({{0, 1, 2, 3}}), {1, 1, 1, 1, 0}, false)) == "[0][1][2][3][]");
  // A size of 0 gives an empty batch even when the input is used up; a size
  // > 0 that gets nothing ends the output.
  CHECK(Text(RebatchBySizes(Ints({{0, 1, 2}}), {1, 1, 1, 0}, false)) == "[0][1][2][]");
  CHECK(Text(RebatchBySizes(Ints({{0, 1, 2, 3, 4}}), {2, 2}, false)) == "[0,1][2,3][4]");
  CHECK(Text(RebatchBySizes(Ints({{0, 1, 2, 3, 4}}), {2, 2}, true)) == "[0,1][2,3]");
  CHECK(RebatchBySizes({}, {1, 1}, false).empty());
}

// RebatchDatasetV2 element by element: the reference for the splitter, which
// moves whole ranges and reuses the input batch for a piece that starts it.
Batches ReferenceRebatch(const Batches& batches, const std::vector<int64_t>& sizes, bool drop) {
  Batches out;
  if (std::none_of(sizes.begin(), sizes.end(), [](int64_t n) { return n > 0; })) return out;
  size_t index = 0;
  std::vector<data::Element> current;
  auto advance = [&] {
    while (static_cast<int64_t>(current.size()) >= sizes[index]) {
      out.push_back(std::move(current));
      current.clear();
      index = (index + 1) % sizes.size();
    }
  };
  advance();
  for (const auto& b : batches) {
    for (const auto& e : b) {
      current.push_back(e);
      advance();
    }
  }
  if (!current.empty() && !drop) out.push_back(std::move(current));
  return out;
}

TEST_CASE("the batch-sizes split equals the element-by-element rebatch on random input") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<int64_t> sizes(1 + rng() % 5);
    for (auto& n : sizes) n = static_cast<int64_t>(rng() % 5);
    Batches batches(rng() % 6);
    int64_t next = 0;
    for (auto& b : batches) {
      const size_t n = rng() % 9;
      for (size_t i = 0; i < n; ++i) b.push_back(data::Element::Int(next++));
    }
    const bool drop = rng() % 2 == 0;
    CAPTURE(trial);
    CHECK(Text(RebatchBySizes(batches, sizes, drop)) ==
          Text(ReferenceRebatch(batches, sizes, drop)));
  }
}

TEST_CASE("the legacy split makes n pieces of ceil(b / n) per batch, never crossing") {
  CHECK(Text(RebatchLegacy(Ints({{0, 1, 2, 3}, {4, 5}}), 2)) == "[0,1][2,3][4][5]");
  CHECK(Text(RebatchLegacy(Ints({{0, 1, 2, 3}}), 3)) == "[0,1][2,3][]");
  CHECK(Text(RebatchLegacy(Ints({{8}}), 4)) == "[8][][][]");
}

TEST_CASE("launchers give the worker index and count; TF_CONFIG puts the chief first") {
  auto env = [](std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  auto t = TopologyFromEnvironment(env(
      {{"TF_CONFIG",
        R"({"cluster": {"chief": ["h0:1"], "worker": ["h1:1", "h2:1"]}, "task": {"type": "worker", "index": 1}})"}}));
  REQUIRE(t.ok());
  CHECK(t->workers == 3);
  CHECK(t->worker == 2);
  CHECK(t->source == "TF_CONFIG");
  t = TopologyFromEnvironment(env({{"OMPI_COMM_WORLD_RANK", "3"},
                                   {"OMPI_COMM_WORLD_SIZE", "4"},
                                   {"SLURM_PROCID", "0"},
                                   {"SLURM_NTASKS", "1"}}));
  REQUIRE(t.ok());
  CHECK(t->worker == 3);
  CHECK(t->source == "Open MPI");
  t = TopologyFromEnvironment(env({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}}));
  CHECK(t->source == "Slurm");
  t = TopologyFromEnvironment(env({{"RANK", "0"}, {"WORLD_SIZE", "8"}}));
  CHECK(t->workers == 8);
  CHECK(TopologyFromEnvironment(env({}))->source.empty());
  CHECK(TopologyFromEnvironment(env({{"RANK", "8"}, {"WORLD_SIZE", "8"}})).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(TopologyFromEnvironment(env({{"RANK", "x"}, {"WORLD_SIZE", "8"}})).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(TopologyFromEnvironment(env({{"RANK", "1"}})).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(TopologyFromEnvironment(env({{"TF_CONFIG", "{"}})).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(TopologyFromEnvironment(
            env({{"TF_CONFIG",
                  R"({"cluster": {"worker": ["a"]}, "task": {"type": "ps", "index": 0}})"}}))
            .status()
            .code() == StatusCode::kInvalidArgument);
}

struct Plan {
  Status status;
  Layout layout;
};

Plan PlanOf(const std::string& expr, int64_t workers, int64_t replicas, AutoShardPolicy policy,
            Split split = Split::kAuto) {
  Plan plan;
  auto p = data::ParsePipeline(expr);
  REQUIRE(p.ok());
  DistributeOptions o;
  o.topology = {workers, replicas};
  o.policy = policy;
  o.split = split;
  data::BuildOptions b;
  b.default_seed = 7;
  b.cpus = 2;
  auto l = PlanLayout(*p, o, b);
  plan.status = l.status();
  if (l.ok()) plan.layout = std::move(*l);
  return plan;
}

// The batches of worker 0's replicas, step by step.
std::string StepsText(const Layout& l) {
  std::string out;
  for (const Step& s : l.steps) {
    for (const ReplicaBatch& b : s.batches) out += testing::BatchLabels(b.elements);
  }
  return out;
}

TEST_CASE("one replica in sync gets the pipeline's own batches, whatever the policy and split") {
  // batch(4).repeat(2) makes a short batch mid-stream: a batch-sizes split
  // would carry elements across it, which tf.distribute never does for N = 1.
  const std::string expr = "range(6).batch(4).repeat(2)";
  for (AutoShardPolicy policy :
       {AutoShardPolicy::kAuto, AutoShardPolicy::kData, AutoShardPolicy::kOff}) {
    for (Split split : {Split::kAuto, Split::kBatchSizes, Split::kLegacy, Split::kNone}) {
      CAPTURE(PolicyName(policy));
      CAPTURE(SplitName(split));
      const Plan plan = PlanOf(expr, 1, 1, policy, split);
      REQUIRE(plan.status.ok());
      CHECK(plan.layout.decision.split == Split::kNone);
      CHECK(plan.layout.decision.warnings.empty());
      CHECK(StepsText(plan.layout) == "[0,1,2,3][4,5][0,1,2,3][4,5]");
    }
  }
}

TEST_CASE("HINT: each worker's shard(SHARD_HINT, i) is shard(W, w), and must not be empty") {
  // The index written is ignored: every worker gets its own share.
  const Plan two = PlanOf("range(6).shard(SHARD_HINT, 0)", 2, 1, AutoShardPolicy::kHint);
  REQUIRE(two.status.ok());
  CHECK(two.layout.decision.applied == AutoShardPolicy::kHint);
  REQUIRE(two.layout.workers.size() == 2);
  CHECK(testing::BatchLabels(two.layout.workers[0].elements) == "[0,2,4]");
  CHECK(testing::BatchLabels(two.layout.workers[1].elements) == "[1,3,5]");
  // Fewer elements than workers: TensorFlow's require_non_empty error, for
  // the whole layout and for any one worker.
  const Plan three = PlanOf("range(2).shard(SHARD_HINT, 0)", 3, 1, AutoShardPolicy::kHint);
  CHECK(three.status.code() == StatusCode::kInvalidArgument);
  CHECK(three.status.message().find("Could not apply FILE based sharding: the dataset only has 2 "
                                    "file(s), which is not enough for the required 3 "
                                    "shards/workers.") != std::string::npos);
  for (int64_t w = 0; w < 3; ++w) {
    auto p = data::ParsePipeline("range(2).shard(SHARD_HINT, 0)");
    REQUIRE(p.ok());
    DistributeOptions o;
    o.topology = {3, 1};
    o.policy = AutoShardPolicy::kHint;
    o.worker = w;
    CHECK(PlanLayout(*p, o, data::BuildOptions()).status().advice().remedy ==
          Remedy::kMoreFilesFewerWorkers);
  }
}

TEST_CASE("an endless pipeline needs max_steps; with it, any number of steps streams") {
  DistributeOptions o;
  o.topology = {2, 2};
  data::BuildOptions b;
  b.cpus = 2;
  auto p = data::ParsePipeline("range(5).repeat().batch(2)");
  REQUIRE(p.ok());
  // Without max_steps: an error before any work, at the repeat().
  Result<LayoutSummary> s = SummarizeLayout(*p, o, b);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kInvalidArgument);
  CHECK(s.status().position() == p->text.find("repeat"));
  CHECK(s.status().advice().remedy == Remedy::kPlanSteps);
  // take() after the repeat ends it; repeat(3) never was endless.
  for (const char* finite : {"range(5).repeat().take(7).batch(2)", "range(5).repeat(3).batch(2)"}) {
    auto q = data::ParsePipeline(finite);
    REQUIRE(q.ok());
    CHECK_MESSAGE(SummarizeLayout(*q, o, b).ok(), finite);
  }
  // With max_steps: exactly that many steps, however many (the plan is not
  // kept: layout --steps 1073741824 once grew to gigabytes).
  o.max_steps = 50'000;
  s = SummarizeLayout(*p, o, b);
  REQUIRE_MESSAGE(s.ok(), s.status().ToString());
  CHECK(s->steps == 50'000);
  CHECK_FALSE(s->complete);
  uint64_t records = 0;
  for (const WorkerSummary& r : s->workers) records += r.records;
  CHECK(records == 50'000 * 2);  // DATA: each step is one global batch of 2
  // A finite pipeline with more steps than it has data: all of it.
  p = data::ParsePipeline("range(5).batch(2)");
  REQUIRE(p.ok());
  Result<Layout> l = PlanLayout(*p, o, b);
  REQUIRE_MESSAGE(l.ok(), l.status().ToString());
}

// Every element delivered, counted by label (padding and dropped steps excluded).
std::map<std::string, int> Delivered(const Layout& l) {
  std::map<std::string, int> seen;
  for (const Step& s : l.steps) {
    if (s.dropped) continue;
    for (const ReplicaBatch& b : s.batches) {
      for (const auto& e : b.elements) ++seen[e.Label()];
    }
  }
  return seen;
}

TEST_CASE("over random topologies: nothing lost or doubled, steps within G, OFF copies W times") {
  testing::TempDir dir;
  Rng rng(31);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t W = static_cast<int64_t>(rng.Uniform(1, 5));
    const int64_t R = static_cast<int64_t>(rng.Uniform(1, 4));
    const int64_t G = static_cast<int64_t>(rng.Uniform(1, 13));
    const bool drop = rng.Uniform(0, 3) == 0;
    const size_t num_files = static_cast<size_t>(W) + rng.Uniform(0, 4);
    std::vector<std::string> files;
    std::map<std::string, int> all;
    for (size_t f = 0; f < num_files; ++f) {
      const std::string path = dir.File(fmt::format("t{}f{}", trial, f));
      auto w = io::RecordWriter::Open(path, {});
      REQUIRE(w.ok());
      const uint64_t n = rng.Uniform(0, 20);
      for (uint64_t r = 0; r < n; ++r) {
        const std::string rec = fmt::format("f{}r{}", f, r);
        REQUIRE((*w)->Write(rec).ok());
        ++all[rec];
      }
      REQUIRE((*w)->Close().ok());
      files.push_back(path);
    }
    std::string list;
    for (const auto& f : files) list += (list.empty() ? "\"" : ", \"") + f + "\"";
    const std::string expr =
        fmt::format("tfrecord([{}]).batch({}{})", list, G, drop ? ", drop_remainder=True" : "");
    CAPTURE(expr);
    CAPTURE(W);
    CAPTURE(R);
    for (AutoShardPolicy policy :
         {AutoShardPolicy::kFile, AutoShardPolicy::kData, AutoShardPolicy::kOff}) {
      CAPTURE(PolicyName(policy));
      Plan plan = PlanOf(expr, W, R, policy);
      const size_t total = [&] {
        size_t n = 0;
        for (auto& [k, v] : all) n += v;
        return n;
      }();
      if (!plan.status.ok()) {
        // Only DATA with fewer pieces than workers may refuse.
        CHECK(policy == AutoShardPolicy::kData);
        CHECK(plan.status.message().find("DATA sharding needs") != std::string::npos);
        continue;
      }
      const Layout& l = plan.layout;
      for (const Step& s : l.steps) {
        size_t n = 0;
        for (const auto& b : s.batches) n += b.elements.size();
        CHECK(n <= static_cast<size_t>(G));
        CHECK(s.batches.size() == static_cast<size_t>(W * R));
      }
      const auto seen = Delivered(l);
      const int copies = policy == AutoShardPolicy::kOff ? static_cast<int>(W) : 1;
      for (const auto& [label, count] : seen) {
        CHECK(all.count(label) == 1);
        CHECK(count == copies);
      }
      if (!drop) {
        size_t n = 0;
        for (const auto& [label, count] : seen) n += static_cast<size_t>(count);
        CHECK(n == total * static_cast<size_t>(copies));
      }
    }
  }
}

TEST_CASE(
    "FILE sharding moves a list_files shuffle after the shard: each worker's files are fixed") {
  testing::TempDir dir;
  for (int f = 0; f < 6; ++f) {
    auto w = io::RecordWriter::Open(dir.File(fmt::format("s{}", f)), {});
    REQUIRE(w.ok());
    REQUIRE((*w)->Write(fmt::format("s{}", f)).ok());
    REQUIRE((*w)->Close().ok());
  }
  const std::string expr =
      fmt::format("list_files(\"{}/s*\").interleave(tfrecord, cycle_length=1)", dir.path());
  Plan a = PlanOf(expr, 3, 1, AutoShardPolicy::kAuto);
  REQUIRE(a.status.ok());
  CHECK(a.layout.decision.applied == AutoShardPolicy::kFile);
  for (int64_t w = 0; w < 3; ++w) {
    auto files = a.layout.workers[static_cast<size_t>(w)].files;
    std::sort(files.begin(), files.end());
    CHECK(files == std::vector<std::string>{dir.File(fmt::format("s{}", w)),
                                            dir.File(fmt::format("s{}", w + 3))});
  }
}

TEST_CASE("non-file pipelines and hidden readers cannot be FILE-sharded; one worker can") {
  Plan p = PlanOf("range(8).batch(2)", 2, 1, AutoShardPolicy::kFile);
  CHECK(p.status.message() ==
        "FILE sharding cannot apply: the pipeline reads no files (range() is not file-based)");
  CHECK(p.status.advice().remedy == Remedy::kDataPolicy);
  Plan one = PlanOf("range(8).batch(2)", 1, 2, AutoShardPolicy::kFile);
  REQUIRE(one.status.ok());
  CHECK(one.layout.decision.split == Split::kBatchSizes);
  Plan empty = PlanOf("tfrecord([]).batch(2)", 3, 1, AutoShardPolicy::kFile);
  REQUIRE(empty.status.ok());
  // Zero file names: nobody reads anything. (A worker whose first batch size
  // is 0 still emits that empty batch, as RebatchDatasetV2 does.)
  CHECK(Delivered(empty.layout).empty());
}

}  // namespace
}  // namespace tfdist::dist

namespace tfdist::dist {
namespace {

// The counts of two summaries; with `drops`, also what each says was dropped
// and the warnings (a collected Layout knows neither).
void CheckSame(const LayoutSummary& a, const LayoutSummary& b, bool drops) {
  CHECK(a.steps == b.steps);
  CHECK(a.short_steps == b.short_steps);
  if (drops) CHECK(a.decision.warnings == b.decision.warnings);
  CHECK(a.decision.split == b.decision.split);
  REQUIRE(a.workers.size() == b.workers.size());
  for (size_t w = 0; w < a.workers.size(); ++w) {
    CAPTURE(w);
    const WorkerSummary &x = a.workers[w], &y = b.workers[w];
    CHECK(x.files == y.files);
    CHECK(x.records == y.records);
    if (!a.bytes_estimated && !b.bytes_estimated) CHECK(x.bytes == y.bytes);
    CHECK(x.batches == y.batches);
    CHECK(x.empty_batches == y.empty_batches);
    CHECK(x.idle_steps == y.idle_steps);
    CHECK(x.smallest_batch == y.smallest_batch);
    CHECK(x.largest_batch == y.largest_batch);
    if (drops) CHECK(x.dropped() == y.dropped());
  }
}

TEST_CASE("the FILE summary from record counts equals the summary of the full layout") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  Rng rng(77);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t W = static_cast<int64_t>(rng.Uniform(1, 5));
    const int64_t R = static_cast<int64_t>(rng.Uniform(1, 3));
    const int64_t G = static_cast<int64_t>(rng.Uniform(1, 9));
    const size_t num_files = static_cast<size_t>(W) + rng.Uniform(0, 5);
    std::vector<std::string> files;
    for (size_t f = 0; f < num_files; ++f) {
      const std::string path = dir.File(fmt::format("u{}f{:02}", trial, f));
      auto w = io::RecordWriter::Open(path, {});
      REQUIRE(w.ok());
      for (uint64_t r = 0, n = rng.Uniform(0, 25); r < n; ++r) {
        REQUIRE((*w)->Write(std::string(rng.Uniform(0, 9), 'x')).ok());
      }
      REQUIRE((*w)->Close().ok());
      files.push_back(path);
    }
    // Every other trial counts records from a directory index (written after
    // the files, so the earlier trials' files are listed too), and every
    // fourth changes a file after it, so that its entry is stale.
    const bool indexed = trial % 2 == 1, stale = trial % 4 == 3;
    if (indexed) {
      REQUIRE(io::WriteDirectoryIndex(dir.path(), true).ok());
      if (stale) {
        auto w = io::RecordWriter::Open(files[0], {io::Compression::kNone, -1, true, false});
        REQUIRE(w.ok());
        for (uint64_t r = 0, n = rng.Uniform(1, 25); r < n; ++r) REQUIRE((*w)->Write("yy").ok());
        REQUIRE((*w)->Close().ok());
      }
    }
    uint64_t total_records = 0;
    for (const std::string& f : files) {
      auto r = io::RecordReader::Open(f, {});
      REQUIRE(r.ok());
      std::string_view record;
      while ((*r)->ReadRecord(record)) ++total_records;
    }
    const bool drop = rng.Uniform(0, 2) == 0;
    // Stages that give an element for each they take, which the counts go
    // through: before the shuffle, between it and the batch, after the batch.
    static constexpr const char* kParse =
        "map(parse_example({\"x\": tf.io.VarLenFeature(tf.int64)}))";
    const std::string stages[][3] = {
        {"", "", ""},
        {".map(opaque(\"f\"))", "", ".prefetch(2)"},
        {"", ".cache()", fmt::format(".{}", kParse)},
        {fmt::format(".{}", kParse), ".prefetch(1)", ""},
        {"", "", ".map(opaque(\"g\"), num_parallel_calls=2).prefetch(1)"},
    };
    const auto& [before, between, after] = stages[trial % 5];
    const std::string expr = fmt::format(
        "list_files(\"{}/u{}f*\").interleave(tfrecord, "
        "cycle_length=2){}.shuffle(5){}.batch({}{}){}",
        dir.path(), trial, before, between, G, drop ? ", drop_remainder=True" : "", after);
    for (Split split : {Split::kAuto, Split::kLegacy, Split::kNone}) {
      CAPTURE(expr);
      CAPTURE(W);
      CAPTURE(R);
      CAPTURE(SplitName(split));
      auto p = data::ParsePipeline(expr);
      REQUIRE(p.ok());
      DistributeOptions o;
      o.topology = {W, R};
      o.split = split;
      data::BuildOptions b;
      b.default_seed = 3;
      auto fast = SummarizeFiles(*p, o, b);
      REQUIRE(fast.ok());
      auto streamed = SummarizeLayout(*p, o, b);
      REQUIRE(streamed.ok());
      if (fast->has_value()) {
        auto full = PlanLayout(*p, o, b);
        REQUIRE(full.ok());
        CheckSame(**fast, Summarize(*full), false);
        CheckSame(**fast, *streamed, true);
      } else {
        // One worker with static batches may drop its last step (DropsShortStep).
        CHECK((W == 1 && drop));
      }
      // Every record read is received or dropped, and FILE reads each once.
      CHECK(streamed->DistinctRecords() == total_records);
      uint64_t received = 0;
      for (const WorkerSummary& r : streamed->workers) received += r.records;
      CHECK(received + streamed->DroppedRecords() == total_records);
      if (indexed && fast->has_value()) {
        // The folder's names come from the index too, unless the file was
        // rewritten (a new file renamed over it changes the folder).
        const size_t n = files.size() - (stale ? 1 : 0);
        CHECK((*fast)->records_source ==
              fmt::format("{} file{} from .tfdist-index, 0 from index files, {} by scanning{}", n,
                          n == 1 ? "" : "s", stale ? 1 : 0,
                          stale ? "; 1 stale .tfdist-index entry ignored"
                                : "; folder names from its .tfdist-index"));
      }
    }
  }
}

TEST_CASE("the FILE summary takes record counts from up-to-date index files") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  std::vector<std::string> payloads = {"a", "", "hello", std::string(300, 'z')};
  for (int f = 0; f < 2; ++f) {
    const std::string path = dir.File(fmt::format("x{}", f));
    auto w = io::RecordWriter::Open(path, {});
    REQUIRE(w.ok());
    for (const auto& r : payloads) REQUIRE((*w)->Write(r).ok());
    REQUIRE((*w)->Close().ok());
  }
  testing::WriteFile(dir.File("x0.idx"), testing::DaliIndex(payloads));
  REQUIRE(io::StampIndex(dir.File("x0")).ok());
  testing::WriteFile(dir.File("x1.idx"), "0 17\n");  // describes another file: ignored
  REQUIRE(io::StampIndex(dir.File("x1")).ok());
  auto p = data::ParsePipeline(
      fmt::format("list_files(\"{}/x?\").interleave(tfrecord).batch(2)", dir.path()));
  REQUIRE(p.ok());
  DistributeOptions o;
  o.topology = {2, 1};
  auto s = SummarizeFiles(*p, o, {});
  REQUIRE(s.ok());
  REQUIRE(s->has_value());
  CHECK((*s)->records_source == "1 file from index files, 1 by scanning");
  CHECK((*s)->workers[0].records == 4);
  CHECK((*s)->workers[0].bytes == 306);
  CHECK((*s)->workers[1].records == 4);
}

TEST_CASE("the FILE summary declines pipelines whose counts need the data, and names the stage") {
  testing::TempDir dir;
  for (const char* name : {"a", "b"}) testing::WriteFile(dir.File(name), testing::Frame({"r"}));
  const std::string files = fmt::format("tfrecord([\"{0}/a\", \"{0}/b\"])", dir.path());
  // The tail after the reader, the op blamed (its last occurrence) and why.
  const std::string declined[][3] = {
      {".take(3).batch(2)", "take", "take() (column {}) changes the number of elements"},
      {".batch(2).filter(ok)", "filter",
       "filter(ok) (column {}) keeps the records its predicate picks, which record counts cannot "
       "tell"},
      {".repeat(2).batch(2)", "repeat", "repeat() (column {}) changes the number of elements"},
      {".batch(2).rebatch(1)", "rebatch", "rebatch() (column {}) changes the number"},
      {".batch(2).batch(1)", "batch", "batch() (column {}) changes the number of elements"},
      {".batch(2).skip(1)", "skip", "skip() (column {}) changes the number of elements"},
  };
  for (const auto& [tail, op, why] : declined) {
    CAPTURE(tail);
    const std::string expr = files + tail;
    auto p = data::ParsePipeline(expr);
    REQUIRE(p.ok());
    DistributeOptions o;
    o.topology = {2, 1};
    std::string why_run;
    auto s = SummarizeFiles(*p, o, {}, nullptr, &why_run);
    REQUIRE(s.ok());
    CHECK_FALSE(s->has_value());
    CHECK(why_run.rfind(fmt::format(fmt::runtime(why), expr.rfind(op) + 1), 0) == 0);
    // Where the summary would not apply anyway (DATA), no stage is blamed.
    o.policy = AutoShardPolicy::kData;
    why_run.clear();
    s = SummarizeFiles(*p, o, {}, nullptr, &why_run);
    REQUIRE(s.ok());
    CHECK_FALSE(s->has_value());
    CHECK(why_run.empty());
  }
}

TEST_CASE("every record read is received or dropped, under DATA and OFF; streamed = collected") {
  Rng rng(2027);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t W = static_cast<int64_t>(rng.Uniform(1, 5));
    const int64_t R = static_cast<int64_t>(rng.Uniform(1, 4));
    const int64_t n = static_cast<int64_t>(rng.Uniform(0, 60));
    const int64_t G = static_cast<int64_t>(rng.Uniform(1, 12));
    const int64_t skip = static_cast<int64_t>(rng.Uniform(0, 3)) == 0 ? 0 : rng.Uniform(0, 10);
    const bool drop = rng.Uniform(0, 2) == 0;
    const std::string expr =
        fmt::format("range({}){}.batch({}{})", n, skip ? fmt::format(".skip({})", skip) : "", G,
                    drop ? ", drop_remainder=True" : "");
    auto p = data::ParsePipeline(expr);
    REQUIRE(p.ok());
    for (AutoShardPolicy policy : {AutoShardPolicy::kData, AutoShardPolicy::kOff}) {
      CAPTURE(expr);
      CAPTURE(W);
      CAPTURE(R);
      CAPTURE(PolicyName(policy));
      DistributeOptions o;
      o.policy = policy;
      o.topology = {W, R};
      data::BuildOptions b;
      b.cpus = 2;
      auto streamed = SummarizeLayout(*p, o, b);
      auto full = PlanLayout(*p, o, b);
      REQUIRE(streamed.ok() == full.ok());
      if (!streamed.ok()) {
        // DATA with fewer pieces than workers.
        CHECK(streamed.status().message().find("DATA sharding needs") != std::string::npos);
        continue;
      }
      CheckSame(*streamed, Summarize(*full), false);
      const int64_t read = std::max<int64_t>(n - skip, 0);
      const WorkerSummary& first = streamed->workers.front();
      CHECK(first.skipped == static_cast<uint64_t>(std::min(n, skip)));
      CHECK(first.dropped_remainder == (drop ? static_cast<uint64_t>(read % G) : 0));
      CHECK(streamed->DistinctRecords() == static_cast<uint64_t>(n));
      uint64_t received = 0;
      for (const WorkerSummary& r : streamed->workers) {
        received += r.records;
        // Every worker runs the whole pipeline: the same records dropped.
        CHECK(r.dropped_remainder == first.dropped_remainder);
        CHECK(r.skipped == first.skipped);
        if (W > 1 && policy == AutoShardPolicy::kOff) {
          CHECK(r.records + r.dropped() == static_cast<uint64_t>(n));
        }
      }
      if (W == 1 || policy == AutoShardPolicy::kData) {
        CHECK(received + streamed->DroppedRecords() == static_cast<uint64_t>(n));
      }
      const bool warned = streamed->decision.HasWarning(WarningKind::kRecordsDropped) ||
                          streamed->decision.HasWarning(WarningKind::kNoSteps);
      CHECK(warned == (streamed->DroppedRecords() > 0));
      CHECK(streamed->decision.HasWarning(WarningKind::kNoSteps) ==
            (streamed->DroppedRecords() > 0 && received == 0));
    }
  }
}

}  // namespace
}  // namespace tfdist::dist
