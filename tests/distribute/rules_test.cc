// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The pure rules, without any data: the decision table, the split rule on
// sizes against the splitter on elements, the audit against the guide's
// split compared in full, and the step rules.

#include <doctest/doctest.h>

#include <algorithm>

#include "test_util.h"
#include "tfdist/base/random.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/distribute/decide.h"
#include "tfdist/distribute/split.h"
#include "tfdist/distribute/steps.h"

namespace tfdist::dist {
namespace {

PipelineShape ShapeOf(const std::string& expr) {
  auto p = data::ParsePipeline(expr);
  REQUIRE(p.ok());
  return Analyze(*p);
}

struct DecideCase {
  const char* expr;
  int64_t workers, replicas;
  AutoShardPolicy policy;
  Split asked;
  AutoShardPolicy applied;
  Split split;
  bool requested;
};

TEST_CASE("Decide: the policy and split for each pipeline shape and request") {
  const char* files = "tfrecord([\"a\", \"b\"]).batch(4)";
  const char* dynamic =
      "tfrecord([\"a\", \"b\"]).batch(4).map(parse_example({\"x\": "
      "FixedLenFeature([], tf.int64)}))";
  const DecideCase cases[] = {
      {files, 2, 1, AutoShardPolicy::kAuto, Split::kAuto, AutoShardPolicy::kFile,
       Split::kBatchSizes, false},
      {files, 1, 1, AutoShardPolicy::kAuto, Split::kAuto, AutoShardPolicy::kFile, Split::kNone,
       false},
      {dynamic, 2, 2, AutoShardPolicy::kAuto, Split::kAuto, AutoShardPolicy::kFile, Split::kLegacy,
       false},
      {"range(8).batch(4)", 2, 1, AutoShardPolicy::kAuto, Split::kAuto, AutoShardPolicy::kData,
       Split::kLegacy, false},
      {"range(8).batch(4)", 2, 1, AutoShardPolicy::kData, Split::kNone, AutoShardPolicy::kData,
       Split::kNone, true},
      {"range(8).batch(4)", 2, 1, AutoShardPolicy::kData, Split::kBatchSizes,
       AutoShardPolicy::kData, Split::kLegacy, false},
      {"range(8).batch(4)", 2, 1, AutoShardPolicy::kOff, Split::kLegacy, AutoShardPolicy::kOff,
       Split::kLegacy, true},
      {"range(8)", 3, 2, AutoShardPolicy::kHint, Split::kAuto, AutoShardPolicy::kHint, Split::kNone,
       false},
      {"range(8).batch(4)", 1, 2, AutoShardPolicy::kFile, Split::kAuto, AutoShardPolicy::kFile,
       Split::kBatchSizes, false},
  };
  for (const DecideCase& c : cases) {
    CAPTURE(c.expr);
    CAPTURE(PolicyName(c.policy));
    CAPTURE(SplitName(c.asked));
    DistributeOptions o;
    o.topology = {c.workers, c.replicas};
    o.policy = c.policy;
    o.split = c.asked;
    Result<Decision> d = Decide(ShapeOf(c.expr), o);
    REQUIRE(d.ok());
    CHECK(d->applied == c.applied);
    CHECK(d->split == c.split);
    CHECK(d->split_requested == c.requested);
    CHECK(d->HasWarning(WarningKind::kDataReadsEverything) == d->ShardsData(o.topology));
    CHECK(d->HasWarning(WarningKind::kBatchSizesUnderData) ==
          (c.applied == AutoShardPolicy::kData && c.asked == Split::kBatchSizes &&
           o.topology.num_replicas_in_sync() > 1));
  }
}

TEST_CASE("Decide: one replica in sync is never split, under every policy and request") {
  // input_lib adds a rebatch only for num_replicas_in_sync > 1.
  const char* const exprs[] = {
      "range(8).batch(4)",
      "tfrecord([\"a\"]).batch(4)",
      ("tfrecord([\"a\"]).batch(4).map(parse_example({\"x\": "
       "FixedLenFeature([], tf.int64)}))"),
  };
  for (const char* expr : exprs) {
    for (AutoShardPolicy policy :
         {AutoShardPolicy::kAuto, AutoShardPolicy::kFile, AutoShardPolicy::kData,
          AutoShardPolicy::kOff, AutoShardPolicy::kHint}) {
      for (Split asked : {Split::kAuto, Split::kBatchSizes, Split::kLegacy, Split::kNone}) {
        CAPTURE(expr);
        CAPTURE(PolicyName(policy));
        CAPTURE(SplitName(asked));
        DistributeOptions o;
        o.policy = policy;
        o.split = asked;
        Result<Decision> d = Decide(ShapeOf(expr), o);
        REQUIRE(d.ok());
        CHECK(d->split == Split::kNone);
        CHECK(d->split_requested == (asked == Split::kNone));
        CHECK(d->warnings.empty());
        if (asked == Split::kBatchSizes || asked == Split::kLegacy) {
          CHECK(d->split_reason.find(fmt::format("the {} split asked for does not apply",
                                                 SplitName(asked))) != std::string::npos);
        }
      }
    }
  }
}

TEST_CASE("Decide refuses what cannot apply, with the remedy as data") {
  DistributeOptions o;
  o.topology = {2, 1};
  o.policy = AutoShardPolicy::kFile;
  Result<Decision> d = Decide(ShapeOf("range(8).batch(2)"), o);
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().advice().remedy == Remedy::kDataPolicy);
  o.policy = AutoShardPolicy::kOff;
  o.split = Split::kBatchSizes;
  d = Decide(ShapeOf("tfrecord([\"a\"]).batch(2).map(parse_example({\"x\": "
                     "FixedLenFeature([], tf.int64)}))"),
             o);
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().message().starts_with("a batch-sizes split needs a static global batch size"));
  CHECK(CheckFileCount(0, 4).ok());
  CHECK(CheckFileCount(4, 4).ok());
  const Status few = CheckFileCount(3, 4);
  CHECK(few.message() == "FILE sharding needs at least 4 files for 4 workers; found 3");
  CHECK(few.advice().remedy == Remedy::kDataPolicyOrMoreFiles);
  CHECK_FALSE(CheckTopology({0, 1}).ok());
  CHECK_FALSE(CheckTopology({1 << 11, 1 << 10}).ok());
  CHECK(CheckTopology({1 << 10, 1 << 10}).ok());
}

