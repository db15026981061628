// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The one execution of tf.distribute's rules: each worker's per-replica
// batches produced one at a time (its pipeline read, split, and sharded by
// DATA), in memory bounded by the pipeline's own buffers. `tfdist run`
// consumes these streams, and layouts collect them (layout.h).

#ifndef TFDIST_DISTRIBUTE_EXECUTE_H_
#define TFDIST_DISTRIBUTE_EXECUTE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/data/dataset.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/distribute/decide.h"
#include "tfdist/distribute/split.h"

namespace tfdist::dist {

// How a pass over a worker's stream is bounded and watched.
struct StreamOptions {
  // Compare a batch-sizes split with the legacy split as it runs
  // (WorkerStream::audit).
  bool audit_split = false;
};

// One reading of a pipeline whose elements several streams take (private).
class ElementTee;

// One worker's per-replica batches in order: the i-th goes to local replica
// LocalReplica(i, R) in step i / R + 1 (steps.h). A pipeline without batch()
// gives each element as a batch of one. Not thread-safe; one consumer.
class WorkerStream {
 public:
  // The next per-replica batch into `out`; `end` when the worker has no more.
  // Error: the pipeline's own errors; InvalidArgument when DATA sharding
  // finds fewer pieces than workers (CheckDataShare).
  Status Next(std::vector<data::Element>& out, bool& end);

  // Time spent splitting global batches into per-replica batches so far.
  double split_seconds() const { return split_seconds_; }
  // Elements of the worker's pipeline read so far.
  uint64_t elements_read() const { return elements_read_; }
  // With StreamOptions::audit_split under a batch-sizes split: the audit so
  // far (complete once the stream ended); else null.
  const SplitAudit* audit() const { return audit_ ? &*audit_ : nullptr; }

  // DATA read by index: bytes read by offset for the records this worker
  // keeps, so far (0 otherwise: the readers read whole files).
  uint64_t fetched_bytes() const { return fetcher_.bytes_read(); }
  // DATA read by index: the indexes found not to describe their files,
  // whose records were read by scanning instead (PayloadFetcher::notes).
  const std::vector<std::string>& fetch_notes() const { return fetcher_.notes(); }

 private:
  friend class Execution;
  WorkerStream() = default;
  // The next input element: into batch_ (batched) or as a piece of one.
  Status Read();
  // Cuts pieces of the input read so far into ready_, until one is kept
  // (with read_by_index_: until the input batch is used up, so that the kept
  // pieces' records are fetched together). False when the rule needs input.
  bool CutPieces();
  // Moves (or, from a shared batch, copies) the next n input elements to
  // the piece being filled, which holds at most `piece_size`.
  void TakeElements(uint64_t n, uint64_t piece_size);
  // A complete piece: kept (into ready_) or not, by DATA's filter.
  void Piece(std::vector<data::Element> piece);
  const std::vector<data::Element>& Items() const { return shared_ ? shared_->items : batch_; }

  std::unique_ptr<data::Iterator> it_;
  // Or a reading shared by several streams (Execution::OpenAll).
  std::shared_ptr<ElementTee> tee_;
  size_t reader_ = 0;
  bool batched_ = false;
  std::optional<SplitRule> rule_;
  std::optional<SplitAudit> audit_;
  // The input batch being cut: its own elements, or the shared reading's.
  std::vector<data::Element> batch_;
  std::shared_ptr<const data::Element> shared_;
  size_t at_ = 0;                                 // its next element to cut
  std::vector<data::Element> current_;            // the piece being filled
  std::deque<std::vector<data::Element>> ready_;  // kept pieces not handed out yet
  int64_t workers_ = 1;  // DATA: keep pieces KeepsPiece(p, workers_, worker_)
  int64_t worker_ = 0;
  bool shards_data_ = false;
  uint64_t made_ = 0;  // pieces made before the DATA filter
  uint64_t elements_read_ = 0;
  bool input_done_ = false;
  double split_seconds_ = 0;
  // DATA read by index: the pipeline gives record ids, whose payloads are
  // fetched here once the DATA filter kept them.
  bool read_by_index_ = false;
  data::PayloadFetcher fetcher_;
};

// A distribution ready to run: the decision, and each worker's dataset.
class Execution {
 public:
  // Expands list_files once, checks the topology, decides the policy and
  // the split (counting the file names FILE sharding needs), picks the run's
  // seed (so every worker draws the same unseeded shuffles, unless
  // DistributeOptions::worker_seeds), plans DATA by index files, and builds
  // the dataset of every worker asked for (options.worker, else all).
  // REQUIRES: options.worker and options.max_steps as DistributeOptions says.
  // Error: InvalidArgument (impossible topology, FILE without files, too few
  // files for the workers, a pipeline that does not build), or the
  // pipeline's own errors.
  static Result<Execution> Plan(const data::Pipeline& pipeline, const DistributeOptions& options,
                                const data::BuildOptions& build);

