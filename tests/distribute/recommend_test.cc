// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// layout --compare's recommendation: each choice wins where it should, and
// the reshard's K makes FILE even.

#include "tfdist/distribute/recommend.h"

#include <doctest/doctest.h>

namespace tfdist::dist {
namespace {

constexpr AutoShardPolicy kFile = AutoShardPolicy::kFile;
constexpr AutoShardPolicy kData = AutoShardPolicy::kData;
constexpr AutoShardPolicy kOff = AutoShardPolicy::kOff;

// A policy's row over `records` records read by `workers` workers, of which
// `dropped` never reach a replica.
PolicyOutcome Row(AutoShardPolicy p, int64_t workers, uint64_t records, uint64_t dropped,
                  double imbalance, uint64_t steps, uint64_t idle, uint64_t files) {
  PolicyOutcome o;
  o.policy = p;
  o.records_read = records;
  o.dropped = dropped;
  const uint64_t fed = records - dropped;
  o.received = p == kOff ? fed * static_cast<uint64_t>(workers) : fed;
  o.read_amplification = p == kFile ? 1 : workers;
  o.imbalance = imbalance;
  o.steps = steps;
  o.idle_steps = idle;
  o.files = files;
  return o;
}

PolicyOutcome Cannot(AutoShardPolicy p, bool needs_more_files = false) {
  PolicyOutcome o;
  o.policy = p;
  o.applies = false;
  o.needs_more_files = needs_more_files;
  return o;
}

TEST_CASE("the cost weighs drops, duplicates, imbalance, idle steps and reads as documented") {
  const Cost c = CostOf(Row(kOff, 4, 100, 10, 1.5, 10, 8, 2), 4);
  CHECK(c.dropped == doctest::Approx(0.10));
  CHECK(c.duplicated == doctest::Approx(3 * 90 / 100.0));
  CHECK(c.imbalance == doctest::Approx(0.25));
  CHECK(c.idle == doctest::Approx(0.5 * 8 / 40.0));
  CHECK(c.reads == doctest::Approx(0.03));
  CHECK(c.total() == doctest::Approx(0.10 + 2.7 + 0.25 + 0.1 + 0.03));
  // An empty input costs nothing, whatever else.
  CHECK(CostOf(Row(kFile, 4, 0, 0, 1.0, 0, 0, 0), 4).total() == 0);
}

TEST_CASE("FILE over even files wins, as AUTO applies it; no reshard") {
  const auto r =
      Recommend({Row(kFile, 8, 800, 0, 1.0, 10, 0, 1), Row(kData, 8, 800, 0, 1.0, 10, 0, 8),
                 Row(kOff, 8, 800, 0, 1.0, 80, 0, 8)},
                8, kFile, true);
  REQUIRE(r);
  CHECK(r->policy == kFile);
  CHECK_FALSE(r->num_shards);
  REQUIRE(r->reshard_cost);
  CHECK(*r->reshard_cost == doctest::Approx(0.02));
  REQUIRE(r->against.size() == 2);
  CHECK(r->against[0] == "DATA reads the input 8x");
  CHECK(r->against[1] == "OFF feeds every record 8 times and reads the input 8x");
}

TEST_CASE("FILE losing half the records at 64 workers: reshard into a multiple of 64 files") {
  // The case: 2,000 uneven files, FILE drops 51%, DATA reads 64x.
  const auto r = Recommend(
      {Row(kFile, 64, 26407, 13468, 1.3, 100, 900, 40),
       Row(kData, 64, 26407, 27, 1.0, 200, 0, 2000), Row(kOff, 64, 26407, 27, 1.0, 12800, 0, 2000)},
      64, kFile, true);
  REQUIRE(r);
  CHECK(r->num_shards == 2048u);  // 32 files per worker
  CHECK(r->policy == kFile);
  CHECK(r->against[0].rfind("FILE drops 51.0% of the records", 0) == 0);
  CHECK(r->against[1] == "DATA reads the input 64x");
}

TEST_CASE("FILE with fewer files than workers: reshard into one file per worker") {
  const auto r = Recommend(
      {Cannot(kFile, true), Row(kData, 8, 96, 0, 1.0, 3, 0, 1), Row(kOff, 8, 96, 0, 1.0, 24, 0, 1)},
      8, kData, true);
  REQUIRE(r);
  CHECK(r->num_shards == 8u);
  CHECK(r->against[0] == "FILE cannot apply");
}

TEST_CASE("at two workers DATA's one extra read is cheaper than a rewrite") {
  const auto r = Recommend({Row(kFile, 2, 8, 0, 1.25, 3, 1, 1), Row(kData, 2, 8, 0, 1.25, 3, 0, 2),
                            Row(kOff, 2, 8, 0, 1.0, 6, 1, 2)},
                           2, kFile, true);
  REQUIRE(r);
  CHECK(r->policy == kData);
  CHECK_FALSE(r->num_shards);
  CHECK(*r->reshard_cost > r->costs[1].second);
}

TEST_CASE("a pipeline without files: DATA, never a reshard") {
  const auto r = Recommend(
      {Cannot(kFile), Row(kData, 3, 10, 2, 1.5, 2, 0, 0), Row(kOff, 3, 10, 2, 1.0, 6, 0, 0)}, 3,
      kData, false);
  REQUIRE(r);
  CHECK(r->policy == kData);
  CHECK_FALSE(r->reshard_cost);
  CHECK(r->costs.size() == 2);
}

TEST_CASE("FILE that cannot apply for another reason than its files gets no reshard") {
  const auto r = Recommend(
      {Cannot(kFile), Row(kData, 8, 96, 0, 1.0, 3, 0, 1), Row(kOff, 8, 96, 0, 1.0, 24, 0, 1)}, 8,
      kData, true);
  REQUIRE(r);
  CHECK(r->policy == kData);
  CHECK_FALSE(r->reshard_cost);
}

TEST_CASE("OFF wins only where nothing else applies") {
  const auto r =
      Recommend({Cannot(kFile), Cannot(kData), Row(kOff, 2, 4, 0, 1.0, 2, 0, 0)}, 2, kOff, false);
  REQUIRE(r);
  CHECK(r->policy == kOff);
  CHECK_FALSE(Recommend({Cannot(kFile), Cannot(kData), Cannot(kOff)}, 2, kFile, false));
}

TEST_CASE("one worker: every policy costs the same, and the tie goes to what AUTO applies") {
  const std::vector<PolicyOutcome> rows = {Row(kFile, 1, 12, 0, 1.0, 3, 0, 2),
                                           Row(kData, 1, 12, 0, 1.0, 3, 0, 2),
                                           Row(kOff, 1, 12, 0, 1.0, 3, 0, 2)};
  CHECK(Recommend(rows, 1, kFile, true)->policy == kFile);
  CHECK(Recommend(rows, 1, kData, true)->policy == kData);
  CHECK(Recommend(rows, 1, kFile, true)->against.empty());
  CHECK_FALSE(Recommend(rows, 1, kFile, true)->reshard_cost);
}

}  // namespace
}  // namespace tfdist::dist
