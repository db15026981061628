// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tf.distribute's input distribution: auto-sharding policies, the split of
// global batches into per-replica batches, and global steps.

#ifndef TFDIST_DISTRIBUTE_DISTRIBUTE_H_
#define TFDIST_DISTRIBUTE_DISTRIBUTE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/data/dataset.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/base/result.h"

namespace tfdist::dist {

// TensorFlow's AutoShardPolicy values (tf.data.experimental.AutoShardPolicy).
// DATA here is TensorFlow's round-robin: worker w keeps elements w, w+W, ...
// (not DALI's contiguous ranges).
enum class AutoShardPolicy { kOff = -1, kAuto = 0, kFile = 1, kData = 2, kHint = 3 };

Result<AutoShardPolicy> ParsePolicy(std::string_view text);  // "AUTO", "file", ...
std::string_view PolicyName(AutoShardPolicy policy);         // "AUTO", "FILE", ...

enum class Api {
  kDistribute,    // experimental_distribute_dataset
  kFromFunction,  // distribute_datasets_from_function
};

// How a global batch is split into per-replica batches.
enum class Split {
  kAuto,        // batch-sizes when the global batch size is static, else legacy
  kBatchSizes,  // RebatchDatasetV2 with batch_sizes_for_worker
  kLegacy,      // RebatchDataset: N pieces of ceil(b / N) per batch
  kNone,        // no split: each element is one replica's batch
};
Result<Split> ParseSplit(std::string_view text);  // "auto", "batch-sizes", "legacy", "none"
std::string_view SplitName(Split split);

struct Topology {
  int64_t workers = 1;   // W: input pipelines (hosts)
  int64_t replicas = 1;  // R: replicas in sync per worker (GPUs per host)
  int64_t num_replicas_in_sync() const { return workers * replicas; }
};

struct DistributeOptions {
  Api api = Api::kDistribute;
  AutoShardPolicy policy = AutoShardPolicy::kAuto;
  Split split = Split::kAuto;
  Topology topology;
  // Only this worker (nullopt: all workers).
  std::optional<int64_t> worker;
  // Global steps to plan (nullopt: until the data ends). A pipeline that
  // produces more than max_elements elements per worker without a step limit
  // is an error rather than a hang (repeat() forever).
  std::optional<int64_t> max_steps;
  int64_t max_elements = 1'000'000;
};

// The worker index and count a launcher put in the environment.
struct LauncherTopology {
  std::optional<int64_t> workers;
  std::optional<int64_t> worker;
  std::string source;  // "TF_CONFIG", "Open MPI", "Slurm", "torchrun"; empty: none
};

// Reads, in this order of precedence: TF_CONFIG (TensorFlow's cluster JSON:
// task.type/task.index over cluster.chief + cluster.worker, the chief being
// worker 0), Open MPI (OMPI_COMM_WORLD_RANK/SIZE), Slurm (SLURM_PROCID,
// SLURM_NTASKS), torchrun (RANK, WORLD_SIZE). `getenv` looks a name up.
// Error: InvalidArgument for malformed or contradictory values.
Result<LauncherTopology> TopologyFromEnvironment(
    const std::function<const char*(const char*)>& getenv);

// TensorFlow's batch_sizes_for_worker: floor = G // N, extra = G - N*floor;
// worker 0's sizes are [floor+1]*extra + [floor]*(N - extra); worker w uses
// that list rotated left by w*R. REQUIRES: G >= 0, W, R > 0, 0 <= w < W.
std::vector<int64_t> BatchSizesForWorker(int64_t global_batch_size, int64_t workers,
                                         int64_t replicas_per_worker, int64_t worker);

// RebatchDatasetV2: outputs cycle through `sizes`; each takes elements from
// the input batches, crossing batch boundaries, until it reaches its size or
// the input ends; a size of 0 gives an empty batch; the output ends when a
// batch of size > 0 gets no element (or a short one with drop_remainder).
std::vector<std::vector<data::Element>> RebatchBySizes(
    const std::vector<std::vector<data::Element>>& batches, const std::vector<int64_t>& sizes,
    bool drop_remainder);

// RebatchDataset (legacy): every batch of b elements becomes exactly n pieces
// of ceil(b / n) elements (trailing pieces may be short or empty).
std::vector<std::vector<data::Element>> RebatchLegacy(
    const std::vector<std::vector<data::Element>>& batches, int64_t n);

// The two splits as streams: input batches go in one at a time, and each
// per-replica batch comes out as soon as it is complete. RebatchBySizes and
// RebatchLegacy are this class over a whole list.
class BatchSplitter {
 public:
  // Split::kBatchSizes cuts with `sizes` (RebatchBySizes); Split::kLegacy
  // cuts every input batch into `pieces` (RebatchLegacy); Split::kNone and
  // kAuto pass input batches through.
  BatchSplitter(Split split, std::vector<int64_t> sizes, int64_t pieces, bool drop_remainder);

  // Takes one input batch; appends the per-replica batches now complete.
  void Add(std::vector<data::Element> batch, std::vector<std::vector<data::Element>>& out);
  // The input ended: appends what remains.
  void Finish(std::vector<std::vector<data::Element>>& out);

 private:
  // Emits the current piece and any size-0 pieces that follow it.
  void Advance(std::vector<std::vector<data::Element>>& out);

  Split split_;
  std::vector<int64_t> sizes_;
  int64_t pieces_;
  bool drop_remainder_;
  size_t index_ = 0;                   // batch-sizes: the size the current piece fills to
  std::vector<data::Element> current_;  // batch-sizes: the piece being filled
  bool started_ = false;
};

// What the pipeline allows and what was applied, with the reasons.
struct Decision {
  AutoShardPolicy requested = AutoShardPolicy::kAuto;
  AutoShardPolicy applied = AutoShardPolicy::kAuto;
  std::string reason;
  Split split = Split::kNone;
  std::string split_reason;
  bool batched = false;                      // the pipeline's elements are batches
  std::optional<int64_t> global_batch_size;  // static G, when known
  bool drop_remainder = false;               // of the final batch
  std::optional<uint64_t> num_files;         // file names reaching the reader (FILE)
  // DATA with index files: each worker reads only the records it keeps, by
  // offset (data::BuildOptions::use_record_index).
  bool record_index = false;
  std::vector<std::string> warnings;
};

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

// Plans and runs the distribution of `pipeline` (doc/semantics.md, "Auto-sharding", "Batch splits", "Replicas and steps"). Reads
// the data: layouts show real elements.
// Error: InvalidArgument (impossible topology, FILE without files, too few
// files or elements for the workers), or the pipeline's own errors.
Result<Layout> PlanLayout(const data::Pipeline& pipeline, const DistributeOptions& options,
                          const data::BuildOptions& build);

// What `layout --format summary` reports, per worker and overall.
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
// records of each file (from its DALI-style "FILE.idx" when present and up
// to date, else by scanning the file) and arithmetic: the pipeline itself is
// not run. Applies when the ops after the reader are only shuffle, prefetch
// and one batch(G); nullopt otherwise. `progress` is called with the files
// counted so far and the total.
Result<std::optional<LayoutSummary>> SummarizeFiles(
    const data::Pipeline& pipeline, const DistributeOptions& options,
    const data::BuildOptions& build,
    const std::function<void(uint64_t, uint64_t)>& progress = nullptr);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_DISTRIBUTE_H_
