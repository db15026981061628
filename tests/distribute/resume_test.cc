// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The resume cursor and the rest of the epoch, on small pipelines whose
// steps are worked out by hand; the CLI test (tests/cli/resume_test.py)
// holds random cases against layouts.

#include "tfdist/distribute/resume.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"

namespace tfdist::dist {
namespace {

using testing::BatchLabels;

data::Pipeline Parse(const std::string& text) {
  auto p = data::ParsePipeline(text);
  REQUIRE(p.ok());
  return std::move(*p);
}

// Every batch handed on, as "w/r:[labels]".
class Collect : public RemainderSink {
 public:
  Status OnBatch(int64_t worker, int64_t replica, std::vector<data::Element>& e) override {
    batches.push_back(std::to_string(worker) + "/" + std::to_string(replica) + ":" +
                      BatchLabels(e));
    return Status::OK();
  }
  std::vector<std::string> batches;
};

DistributeOptions Options(int64_t workers, int64_t replicas, int64_t epochs = 1) {
  DistributeOptions o;
  o.topology = {workers, replicas};
  o.epochs = epochs;
  return o;
}

TEST_CASE("the cursor counts the step's epoch up to the step and after it") {
  // range(10).batch(4) over 2 replicas: steps [0,1 | 2,3], [4,5 | 6,7], [8 | 9].
  Collect sink;
  ResumeOptions r;
  r.at_step = 1;
  auto c = LocateResume(Parse("range(10).batch(4)"), Options(1, 2), {}, r, &sink);
  REQUIRE(c.ok());
  CHECK(c->epoch == 1);
  CHECK(c->at_step == 1);
  CHECK(c->epoch_steps == 3);
  CHECK(c->consumed == 4);
  CHECK(c->remaining == 6);
  REQUIRE(c->workers.size() == 1);
  CHECK(c->workers[0].replica_consumed == std::vector<uint64_t>{2, 2});
  CHECK(c->workers[0].replica_remaining == std::vector<uint64_t>{3, 3});
  CHECK(c->workers[0].batch_sizes == SizeRuns{{{2, 2}, 1}, {{1, 1}, 1}});
  CHECK(sink.batches == std::vector<std::string>{"0/0:[4,5]", "0/1:[6,7]", "0/0:[8]", "0/1:[9]"});
  // After the last step: nothing to come.
  r.at_step = 3;
  c = LocateResume(Parse("range(10).batch(4)"), Options(1, 2), {}, r);
  REQUIRE(c.ok());
  CHECK(c->remaining == 0);
  CHECK(c->consumed == 10);
  r.at_step = 4;
  c = LocateResume(Parse("range(10).batch(4)"), Options(1, 2), {}, r);
  CHECK(c.status().code() == StatusCode::kInvalidArgument);
  CHECK(c.status().message().find("past the end") != std::string::npos);
}

TEST_CASE("a new topology gets the unseen records in global batches, in order") {
  Collect sink;
  ResumeOptions r;
  r.at_step = 1;
  r.to = Topology{1, 3};
  auto c = LocateResume(Parse("range(10).batch(4)"), Options(1, 2), {}, r, &sink);
  REQUIRE(c.ok());
  // 4..9 in global batches of 4 over 3 replicas: [4,5],[6],[7] then [8],[9],[].
  CHECK(sink.batches == std::vector<std::string>{"0/0:[4,5]", "0/1:[6]", "0/2:[7]", "0/0:[8]",
                                                 "0/1:[9]", "0/2:[]"});
  CHECK(c->to_steps == 2);
  REQUIRE(c->to_workers.size() == 1);
  CHECK(c->to_workers[0].remaining == 6);
  CHECK(c->to_workers[0].batch_sizes == SizeRuns{{{2, 1, 1}, 1}, {{1, 1, 0}, 1}});
  CHECK(c->to_global_batch == 4);
}

TEST_CASE("an epoch alone gives the cursor the replay of every epoch gives") {
  // Three epochs of a reshuffling shuffle: 3 steps each.
  const data::Pipeline p = Parse("range(6).shuffle(6, seed=3).batch(2)");
  data::BuildOptions build;
  Collect all, alone;
  ResumeOptions global;
  global.at_step = 7;  // epoch 3's first step
  auto a = LocateResume(p, Options(1, 1, 3), build, global, &all);
  REQUIRE(a.ok());
  CHECK(a->epoch == 3);
  CHECK(a->earlier_replayed);
  ResumeOptions within;
  within.epoch = 3;
  within.at_step = 1;
  auto b = LocateResume(p, Options(1, 1, 3), build, within, &alone);
  REQUIRE(b.ok());
  CHECK(b->passes_skipped);
  CHECK(!b->at_step.has_value());
  CHECK(b->remaining == a->remaining);
  CHECK(alone.batches == all.batches);
  CHECK(all.batches.size() == 2);
}

TEST_CASE("the cursor shows each shuffle's buffer at the end of the step") {
  // range(20).shuffle(5).batch(3): after step 2 the shuffle gave out 6
  // elements and holds 4 (refilled on the next draw): with the 6, exactly
  // the first 10 inputs.
  Collect sink;
  ResumeOptions r;
  r.at_step = 2;
  r.shuffle_buffers = true;
  auto c =
      LocateResume(Parse("range(20).shuffle(5, seed=1).batch(3)"), Options(1, 1), {}, r, &sink);
  REQUIRE(c.ok());
  REQUIRE(c->shuffles.size() == 1);
  CHECK(c->shuffles[0].pos == 10);
  std::vector<std::string> seen = c->shuffles[0].elements;
  CHECK(seen.size() == 4);
  std::set<std::string> after;
  for (const std::string& b : sink.batches) {
    const std::string labels = b.substr(b.find('[') + 1, b.size() - b.find('[') - 2);
    for (size_t at = 0; at <= labels.size();) {
      const size_t comma = std::min(labels.find(',', at), labels.size());
      after.insert(labels.substr(at, comma - at));
      at = comma + 1;
    }
  }
  CHECK(after.size() == 14);
  for (const std::string& e : seen) CHECK(after.count(e) == 1);  // buffered: still to come
  std::set<std::string> first10;
  for (int i = 0; i < 20; ++i) {
    if (!after.count(std::to_string(i)) ||
        std::count(seen.begin(), seen.end(), std::to_string(i))) {
      first10.insert(std::to_string(i));
    }
  }
  CHECK(first10 == std::set<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"});
  // Before the first step nothing is buffered yet.
  r.at_step = 0;
  c = LocateResume(Parse("range(20).shuffle(5, seed=1).batch(3)"), Options(1, 1), {}, r);
  REQUIRE(c.ok());
  REQUIRE(c->shuffles.size() == 1);
  CHECK(c->shuffles[0].elements.empty());
}

TEST_CASE("what cannot be resumed exactly is refused with its reason") {
  const DistributeOptions o = Options(1, 1);
  auto refused = [&](const std::string& text, bool global_seed = false) {
    return CheckResumable(Parse(text), o, global_seed);
  };
  CHECK(refused("range(8).shuffle(4).batch(2)").message().find("no seed") != std::string::npos);
  CHECK(refused("range(8).shuffle(4).batch(2)", true).ok());
  CHECK(refused("range(8).shuffle(4, seed=1).batch(2)").ok());
  const Status filter = refused("range(8).filter(opaque(\"f\")).batch(2)");
  CHECK(filter.message().find("column 10") != std::string::npos);
  CHECK(filter.message().find("filter()") != std::string::npos);
  CHECK(!refused("range(8).repeat().batch(2)").ok());
  CHECK(refused("range(8).repeat(2).batch(2)").ok());
  CHECK(!refused("range(8).ignore_errors().batch(2)").ok());
  CHECK(!refused("range(8).concatenate(range(2).filter(opaque(\"f\"))).batch(2)").ok());
  // No batch(): no steps.
  ResumeOptions r;
  auto c = LocateResume(Parse("range(8)"), o, {}, r);
  CHECK(c.status().message().find("no batch()") != std::string::npos);
}

TEST_CASE("passes skip unread where every shuffle draws when its pass opens") {
  CHECK(PassesSkipUnread(Parse("range(4).shuffle(2, seed=1).batch(2)")));
  CHECK(PassesSkipUnread(Parse("range(4).repeat(2).shuffle(2, seed=1).batch(2)")));
  CHECK(
      PassesSkipUnread(Parse("range(4).shuffle(2, seed=1, reshuffle_each_iteration=False)"
                             ".repeat(2).batch(2)")));
  CHECK(!PassesSkipUnread(Parse("range(4).shuffle(2, seed=1).repeat(2).batch(2)")));
  CHECK(!PassesSkipUnread(Parse("range(4).shuffle(2, seed=1).cache().batch(2)")));
  CHECK(!PassesSkipUnread(Parse("range(4).concatenate(range(2).shuffle(2, seed=1)).batch(2)")));
}

}  // namespace
}  // namespace tfdist::dist
