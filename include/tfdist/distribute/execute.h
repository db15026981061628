// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The distribution as a stream: each worker's per-replica batches produced
// one at a time, in the order PlanLayout lays them out, in memory bounded by
// the pipeline's own buffers (not by the dataset).

#ifndef TFDIST_DISTRIBUTE_EXECUTE_H_
#define TFDIST_DISTRIBUTE_EXECUTE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "tfdist/data/dataset.h"
#include "tfdist/distribute/distribute.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/base/result.h"

namespace tfdist::dist {

// One worker's per-replica batches in order: the i-th goes to local replica
// i % R in step i / R + 1. A pipeline without batch() gives each element as a
// batch of one. Not thread-safe; one consumer.
class WorkerStream {
 public:
  // The next per-replica batch into `out`; `end` when the worker has no more.
  // Error: the pipeline's own errors; InvalidArgument when DATA sharding
  // finds fewer pieces than workers.
  Status Next(std::vector<data::Element>& out, bool& end);

  // Time spent splitting global batches into per-replica batches so far.
  double split_seconds() const { return split_seconds_; }

  // DATA with index files: bytes read by offset for the records this worker
  // keeps, so far (0 otherwise: the readers read whole files).
  uint64_t fetched_bytes() const { return fetcher_.bytes_read(); }

 private:
  friend class Execution;
  WorkerStream() = default;

  std::unique_ptr<data::Iterator> it_;
  bool batched_ = false;
  std::unique_ptr<BatchSplitter> splitter_;
  std::deque<std::vector<data::Element>> ready_;
  int64_t keep_every_ = 1;  // DATA: keep pieces p % keep_every_ == keep_index_
  int64_t keep_index_ = 0;
  uint64_t pieces_ = 0;  // pieces seen before the DATA filter
  bool input_done_ = false;
  double split_seconds_ = 0;
  // DATA with index files: the pipeline gives records without payloads,
  // read here once the DATA filter kept them.
  bool deferred_ = false;
  data::PayloadFetcher fetcher_;
};

// A distribution ready to run: the decision, and each worker's dataset.
class Execution {
 public:
  // Decides the policy and the split as PlanLayout does and builds the
  // dataset of every worker asked for (options.worker, else all).
  // Error: as PlanLayout's.
  static Result<Execution> Plan(const data::Pipeline& pipeline, const DistributeOptions& options,
                                const data::BuildOptions& build);

  const Decision& decision() const { return decision_; }
  const Topology& topology() const { return topology_; }
  bool batched() const { return batched_; }
  // The workers this execution runs, in order.
  const std::vector<int64_t>& workers() const { return workers_; }
  // TensorFlow's one exception to padding: one worker and statically shaped
  // batches (no split, drop_remainder): a step some replica has no data for
  // is dropped and the iteration ends.
  bool drops_short_step() const { return drops_short_step_; }
  // DATA with index files: each worker reads only the records it keeps
  // (decision().record_index; see data::BuildOptions::use_record_index).
  bool reads_by_index() const { return deferred_; }

  // A fresh pass (epoch) over worker `worker`'s batches; unseeded and
  // reshuffling shuffles draw a new order each pass, as in TensorFlow.
  // REQUIRES: `worker` is one of workers().
  Result<std::unique_ptr<WorkerStream>> Open(int64_t worker) const;

  // Bytes worker `worker`'s readers took from its files so far (framed
  // records, counted as each file is closed), not counting the payloads a
  // WorkerStream fetched by offset (WorkerStream::fetched_bytes).
  uint64_t FileBytesRead(int64_t worker) const;

 private:
  struct WorkerPlan {
    int64_t worker = 0;
    std::shared_ptr<const data::Dataset> dataset;
    std::shared_ptr<std::atomic<uint64_t>> bytes_read;  // BuildOptions::bytes_read
  };

  Decision decision_;
  Topology topology_;
  bool batched_ = false;
  bool drops_short_step_ = false;
  bool deferred_ = false;
  std::vector<int64_t> workers_;
  std::vector<WorkerPlan> plans_;
};

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_EXECUTE_H_
