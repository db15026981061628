// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The streaming execution gives every worker exactly the per-replica
// batches PlanLayout lays out, over random topologies, policies and splits.

#include "tfdist/distribute/execute.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>

#include "test_util.h"
#include "tfdist/distribute/layout.h"
#include "tfdist/io/record_writer.h"
#include "tfdist/proto/synthetic.h"

namespace tfdist::dist {
namespace {

using testing::BatchLabels;

// Every batch worker `w` streams, as text.
Result<std::vector<std::string>> Stream(const Execution& ex, int64_t w) {
  TFDIST_ASSIGN_OR_RETURN(auto stream, ex.Open(w));
  std::vector<std::string> out;
  for (;;) {
    std::vector<data::Element> batch;
    bool end = false;
    TFDIST_RETURN_IF_ERROR(stream->Next(batch, end));
    if (end) return out;
    out.push_back(BatchLabels(batch));
  }
}

std::vector<std::string> Expected(const WorkerLayout& wl, bool batched) {
  std::vector<std::string> out;
  if (batched) {
    for (const auto& b : wl.batches) out.push_back(BatchLabels(b));
  } else {
    for (const auto& e : wl.elements) out.push_back(BatchLabels({e}));
  }
  return out;
}

TEST_CASE("every worker's stream equals its batches in the planned layout") {
  testing::TempDir dir;
  Rng rng(57);
  for (int trial = 0; trial < 80; ++trial) {
    const int64_t W = static_cast<int64_t>(rng.Uniform(1, 5));
    const int64_t R = static_cast<int64_t>(rng.Uniform(1, 4));
    const int64_t G = static_cast<int64_t>(rng.Uniform(1, 13));
    const size_t num_files = static_cast<size_t>(W) + rng.Uniform(0, 4);
    for (size_t f = 0; f < num_files; ++f) {
      auto w = io::RecordWriter::Open(dir.File(fmt::format("t{}f{:02}", trial, f)), {});
      REQUIRE(w.ok());
      for (uint64_t r = 0, n = rng.Uniform(0, 20); r < n; ++r) {
        REQUIRE((*w)->Write(fmt::format("f{}r{}", f, r)).ok());
      }
      REQUIRE((*w)->Close().ok());
    }
    std::string expr = fmt::format("list_files(\"{}/t{}f*\", shuffle={})", dir.path(), trial,
                                   rng.Uniform(0, 2) ? "True" : "False");
    expr += fmt::format(".interleave(tfrecord, cycle_length={}, block_length={})",
                        rng.Uniform(1, 4), rng.Uniform(1, 3));
    if (rng.Uniform(0, 2)) expr += fmt::format(".shuffle({})", rng.Uniform(1, 8));
    const bool batched = rng.Uniform(0, 4) != 0;
    if (batched) {
      expr += fmt::format(".batch({}{})", G, rng.Uniform(0, 3) == 0 ? ", drop_remainder=True" : "");
    }
    const Api api = rng.Uniform(0, 6) == 0 ? Api::kFromFunction : Api::kDistribute;
    auto pipeline = data::ParsePipeline(expr);
    REQUIRE(pipeline.ok());
    for (AutoShardPolicy policy : {AutoShardPolicy::kAuto, AutoShardPolicy::kFile,
                                   AutoShardPolicy::kData, AutoShardPolicy::kOff}) {
      for (Split split : {Split::kAuto, Split::kLegacy, Split::kNone}) {
        CAPTURE(expr);
        CAPTURE(W);
        CAPTURE(R);
        CAPTURE(PolicyName(policy));
        CAPTURE(SplitName(split));
        DistributeOptions o;
        o.api = api;
        o.policy = policy;
        o.split = split;
        o.topology = {W, R};
        data::BuildOptions b;
        b.default_seed = 11;
        b.cpus = 2;
        auto layout = PlanLayout(*pipeline, o, b);
        auto ex = Execution::Plan(*pipeline, o, b);
        if (!layout.ok()) {
          // Refused when planning, or (DATA with too few pieces, which only
          // the end of the stream shows) when streaming.
          if (!ex.ok()) {
            CHECK(layout.status().message() == ex.status().message());
            continue;
          }
          Status streamed = Status::OK();
          for (int64_t w = 0; w < W && streamed.ok(); ++w) streamed = Stream(*ex, w).status();
          CHECK(streamed.message() == layout.status().message());
          continue;
        }
        REQUIRE(ex.ok());
        CHECK(ex->decision().applied == layout->decision.applied);
        CHECK(ex->decision().split == layout->decision.split);
        CHECK(ex->workers().size() == static_cast<size_t>(W));
        for (int64_t w = 0; w < W; ++w) {
          auto got = Stream(*ex, w);
          REQUIRE(got.ok());
          CHECK(*got ==
                Expected(layout->workers[static_cast<size_t>(w)], layout->decision.batched));
        }
      }
    }
  }
}

TEST_CASE("OpenAll reads once for workers that share a pipeline, taken in any order") {
  Rng rng(91);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t W = static_cast<int64_t>(rng.Uniform(1, 5));
    const int64_t R = static_cast<int64_t>(rng.Uniform(1, 3));
    const std::string expr = fmt::format("range({}).shuffle({}).batch({})", rng.Uniform(0, 60),
                                         rng.Uniform(1, 9), rng.Uniform(1, 9));
    auto pipeline = data::ParsePipeline(expr);
    REQUIRE(pipeline.ok());
    for (AutoShardPolicy policy : {AutoShardPolicy::kData, AutoShardPolicy::kOff}) {
      CAPTURE(expr);
      CAPTURE(W);
      CAPTURE(PolicyName(policy));
      DistributeOptions o;
      o.policy = policy;
      o.topology = {W, R};
      data::BuildOptions b;
      b.default_seed = 3;
      auto ex = Execution::Plan(*pipeline, o, b);
      REQUIRE(ex.ok());
      CHECK(ex->reads_once() == (W > 1));
      // Each worker alone, and (the first pass of another execution, as
      // reshuffling shuffles differ pass by pass) all of them a batch at a
      // time, round-robin.
      std::vector<Result<std::vector<std::string>>> alone;
      for (int64_t w = 0; w < W; ++w) alone.push_back(Stream(*ex, w));
      auto again = Execution::Plan(*pipeline, o, b);
      REQUIRE(again.ok());
      auto streams = again->OpenAll({});
      REQUIRE(streams.ok());
      std::vector<std::vector<std::string>> together(static_cast<size_t>(W));
      std::vector<bool> done(static_cast<size_t>(W), false);
      Status failed = Status::OK();
      while (failed.ok() && std::count(done.begin(), done.end(), false) > 0) {
        for (size_t w = 0; w < done.size() && failed.ok(); ++w) {
          if (done[w]) continue;
          std::vector<data::Element> batch;
          bool end = false;
          failed = (*streams)[w]->Next(batch, end);
          if (end) done[w] = true;
          if (!end && failed.ok()) together[w].push_back(BatchLabels(batch));
        }
      }
      for (int64_t w = 0; w < W; ++w) {
        const auto& want = alone[static_cast<size_t>(w)];
        if (!want.ok()) {
          CHECK(failed.message() == want.status().message());
          continue;
        }
        CHECK(together[static_cast<size_t>(w)] == *want);
      }
    }
  }
}

TEST_CASE("a second pass over a worker reshuffles, as each epoch does") {
  testing::TempDir dir;
  {
    auto w = io::RecordWriter::Open(dir.File("e"), {});
    REQUIRE(w.ok());
    for (int r = 0; r < 64; ++r) REQUIRE((*w)->Write(fmt::format("r{}", r)).ok());
    REQUIRE((*w)->Close().ok());
  }
  auto pipeline = data::ParsePipeline(
      fmt::format("tfrecord(\"{}\").shuffle(64, seed=5).batch(8)", dir.File("e")));
  REQUIRE(pipeline.ok());
  auto ex = Execution::Plan(*pipeline, DistributeOptions{}, data::BuildOptions{});
  REQUIRE(ex.ok());
  auto first = Stream(*ex, 0);
  auto second = Stream(*ex, 0);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->size() == 8);
  CHECK(*first != *second);
  // The same seed gives the same sequence of epochs.
  auto again = Execution::Plan(*pipeline, DistributeOptions{}, data::BuildOptions{});
  REQUIRE(again.ok());
  CHECK(*Stream(*again, 0) == *first);
}

