// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist run on host replicas: every replica receives exactly what layout
// plans, every byte arrives, verification catches a corrupted staging
// buffer, and the wire format reads back.

#include "tfdist/run/runner.h"

#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <mutex>

#include "test_util.h"
#include "tfdist/distribute/layout.h"
#include "tfdist/io/record_writer.h"
#include "tfdist/proto/synthetic.h"

namespace tfdist::run {
namespace {

using testing::BatchLabels;

// step -> "w/r=[...]" for every batch, as the runner delivered or layout planned.
using Deliveries = std::map<int64_t, std::vector<std::string>>;

Deliveries Planned(const dist::Layout& l) {
  Deliveries out;
  for (const dist::Step& s : l.steps) {
    if (s.dropped) continue;
    for (const dist::ReplicaBatch& b : s.batches) {
      out[s.step].push_back(fmt::format("{}/{}={}", b.worker, b.replica, BatchLabels(b.elements)));
    }
  }
  return out;
}

RunOptions HostOptions() {
  RunOptions o;
  o.staging.device = device::DeviceKind::kCpu;
  o.staging.verify = true;
  o.build.default_seed = 9;
  o.build.cpus = 2;
  return o;
}

Result<RunReport> RunCollecting(const std::string& expr, RunOptions o, Deliveries* got) {
  auto pipeline = data::ParsePipeline(expr);
  if (!pipeline.ok()) return pipeline.status();
  std::mutex mu;
  o.on_batch = [&](int64_t w, int64_t r, int64_t step, const std::vector<data::Element>& b) {
    std::lock_guard lock(mu);
    (*got)[step].push_back(fmt::format("{}/{}={}", w, r, BatchLabels(b)));
  };
  return Run(*pipeline, o);
}

TEST_CASE("all workers run on host replicas receive exactly the planned layout") {
  testing::TempDir dir;
  Rng rng(41);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t W = static_cast<int64_t>(rng.Uniform(1, 4));
    const int64_t R = static_cast<int64_t>(rng.Uniform(1, 4));
    const int64_t G = static_cast<int64_t>(rng.Uniform(1, 11));
    const size_t num_files = static_cast<size_t>(W) + rng.Uniform(0, 3);
    uint64_t total_records = 0, total_bytes = 0;
    for (size_t f = 0; f < num_files; ++f) {
      auto w = io::RecordWriter::Open(dir.File(fmt::format("t{}f{:02}", trial, f)), {});
      REQUIRE(w.ok());
      for (uint64_t r = 0, n = rng.Uniform(0, 30); r < n; ++r) {
        const std::string rec = fmt::format("f{}r{}", f, r);
        REQUIRE((*w)->Write(rec).ok());
        ++total_records;
        total_bytes += rec.size();
      }
      REQUIRE((*w)->Close().ok());
    }
    const bool drop = rng.Uniform(0, 3) == 0;
    const std::string expr = fmt::format(
        "list_files(\"{}/t{}f*\", shuffle=False).interleave(tfrecord, cycle_length=2)"
        ".shuffle(5).batch({}{})",
        dir.path(), trial, G, drop ? ", drop_remainder=True" : "");
    for (dist::AutoShardPolicy policy : {dist::AutoShardPolicy::kAuto, dist::AutoShardPolicy::kData,
                                         dist::AutoShardPolicy::kOff}) {
      CAPTURE(expr);
      CAPTURE(W);
      CAPTURE(R);
      CAPTURE(dist::PolicyName(policy));
      RunOptions o = HostOptions();
      o.distribute.topology = {W, R};
      o.distribute.policy = policy;
      o.staging.depth = static_cast<int64_t>(rng.Uniform(1, 4));
      o.pack_threads = static_cast<int64_t>(rng.Uniform(0, 5)) - 1;  // auto, inline, 1-3 packers
      CAPTURE(o.pack_threads);
      auto pipeline = data::ParsePipeline(expr);
      REQUIRE(pipeline.ok());
      auto layout = dist::PlanLayout(*pipeline, o.distribute, o.build);
      Deliveries got;
      auto report = RunCollecting(expr, o, &got);
      if (!layout.ok()) {
        REQUIRE_FALSE(report.ok());
        CHECK(report.status().message() == layout.status().message());
        continue;
      }
      REQUIRE(report.ok());
      CHECK(got == Planned(*layout));
      CHECK(report->device == "cpu");
      CHECK(report->verified);
      CHECK(report->replicas.size() == static_cast<size_t>(W * R));
      uint64_t steps = 0;
      for (const auto& s : layout->steps) steps += !s.dropped;
      CHECK(report->steps == steps);
      if (!drop) {
        const uint64_t copies =
            policy == dist::AutoShardPolicy::kOff ? static_cast<uint64_t>(W) : 1;
        CHECK(report->records == total_records * copies);
        CHECK(report->bytes == total_bytes * copies);
      }
    }
  }
}

TEST_CASE("a seeded shuffle is delivered in the layout's order (TensorFlow's), epoch after epoch") {
  const std::string expr = "range(40).shuffle(7, seed=3).batch(4)";
  for (bool reshuffle : {true, false}) {
    CAPTURE(reshuffle);
    const std::string e =
        reshuffle ? expr : "range(40).shuffle(7, seed=3, reshuffle_each_iteration=False).batch(4)";
    RunOptions o = HostOptions();
    o.distribute.topology = {2, 2};
    o.distribute.epochs = 3;
    o.epochs = 3;
    o.build.global_seed = data::GlobalSeed{11, 0};
    auto pipeline = data::ParsePipeline(e);
    REQUIRE(pipeline.ok());
    auto layout = dist::PlanLayout(*pipeline, o.distribute, o.build);
    REQUIRE(layout.ok());
    REQUIRE(layout->steps.size() == 3 * 10);  // DATA: every worker a share of all 10 batches
    Deliveries got;
    auto report = RunCollecting(e, o, &got);
    REQUIRE(report.ok());
    CHECK(got == Planned(*layout));
    // Reshuffling: each epoch's order is new; otherwise each repeats the first.
    const Deliveries planned = Planned(*layout);
    CHECK((planned.at(1) == planned.at(11)) == !reshuffle);
  }
}

TEST_CASE("one worker of several delivers its own batches, as layout --worker shows") {
  auto pipeline = data::ParsePipeline("range(23).batch(4)");
  REQUIRE(pipeline.ok());
  RunOptions o = HostOptions();
  o.distribute.topology = {3, 2};
  o.distribute.worker = 1;
  auto layout = dist::PlanLayout(*pipeline, o.distribute, o.build);
  REQUIRE(layout.ok());
  Deliveries got;
  auto report = RunCollecting("range(23).batch(4)", o, &got);
  REQUIRE(report.ok());
  // The same batches per step; layout's trailing steps in which this worker
  // only pads (other workers still have data) are not run alone.
  Deliveries planned = Planned(*layout);
  for (auto& [step, batches] : got) CHECK(planned[step] == batches);
  CHECK(report->workers == std::vector<int64_t>{1});
}

TEST_CASE("epochs repeat the data and --steps stops early") {
  RunOptions o = HostOptions();
  o.epochs = 3;
  Deliveries got;
  auto report = RunCollecting("range(10).batch(4)", o, &got);
  REQUIRE(report.ok());
  CHECK(report->records == 30);
  CHECK(report->steps == 9);
  o.epochs = 100;
  o.distribute.max_steps = 5;
  got.clear();
  report = RunCollecting("range(10).repeat().batch(4)", o, &got);
  REQUIRE(report.ok());
  CHECK(report->steps == 5);
  CHECK(report->records == 20);
}

TEST_CASE("--steps stops cleanly while packers are still staging batches") {
  // Found on a GPU: a packer between Acquire and Submit when the loop stopped
  // took Submit's "staging shut down" for a failure of the run.
  testing::TempDir dir;
  {
    auto w = io::RecordWriter::Open(dir.File("big"), {});
    REQUIRE(w.ok());
    const std::string record(256 << 10, 'x');
    for (int r = 0; r < 64; ++r) REQUIRE((*w)->Write(record).ok());
    REQUIRE((*w)->Close().ok());
  }
  const std::string expr = fmt::format("tfrecord(\"{}\").repeat().batch(64)", dir.File("big"));
  RunOptions o = HostOptions();
  o.distribute.topology = {1, 8};
  o.pack_threads = 8;
  for (int64_t steps = 1; steps <= 20; ++steps) {
    CAPTURE(steps);
    o.distribute.max_steps = steps;
    auto pipeline = data::ParsePipeline(expr);
    REQUIRE(pipeline.ok());
    Result<RunReport> report = Run(*pipeline, o);
    REQUIRE_MESSAGE(report.ok(), report.status().ToString());
    CHECK(report->steps == static_cast<uint64_t>(steps));
  }
}

TEST_CASE("--verify catches a staging buffer corrupted before its copy") {
  testing::TempDir dir;
  {
    auto w = io::RecordWriter::Open(dir.File("v"), {});
    REQUIRE(w.ok());
    for (int r = 0; r < 40; ++r) REQUIRE((*w)->Write(std::string(100, 'a' + r % 26)).ok());
    REQUIRE((*w)->Close().ok());
  }
  const std::string expr = fmt::format("tfrecord(\"{}\").batch(8)", dir.File("v"));
  RunOptions o = HostOptions();
  o.distribute.topology = {1, 2};
  o.corrupt_replica_for_testing = 1;
  Deliveries got;
  auto report = RunCollecting(expr, o, &got);
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == StatusCode::kDataLoss);
  CHECK(report.status().message().find("replica 1") != std::string::npos);
  // Without the corruption the same run verifies.
  o.corrupt_replica_for_testing.reset();
  got.clear();
  CHECK(RunCollecting(expr, o, &got).ok());
}

