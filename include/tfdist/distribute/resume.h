// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Resuming a preempted job: where every worker and replica stands at the
// end of a global step (the cursor), and the rest of that epoch's batches,
// from a replay of record ids (doc/resume.md).

#ifndef TFDIST_DISTRIBUTE_RESUME_H_
#define TFDIST_DISTRIBUTE_RESUME_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/data/dataset.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/distribute/decide.h"
#include "tfdist/distribute/layout.h"

namespace tfdist::dist {

struct ResumeOptions {
  // The last global step the job completed; 0: none. Counted across
  // epochs, as layouts number them, unless `epoch` is given.
  int64_t at_step = 0;
  // The epoch (1-based) step at_step is in, counted within it: only that
  // epoch is replayed; the passes before it are opened and closed unread,
  // which moves the shuffles' seed generators as far as reading them would
  // (where PassesSkipUnread). nullopt: the epochs before the step's are
  // replayed to find where it is.
  std::optional<int64_t> epoch;
  // A pipeline that repeats forever, iterated once and cut into epochs of
  // this many steps, as fit(steps_per_epoch=S) keeps one iterator across
  // its epochs: the epoch of step N is ceil(N / S), the replay starts at
  // the run's first step. nullopt: an epoch is a pass of the dataset.
  std::optional<int64_t> steps_per_epoch;
  // Keep each shuffle's buffer at the end of the step (ResumeCursor::
  // shuffles): memory of the buffers' ids, and the time to label them.
  bool shuffle_buffers = false;
  // A new topology for the rest of the epoch (doc/resume.md, "A different
  // topology"); nullopt:
  // the same.
  std::optional<Topology> to;
};

// A worker's per-replica batch sizes in delivery order, as runs of steps:
// (the sizes of its batches in one step, the steps in a row that have
// them). A split gives every full step the same sizes, so the runs are few
// whatever the steps.
using SizeRuns = std::vector<std::pair<std::vector<uint64_t>, uint64_t>>;

// One worker at the resume point.
struct WorkerCursor {
  int64_t worker = 0;
  // Records its replicas received in this epoch up to and including the
  // step, and will receive after it to the epoch's end.
  uint64_t consumed = 0;
  uint64_t remaining = 0;
  uint64_t remaining_bytes = 0;  // payload bytes of those
  // Per local replica, the same two counts.
  std::vector<uint64_t> replica_consumed, replica_remaining;
  // The per-replica batches its dataset gives after the step, in order
  // (the i-th to local replica i mod R), as runs of their sizes; padding
  // (after its data ended) is not part of its dataset and not counted.
  SizeRuns batch_sizes;
  uint64_t remaining_batches = 0;
  // Labels ("file:index") of its first and last record after the step.
  std::string first_remaining, last_remaining;
};

// A shuffle's buffer at the end of the step: what it has read and not
// given out yet.
struct ShuffleBuffer {
  int64_t worker = 0;  // whose pipeline; under a reading shared by every worker, the first
  size_t pos = 0;      // the shuffle's byte offset in that pipeline's text
  std::vector<std::string> elements;  // labels ("file:index", or a name), oldest first
};

struct ResumeCursor {
  Decision decision;
  Topology topology;
  int64_t epoch = 1;  // the epoch the step is in (1-based)
  // The global step, counted across epochs as the training loop counts
  // them (a dropped step is none); nullopt as first_step.
  std::optional<int64_t> at_step;
  int64_t step_in_epoch = 0;  // the same, counted within its epoch (0: before its first)
  int64_t epoch_steps = 0;    // steps of that epoch, a dropped one not counted
  // Global number of the epoch's first step; nullopt where the epochs
  // before it were skipped unread (ResumeOptions::epoch).
  std::optional<int64_t> first_step = 1;
  bool earlier_replayed = false;  // epochs before it were replayed to count their steps
  bool passes_skipped = false;    // epochs before it were opened and closed unread
  std::vector<WorkerCursor> workers;
  // Every shuffle's buffer at the end of the step (at the start of the
  // epoch for step 0), in the order their iterators were made.
  std::vector<ShuffleBuffer> shuffles;
  // The workers share one reading of the pipeline (DATA, OFF): `shuffles`
  // are its buffers.
  bool shared_reading = false;
  // Records received in the epoch in all, before and after the step; and
  // records read but not received (dropped) in the epoch.
  uint64_t consumed = 0, remaining = 0;
  // With a new topology: its cursor of the remainder.
  std::optional<Topology> to;
  std::vector<WorkerCursor> to_workers;
  int64_t to_steps = 0;
  int64_t to_global_batch = 0;  // the global batch the remainder is dealt in
};

// Where the remainder's batches go as they are found, in delivery order per
// worker (all workers' batches of a step before the next step's).
class RemainderSink {
 public:
  virtual ~RemainderSink() = default;
  // A per-replica batch of worker `worker` (of the topology the remainder
  // is dealt to) that its dataset gives, in its order. `elements` are record
  // ids (Element::Kind::kRecordId).
  virtual Status OnBatch(int64_t worker, int64_t replica, std::vector<data::Element>& elements) = 0;
};

// Why `pipeline` cannot be resumed exactly under `options`, or OK: a
// pipeline without batch() (no steps), an unseeded shuffle (no fixed order
// exists: `seeded` says whether a global seed seeds it), nondeterminism
// allowed (deterministic=False), stages whose output depends on the
// payloads (filter, ignore_errors, group_by_window and bucketing: tfdist
// does not run their functions), and a pipeline that repeats forever (its
// epoch never ends). Error: InvalidArgument naming the stage and its column.
// With `steps_per_epoch`, a pipeline that repeats forever is what is
// asked for, and one that ends is refused.
Status CheckResumable(const data::Pipeline& pipeline, const DistributeOptions& options,
                      bool global_seed, bool steps_per_epoch = false);

// Whether opening a pass and closing it unread leaves every reshuffling
// shuffle's seed generator where reading the whole pass would: each such
// shuffle makes its one iterator when the pass opens, none before a
// repeat(), a cache() or inside a concatenate()'s dataset.
bool PassesSkipUnread(const data::Pipeline& pipeline);

// The cursor at the end of global step options.at_step: replays the epoch
// it is in (and, without options.epoch, the epochs before it, to count
// their steps) with record ids, never payloads, and hands the batches after
// the step to the end of that epoch to `sink` (when given) in delivery
// order; with options.to, dealt to the new topology in global batches: the
// pipeline's batch(G) under experimental_distribute_dataset, b x W2 x R2
// under distribute_datasets_from_function (each replica keeps its b).
// Memory: the pipeline's buffers and one step; with a new topology, one
// global batch more.
// Error: InvalidArgument (CheckResumable; a step past the epochs' end,
// naming how many steps there are), the pipeline's own errors, or the
// sink's.
Result<ResumeCursor> LocateResume(const data::Pipeline& pipeline, const DistributeOptions& options,
                                  const data::BuildOptions& build, const ResumeOptions& resume,
                                  RemainderSink* sink = nullptr);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_RESUME_H_