std::string Sizes(const std::vector<uint64_t>& v) {
  std::string out;
  for (uint64_t n : v) out += fmt::format("{} ", n);
  return out;
}

TEST_CASE("the split rule on sizes cuts as the splitter on elements, for every split") {
  Rng rng(20261125);
  for (int trial = 0; trial < 3000; ++trial) {
    const int kind = static_cast<int>(rng.Uniform(0, 2));
    const Split split = kind == 0 ? Split::kBatchSizes : kind == 1 ? Split::kLegacy : Split::kNone;
    std::vector<int64_t> sizes(rng.Uniform(1, 5));
    for (int64_t& s : sizes) s = static_cast<int64_t>(rng.Uniform(0, 4));
    const int64_t pieces = static_cast<int64_t>(rng.Uniform(1, 6));
    const bool drop = rng.Uniform(0, 3) == 0;
    std::vector<uint64_t> input(rng.Uniform(0, 6));
    std::vector<std::vector<data::Element>> batches;
    int64_t next = 0;
    for (uint64_t& b : input) {
      b = rng.Uniform(0, 9);
      batches.emplace_back();
      for (uint64_t i = 0; i < b; ++i) batches.back().push_back(data::Element::Int(next++));
    }
    CAPTURE(trial);
    const SplitRule rule(split, sizes, pieces, drop);
    std::vector<std::vector<data::Element>> out;
    BatchSplitter splitter(rule);
    for (const auto& b : batches) splitter.Add(b, out);
    splitter.Finish(out);
    std::vector<uint64_t> element_sizes;
    std::vector<int64_t> order;
    for (const auto& piece : out) {
      element_sizes.push_back(piece.size());
      for (const auto& e : piece) order.push_back(e.int_value());
    }
    CHECK(Sizes(SplitSizes(rule, input)) == Sizes(element_sizes));
    // Pieces keep the elements' order, losing at most a dropped remainder.
    CHECK(std::is_sorted(order.begin(), order.end()));
    const bool takes_nothing =
        split == Split::kBatchSizes &&
        std::all_of(sizes.begin(), sizes.end(), [](int64_t s) { return s == 0; });
    if (!drop) CHECK(static_cast<int64_t>(order.size()) == (takes_nothing ? 0 : next));
  }
}

