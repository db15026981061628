// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A pre-launch verdict on a distributed input pipeline: the problems that
// would make a training job fail, hang, feed records twice or never, each as
// a finding with what TensorFlow does at run time under the loop, strategy
// and version given, the evidence, and the change that removes it
// (doc/check.md states the rules, the severity table and the versions).

#ifndef TFDIST_DISTRIBUTE_CHECK_H_
#define TFDIST_DISTRIBUTE_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/distribute/decide.h"

namespace tfdist::dist {

// How the training loop consumes the distributed dataset.
enum class Loop {
  kFor,        // `for x in dist_dataset:` run eagerly in Python
  kForTf,      // the same loop inside a tf.function (AutoGraph)
  kNext,       // steps_per_epoch calls of next(iterator) per epoch
  kFit,        // Keras model.fit
  kEstimator,  // tf.estimator's train (graph mode; removed in TF 2.16)
};
Result<Loop> ParseLoop(std::string_view text);  // "for", "for-tf", "next", "fit", "estimator"
std::string_view LoopName(Loop loop);

// The tf.distribute strategy: mirrored is one worker of R replicas;
// multi-worker W workers of R replicas; tpu one input worker per host (W
// hosts of R cores, static shapes); parameter-server the per-worker dataset
// function of a ClusterCoordinator (Api::kFromFunction).
enum class Strategy { kMirrored, kMultiWorker, kTpu, kParameterServer };
Result<Strategy> ParseStrategy(std::string_view text);  // "mirrored", "multi-worker", "tpu", ...
std::string_view StrategyName(Strategy strategy);

// A TensorFlow 2.x release, by its minor number. Keras 3 is tf.keras from
// 2.16 on (tf_keras, Keras 2, before).
struct TfVersion {
  int minor = 0;  // 2.minor
  bool Keras3() const { return minor >= 16; }
  bool operator==(const TfVersion&) const = default;
};
// The newest 2.x release whose behaviour doc/check.md describes.
inline constexpr TfVersion kNewestTfVersion{20};
// "2.N" (N in 0..kNewestTfVersion.minor). Error: InvalidArgument saying which.
Result<TfVersion> ParseTfVersion(std::string_view text);

// What decides the outcome at run time, beside the pipeline and topology.
struct CheckContext {
  Loop loop = Loop::kFor;
  Strategy strategy = Strategy::kMirrored;
  TfVersion version = kNewestTfVersion;
  std::optional<int64_t> steps_per_epoch;  // the loop's fixed step count, if any
  int64_t epochs = 1;
  // The auto-shard policy was given by the user (--policy), so what it
  // implies was asked for: OFF's duplicates are then no error.
  bool policy_given = false;
  // Parameter server: the workers. Each calls the dataset function with
  // InputContext(num_input_pipelines=1, input_pipeline_id=0), so the
  // pipeline and topology checked are one worker's (workers = 1), and every
  // one of these workers makes the same dataset. 0 for other strategies.
  int64_t ps_workers = 0;
};

// The finding kinds; their names (FindingName) are what scripts match.
enum class FindingKind {
  kTooFewFiles,            // too_few_files: FILE sharding with fewer files than workers
  kEmptyShard,             // empty_shard: a worker's shard is empty before a repeat()
  kNoSteps,                // no_steps: an epoch feeds no step
  kInfiniteWithoutSteps,   // infinite_without_steps: repeats forever, no steps_per_epoch
  kStepsPerEpochTooLarge,  // steps_per_epoch_too_large: more steps than the data feeds
  kUnevenSteps,            // uneven_steps: workers feed different numbers of steps
  kDuplicateRecords,       // duplicate_records: a record fed to more than one replica
  kMissedRecords,          // missed_records: a record fed to none
  kDroppedRecords,         // dropped_records: records read but fed to no replica
  kReadAmplification,      // read_amplification: workers read more than they feed
  kUnseededShuffle,        // unseeded_shuffle: an order that differs run to run / worker to worker
  kNondeterministic,       // nondeterministic: a parallel op with deterministic=False
  kDynamicBatchShape,      // dynamic_batch_shape: a partial batch where shapes must be static
  kEmptyBatches,           // empty_batches: replicas fed empty batches
  kImbalance,              // imbalance: workers' shares differ
  kAutoPolicy,             // auto_policy: what AUTO chose, and why
  kScalarRebatch,          // scalar_rebatch: no batch(), several in sync: the rebatch fails
};
std::string_view FindingName(FindingKind kind);  // "too_few_files", ...

enum class FindingSeverity { kInfo, kWarning, kError };
std::string_view SeverityName(FindingSeverity severity);  // "info", "warning", "error"

// The severity doc/check.md's table gives a kind before the loop, strategy
// and version raise it.
FindingSeverity BaseSeverity(FindingKind kind);

// A fix's counterpart in tfdist's own terms, which the command line words
// as flags: what to give check (or run first) to check the job fixed.
struct FixOption {
  enum class Kind {
    kPolicy,         // the auto-shard policy `policy`
    kStepsPerEpoch,  // the loop's steps_per_epoch `value`
    kLoopNext,       // a loop of `value` next() calls an epoch instead
    kReshard,        // the input rewritten into `value` files of equal records
    kWorkers,        // at most `value` workers
    kDropSteps,      // the loop (fit) without a steps_per_epoch
  };
  Kind kind = Kind::kPolicy;
  int64_t value = 0;
  AutoShardPolicy policy = AutoShardPolicy::kAuto;

