// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The report of a run from what its threads measured (private to src/run).

#ifndef TFDIST_RUN_REPORT_H_
#define TFDIST_RUN_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tfdist/io/byte_stream.h"
#include "tfdist/run/runner.h"

namespace tfdist::run {

// What one replica's packer and staging measured.
struct ReplicaMeasures {
  // Its counts as the training loop took them (worker, replica, device,
  // records, bytes, wire_bytes, batches, empty_batches), and its staging's
  // copy_seconds and pinned.
  ReplicaReport report;
  double pack_seconds = 0;  // packing or parsing into its slots
  uint64_t copies = 0;      // batches its staging delivered
};

// What one worker's producer and staging measured.
struct WorkerMeasures {
  uint64_t file_bytes = 0;   // framed record bytes read from files, and payloads fetched
  double read_seconds = 0;   // the whole pipeline, on the producer
  double split_seconds = 0;  // of read_seconds, the split
  uint64_t read_batches = 0;
  std::vector<std::string> notes;  // its staging's
  std::vector<ReplicaMeasures> replicas;
};

// What a run measured, once its threads are joined.
struct RunMeasures {
  double plan_seconds = 0;
  double setup_seconds = 0;
  // The process' inflate totals as the threads started and once joined.
  io::InflateTotals inflate_before;
  io::InflateTotals inflate_after;
  std::vector<WorkerMeasures> workers;  // in the order of RunReport::workers
};

// Adds the measures to `report`: its notes (each once, after those it has),
// replicas, totals, worker_bytes_read and stages, in the order Run
// (runner.h) gives them.
// REQUIRES: report.device, format, steps, wait_seconds, copy_wait_seconds
// and step_seconds are set, and report.stages and report.replicas are empty.
void AddMeasures(const RunMeasures& measures, RunReport& report);

}  // namespace tfdist::run

#endif  // TFDIST_RUN_REPORT_H_
