// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The report's notes, totals and stage table.

#include "report.h"

#include <algorithm>

namespace tfdist::run {

void AddMeasures(const RunMeasures& m, RunReport& report) {
  // Every worker's staging says the same of the device: a note is given once.
  for (const WorkerMeasures& w : m.workers) {
    for (const std::string& note : w.notes) {
      if (std::find(report.notes.begin(), report.notes.end(), note) == report.notes.end()) {
        report.notes.push_back(note);
      }
    }
  }
  const bool parsed = report.format == WireFormat::kFeatures;
  StageReport read{"read",
                   "the whole pipeline: read, CRC checks, decompression, shuffle, batch; MB "
                   "read from the files",
                   0,
                   0,
                   0,
                   "batches"};
  StageReport split{"split",  "global batches into per-replica batches (part of read)", 0, 0, 0,
                    "batches"};
  StageReport pack{parsed ? "parse" : "pack",
                   parsed ? "parse_example into dense columns in the staging slot"
                          : "records and offsets into the staging slot",
                   0,
                   0,
                   0,
                   "records"};
  StageReport copy{
      "host-to-device", "cudaMemcpyAsync from the slots, timed by CUDA events", 0, 0, 0, "batches"};
  for (const WorkerMeasures& w : m.workers) {
    report.worker_bytes_read.push_back(w.file_bytes);
    read.bytes += w.file_bytes;
    read.seconds += w.read_seconds;
    split.seconds += w.split_seconds;
    split.items += w.read_batches;
    read.items += w.read_batches;
    for (const ReplicaMeasures& r : w.replicas) {
      const ReplicaReport& rr = r.report;
      pack.seconds += r.pack_seconds;
      pack.items += rr.records;
      pack.bytes += rr.wire_bytes;
      copy.seconds += rr.copy_seconds;
      copy.bytes += rr.wire_bytes;
      copy.items += r.copies;
      report.records += rr.records;
      report.bytes += rr.bytes;
      report.wire_bytes += rr.wire_bytes;
      report.batches += rr.batches;
      report.replicas.push_back(rr);
    }
  }
  const bool cuda = report.device == "cuda";
  report.stages = {
      {"plan", "list files, decide the policy and split, build the pipelines", m.plan_seconds, 0, 0,
       ""},
      {"setup",
       cuda ? "CUDA devices, streams and events for every replica (the driver's start-up)"
            : "host replicas' staging rings",
       m.setup_seconds, 0, 0, ""},
      read};
  if (m.inflate_after.bytes > m.inflate_before.bytes) {
    report.stages.push_back({"decompress", "zlib inflate on the reader threads (part of read)",
                             m.inflate_after.seconds - m.inflate_before.seconds,
                             m.inflate_after.bytes - m.inflate_before.bytes, 0, ""});
  }
  report.stages.push_back(split);
  report.stages.push_back(pack);
  // Host replicas read their slots in place: no copy to time.
  if (cuda) report.stages.push_back(copy);
  report.stages.push_back(
      {"wait", "the training loop waited for input batches", report.wait_seconds, 0, 0, ""});
  report.stages.push_back({"copy wait", "the training loop waited for copies to finish",
                           report.copy_wait_seconds, 0, 0, ""});
  if (report.step_seconds > 0) {
    report.stages.push_back({"step", "simulated training steps", report.step_seconds, 0,
                             report.steps, "steps", StageReport::Option::kStepTimeMs});
  }
}

}  // namespace tfdist::run
