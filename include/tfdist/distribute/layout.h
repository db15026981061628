// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Layouts: what every worker and replica of tf.distribute receives, step by
// step, collected from the workers' streams (execute.h); and their
// summaries, also computed from per-file record counts where FILE sharding
// allows (doc/semantics.md, "Replicas and steps").

#ifndef TFDIST_DISTRIBUTE_LAYOUT_H_
#define TFDIST_DISTRIBUTE_LAYOUT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/data/dataset.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/distribute/decide.h"
#include "tfdist/distribute/execute.h"
#include "tfdist/distribute/grouped.h"

namespace tfdist::dist {

// One replica's batch in one global step.
struct ReplicaBatch {
  int64_t worker = 0;
  int64_t replica = 0;
  std::vector<data::Element> elements;
  bool padding = false;  // this replica had no data; TensorFlow feeds it an empty batch
};

struct Step {
  int64_t step = 0;   // 1-based, numbered on across epochs
  int64_t epoch = 1;  // 1-based (DistributeOptions::epochs)
  std::vector<ReplicaBatch> batches;
  // Dropped: one worker, static batches, and some replica without data:
  // TensorFlow ends the iteration before this step.
  bool dropped = false;
};

struct WorkerLayout {
  int64_t worker = 0;
  std::vector<std::string> files;                   // the file names its readers took
  std::vector<data::Element> elements;              // unbatched pipelines: its element stream
  std::vector<std::vector<data::Element>> batches;  // batched: its per-replica batches in order
  // Bytes it reads from the files: the framed records its readers consume,
  // plus (DATA read by index) the reads of its own records' payloads.
  uint64_t bytes_read = 0;
};

struct Layout {
  Decision decision;
  Topology topology;
  Api api = Api::kDistribute;
  std::vector<WorkerLayout> workers;  // all workers, or the one asked for
  std::vector<Step> steps;            // batched pipelines
};

// What a layout's summary reports of one worker, kept as the layout streams
// by (or computed from per-file record counts by SummarizeFiles).
struct WorkerSummary {
  int64_t worker = 0;
  uint64_t files = 0;    // file names its readers took
  uint64_t records = 0;  // records its replicas receive
  uint64_t bytes = 0;    // their payload bytes
  // Records its pipeline read that no replica receives:
  uint64_t dropped_remainder = 0;  // short final batches of batch(drop_remainder=True)
  uint64_t skipped = 0;            // passed over by skip()
  uint64_t dropped_step = 0;       // in a dropped step (DropsShortStep)
  uint64_t batches = 0;            // per-replica batches it produced (empty splits included)
  uint64_t empty_batches = 0;      // of those and of the padding, the empty ones
  uint64_t idle_steps = 0;         // steps in which none of its replicas had data
  // Per-replica batch sizes it produced (padding not counted), when any.
  std::optional<uint64_t> smallest_batch, largest_batch;
  std::optional<uint64_t> bytes_read;  // WorkerLayout::bytes_read, when the pipeline ran
  // from-function: the records its readers took from files (a file read
  // twice counted twice), its own.
  std::optional<uint64_t> records_read;
  std::vector<std::string> file_names;  // with LayoutOptions::list_files

  uint64_t dropped() const { return dropped_remainder + skipped + dropped_step; }
  // Counts one per-replica batch of `size` records it produced.
  void AddBatch(uint64_t size) { AddBatches(size, 1); }
  // Counts `count` of them.
  void AddBatches(uint64_t size, uint64_t count);
};

// from-function: the records the workers' readers took, measured
// (data::FileReadTally): each worker reads what its own function gives it.
struct ReadOverlap {
  uint64_t total = 0;     // over all workers (WorkerSummary::records_read), every pass
  uint64_t distinct = 0;  // read by at least one worker
  uint64_t shared = 0;    // of those, read by more than one worker
  int64_t passes = 1;     // epochs begun
  // Records in the files of the functions' lists that no worker opened,
  // where every function lists its files in the pipeline (names, then only
  // shuffle, shard and prefetch before the reader) and the data ended.
  std::optional<uint64_t> unread;

