// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist run: the distribution executed for real. Each worker's pipeline is
// read, split and handed out to its replicas; every per-replica batch is
// packed into its wire format in a staging slot, copied to the replica's
// device, and consumed step by step, with the time of every stage measured.

#ifndef TFDIST_RUN_RUNNER_H_
#define TFDIST_RUN_RUNNER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/data/dataset.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/device/staging.h"
#include "tfdist/distribute/decide.h"
#include "tfdist/run/timeline.h"

namespace tfdist::run {

// How a per-replica batch travels (the manual, run).
//  * kRecords: n+1 little-endian uint64 offsets, then the n payloads back to
//    back (record i is bytes [off[i], off[i+1]) of the payload block).
//  * kFeatures: the dense columns of the declared features
//    (proto::DenseParser, from the pipeline's map(parse_example(...))).
enum class WireFormat { kRecords, kFeatures };

// The kRecords wire format of `batch`: its size, and the bytes written to
// `out` (which holds at least RecordsWireBytes(batch)).
uint64_t RecordsWireBytes(const std::vector<data::Element>& batch);
void PackRecords(const std::vector<data::Element>& batch, char* out);

// What the consumer sees at a step, in order, while the run goes on.
struct Progress {
  uint64_t records = 0;
  uint64_t bytes = 0;  // payload bytes delivered
  uint64_t steps = 0;
  double seconds = 0;
  std::optional<uint64_t> total_steps;  // when known (DistributeOptions::max_steps)
};

// The longest simulated training step RunOptions::step_time_ms takes: a day
// (sleeping longer overflows the clock's nanoseconds after about 292 years).
inline constexpr double kMaxStepTimeMs = 24 * 3600 * 1e3;

struct RunOptions {
  dist::DistributeOptions distribute;  // options.worker: one worker, else all
  data::BuildOptions build;
  // Passes over the data, each reshuffled. REQUIRES: >= 1.
  int64_t epochs = 1;
  device::StagingOptions staging;  // replicas are set from the topology
  // A training step of this long per global step (the replicas train in
  // parallel), so the report says whether the input keeps up.
  // REQUIRES: 0 <= step_time_ms <= kMaxStepTimeMs (not NaN).
  double step_time_ms = 0;
  // Called by the consumer about five times a second.
  std::function<void(const Progress&)> progress;
  // For a job of several hosts that step together (synchronous training):
  // called before each global step, on the thread that called Run, with
  // whether any replica run here has a batch and whether any has ended its
  // epoch; returns the same for the whole job, which decides the step on
  // every host (a host whose replicas are all done takes padded steps
  // while another has data, as tf.distribute's multi-worker iterator
  // does). An error stops the run with it.
  std::function<Result<std::pair<bool, bool>>(bool any_batch, bool any_end)> agree_step;
  // Called for every per-replica batch consumed (padding included, with no
  // elements), in step order. For tests: what each replica received.
  std::function<void(int64_t worker, int64_t replica, int64_t step,
                     const std::vector<data::Element>& batch)>
      on_batch;
  // Threads that pack (or parse) batches into staging slots, shared out
  // among the workers (at least one each, at most one per replica); 0 packs
  // on each worker's producer thread (fewest hand-offs). -1: for parsing,
  // as many as cores; for raw records, the cores less two (0 on two cores).
  // REQUIRES: >= -1.
  int64_t pack_threads = -1;
  // Where the run's threads record what they do (nullptr: nowhere): the
  // training loop (input wait, receive, step, the staging rings' fill),
  // each worker's reading, and each replica's slot wait, pack (or parse)
  // and copy. Must outlive Run, which closes it.
  Timeline* timeline = nullptr;
  // Tests: corrupt one staged batch of this local replica (of every worker)
  // after its checksum is taken, so verification must fail.
  std::optional<int64_t> corrupt_replica_for_testing;
  // Tests: this local replica's pinned allocations fail (of every worker), so
  // that it falls back to pageable memory and the report says so.
  std::optional<int64_t> fail_pinned_replica_for_testing;
};

// One row of the report's stage table.
struct StageReport {
  // The RunOptions field that asks for a stage that not every run has.
  enum class Option {
    kNone,
    kStepTimeMs,  // RunOptions::step_time_ms (the "step" stage)
  };

  std::string name;
  // What the stage covers, in this API's terms; a front end names `option`
  // after it in its own (a flag, say).
  std::string what;
  double seconds = 0;  // busy time, summed over the threads doing it
  uint64_t bytes = 0;
  uint64_t items = 0;  // records or batches, as `unit` says
  std::string unit;
  Option option = Option::kNone;
};

struct ReplicaReport {
  int64_t worker = 0;
  int64_t replica = 0;
  std::string device;  // "cpu", "cuda:0", ...
  uint64_t records = 0;
  uint64_t bytes = 0;       // payload bytes
  uint64_t wire_bytes = 0;  // bytes staged and copied (the wire format)
  uint64_t batches = 0;
  uint64_t empty_batches = 0;  // padding and empty splits
  double copy_seconds = 0;
  bool pinned = true;
};

struct RunReport {
  std::string device;  // "cpu" or "cuda"
  std::vector<std::string> notes;
  dist::Decision decision;
  dist::Topology topology;
  std::vector<int64_t> workers;  // the workers run
  WireFormat format = WireFormat::kRecords;
  int64_t epochs = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;  // payload bytes delivered
  uint64_t wire_bytes = 0;
  uint64_t batches = 0;
  uint64_t steps = 0;
  uint64_t dropped_steps = 0;
  double seconds = 0;
  double wait_seconds = 0;       // the consumer waited for input batches
  double copy_wait_seconds = 0;  // ... and for copies to finish
  double step_seconds = 0;       // simulated training steps
  // The warm-up and the steady state: from the start of the training loop
  // until the first step's input was ready (a shuffle buffer filled, the
  // first files opened), then from there to the end.
  double first_batch_seconds = 0;
  double steady_seconds = 0;
  uint64_t steady_steps = 0;    // steps after the first
  uint64_t steady_records = 0;  // records they delivered
  // The loop's wait for each step's input after the first: quantiles.
  double wait_p50_seconds = 0;
  double wait_p99_seconds = 0;
  double steady_wait_seconds = 0;  // the waits of the steps after the first, summed
  // With step_time_ms: the simulated step's length as measured, its mean
  // and p99 (to the microsecond up to 10 ms over step_time_ms) over every step.
  double step_mean_seconds = 0;
  double step_p99_seconds = 0;
  bool verified = false;
  std::vector<ReplicaReport> replicas;
  // Per worker run (as `workers`): framed record bytes read from its files,
  // the whole dataset under DATA without reading by index.
  std::vector<uint64_t> worker_bytes_read;
  std::vector<StageReport> stages;
};

// Runs the distribution of `pipeline` into the staging devices. The stages
// of the report are, in order: plan, setup, read, decompress (compressed
// input only), split, pack or parse, host-to-device (CUDA only), wait, copy
// wait, step (with step_time_ms only).
// REQUIRES: `options` meets RunOptions' REQUIRES (asserted).
// Error: the planning errors of layout, the pipeline's data errors
// (DataLoss naming file and offset), parse errors, a failed verification
// (DataLoss naming replica and batch), FailedPrecondition for
// DeviceKind::kCuda without a usable GPU, Cancelled on SIGINT/SIGTERM;
// InvalidArgument with Remedy::kOneWorker when the workers run here need
// more local replicas than one host runs.
Result<RunReport> Run(const data::Pipeline& pipeline, const RunOptions& options);

}  // namespace tfdist::run

#endif  // TFDIST_RUN_RUNNER_H_
