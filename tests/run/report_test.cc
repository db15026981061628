// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The report of a run from its measures (src/run/report.h): the stage table
// in its order, the rows a run may lack, the totals over workers and
// replicas, and each note once.

#include "report.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "wait_histogram.h"

namespace tfdist::run {
namespace {

ReplicaMeasures Replica(int64_t worker, int64_t replica, uint64_t records) {
  ReplicaMeasures r;
  r.report.worker = worker;
  r.report.replica = replica;
  r.report.records = records;
  r.report.bytes = 10 * records;
  r.report.wire_bytes = 10 * records + 8 * (records + 1);
  r.report.batches = 3;
  r.report.copy_seconds = 0.5;
  r.pack_seconds = 0.25;
  r.copies = 2;
  return r;
}

// Two workers of two replicas each, with the same note and one of their own.
RunMeasures TwoWorkers() {
  RunMeasures m;
  m.plan_seconds = 1;
  m.setup_seconds = 2;
  for (int64_t w = 0; w < 2; ++w) {
    WorkerMeasures& wm = m.workers.emplace_back();
    wm.file_bytes = 1000 + static_cast<uint64_t>(w);
    wm.read_seconds = 3;
    wm.split_seconds = 1;
    wm.read_batches = 5;
    wm.notes = {"no usable CUDA device; using host replicas", "worker " + std::to_string(w)};
    wm.replicas = {Replica(w, 0, 4), Replica(w, 1, 6)};
  }
  return m;
}

std::vector<std::string> Names(const RunReport& r) {
  std::vector<std::string> out;
  for (const StageReport& s : r.stages) out.push_back(s.name);
  return out;
}

TEST_CASE("host replicas: plan, setup, read, split, pack, wait, copy wait") {
  RunReport report;
  report.device = "cpu";
  report.wait_seconds = 0.5;
  report.copy_wait_seconds = 0.25;
  AddMeasures(TwoWorkers(), report);
  CHECK(Names(report) ==
        std::vector<std::string>{"plan", "setup", "read", "split", "pack", "wait", "copy wait"});
  CHECK(report.stages[0].seconds == 1);
  CHECK(report.stages[1].seconds == 2);
  CHECK(report.stages[1].what == "host replicas' staging rings");
  const StageReport& read = report.stages[2];
  CHECK(read.seconds == 6);
  CHECK(read.bytes == 2001);
  CHECK(read.items == 10);
  CHECK(read.unit == "batches");
  const StageReport& split = report.stages[3];
  CHECK(split.seconds == 2);
  CHECK(split.items == 10);
  const StageReport& pack = report.stages[4];
  CHECK(pack.what == "records and offsets into the staging slot");
  CHECK(pack.seconds == 1);
  CHECK(pack.items == 20);
  CHECK(pack.bytes == report.wire_bytes);
  CHECK(report.stages[5].seconds == 0.5);
  CHECK(report.stages[6].seconds == 0.25);
  for (const StageReport& s : report.stages) CHECK(s.option == StageReport::Option::kNone);
}

TEST_CASE("CUDA, compressed input, parsing and a step time add and rename rows") {
  RunReport report;
  report.device = "cuda";
  report.format = WireFormat::kFeatures;
  report.steps = 7;
  report.step_seconds = 0.7;
  RunMeasures m = TwoWorkers();
  m.inflate_before = {1.0, 100};
  m.inflate_after = {1.5, 400};
  AddMeasures(m, report);
  CHECK(Names(report) == std::vector<std::string>{"plan", "setup", "read", "decompress", "split",
                                                  "parse", "host-to-device", "wait", "copy wait",
                                                  "step"});
  CHECK(report.stages[1].what ==
        "CUDA devices, streams and events for every replica (the driver's start-up)");
  const StageReport& decompress = report.stages[3];
  CHECK(decompress.seconds == 0.5);
  CHECK(decompress.bytes == 300);
  CHECK(report.stages[5].what == "parse_example into dense columns in the staging slot");
  const StageReport& copy = report.stages[6];
  CHECK(copy.seconds == 2);
  CHECK(copy.items == 8);
  CHECK(copy.bytes == report.wire_bytes);
  const StageReport& step = report.stages[9];
  CHECK(step.what == "simulated training steps");
  CHECK(step.option == StageReport::Option::kStepTimeMs);
  CHECK(step.seconds == 0.7);
  CHECK(step.items == 7);
  CHECK(step.unit == "steps");
}

TEST_CASE("totals add up every replica; notes come once, after the report's own") {
  RunReport report;
  report.device = "cpu";
  report.notes = {"worker 1"};
  AddMeasures(TwoWorkers(), report);
  CHECK(report.records == 20);
  CHECK(report.bytes == 200);
  CHECK(report.wire_bytes == 2 * (80 + 116));
  CHECK(report.batches == 12);
  CHECK(report.worker_bytes_read == std::vector<uint64_t>{1000, 1001});
  REQUIRE(report.replicas.size() == 4);
  CHECK(report.replicas[2].worker == 1);
  CHECK(report.replicas[2].replica == 0);
  CHECK(report.replicas[3].records == 6);
  CHECK(report.notes == std::vector<std::string>{
                            "worker 1", "no usable CUDA device; using host replicas", "worker 0"});
}

}  // namespace
}  // namespace tfdist::run

namespace tfdist::run {
namespace {

TEST_CASE("WaitHistogram: quantiles within a bucket's width, in bounded memory") {
  WaitHistogram h;
  CHECK(h.Quantile(0.5) == 0);
  for (int i = 0; i < 98; ++i) h.Add(0);  // most steps do not wait
  h.Add(1e-3);                            // one waits 1 ms
  h.Add(2.0);                             // one 2 s (a shuffle buffer)
  CHECK(h.count() == 100);
  CHECK(h.Quantile(0.5) == 0);
  CHECK(h.Quantile(0.98) == 0);
  CHECK(h.Quantile(0.99) == doctest::Approx(1e-3).epsilon(0.07));
  CHECK(h.Quantile(1.0) == doctest::Approx(2.0).epsilon(0.07));
  WaitHistogram g;
  for (int i = 1; i <= 1000; ++i) g.Add(i * 1e-6);  // 1 us .. 1 ms
  CHECK(g.Quantile(0.5) == doctest::Approx(500e-6).epsilon(0.07));
  CHECK(g.Quantile(0.99) == doctest::Approx(990e-6).epsilon(0.07));
  g.Add(1e9);  // beyond the range: the last bucket, not a crash
  CHECK(g.Quantile(1.0) > 1e5);
  g.Add(-1);  // a clock that stepped back counts as no wait
  CHECK(g.count() == 1002);
}

}  // namespace
}  // namespace tfdist::run