TEST_CASE("a data error in the pipeline ends the run with the file and offset") {
  auto pipeline = data::ParsePipeline("tfrecord(\"testdata/bad/data_crc.tfrecord\").batch(2)");
  REQUIRE(pipeline.ok());
  auto report = Run(*pipeline, HostOptions());
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == StatusCode::kDataLoss);
  CHECK(report.status().message().find("testdata/bad/data_crc.tfrecord") != std::string::npos);
}

TEST_CASE("more local replicas than one host runs is an error whose remedy is one worker") {
  auto pipeline = data::ParsePipeline("range(8).batch(2)");
  REQUIRE(pipeline.ok());
  RunOptions o = HostOptions();
  o.distribute.topology = {300, 1};
  o.distribute.worker.reset();  // all of them
  auto report = Run(*pipeline, o);
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == StatusCode::kInvalidArgument);
  CHECK(report.status().message() ==
        "running 300 workers x 1 replicas here needs 300 local replicas; at most 256 can run on "
        "one host");
  CHECK(report.status().advice() == Advice{Remedy::kOneWorker, ""});
}

TEST_CASE("a step time adds the step stage, naming the option that asks for it") {
  auto pipeline = data::ParsePipeline("range(8).batch(2)");
  REQUIRE(pipeline.ok());
  RunOptions o = HostOptions();
  o.step_time_ms = 1;
  auto report = Run(*pipeline, o);
  REQUIRE(report.ok());
  REQUIRE_FALSE(report->stages.empty());
  const StageReport& step = report->stages.back();
  CHECK(step.name == "step");
  CHECK(step.what == "simulated training steps");
  CHECK(step.option == StageReport::Option::kStepTimeMs);
  CHECK(step.items == 4);
  o.step_time_ms = 0;
  report = Run(*pipeline, o);
  REQUIRE(report.ok());
  for (const StageReport& s : report->stages) CHECK(s.name != "step");
}

