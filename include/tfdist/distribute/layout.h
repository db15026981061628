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
#include <string>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/data/dataset.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/distribute/decide.h"

namespace tfdist::dist {

// One replica's batch in one global step.
struct ReplicaBatch {
  int64_t worker = 0;
  int64_t replica = 0;
  std::vector<data::Element> elements;
  bool padding = false;  // this replica had no data; TensorFlow feeds it an empty batch
};

struct Step {
  int64_t step = 0;  // 1-based
  std::vector<ReplicaBatch> batches;
  // Dropped: one worker, static batches, and some replica without data:
  // TensorFlow ends the iteration before this step.
  bool dropped = false;
};

struct WorkerLayout {
  int64_t worker = 0;
  std::vector<std::string> files;       // the file names it reads (file-based pipelines)
  std::vector<data::Element> elements;  // unbatched pipelines: its element stream
  std::vector<std::vector<data::Element>> batches;  // batched: its per-replica batches in order
  // Bytes it reads from the files: the framed records its readers consume,
  // plus (DATA with index files) the reads of its own records' payloads.
  uint64_t bytes_read = 0;
};

struct Layout {
  Decision decision;
  Topology topology;
  Api api = Api::kDistribute;
  std::vector<WorkerLayout> workers;  // all workers, or the one asked for
  std::vector<Step> steps;            // batched pipelines
};

// The distribution of `pipeline`, every worker's stream collected
// (Execution::OpenAll), then dealt out into global steps. Reads the data:
// layouts show real elements. At most options.max_elements elements of each
// worker's pipeline are read: with max_steps, more than that many before the
// last step is an error (Remedy::kFewerSteps); without, more at all is an
// error (Remedy::kPlanSteps).
// REQUIRES: options.worker and options.max_steps as DistributeOptions says.
// Error: InvalidArgument (impossible topology, FILE without files, too few
// files or elements for the workers), or the pipeline's own errors.
Result<Layout> PlanLayout(const data::Pipeline& pipeline, const DistributeOptions& options,
                          const data::BuildOptions& build);

// What a layout's summary reports, per worker and overall.
struct WorkerSummary {
  int64_t worker = 0;
  uint64_t files = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;          // payload bytes
  uint64_t batches = 0;        // per-replica batches it produced (empty splits included)
  uint64_t empty_batches = 0;  // of those and of the padding, the empty ones
  uint64_t idle_steps = 0;     // steps in which none of its replicas had data
  std::optional<uint64_t> bytes_read;  // WorkerLayout::bytes_read, when the pipeline ran
};

struct LayoutSummary {
  Decision decision;
  Topology topology;
  std::vector<WorkerSummary> workers;
  uint64_t steps = 0;
  uint64_t short_steps = 0;  // steps whose global batch is smaller than G
  bool dropped_step = false;
  // How records were counted: by running the pipeline, or (SummarizeFiles)
  // "N files from index files, M by scanning".
  std::string records_source = "counted by running the pipeline";
};

// The summary of a planned layout (all workers).
LayoutSummary Summarize(const Layout& layout);

// The same summary for FILE sharding, computed from the file names, the
// records of each file (from the folder's directory index or the file's
// FILE.idx when up to date, else by scanning the file) and arithmetic over
// them with the same split and step rules: the pipeline itself is not run.
// Applies when the ops after the reader are only shuffle, prefetch and one
// batch(G) without drop_remainder, for all workers and steps; nullopt
// otherwise. `progress` is called with the files counted so far and the
// total.
Result<std::optional<LayoutSummary>> SummarizeFiles(
    const data::Pipeline& pipeline, const DistributeOptions& options,
    const data::BuildOptions& build,
    const std::function<void(uint64_t, uint64_t)>& progress = nullptr);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_LAYOUT_H_