// The guide's comparison done in full: the legacy sizes, and whether an
// output piece spans the end of an input batch.
void FullAudit(const std::vector<uint64_t>& input, const std::vector<uint64_t>& output, int64_t n,
               bool& differs, bool& crosses) {
  differs = SplitSizes(SplitRule(Split::kLegacy, {}, n, false), input) != output;
  crosses = false;
  std::vector<uint64_t> ends;
  uint64_t at = 0;
  for (uint64_t b : input) ends.push_back(at += b);
  uint64_t start = 0;
  for (uint64_t b : output) {
    const auto first_end = std::upper_bound(ends.begin(), ends.end(), start);
    if (b > 0 && first_end != ends.end() && start + b > *first_end) crosses = true;
    start += b;
  }
}

TEST_CASE("the split audit, fed as the split runs, equals the comparison done in full") {
  Rng rng(77);
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t W = static_cast<int64_t>(rng.Uniform(1, 3));
    const int64_t R = static_cast<int64_t>(rng.Uniform(1, 3));
    const int64_t G = static_cast<int64_t>(rng.Uniform(1, 9));
    const int64_t w = static_cast<int64_t>(rng.Uniform(0, static_cast<uint64_t>(W - 1)));
    std::vector<uint64_t> input(rng.Uniform(0, 5), static_cast<uint64_t>(G));
    if (!input.empty() && rng.Uniform(0, 1) == 1) {
      input.back() = rng.Uniform(1, static_cast<uint64_t>(G));
    }
    SplitRule rule(Split::kBatchSizes, BatchSizesForWorker(G, W, R, w), 0, false);
    std::vector<uint64_t> output;
    SplitAudit audit(W * R);
    std::vector<Cut> cuts;
    uint64_t piece = 0;
    auto emit = [&] {
      for (const Cut& c : cuts) {
        piece += c.take;
        if (c.emit) {
          output.push_back(piece);
          audit.Output(piece);
          piece = 0;
        }
      }
      cuts.clear();
    };
    for (uint64_t b : input) {
      audit.Input(b);
      rule.Add(b, cuts);
      emit();
    }
    rule.Finish(cuts);
    emit();
    bool differs = false, crosses = false;
    FullAudit(input, output, W * R, differs, crosses);
    CAPTURE(trial);
    CHECK(audit.differs() == differs);
    CHECK(audit.crosses() == crosses);
  }
}