  // The auto-shard policy `p` (Kind::kPolicy).
  static FixOption Policy(AutoShardPolicy p) { return {Kind::kPolicy, 0, p}; }
};

struct Finding {
  FindingKind kind;
  FindingSeverity severity = FindingSeverity::kWarning;
  // What TensorFlow does at run time with the loop, strategy and version
  // checked: the error and its message, a hang, a warning, or "nothing
  // (silent)"; and, where releases differ, what the others do.
  std::string tensorflow;
  std::string other_versions;
  // Which workers, steps and how many records.
  std::string evidence;
  // The exact change that removes the finding, in the program's terms.
  std::string fix;
  // The same changes as options, in the order `fix` names them.
  std::vector<FixOption> options;
};

// The steps_per_epoch values worth knowing, with what each does.
struct StepsPerEpoch {
  uint64_t min = 0;    // the steps every worker can feed in full
  uint64_t max = 0;    // the steps of the longest worker
  std::string at_min;  // what happens with min: records past it wait or are lost
  std::string at_max;  // with max: exhausted workers feed empty batches or fail
};

struct CheckResult {
  std::vector<Finding> findings;                 // most severe first, then in FindingKind order
  std::optional<StepsPerEpoch> steps_per_epoch;  // nullopt where no step is counted
  // Where a filter() makes every count an upper bound: "counts are upper
  // bounds: filter(...) (line 3, column 8)"; empty where counts are exact.
  std::string upper_bound;
  FindingSeverity Worst() const;  // kInfo when no finding
};

// What --strategy is when not given: mirrored for one worker, multi-worker
// for more.
Strategy DefaultStrategy(const Topology& topology);

// The loop, strategy, version and topology must make a job TensorFlow
// runs: mirrored is one worker, multi-worker two or more, parameter-server
// the per-worker dataset function (Api::kFromFunction) with a step count,
// next a step count, estimator a release before 2.16 and mirrored (or
// multi-worker with its input_fn per worker: Api::kFromFunction).
// Error: InvalidArgument saying why.
Status ValidateCheck(const CheckContext& ctx, const DistributeOptions& options);

// The findings of `pipeline` distributed by `options` under `ctx`: from
// its layout summary (SummarizeFiles where it applies, else SummarizeLayout:
// bounded memory), its shape and the decision. A condition that would make
// a layout fail (FILE with fewer files than workers, a pipeline that
// repeats forever) is a finding, not an error. options.worker,
// max_steps, epochs and read_by_index are ignored (every worker, one
// epoch of the data, what TensorFlow reads).
// Error: ValidateCheck's, the pipeline's own (a file that cannot be read).
Result<CheckResult> Check(const data::Pipeline& pipeline, const DistributeOptions& options,
                          const data::BuildOptions& build, const CheckContext& ctx);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_CHECK_H_
