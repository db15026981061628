// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist check's findings over real files: each kind where its condition
// holds, its severity as the loop, strategy and version raise it, and the
// conditions a layout fails on (too few files, a pipeline without end)
// turned into findings.

#include "tfdist/distribute/check.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>

#include "test_util.h"
#include "tfdist/distribute/decide.h"
#include "tfdist/distribute/steps.h"
#include "tfdist/io/record_writer.h"

namespace tfdist::dist {
namespace {

// Files of `counts` records each in `dir`, named f0, f1, ...; their list
// as the pipeline's source text.
std::string WriteFiles(const testing::TempDir& dir, const std::vector<int>& counts) {
  std::string names;
  for (size_t f = 0; f < counts.size(); ++f) {
    const std::string path = dir.File(fmt::format("f{}", f));
    auto w = io::RecordWriter::Open(path, {});
    REQUIRE(w.ok());
    for (int r = 0; r < counts[f]; ++r) REQUIRE((*w)->Write(fmt::format("f{}r{}", f, r)).ok());
    REQUIRE((*w)->Close().ok());
    names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", path);
  }
  return "[" + names + "]";
}

struct Job {
  int64_t workers = 1;
  int64_t replicas = 1;
  AutoShardPolicy policy = AutoShardPolicy::kAuto;
  Api api = Api::kDistribute;
  CheckContext ctx;
};

CheckResult Run(const std::string& expr, const Job& job) {
  auto p = data::ParsePipeline(expr);
  REQUIRE_MESSAGE(p.ok(), p.status().message());
  DistributeOptions o;
  o.topology = {job.workers, job.replicas};
  o.policy = job.policy;
  o.api = job.api;
  data::BuildOptions build;
  build.default_seed = 1;
  auto r = Check(*p, o, build, job.ctx);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  return *r;
}

const Finding* Find(const CheckResult& r, FindingKind kind) {
  auto it = std::find_if(r.findings.begin(), r.findings.end(),
                         [&](const Finding& f) { return f.kind == kind; });
  return it == r.findings.end() ? nullptr : &*it;
}

Job MultiWorker(int64_t workers) {
  Job j;
  j.workers = workers;
  j.ctx.strategy = Strategy::kMultiWorker;
  return j;
}

TEST_CASE("names and versions parse as the command line gives them") {
  CHECK(*ParseLoop("for-tf") == Loop::kForTf);
  CHECK(!ParseLoop("while").ok());
  CHECK(*ParseStrategy("parameter-server") == Strategy::kParameterServer);
  CHECK(ParseTfVersion("2.15")->minor == 15);
  CHECK(!ParseTfVersion("2.15")->Keras3());
  CHECK(ParseTfVersion("2.16")->Keras3());
  CHECK(!ParseTfVersion("2.99").ok());
  CHECK(!ParseTfVersion("3.0").ok());
  CHECK(!ParseTfVersion("2.").ok());
  CHECK(FindingName(FindingKind::kStepsPerEpochTooLarge) == "steps_per_epoch_too_large");
  CHECK(BaseSeverity(FindingKind::kAutoPolicy) == FindingSeverity::kInfo);
  CHECK(BaseSeverity(FindingKind::kTooFewFiles) == FindingSeverity::kError);
  CHECK(DefaultStrategy({4, 1}) == Strategy::kMultiWorker);
  CHECK(DefaultStrategy({1, 8}) == Strategy::kMirrored);
}

TEST_CASE("combinations TensorFlow cannot run are refused") {
  DistributeOptions o;
  o.topology = {2, 1};
  CheckContext c;
  c.strategy = Strategy::kMirrored;
  CHECK(!ValidateCheck(c, o).ok());
  c.strategy = Strategy::kParameterServer;
  CHECK(!ValidateCheck(c, o).ok());  // needs the from-function API
  o.api = Api::kFromFunction;
  c.loop = Loop::kFit;
  CHECK(!ValidateCheck(c, o).ok());  // and a step count
  c.steps_per_epoch = 10;
  CHECK(ValidateCheck(c, o).ok());
  c = CheckContext{};
  c.strategy = Strategy::kMultiWorker;
  c.loop = Loop::kNext;
  CHECK(!ValidateCheck(c, o).ok());
  o.topology = {1, 1};
  c = CheckContext{};
  c.loop = Loop::kEstimator;
  CHECK(!ValidateCheck(c, o).ok());  // removed in 2.16
  c.version = TfVersion{15};
  CHECK(ValidateCheck(c, o).ok());
}

TEST_CASE("fewer files than workers under FILE is a finding, not a layout error") {
  testing::TempDir dir;
  const std::string files = WriteFiles(dir, {10, 10});
  Job job = MultiWorker(4);
  const CheckResult r = Run(fmt::format("tfrecord({}).batch(4)", files), job);
  const Finding* f = Find(r, FindingKind::kTooFewFiles);
  REQUIRE(f != nullptr);
  CHECK(f->severity == FindingSeverity::kError);
  CHECK(f->tensorflow.find("Could not apply FILE based sharding") != std::string::npos);
  CHECK(f->evidence.find("workers 2, 3 get none") != std::string::npos);
  CHECK(r.Worst() == FindingSeverity::kError);
  // Before 2.4 TensorFlow words it otherwise, and the others hang.
  job.ctx.version = TfVersion{3};
  const CheckResult before = Run(fmt::format("tfrecord({}).batch(4)", files), job);
  const Finding* old = Find(before, FindingKind::kTooFewFiles);
  REQUIRE(old != nullptr);
  CHECK(old->tensorflow.find("There aren't enough elements") != std::string::npos);
  CHECK(old->tensorflow.find("hang") != std::string::npos);
  // The fix applied: DATA, which runs (every worker reads all: a warning).
  job.policy = AutoShardPolicy::kData;
  const CheckResult fixed = Run(fmt::format("tfrecord({}).batch(4)", files), job);
  CHECK(Find(fixed, FindingKind::kTooFewFiles) == nullptr);
  CHECK(fixed.Worst() == FindingSeverity::kWarning);
  CHECK(Find(fixed, FindingKind::kReadAmplification) != nullptr);
}

TEST_CASE("uneven workers: silent empty batches since 2.3, a hang before") {
  testing::TempDir dir;
  // batch(4) over 2 workers: 2 records a worker and step.
  const std::string expr = fmt::format("tfrecord({}).batch(4)", WriteFiles(dir, {20, 8}));
  Job job = MultiWorker(2);
  CheckResult r = Run(expr, job);
  const Finding* f = Find(r, FindingKind::kUnevenSteps);
  REQUIRE(f != nullptr);
  CHECK(f->severity == FindingSeverity::kWarning);
  REQUIRE(r.steps_per_epoch);
  CHECK(r.steps_per_epoch->min == 4);
  CHECK(r.steps_per_epoch->max == 10);
  job.ctx.version = TfVersion{2};
  r = Run(expr, job);
  f = Find(r, FindingKind::kUnevenSteps);
  REQUIRE(f != nullptr);
  CHECK(f->severity == FindingSeverity::kError);
  CHECK(f->tensorflow.find("hang") != std::string::npos);
  // next() with a fixed count past the longest worker: StopIteration.
  job = MultiWorker(2);
  job.ctx.loop = Loop::kNext;
  job.ctx.steps_per_epoch = 12;
  r = Run(expr, job);
  f = Find(r, FindingKind::kStepsPerEpochTooLarge);
  REQUIRE(f != nullptr);
  CHECK(f->severity == FindingSeverity::kError);
  CHECK(f->tensorflow.find("StopIteration at global step 11") != std::string::npos);
  REQUIRE(!f->options.empty());
  CHECK(f->options[0].kind == FixOption::Kind::kStepsPerEpoch);
  CHECK(f->options[0].value == 4);
  // The count the fix gives: every worker feeds each step in full.
  job.ctx.steps_per_epoch = f->options[0].value;
  r = Run(expr, job);
  CHECK(r.Worst() != FindingSeverity::kError);
  CHECK(Find(r, FindingKind::kUnevenSteps) == nullptr);
  CHECK(Find(r, FindingKind::kEmptyBatches) == nullptr);
}

TEST_CASE("a pipeline that repeats forever: fit without steps, per Keras version") {
  testing::TempDir dir;
  const std::string files = WriteFiles(dir, {12, 12});
  Job job = MultiWorker(2);
  job.ctx.loop = Loop::kFit;
  job.ctx.version = TfVersion{15};
  CheckResult r = Run(fmt::format("tfrecord({}).batch(4).repeat()", files), job);
  const Finding* f = Find(r, FindingKind::kInfiniteWithoutSteps);
  REQUIRE(f != nullptr);
  CHECK(f->severity == FindingSeverity::kError);
  CHECK(f->tensorflow.find("ValueError: When providing an infinite dataset") != std::string::npos);
  // Keras 3: no error, the epoch never ends.
  job.ctx.version = kNewestTfVersion;
  f = Find(r = Run(fmt::format("tfrecord({}).batch(4).repeat()", files), job),
           FindingKind::kInfiniteWithoutSteps);
  REQUIRE(f != nullptr);
  CHECK(f->tensorflow.find("never ends") != std::string::npos);
  CHECK(f->other_versions.find("ValueError") != std::string::npos);
  // A filter after the repeat makes the cardinality UNKNOWN: Keras 2 raises
  // nothing, and the epoch never ends.
  job.ctx.version = TfVersion{15};
  f = Find(r = Run(fmt::format("tfrecord({}).repeat().filter(f).batch(4)", files), job),
           FindingKind::kInfiniteWithoutSteps);
  REQUIRE(f != nullptr);
  CHECK(f->tensorflow.find("When providing an infinite dataset") == std::string::npos);
  // With steps_per_epoch: nothing to say.
  job.ctx.steps_per_epoch = 3;
  r = Run(fmt::format("tfrecord({}).batch(4).repeat()", files), job);
  CHECK(r.Worst() == FindingSeverity::kInfo);
  // A batch after the repeat has no short final batch, whatever one pass
  // over the data would end with.
  r = Run(fmt::format("tfrecord({}).repeat().batch(5, drop_remainder=True)", files), job);
  CHECK(r.Worst() == FindingSeverity::kInfo);
  CHECK(Find(r, FindingKind::kDroppedRecords) == nullptr);
}

TEST_CASE("a worker with an empty shard before repeat() fails at step 1") {
  testing::TempDir dir;
  const std::string files = WriteFiles(dir, {12, 0});
  Job job = MultiWorker(2);
  job.ctx.loop = Loop::kFit;
  job.ctx.steps_per_epoch = 2;
  const CheckResult r = Run(fmt::format("tfrecord({}).batch(4).repeat()", files), job);
  const Finding* f = Find(r, FindingKind::kEmptyShard);
  REQUIRE(f != nullptr);
  CHECK(f->severity == FindingSeverity::kError);
  CHECK(f->evidence.find("worker 1 receives no record") != std::string::npos);
}

TEST_CASE("no step at all, and steps_per_epoch beyond the data under fit") {
  Job job;
  CheckResult r = Run("range(5).batch(8, drop_remainder=True)", job);
  REQUIRE(Find(r, FindingKind::kNoSteps) != nullptr);
  CHECK(Find(r, FindingKind::kNoSteps)->severity == FindingSeverity::kError);
  CHECK(!r.steps_per_epoch);
  job.ctx.loop = Loop::kFit;
  job.ctx.steps_per_epoch = 10;
  job.ctx.version = TfVersion{15};
  r = Run("range(20).batch(4)", job);
  const Finding* f = Find(r, FindingKind::kStepsPerEpochTooLarge);
  REQUIRE(f != nullptr);
  CHECK(f->severity == FindingSeverity::kError);  // Keras 2 stops training
  CHECK(f->tensorflow.find("(in this case, 10 batches)") != std::string::npos);
  job.ctx.version = kNewestTfVersion;
  f = Find(r = Run("range(20).batch(4)", job), FindingKind::kStepsPerEpochTooLarge);
  REQUIRE(f != nullptr);
  CHECK(f->severity == FindingSeverity::kWarning);  // Keras 3 cuts the epoch only
}

TEST_CASE("TPU: a dynamic batch dimension is a finding; drop_remainder=True removes it") {
  Job job;
  job.workers = 2;
  job.replicas = 4;
  job.ctx.strategy = Strategy::kTpu;
  CheckResult r = Run("range(50).batch(16)", job);
  REQUIRE(Find(r, FindingKind::kDynamicBatchShape) != nullptr);
  r = Run("range(50).batch(16, drop_remainder=True)", job);
  CHECK(Find(r, FindingKind::kDynamicBatchShape) == nullptr);
  CHECK(Find(r, FindingKind::kDroppedRecords) != nullptr);
  CHECK(r.Worst() != FindingSeverity::kError);
}

TEST_CASE("scalars without batch() over several replicas: the rebatch fails") {
  Job job;
  job.replicas = 2;
  CheckResult r = Run("range(8)", job);
  const Finding* f = Find(r, FindingKind::kScalarRebatch);
  REQUIRE(f != nullptr);
  CHECK(f->severity == FindingSeverity::kError);
  CHECK(f->tensorflow.find("Cannot rebatch dataset") != std::string::npos);
  CHECK(Find(Run("range(8).batch(2)", job), FindingKind::kScalarRebatch) == nullptr);
}

TEST_CASE("a TPU pod with static shapes stops at the shortest host") {
  testing::TempDir dir;
  const std::string expr =
      fmt::format("tfrecord({}).batch(4, drop_remainder=True)", WriteFiles(dir, {20, 8}));
  Job job;
  job.workers = 2;
  job.ctx.strategy = Strategy::kTpu;
  CheckResult r = Run(expr, job);
  const Finding* f = Find(r, FindingKind::kUnevenSteps);
  REQUIRE(f != nullptr);
  CHECK(f->severity == FindingSeverity::kError);
  CHECK(f->tensorflow.find("never fed") != std::string::npos);
  // In a tf.function the loop pads the short host instead.
  job.ctx.loop = Loop::kForTf;
  f = Find(r = Run(expr, job), FindingKind::kUnevenSteps);
  REQUIRE(f != nullptr);
  CHECK(f->severity == FindingSeverity::kWarning);
}

TEST_CASE("one worker with static shapes drops the partial step, but not inside a tf.function") {
  // Three per-replica batches of 2 for 2 replicas: the second step has one,
  // and static shapes drop it, unless dist_dataset.reduce pads it.
  Job job;
  job.replicas = 2;
  job.api = Api::kFromFunction;
  CheckResult r = Run("range(6).batch(2, drop_remainder=True)", job);
  REQUIRE(Find(r, FindingKind::kDroppedRecords) != nullptr);
  CHECK(Find(r, FindingKind::kEmptyBatches) == nullptr);
  REQUIRE(r.steps_per_epoch);
  CHECK(r.steps_per_epoch->max == 1);
  job.ctx.loop = Loop::kForTf;
  r = Run("range(6).batch(2, drop_remainder=True)", job);
  CHECK(Find(r, FindingKind::kDroppedRecords) == nullptr);
  CHECK(Find(r, FindingKind::kEmptyBatches) != nullptr);
  REQUIRE(r.steps_per_epoch);
  CHECK(r.steps_per_epoch->max == 2);
}

TEST_CASE("a clean pipeline has no finding above info") {
  testing::TempDir dir;
  const std::string files = WriteFiles(dir, {16, 16});
  const CheckResult r =
      Run(fmt::format("tfrecord({}).batch(8, drop_remainder=True)", files), MultiWorker(2));
  CHECK(r.Worst() == FindingSeverity::kInfo);
  REQUIRE(r.steps_per_epoch);
  CHECK(r.steps_per_epoch->min == 4);
  CHECK(r.steps_per_epoch->max == 4);
}

TEST_CASE("an op after the repeat() that keeps it INFINITE: Keras 2's ValueError") {
  // unbatch() of an infinite input stays infinite in TensorFlow
  // (UnbatchDatasetOp's CardinalityInternal), as the shape's answer says.
  testing::TempDir dir;
  const std::string files = WriteFiles(dir, {12, 12});
  Job job = MultiWorker(2);
  job.ctx.loop = Loop::kFit;
  job.ctx.version = TfVersion{15};
  const CheckResult r = Run(fmt::format("tfrecord({}).repeat().batch(4).unbatch()", files), job);
  const Finding* f = Find(r, FindingKind::kInfiniteWithoutSteps);
  REQUIRE(f != nullptr);
  CHECK(f->tensorflow.find("ValueError: When providing an infinite dataset") != std::string::npos);
  CHECK(f->evidence.find("UNKNOWN") == std::string::npos);
}

TEST_CASE("too few to shard: the count travels as the error's advice, not in its words") {
  // check turns these layout errors into too_few_files by their remedy and
  // its subject, so a reworded message cannot break it.
  CHECK(CheckFileCount(3, 4).advice() == Advice{Remedy::kDataPolicyOrMoreFiles, "3"});
  CHECK(CheckDataShare(3, 4, false).advice() == Advice{Remedy::kFewerWorkers, "3"});
  CHECK(CheckDataShare(1, 4, true).advice() == Advice{Remedy::kFewerWorkers, "1"});
  // The DATA and HINT cases, end to end.
  Job job = MultiWorker(4);
  job.policy = AutoShardPolicy::kData;
  CheckResult r = Run("range(3)", job);
  const Finding* f = Find(r, FindingKind::kTooFewFiles);
  REQUIRE(f != nullptr);
  CHECK(f->evidence.find("3 elements reach the shard") != std::string::npos);
  REQUIRE(f->options.size() == 1);
  CHECK(f->options[0].value == 3);
  job = MultiWorker(3);
  job.policy = AutoShardPolicy::kHint;
  r = Run("range(2).shard(SHARD_HINT, 0).batch(1)", job);
  f = Find(r, FindingKind::kTooFewFiles);
  REQUIRE(f != nullptr);
  REQUIRE(f->options.size() == 1);
  CHECK(f->options[0].value == 2);
}

TEST_CASE("too few files with an unseeded shuffle: the fix keeps FILE, or seeds DATA") {
  // DATA over a pipeline whose shuffles differ per worker feeds records
  // twice or never: the fix may not be a bare --policy DATA.
  testing::TempDir dir;
  WriteFiles(dir, {10, 10, 10});
  Job job = MultiWorker(4);
  job.replicas = 2;
  const std::string expr =
      fmt::format("list_files(\"{}\").interleave(tfrecord).shuffle(100).batch(32)", dir.File("f*"));
  const CheckResult r = Run(expr, job);
  const Finding* f = Find(r, FindingKind::kTooFewFiles);
  REQUIRE(f != nullptr);
  REQUIRE(f->options.size() == 1);
  CHECK(f->options[0].kind == FixOption::Kind::kReshard);
  CHECK(f->options[0].value == 4);
  CHECK(f->fix.find("list_files(..., seed=S)") != std::string::npos);
  CHECK(f->fix.find("tf.random.set_seed(S)") != std::string::npos);
  // Seeded, DATA is a fix on its own again.
  const std::string seeded =
      fmt::format("list_files(\"{}\", seed=1).interleave(tfrecord).shuffle(100, seed=2).batch(32)",
                  dir.File("f*"));
  const CheckResult seeded_r = Run(seeded, job);
  f = Find(seeded_r, FindingKind::kTooFewFiles);
  REQUIRE(f != nullptr);
  REQUIRE(!f->options.empty());
  CHECK(f->options[0].kind == FixOption::Kind::kPolicy);
  CHECK(f->options[0].policy == AutoShardPolicy::kData);
}

TEST_CASE("an empty shard under FILE with an unseeded shuffle: the fix keeps FILE") {
  testing::TempDir dir;
  WriteFiles(dir, {12, 0});
  Job job = MultiWorker(2);
  job.ctx.loop = Loop::kFit;
  job.ctx.steps_per_epoch = 2;
  const CheckResult r =
      Run(fmt::format("list_files(\"{}\").interleave(tfrecord).batch(4).repeat()", dir.File("f*")),
          job);
  const Finding* f = Find(r, FindingKind::kEmptyShard);
  REQUIRE(f != nullptr);
  REQUIRE(f->options.size() == 1);
  CHECK(f->options[0].kind == FixOption::Kind::kReshard);
  CHECK(f->fix.find("tf.random.set_seed(S)") != std::string::npos);
}

TEST_CASE("empty batches of workers that ran out: the fix stops them, not only the partial step") {
  // batch(8) over 2 workers of 2 replicas: 2 records a replica and step.
  // Worker 0 (21 records) feeds 6 steps, the last with 1 record (one empty
  // replica); worker 1 (8 records) runs out after 2: 4 idle steps, 8 empty
  // batches. drop_remainder=True would not stop the padding of those.
  testing::TempDir dir;
  Job job = MultiWorker(2);
  job.replicas = 2;
  const CheckResult r = Run(fmt::format("tfrecord({}).batch(8)", WriteFiles(dir, {21, 8})), job);
  const Finding* f = Find(r, FindingKind::kEmptyBatches);
  REQUIRE(f != nullptr);
  CHECK(f->evidence.find("1 in a partial step, 8 in steps after the worker ran out") !=
        std::string::npos);
  REQUIRE(f->options.size() == 2);
  CHECK(f->options[0].kind == FixOption::Kind::kLoopNext);
  CHECK(f->options[0].value == 2);
  CHECK(f->options[1].kind == FixOption::Kind::kReshard);
  CHECK(f->fix.find("so that no worker runs out") != std::string::npos);
  CHECK(f->fix.find("batch(8, drop_remainder=True) for the partial step") != std::string::npos);
}

}  // namespace
}  // namespace tfdist::dist