TEST_CASE("a worker's split by its sizes' arithmetic cuts as by the whole list") {
  // SplitRule::For holds batch_sizes_for_worker as floor, extra and shift:
  // the same cuts as the N-long list, and the same passes over pieces.
  Rng rng(4242);
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t W = static_cast<int64_t>(rng.Uniform(1, 6));
    const int64_t R = static_cast<int64_t>(rng.Uniform(1, 4));
    const int64_t G = static_cast<int64_t>(rng.Uniform(0, 30));
    const int64_t w = static_cast<int64_t>(rng.Uniform(0, static_cast<uint64_t>(W - 1)));
    std::vector<uint64_t> input(rng.Uniform(0, 6));
    for (uint64_t& b : input) b = rng.Uniform(0, 2 * static_cast<uint64_t>(G) + 1);
    const std::vector<int64_t> list = BatchSizesForWorker(G, W, R, w);
    const SizeCycle cycle = SizeCycle::ForWorker(G, W, R, w);
    CAPTURE(trial);
    REQUIRE(cycle.length() == list.size());
    for (uint64_t i = 0; i < list.size(); ++i) {
      CHECK(cycle[i] == list[i]);
      uint64_t zeros = 0;
      while (i + zeros < list.size() && list[i + zeros] == 0) ++zeros;
      CHECK(cycle.ZerosFrom(i) == zeros);
    }
    CHECK(SplitSizes(SplitRule(Split::kBatchSizes, cycle, 0, false), input) ==
          SplitSizes(SplitRule(Split::kBatchSizes, list, 0, false), input));
    // Legacy: passing over k pieces and cutting the rest gives the rest.
    const int64_t n = W * R;
    for (uint64_t b : input) {
      SplitRule all(Split::kLegacy, {}, n, false), passing(Split::kLegacy, {}, n, false);
      std::vector<Cut> cuts;
      all.Add(b, cuts);
      const uint64_t k = rng.Uniform(0, static_cast<uint64_t>(n) + 1);
      passing.Begin(b);
      uint64_t elements = 0;
      const uint64_t passed = passing.Pass(k, elements);
      CHECK(passed == std::min<uint64_t>(k, static_cast<uint64_t>(n)));
      uint64_t expected = 0;
      for (uint64_t i = 0; i < passed; ++i) expected += cuts[i].take;
      CHECK(elements == expected);
      Cut c;
      for (uint64_t i = passed; i < cuts.size(); ++i) {
        REQUIRE(passing.Next(c));
        CHECK(c.take == cuts[i].take);
      }
      CHECK(!passing.Next(c));
    }
  }
}

TEST_CASE("DATA keeps every W-th piece; steps end, pad or drop by TensorFlow's rules") {
  for (uint64_t p = 0; p < 12; ++p) {
    int keepers = 0;
    for (int64_t w = 0; w < 3; ++w) keepers += KeepsPiece(p, 3, w) ? 1 : 0;
    CHECK(keepers == 1);
    CHECK(KeepsPiece(p, 3, static_cast<int64_t>(p % 3)));
  }
  CHECK(CheckDataShare(0, 4, true).ok());
  CHECK(CheckDataShare(4, 4, true).ok());
  CHECK(CheckDataShare(3, 4, false).message() ==
        "DATA sharding needs at least 4 elements for 4 workers, so that each worker gets one; "
        "found 3");
  CHECK(LocalReplica(7, 3) == 1);
  CHECK(NextStep(false, true, true) == StepKind::kEnd);
  CHECK(NextStep(true, false, true) == StepKind::kStep);
  CHECK(NextStep(true, true, false) == StepKind::kStep);
  CHECK(NextStep(true, true, true) == StepKind::kDropped);
  Decision d;
  d.batched = true;
  d.split = Split::kNone;
  d.drop_remainder = true;
  CHECK(DropsShortStep(d, {1, 2}));
  CHECK_FALSE(DropsShortStep(d, {2, 1}));
  d.drop_remainder = false;
  CHECK_FALSE(DropsShortStep(d, {1, 2}));
  CHECK_FALSE(UnevenFilesWarning({3, 3}, true, 0).has_value());
  auto uneven = UnevenFilesWarning({5, 3}, true, 1);
  REQUIRE(uneven.has_value());
  CHECK(uneven->message ==
        "FILE sharding over uneven files: records per worker 5, 3 (max/mean 1.25); 1 step with "
        "replicas fed empty batches");
}

}  // namespace
}  // namespace tfdist::dist