  // How many times over the records were read in a pass: total / (distinct
  // * passes), 1 when nothing was read.
  double Amplification() const;
};

struct LayoutSummary {
  Decision decision;  // with the warnings found while the layout streamed
  Topology topology;
  std::vector<WorkerSummary> workers;
  uint64_t steps = 0;        // global steps, a dropped one included
  uint64_t short_steps = 0;  // steps whose global batch is smaller than G
  bool dropped_step = false;
  // The data ended within the plan (false: max_steps ended it first, and
  // the drops are those seen so far).
  bool complete = true;
  // WorkerSummary::bytes counts the records dropped by drop_remainder pro
  // rata of their files' payload (SummarizeFiles counts records, not their
  // sizes).
  bool bytes_estimated = false;
  // How records were counted: by running the pipeline (and why, where a
  // stage kept SummarizeFiles from applying: ", as filter(f) (column C)
  // ..."), or (SummarizeFiles) "N files from index files, M by scanning".
  std::string records_source = "counted by running the pipeline";
  // A pipeline that groups by the data (group_by_window,
  // bucket_by_sequence_length): the rows are the elements each worker's
  // pipeline gives up to the grouping (exact, unbatched), and these are the
  // bounds of its batches and steps (no step is exact; decision.batched is
  // false, as no batch is shown).
  std::optional<GroupedSummary> grouped;
  // from-function: the workers' reads, measured; nullopt otherwise.
  std::optional<ReadOverlap> reads;

  // Every worker runs the whole of the same pipeline (DATA or OFF over
  // several workers): they read, and drop, the same records. From-function:
  // the function does not shard by its context, and the reads measured
  // agree (every record read by each worker once).
  bool SharedInput() const;
  // The rows whose drops are distinct records: all, or under SharedInput()
  // the first (every worker drops the same ones).
  std::span<const WorkerSummary> DroppingRows() const;
  // Records the replicas receive, over all workers.
  uint64_t ReceivedRecords() const;
  // Records no replica receives, each counted once.
  uint64_t DroppedRecords() const;
  // Records read, each counted once: those received (once, under OFF) and
  // those dropped; from-function, those its readers took (ReadOverlap).
  uint64_t DistinctRecords() const;
};

// One pass over every worker's stream of an execution (a new iterator each,
// as each epoch of fit() makes), dealt into global steps: step k takes R
// batches from every worker; a replica whose worker has no more gets an
// empty batch (padding) while any replica has data (NextStep), and under
// DropsShortStep such a step is dropped and ends the pass. StreamLayout
// and resumes deal their steps with it. Not thread-safe: one consumer.
class StepDealer {
 public:
  // Opens the pass (Execution::OpenAll).
  static Result<StepDealer> Open(const Execution& ex, const StreamOptions& options);

  // The next step's batches into step.batches (every worker's R batches,
  // in the order of ex.workers(), then of the replicas) and step.dropped;
  // step.step and step.epoch are the caller's. `end` when no replica has a
  // batch: the pass is over, and `step` holds nothing. A dropped step is
  // handed out, and the call after it ends the pass.
  Status Next(Step& step, bool& end);

  // Whether every worker's stream ended (false after a dropped step that
  // left some data, or before the end).
  bool AllEnded() const;
  const std::vector<std::unique_ptr<WorkerStream>>& streams() const { return streams_; }
  // Closes the streams (their readers then count the bytes they read).
  void Close() { streams_.clear(); }

