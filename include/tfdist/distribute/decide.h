// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tf.distribute's decisions, pure: the topology, the auto-shard policy and
// the batch split that apply to a pipeline, with their reasons and warnings.
// No I/O and no threads: the facts that need the data (how many file names
// reach the reader) are arguments. doc/semantics.md, "Auto-sharding" and
// "Batch splits", states the rules in words.

#ifndef TFDIST_DISTRIBUTE_DECIDE_H_
#define TFDIST_DISTRIBUTE_DECIDE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/distribute/shape.h"

namespace tfdist::dist {

// TensorFlow's AutoShardPolicy values (tf.data.experimental.AutoShardPolicy),
// and HINT. DATA here is TensorFlow's round-robin: worker w keeps pieces
// w, w+W, ... (not DALI's contiguous ranges).
enum class AutoShardPolicy { kOff = -1, kAuto = 0, kFile = 1, kData = 2, kHint = 3 };

// "AUTO", "file", ..., or TensorFlow's "tf.data.experimental.AutoShardPolicy.DATA".
Result<AutoShardPolicy> ParsePolicy(std::string_view text);
std::string_view PolicyName(AutoShardPolicy policy);  // "AUTO", "FILE", ...

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

// The most global steps a plan takes: far beyond any training run, and small
// enough that step arithmetic cannot overflow.
inline constexpr int64_t kMaxSteps = int64_t{1} << 30;
// The most workers a topology may have: far beyond any published
// tf.distribute job (thousands of hosts), and a bound on the memory a
// layout holds per worker.
inline constexpr int64_t kMaxWorkers = 65536;

struct DistributeOptions {
  Api api = Api::kDistribute;
  AutoShardPolicy policy = AutoShardPolicy::kAuto;
  Split split = Split::kAuto;
  Topology topology;
  // Only this worker (nullopt: all workers). REQUIRES: in [0, workers).
  std::optional<int64_t> worker;
  // Global steps to plan (nullopt: until the data ends), over all epochs.
  // REQUIRES: in [0, kMaxSteps].
  std::optional<int64_t> max_steps;
  // Passes over each worker's dataset, one after another, as fit(epochs=N)
  // makes them: a new iterator each, whose shuffles draw their next seeds.
  // REQUIRES: >= 1.
  int64_t epochs = 1;
  // Api::kFromFunction: worker w's own pipeline, (*worker_pipelines)[w],
  // where the input function gives each worker a different one (a traced
  // function that computes with input_pipeline_id); null: every worker
  // runs the pipeline given, with its input context.
  // REQUIRES: null, or one pipeline per worker.
  std::shared_ptr<const std::vector<data::Pipeline>> worker_pipelines;
  // tfdist's own shortcut, never TensorFlow's: under DATA sharding with
  // several workers, when every file the reader opens has an up-to-date
  // index, each worker reads only its own records. Off: every worker reads
  // every file, as TensorFlow does (what layouts report).
  bool read_by_index = false;
  // Every worker draws its own order for shuffles without any seed
  // (data::BuildOptions::default_seed: worker 0 the run's, the others one
  // made from it), as the separate processes of a TensorFlow job do, where
  // layouts give all workers of Api::kDistribute the run's (one order, as
  // if the job were seeded). From-function workers always draw their own.
  bool worker_seeds = false;
};

// What a warning is about; its message says it in the API's terms and its
// advice (if any) says what to do.
enum class WarningKind {
  kDataReadsEverything,        // DATA: every worker reads the whole dataset
  kBatchSizesUnderData,        // a batch-sizes split asked for under DATA
  kGuideVersusCode,            // the split differs from the guide's legacy split
  kUnevenFiles,                // FILE over files of uneven record counts
  kShardAfterUnseededShuffle,  // from-function: shard() after an unseeded shuffle of names
  kIndexNotUsed,               // DATA read by index: a stale index
  kDirectoryIndexIgnored,      // a damaged directory index
  kFunctionDoesNotShard,       // from-function: every worker feeds the same records
  kRecordsDropped,             // records no replica receives in an epoch
  kNoSteps,                    // an epoch that feeds no record (an error-level warning)
  kFilterUpperBound,           // filter() counted as keeping everything: counts are upper bounds
  kUnseededShuffle,            // a shuffle with no seed at all: random in TensorFlow
  kFileListedTwice,            // list_files: a file matched twice (kept, as TensorFlow does)
  kTwoShardSets,               // list_files: two -of-N sets of one prefix
  kGroupedBounds,              // group_by_window: batches and steps are bounds
  kScalarRebatch,              // no batch(), several in sync: TensorFlow's rebatch fails
};

enum class Severity {
  kWarning,
  kError,  // the run would not train at all; the layout is still shown
};

struct Warning {
  WarningKind kind;
  std::string message;
  Advice advice;
  Severity severity = Severity::kWarning;

  bool operator==(const Warning&) const = default;
};

// What the pipeline allows and what was applied, with the reasons.
struct Decision {
  AutoShardPolicy requested = AutoShardPolicy::kAuto;
  AutoShardPolicy applied = AutoShardPolicy::kAuto;
  std::string reason;
  Split split = Split::kNone;
  std::string split_reason;
  // The split is the one DistributeOptions::split asked for (its reason
  // then says which).
  bool split_requested = false;
  bool batched = false;                      // the pipeline's elements are batches
  std::optional<int64_t> global_batch_size;  // static G, when known
  bool drop_remainder = false;               // of the final batch
  std::optional<uint64_t> num_files;         // file names reaching the reader, counted up to W
  // DATA read by index: each worker reads only the records it keeps, by
  // offset.
  bool read_by_index = false;
  // from-function: the input function shards by its input context
  // (PipelineShape::shards_by_context).
  bool function_shards = false;
  std::vector<Warning> warnings;

  // Whether the FILE rewrite runs: FILE applied over several workers.
  bool ShardsFiles(const Topology& t) const {
    return applied == AutoShardPolicy::kFile && t.workers > 1;
  }
  // Whether DATA filters pieces: DATA applied over several workers.
  bool ShardsData(const Topology& t) const {
    return applied == AutoShardPolicy::kData && t.workers > 1;
  }
  void Warn(WarningKind kind, std::string message, Advice advice = {},
            Severity severity = Severity::kWarning) {
    warnings.push_back({kind, std::move(message), std::move(advice), severity});
  }
  bool HasWarning(WarningKind kind) const;
};

// The topology must have workers and replicas, at most kMaxWorkers
// workers, and not more replicas in sync than a table can hold (1 << 20).
// Error: InvalidArgument saying which.
Status CheckTopology(const Topology& topology);

// The policy and the split tf.distribute applies to a pipeline of `shape`
// under Api::kDistribute, with the reasons and the warnings they imply.
// With one replica in sync nothing is split (Split::kNone), whatever the
// policy and the split asked for, as tf.distribute adds no rebatch then.
// Error: InvalidArgument when FILE is asked for and cannot apply over several
// workers, or a batch-sizes split is asked for without a static batch size
// over several replicas in sync.
Result<Decision> Decide(const PipelineShape& shape, const DistributeOptions& options);

// FILE over several workers needs a file name per worker: `found` names
// reach the reader (counted up to W). Zero is no error: nobody reads.
// Error: InvalidArgument naming both numbers (Remedy::kDataPolicyOrMoreFiles).
Status CheckFileCount(uint64_t found, int64_t workers);

// What distribute_datasets_from_function does: no policy, no split; and the
// warning for a shard after an unseeded shuffle of file names.
Decision DecideFromFunction(const PipelineShape& shape, const DistributeOptions& options);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_DECIDE_H_