TEST_CASE("--worker plans only that worker") {
  auto pipeline = data::ParsePipeline("range(10).batch(4)");
  REQUIRE(pipeline.ok());
  DistributeOptions o;
  o.topology = {2, 1};
  o.worker = 1;
  auto ex = Execution::Plan(*pipeline, o, data::BuildOptions{});
  REQUIRE(ex.ok());
  CHECK(ex->workers() == std::vector<int64_t>{1});
  CHECK(ex->decision().applied == AutoShardPolicy::kData);
  auto got = Stream(*ex, 1);
  REQUIRE(got.ok());
  CHECK(*got == std::vector<std::string>{"[2,3]", "[6,7]", "[9]"});
}

TEST_CASE("from-function with a pipeline per worker: each worker runs its own") {
  auto pipelines = std::make_shared<std::vector<data::Pipeline>>();
  for (const char* expr : {"range(0, 4).batch(2)", "range(10, 13).batch(2)"}) {
    Result<data::Pipeline> p = data::ParsePipeline(expr);
    REQUIRE(p.ok());
    pipelines->push_back(std::move(*p));
  }
  DistributeOptions options;
  options.api = Api::kFromFunction;
  options.topology.workers = 2;
  options.worker_pipelines = pipelines;
  data::BuildOptions build;
  build.default_seed = 1;
  Result<Execution> ex = Execution::Plan((*pipelines)[0], options, build);
  REQUIRE(ex.ok());
  CHECK(ex->decision().function_shards);
  CHECK_FALSE(ex->decision().HasWarning(WarningKind::kFunctionDoesNotShard));
  CHECK(*Stream(*ex, 0) == std::vector<std::string>{"[0,1]", "[2,3]"});
  CHECK(*Stream(*ex, 1) == std::vector<std::string>{"[10,11]", "[12]"});
}

TEST_CASE("worker_seeds: each worker draws its own order for an unseeded shuffle, as TF does") {
  Result<data::Pipeline> p = data::ParsePipeline("range(64).shuffle(64).batch(2)");
  REQUIRE(p.ok());
  DistributeOptions o;
  o.policy = AutoShardPolicy::kData;
  o.topology.workers = 2;
  data::BuildOptions build;
  build.default_seed = 7;
  // The records both workers feed: none when they cut one permutation.
  auto common = [&](const Execution& ex) {
    std::vector<std::string> a = *Stream(ex, 0), b = *Stream(ex, 1);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::vector<std::string> both;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
    return both.size();
  };
  Result<Execution> shared = Execution::Plan(*p, o, build);
  REQUIRE(shared.ok());
  CHECK(shared->reads_once());
  CHECK(common(*shared) == 0);
  o.worker_seeds = true;
  Result<Execution> own = Execution::Plan(*p, o, build);
  REQUIRE(own.ok());
  CHECK_FALSE(own->reads_once());
  CHECK(common(*own) > 0);
  // Worker 0 keeps the run's seed: its order is the shared plan's.
  CHECK(*Stream(*own, 0) == *Stream(*shared, 0));
}

}  // namespace
}  // namespace tfdist::dist