TEST_CASE("--device cuda without a usable GPU fails and names the CUDA error") {
  if (device::CudaDeviceCount().ok() && *device::CudaDeviceCount() > 0) return;  // a GPU is here
  auto pipeline = data::ParsePipeline("range(4).batch(2)");
  REQUIRE(pipeline.ok());
  RunOptions o = HostOptions();
  o.staging.device = device::DeviceKind::kCuda;
  auto report = Run(*pipeline, o);
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == StatusCode::kFailedPrecondition);
  // auto falls back to host replicas and says why.
  o.staging.device = device::DeviceKind::kAuto;
  report = Run(*pipeline, o);
  REQUIRE(report.ok());
  CHECK(report->device == "cpu");
  CHECK_FALSE(report->notes.empty());
}

TEST_CASE("the records wire format: n+1 offsets, then the payloads") {
  std::vector<data::Element> batch(3);
  const char* payloads[] = {"ab", "", "cde"};
  for (int i = 0; i < 3; ++i) {
    batch[static_cast<size_t>(i)].kind = data::Element::Kind::kRecord;
    batch[static_cast<size_t>(i)].bytes = payloads[i];
  }
  REQUIRE(RecordsWireBytes(batch) == 8 * 4 + 5);
  std::string out(RecordsWireBytes(batch), '\xff');
  PackRecords(batch, out.data());
  uint64_t offsets[4];
  std::memcpy(offsets, out.data(), sizeof offsets);
  CHECK(offsets[0] == 0);
  CHECK(offsets[1] == 2);
  CHECK(offsets[2] == 2);
  CHECK(offsets[3] == 5);
  CHECK(out.substr(32) == "abcde");
  std::vector<data::Element> empty;
  std::string none(RecordsWireBytes(empty), '\xff');
  PackRecords(empty, none.data());
  CHECK(none == std::string(8, '\0'));
}

}  // namespace
}  // namespace tfdist::run