  const Decision& decision() const { return decision_; }
  const Topology& topology() const { return topology_; }
  bool batched() const { return decision_.batched; }
  // The workers this execution runs, in order.
  const std::vector<int64_t>& workers() const { return workers_; }
  // DropsShortStep of this execution's decision (steps.h).
  bool drops_short_step() const;
  // DATA read by index: each worker reads only the records it keeps.
  bool read_by_index() const { return read_by_index_; }

  // A fresh pass (epoch) over worker `worker`'s batches; unseeded and
  // reshuffling shuffles draw a new order each pass, as in TensorFlow.
  // REQUIRES: `worker` is one of workers().
  Result<std::unique_ptr<WorkerStream>> Open(int64_t worker,
                                             const StreamOptions& options = {}) const;

  // A pass over every worker of workers(), in that order. Where all run the
  // very same pipeline (DATA, OFF), its elements are read once and each
  // stream gets its copy; a stream far ahead of the others then holds the
  // elements they have yet to take. Not thread-safe: one consumer of all.
  Result<std::vector<std::unique_ptr<WorkerStream>>> OpenAll(const StreamOptions& options) const;

  // Whether OpenAll reads the pipeline once for all workers.
  bool reads_once() const { return same_for_all_ && workers_.size() > 1; }

  // Bytes worker `worker`'s readers took from its files so far (framed
  // records, counted as each file is closed), not counting the payloads a
  // WorkerStream fetched by offset (WorkerStream::fetched_bytes). A pass of
  // OpenAll that reads once counts under the first worker.
  uint64_t FileBytesRead(int64_t worker) const;

  // What worker `worker`'s pipeline read and dropped so far (bytes as
  // FileBytesRead; under reads_once(), counted under the first worker).
  const data::ReadCounters& Counters(int64_t worker) const;

  // from-function: what every worker's readers took from each file so far
  // (data::FileReadTally); null under Api::kDistribute.
  const data::FileReadTally* read_tally() const { return tally_.get(); }
  // The pipeline worker `worker` runs. REQUIRES: `worker` is one of workers().
  const data::Pipeline& PipelineOf(int64_t worker) const { return PlanOf(worker).pipeline; }

  // The first `limit` file names worker `worker` reads: its names pipeline
  // run (none for a pipeline that reads no files). REQUIRES: `worker` is one
  // of workers().
  Result<std::vector<std::string>> FileNamesOf(int64_t worker, uint64_t limit) const;

 private:
  struct WorkerPlan {
    int64_t worker = 0;
    data::Pipeline pipeline;
    data::BuildOptions build;  // its counters count its stages' reads and drops
    std::shared_ptr<const data::Dataset> dataset;
  };
  const WorkerPlan& PlanOf(int64_t worker) const;
  std::unique_ptr<WorkerStream> NewStream(int64_t worker, const StreamOptions& options) const;

  Decision decision_;
  Topology topology_;
  bool read_by_index_ = false;
  data::RecordIds record_ids_ = data::RecordIds::kNone;  // what fetched records keep
  bool same_for_all_ = false;                            // every worker runs the same pipeline
  std::vector<int64_t> workers_;
  std::vector<WorkerPlan> plans_;
  std::shared_ptr<data::FileReadTally> tally_;
};

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_EXECUTE_H_