 private:
  StepDealer() = default;
  const Execution* ex_ = nullptr;
  std::vector<std::unique_ptr<WorkerStream>> streams_;
  std::vector<bool> ended_;
  bool drops_short_step_ = false;
  bool over_ = false;
};

// Where a streaming layout goes, step by step: each call in order, and any
// error it returns ends the layout with that error. The defaults ignore.
class LayoutSink {
 public:
  virtual ~LayoutSink() = default;
  // First: the decision as planned (its warnings so far).
  virtual Status Begin(const Decision& /*decision*/) { return Status::OK(); }
  // A batched pipeline: every global step in order, with the batches of the
  // worker asked for only (DistributeOptions::worker), else of all.
  virtual Status OnStep(const Step& /*step*/) { return Status::OK(); }
  // An unbatched pipeline: the workers shown, one after another, each as
  // its elements and then its row.
  virtual Status OnElement(int64_t /*worker*/, const data::Element& /*element*/) {
    return Status::OK();
  }
  virtual Status OnWorkerEnd(const WorkerSummary& /*row*/) { return Status::OK(); }
  // Last: the totals of every worker, and the warnings found on the way.
  virtual Status End(const LayoutSummary& /*summary*/) { return Status::OK(); }
};

struct LayoutOptions {
  // WorkerSummary::file_names filled in (memory: one name per file read).
  bool list_files = false;
  // Records keep their labels (LabelMode::kPayload; data::RecordIds::kLabelled),
  // else their ids alone (kIds). A layout never holds a payload.
  bool labels = false;
};

// A pipeline that groups by the data (FindGrouping) streams as the pipeline
// up to the grouping (each worker's elements, exact), with the split the
// whole pipeline gets and LayoutSummary::grouped set at the end; max_steps
// and epochs bound the steps, not the elements shown (one epoch). Error:
// InvalidArgument for ops after the grouping that cannot be bounded
// (CheckAfterGrouping), a grouping of batches, and DATA over several
// workers.
//
// The distribution of `pipeline`, streamed: every worker's stream
// (Execution::OpenAll) dealt out into global steps, handed to `sink` as
// they are made, and the summary kept as they go. Memory holds one step
// and one row per worker, whatever the data or the steps; every worker runs
// (the steps and the checks need them all), options.worker only selects
// what `sink` is shown. Reads the data: layouts show real elements, each
// record read and checked, and held as its id (and label) without its
// payload, whatever build.record_ids says (LayoutOptions::labels). With
// max_steps, at most that many steps (an unbatched pipeline: elements a
// worker).
// REQUIRES: options.worker and options.max_steps as DistributeOptions says.
// Error: InvalidArgument (impossible topology, FILE without files, too few
// files or elements for the workers, a pipeline that repeats forever
// without max_steps: Remedy::kPlanSteps), the pipeline's own errors, or
// the sink's.
Status StreamLayout(const data::Pipeline& pipeline, const DistributeOptions& options,
                    const data::BuildOptions& build, LayoutSink& sink,
                    const LayoutOptions& layout_options = {});

// StreamLayout collected whole, with labels, for tests and small tools
// (memory grows with the layout).
Result<Layout> PlanLayout(const data::Pipeline& pipeline, const DistributeOptions& options,
                          const data::BuildOptions& build);

// StreamLayout's summary alone.
Result<LayoutSummary> SummarizeLayout(const data::Pipeline& pipeline,
                                      const DistributeOptions& options,
                                      const data::BuildOptions& build,
                                      const LayoutOptions& layout_options = {});

// The summary of a collected layout (all workers), counted from its
// elements: for tests against the streaming one. Drops and bytes read are
// not in a Layout and stay 0.
LayoutSummary Summarize(const Layout& layout);

// The warnings of a summary's accounting, added to summary.decision: records
// that no replica receives (with the fraction), and an epoch in which none
// is received (Severity::kError: no step, or steps of empty batches). Only
// for a complete summary.
void AddAccountingWarnings(LayoutSummary& summary);

// The same summary for FILE sharding, computed from the file names, the
// records of each file (from the folder's directory index or the file's
// FILE.idx when up to date, else by scanning the file) and arithmetic over
// them with the same split and step rules: the pipeline itself is not run.
// Applies when the ops after the reader are one batch(G) (a number;
// drop_remainder or not) and stages that give an element for each they
// take (shuffle, prefetch, cache, map, parse_example), for all
// workers and steps; nullopt otherwise. Where a stage is all that keeps it
// from applying (filter, ignore_errors, or one that changes the number of
// elements: take, skip, repeat, shard, unbatch, rebatch, a second batch,
// concatenate), `why_run` (when given) is set to a sentence naming it.
// `progress` is called with the files counted so far and the total.
Result<std::optional<LayoutSummary>> SummarizeFiles(
    const data::Pipeline& pipeline, const DistributeOptions& options,
    const data::BuildOptions& build,
    const std::function<void(uint64_t, uint64_t)>& progress = nullptr,
    std::string* why_run = nullptr);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_LAYOUT_H_
