// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist check: the findings of a distributed input pipeline, read from its
// layout summary (SummarizeFiles where it applies, else SummarizeLayout: a
// summary, never a whole Layout), its shape and the decision, each with what
// TensorFlow does at run time under the loop, strategy and version checked.
// The facts per loop, strategy and version are those of doc/check.md.

#include "tfdist/distribute/check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "plan.h"
#include "tfdist/distribute/coverage.h"
#include "tfdist/distribute/layout.h"
#include "tfdist/distribute/shape.h"

namespace tfdist::dist {
namespace {

// TensorFlow's messages, as its source words them (doc/check.md cites where).
constexpr const char* kFileShardingError =
    "InvalidArgumentError: Could not apply FILE based sharding: the dataset only has {} file(s), "
    "which is not enough for the required {} shards/workers. If you are using datasets with "
    "distribution strategy, consider setting the auto sharding policy to either DATA or OFF "
    "using the `experimental_distribute.auto_shard_policy` option of `tf.data.Options()`. Or, "
    "split your input files into a larger number of small files such that number of files is "
    "greater than number of shards/workers.";
constexpr const char* kElementsShardError =
    "InvalidArgumentError: There aren't enough elements in this dataset for each shard to have "
    "at least one element (# elems = {}, # shards = {}). If you are using datasets with "
    "distribution strategy, considering setting the auto sharding policy to either DATA or OFF "
    "using the `experimental_distribute.auto_shard_policy` optionof `tf.data.Options()`.";
constexpr const char* kPeerDown =
    "UnavailableError: cluster check alive failed, /job:worker/replica:0/task:{} is down";
constexpr const char* kEndOfSequence = "OutOfRangeError: End of sequence";
constexpr const char* kKeras2RanOut =
    "WARNING \"Your input ran out of data; interrupting training. Make sure that your dataset "
    "or generator can generate at least `steps_per_epoch * epochs` batches (in this case, {} "
    "batches). You may need to use the repeat() function when building your dataset.\"";
constexpr const char* kKeras3RanOut =
    "UserWarning \"Your input ran out of data; interrupting training. Make sure that your "
    "dataset or generator can generate at least `steps_per_epoch * epochs` batches. You may "
    "need to use the `.repeat()` function when building your dataset.\"";
constexpr const char* kKeras2Infinite =
    "ValueError: When providing an infinite dataset, you must specify the number of steps to "
    "run (if you did not intend to create an infinite dataset, make sure to not call `repeat()` "
    "on the dataset).";
constexpr const char* kBreakInDistributedLoop =
    "NotImplementedError: break and return statements are not yet supported in for ... in "
    "distributed input loops.";
constexpr const char* kGlobalBatchSizePositive =
    "InvalidArgumentError: global_batch_size must be positive.";
constexpr const char* kFallbackLogA =
    "WARNING \"In AUTO-mode, and switching to DATA-based sharding, instead of FILE-based "
    "sharding as we cannot find appropriate reader dataset op(s) to shard. Error: ...\"";
constexpr const char* kFallbackLogB =
    "WARNING \"AUTO sharding policy will apply DATA sharding policy as it failed to apply FILE "
    "sharding policy because of the following reason: ...\"";

// What DATA needs beside the policy where a shuffle before its cut has no
// seed: every worker's order the same (else records are fed twice or never).
constexpr const char* kDataSeedFix =
    "every shuffle before it seeded, the same on every worker (`list_files(..., seed=S)` or "
    "`shuffle=False`, `shuffle(..., seed=S)`), or `tf.random.set_seed(S)` on every worker "
    "before the dataset is made";

// Workers beyond this many a finding's evidence counts, not names.
constexpr size_t kNamedRanges = 6;
// Imbalance (max/mean records a worker) from which a finding is made.
constexpr double kImbalanceFinding = 1.1;

// "worker 3", "workers 0, 2", "workers 4..7", a list of ranges.
std::string WorkersText(const std::vector<int64_t>& workers) {
  if (workers.empty()) return "no worker";
  if (workers.size() == 1) return fmt::format("worker {}", workers[0]);
  std::string out = "workers ";
  size_t ranges = 0;
  for (size_t i = 0; i < workers.size();) {
    size_t j = i;
    while (j + 1 < workers.size() && workers[j + 1] == workers[j] + 1) ++j;
    if (ranges == kNamedRanges) {
      out += fmt::format(" and {} more", workers.size() - i);
      break;
    }
    if (ranges > 0) out += ", ";
    out += j == i ? fmt::format("{}", workers[i])
                  : fmt::format("{}{}{}", workers[i], j == i + 1 ? ", " : "..", workers[j]);
    ++ranges;
    i = j + 1;
  }
  return out;
}

std::string Plural(uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// The workers that run out first: those that feed the fewest steps (each
// worker's own last step is its own count; these end at the smallest).
std::vector<int64_t> FirstOut(const std::vector<uint64_t>& steps) {
  std::vector<int64_t> out;
  if (steps.empty()) return out;
  const uint64_t n_min = *std::min_element(steps.begin(), steps.end());
  for (size_t w = 0; w < steps.size(); ++w) {
    if (steps[w] == n_min) out.push_back(static_cast<int64_t>(w));
  }
  return out;
}

// The steps each worker feeds in one epoch of the summary: its global steps
// less those in which none of its replicas had data (and a dropped one:
// one worker with static shapes, where a replica has none; a for loop in a
// tf.function pads it instead, `pads_dropped_step`).
std::vector<uint64_t> WorkerSteps(const LayoutSummary& l, bool pads_dropped_step) {
  const uint64_t fed = l.steps - (l.dropped_step && l.steps > 0 && !pads_dropped_step ? 1 : 0);
  std::vector<uint64_t> out;
  for (const WorkerSummary& w : l.workers)
    out.push_back(fed > w.idle_steps ? fed - w.idle_steps : 0);
  return out;
}

double ImbalanceOf(const LayoutSummary& l) {
  uint64_t most = 0;
  for (const WorkerSummary& w : l.workers) most = std::max(most, w.records);
  const uint64_t total = l.ReceivedRecords();
  if (l.workers.empty() || total == 0) return 1.0;
  return static_cast<double>(most) * static_cast<double>(l.workers.size()) /
         static_cast<double>(total);
}

// How many times over the workers read the input (as layout reports it),
// and why; 1 when nothing is read twice.
std::pair<double, std::string> AmplificationOf(const LayoutSummary& l, Api api) {
  const Decision& d = l.decision;
  const int64_t W = l.topology.workers;
  if (W <= 1) return {1, {}};
  if (api == Api::kFromFunction) {
    if (l.reads) {
      return {l.reads->Amplification(),
              fmt::format("the workers' readers took {} records, {} of them distinct",
                          l.reads->total, l.reads->distinct)};
    }
    if (d.function_shards) return {1, {}};
    return {static_cast<double>(W), "the input function does not shard"};
  }
  if (d.applied == AutoShardPolicy::kData) {
    return {static_cast<double>(W), "DATA: every worker reads the whole dataset"};
  }
  if (d.applied == AutoShardPolicy::kOff) {
    return {static_cast<double>(W), "OFF: every worker reads the whole dataset"};
  }
  return {1, {}};
}

std::string PolicyFix(AutoShardPolicy p) {
  return fmt::format(
      "options.experimental_distribute.auto_shard_policy = "
      "tf.data.experimental.AutoShardPolicy.{}",
      PolicyName(p));
}
FixOption ReshardOption(int64_t files) { return {FixOption::Kind::kReshard, files}; }

// The smallest multiple of `workers` at least `files` (and at least one
// file per worker).
int64_t ReshardCount(uint64_t files, int64_t workers) {
  const uint64_t w = static_cast<uint64_t>(workers);
  const uint64_t k = std::max<uint64_t>(1, (files + w - 1) / w);
  return static_cast<int64_t>(k * w);
}

class Checker {
 public:
  Checker(const data::Pipeline& pipeline, const DistributeOptions& options,
          const data::BuildOptions& build, const CheckContext& ctx)
      : pipeline_(pipeline), options_(options), build_(build), ctx_(ctx), t_(options.topology) {}

  Result<CheckResult> Run();

 private:
  bool MultiWorker() const { return ctx_.strategy == Strategy::kMultiWorker; }
  bool TpuPod() const { return ctx_.strategy == Strategy::kTpu && t_.workers > 1; }
  bool Custom() const {
    return ctx_.loop == Loop::kFor || ctx_.loop == Loop::kForTf || ctx_.loop == Loop::kNext;
  }
  // Static shapes: a literal batch size with drop_remainder=True, so
  // tf.distribute's partial-batch handling is off outside multi-worker mode.
  bool StaticShapes() const { return shape_.global_batch_size && shape_.drop_remainder; }
  // The loop keeps one iterator over its epochs: next() with its count, and
  // fit with steps_per_epoch (Keras does not recreate the iterator of a
  // dataset of unknown size, the case of file readers).
  bool OneIterator() const { return ctx_.steps_per_epoch.has_value(); }
  // DATA, applied, would cut after a shuffle whose order differs per worker
  // (no op seed, no global seed): duplicate_records and missed_records. A
  // fix that leads to DATA must seed it as well.
  bool DataNeedsSeed() const { return !build_.global_seed && data::HasUnseededShuffle(pipeline_); }
  void Add(FindingKind kind, FindingSeverity severity, std::string tensorflow,
           std::string other_versions, std::string evidence, std::string fix,
           std::vector<FixOption> options = {}) {
    result_.findings.push_back({kind, severity, std::move(tensorflow), std::move(other_versions),
                                std::move(evidence), std::move(fix), std::move(options)});
  }

  Result<std::optional<uint64_t>> TooFewFiles();
  Result<LayoutSummary> Summarize(const data::Pipeline& pass, const DistributeOptions& o);
  void AddTooFewFiles(uint64_t files, std::string why, bool by_data = false);
  void AddAutoPolicy(const Decision& d);
  void AddInfinite(const std::vector<uint64_t>& steps);
  void AddEmptyShard(const LayoutSummary& l);
  void AddNoSteps(const LayoutSummary& l);
  void AddStepFindings(const std::vector<uint64_t>& steps);
  void AddTooLarge(uint64_t available, uint64_t n_min, const std::vector<int64_t>& first_out);
  void AddUneven(const std::vector<uint64_t>& steps, uint64_t need);
  void AddEmptyBatches(const LayoutSummary& l, const std::vector<uint64_t>& steps);
  void AddDropped(const LayoutSummary& l);
  void AddAmplification(const LayoutSummary& l);
  void AddImbalance(const LayoutSummary& l);
  void AddDynamicShape(const LayoutSummary& l);
  void AddScalarRebatch(const Decision& d);
  void SetSteps(const std::vector<uint64_t>& steps, bool endless);
  void MarkUpperBounds();
  // The recommended steps_per_epoch: every worker feeds each of the
  // epochs' steps in full from one iterator (0: none does).
  uint64_t RecommendedSteps(uint64_t n_min) const {
    return n_min / static_cast<uint64_t>(OneIterator() ? ctx_.epochs : 1);
  }
  std::string StepsFix(uint64_t steps) const;
  std::string FromFunctionFix(uint64_t files) const;
  FixOption StepsOption(uint64_t steps) const {
    const bool own_loop = ctx_.loop == Loop::kFor || ctx_.loop == Loop::kForTf;
    return {own_loop ? FixOption::Kind::kLoopNext : FixOption::Kind::kStepsPerEpoch,
            static_cast<int64_t>(steps)};
  }

  const data::Pipeline& pipeline_;
  const DistributeOptions& options_;
  const data::BuildOptions& build_;
  const CheckContext& ctx_;
  const Topology t_;
  PipelineShape shape_;
  CheckResult result_;
};

// FILE over several workers with fewer file names than workers: the count
// (CheckFileCount's condition, found before a layout fails on it).
Result<std::optional<uint64_t>> Checker::TooFewFiles() {
  if (options_.api != Api::kDistribute || t_.workers <= 1) return std::optional<uint64_t>();
  TFDIST_ASSIGN_OR_RETURN(data::Pipeline expanded, ExpandListFiles(pipeline_));
  const PipelineShape shape = Analyze(expanded);
  TFDIST_ASSIGN_OR_RETURN(Decision d, Decide(shape, options_));
  if (!d.ShardsFiles(t_)) return std::optional<uint64_t>();
  TFDIST_ASSIGN_OR_RETURN(
      uint64_t found, CountFileNames(expanded, shape, build_, static_cast<uint64_t>(t_.workers)));
  if (found == 0 || found >= static_cast<uint64_t>(t_.workers)) return std::optional<uint64_t>();
  return std::optional<uint64_t>(found);
}

// The count of files (or elements) a layout error says it found, fewer than
// the workers: the subject of its advice (kDataPolicyOrMoreFiles,
// kMoreFilesFewerWorkers, kFewerWorkers), never read back from its text.
uint64_t FoundCount(const Advice& advice) {
  uint64_t n = 0;
  const std::string& s = advice.subject;
  std::from_chars(s.data(), s.data() + s.size(), n);
  return n;
}

void Checker::AddTooFewFiles(uint64_t files, std::string why, bool by_data) {
  const int64_t W = t_.workers;
  const int minor = ctx_.version.minor;
  std::vector<int64_t> with, without;
  for (int64_t w = 0; w < W; ++w) (static_cast<uint64_t>(w) < files ? with : without).push_back(w);
  // Worker w's shard names w+1 files (TensorFlow counts those up to its
  // own): the first failing worker's message, and the others' counts.
  const int64_t first = with.empty() ? 0 : with[0];
  const std::string error = minor >= 4 ? fmt::format(kFileShardingError, first + 1, W)
                                       : fmt::format(kElementsShardError, first + 1, W);
  std::string counts;
  for (size_t i = 1; i < with.size(); ++i) {
    if (i == 3 && with.size() > 4) {
      counts += ", ...";
      i = with.size() - 1;
    }
    counts += fmt::format(", worker {} names {}", with[i], with[i] + 1);
  }
  const std::string whose = fmt::format("worker {}'s message{}", first, counts);
  std::string tf;
  std::string other;
  const bool one = without.size() == 1;
  if (TpuPod()) {
    tf = fmt::format(
        "the first step raises {} in the single client ({}): the job fails at once, no hang", error,
        whose);
  } else if (minor <= 2) {
    // No partial-batch handling before 2.3: no per-step has-value
    // all-reduce to wait in, so the empty shard ends at once.
    tf = fmt::format(
        "{} raise{} at the first get_next: {} ({}); {} raise{} OutOfRangeError at once (an "
        "empty shard: 0 steps, no partial-batch handling before TF 2.3): the job fails, "
        "nothing hangs in the input",
        WorkersText(with), with.size() == 1 ? "s" : "", error, whose, WorkersText(without),
        one ? "s" : "");
    if (ctx_.loop == Loop::kFit) tf += "; model.fit does not catch the error";
    other = fmt::format(
        "TF 2.3: the workers without a file wait in the all-reduce of step 1 forever (a hang, "
        "no peer-failure detection); TF 2.4 and later: worker 0's message is \"Could not apply "
        "FILE based sharding: the dataset only has 1 file(s) ...\" (worker w: w+1), and {} "
        "fail{} with UnavailableError once the failed process exits",
        WorkersText(without), one ? "s" : "");
  } else {
    tf = fmt::format(
        "{} raise{} at the first get_next: {} ({}); {} get{} an empty shard and wait{} in the "
        "all-reduce of step 1",
        WorkersText(with), with.size() == 1 ? "s" : "", error, whose, WorkersText(without),
        one ? "s" : "", one ? "s" : "");
    if (minor >= 4) {
      tf += fmt::format(
          " until a failed worker's process exits, then fail{} with {} (30 to 60 s of peer "
          "health checks); a process that catches the error and stays alive leaves {} hung",
          one ? "s" : "", fmt::format(kPeerDown, first), one ? "it" : "them");
    } else {
      tf += " forever: a hang (no peer-failure detection before TF 2.4)";
    }
    if (ctx_.loop == Loop::kFit) tf += "; model.fit does not catch the error";
    other = minor >= 4
                ? fmt::format(
                      "TF 2.3: the message is \"There aren't enough elements in this dataset "
                      "for each shard to have at least one element (# elems = {}, # shards = "
                      "{}) ...\", and the workers without a file hang; TF 2.0 to 2.2: the "
                      "same message, and the workers without a file raise OutOfRangeError at "
                      "once (no partial-batch handling): the job fails, no hang",
                      first + 1, W)
                : fmt::format(
                      "TF 2.4 and later: the message is \"Could not apply FILE based sharding: "
                      "the dataset only has {} file(s) ...\", and the workers without a file "
                      "fail with UnavailableError once the failed process exits; TF 2.0 to 2.2: "
                      "the workers without a file raise OutOfRangeError at once: the job fails, "
                      "no hang",
                      first + 1);
  }
  if (by_data) {
    // TensorFlow's shard after the DATA rewrite (and HINT's) requires a
    // non-empty share too, and words its error as for files.
    Add(FindingKind::kTooFewFiles, FindingSeverity::kError, std::move(tf), std::move(other),
        why.empty()
            ? fmt::format("DATA sharding over {} workers, and {} reach{} the shard: {} get{} "
                          "none (TensorFlow's message speaks of files all the same)",
                          W, Plural(files, "element", "elements"), files == 1 ? "es" : "",
                          WorkersText(without), without.size() == 1 ? "s" : "")
            : fmt::format("HINT sharding over {} workers: {}", W, why),
        fmt::format("at most {} (or a smaller batch, so that every worker gets one)",
                    Plural(files, "worker", "workers")),
        {FixOption{FixOption::Kind::kWorkers, static_cast<int64_t>(files)}});
    return;
  }
  Add(FindingKind::kTooFewFiles, FindingSeverity::kError, std::move(tf), std::move(other),
      fmt::format("FILE sharding over {} workers, and {} reach{} the reader: {} get{} none{}", W,
                  Plural(files, "file name", "file names"), files == 1 ? "es" : "",
                  WorkersText(without), without.size() == 1 ? "s" : "", why),
      DataNeedsSeed()
          ? fmt::format("rewrite the input into {} files of equal records (a multiple of the "
                        "workers) and keep FILE; or {}, with {}",
                        W, PolicyFix(AutoShardPolicy::kData), kDataSeedFix)
          : fmt::format("{}; or rewrite the input into {} files of equal records (a multiple of "
                        "the workers) and keep FILE",
                        PolicyFix(AutoShardPolicy::kData), W),
      DataNeedsSeed()
          ? std::vector<FixOption>{ReshardOption(W)}
          : std::vector<FixOption>{FixOption::Policy(AutoShardPolicy::kData), ReshardOption(W)});
}

void Checker::AddAutoPolicy(const Decision& d) {
  if (options_.api != Api::kDistribute || d.requested != AutoShardPolicy::kAuto) return;
  const int minor = ctx_.version.minor;
  std::string tf = "nothing: silent";
  std::string other;
  if (d.applied == AutoShardPolicy::kData && (t_.workers > 1 || minor >= 4)) {
    if (minor <= 4) {
      tf = fmt::format("logs {} on every worker", kFallbackLogA);
      other =
          "about TF 2.5 to 2.16: \"AUTO sharding policy will apply DATA sharding policy as it "
          "failed to apply FILE sharding policy ...\"; later releases log it at VLOG(2) only";
    } else if (minor <= 16) {
      tf = fmt::format("logs {} on every worker", kFallbackLogB);
      other =
          "TF 2.4 and before: \"In AUTO-mode, and switching to DATA-based sharding ...\"; "
          "after 2.16 the log is VLOG(2) only (silent by default)";
    } else {
      tf = "nothing by default: the fallback is logged at VLOG(2) only";
      other =
          "up to TF 2.16: a WARNING \"AUTO sharding policy will apply DATA sharding policy "
          "as it failed to apply FILE sharding policy ...\" on every worker";
    }
  }
  Add(FindingKind::kAutoPolicy, FindingSeverity::kInfo, std::move(tf), std::move(other),
      fmt::format("AUTO applies {}: {}", PolicyName(d.applied), d.reason),
      fmt::format("to make the choice explicit: {}", PolicyFix(d.applied)),
      {FixOption::Policy(d.applied)});
}

std::string Checker::StepsFix(uint64_t steps) const {
  switch (ctx_.loop) {
    case Loop::kFit:
      return fmt::format("model.fit(..., steps_per_epoch={})", steps);
    case Loop::kEstimator:
      return fmt::format("estimator.train(input_fn, steps={})", steps);
    case Loop::kNext:
      return fmt::format("steps_per_epoch = {} calls of next(iterator) an epoch", steps);
    default:
      return fmt::format(
          "iterate {} steps an epoch: it = iter(dist_dataset) once, then for _ in "
          "range({}): step(next(it))",
          steps, steps);
  }
}

// distribute_datasets_from_function ignores auto_shard_policy: the fix of
// an uneven share is in the input function (its shard over the file names
// gives each worker its files' records).
std::string Checker::FromFunctionFix(uint64_t files) const {
  return fmt::format(
      "in the input function: rewrite the input into {} files of equal records (a multiple of "
      "the {} workers), which its shard over the file names, "
      "dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id), "
      "deals out evenly",
      ReshardCount(files, t_.workers), t_.workers);
}

void Checker::AddInfinite(const std::vector<uint64_t>& steps) {
  if (ctx_.steps_per_epoch) return;
  // TensorFlow's static cardinality of the pipeline: Keras 2 refuses an
  // INFINITE dataset without steps; an UNKNOWN one that never ends is
  // silently endless.
  const Cardinality c = shape_.cardinality;
  const bool k3 = ctx_.version.Keras3();
  uint64_t n_min = steps.empty() ? 0 : *std::min_element(steps.begin(), steps.end());
  uint64_t n_max = steps.empty() ? 0 : *std::max_element(steps.begin(), steps.end());
  const uint64_t recommended = std::max<uint64_t>(1, n_min > 0 ? n_min : n_max);
  std::string fix = StepsFix(recommended);
  if (!steps.empty()) {
    fix += fmt::format(" (one pass over the data: {} steps on every worker)", recommended);
  }
  const std::string evidence =
      fmt::format("{}() at {} repeats forever{}, and no steps_per_epoch is given",
                  pipeline_.ops[*shape_.endless_at].name,
                  data::DescribePosition(pipeline_.text, pipeline_.ops[*shape_.endless_at].pos),
                  c == Cardinality::kUnknown
                      ? " (an op after it makes TensorFlow's cardinality UNKNOWN, not INFINITE)"
                      : "");
  switch (ctx_.loop) {
    case Loop::kFit: {
      const std::string endless =
          "no error: epoch 1 never ends, so fit never reaches epoch 2, validation or the "
          "end-of-epoch callbacks";
      std::string tf, other;
      if (k3) {
        tf = endless + " (Keras 3 loops while the data lasts)";
        other = c == Cardinality::kInfinite
                    ? fmt::format("TF 2.2 to 2.15 (Keras 2, and tf_keras): at the start of fit, {}",
                                  kKeras2Infinite)
                    : "TF 2.2 to 2.15 (Keras 2): the same (its infinite-dataset ValueError needs "
                      "the cardinality INFINITE)";
      } else if (c == Cardinality::kInfinite) {
        tf = fmt::format("at the start of fit, {}", kKeras2Infinite);
        other = "TF 2.16 and later (Keras 3): " + endless;
      } else {
        tf = endless + " (Keras 2's infinite-dataset ValueError needs the cardinality INFINITE)";
        other = "TF 2.16 and later (Keras 3): the same";
      }
      Add(FindingKind::kInfiniteWithoutSteps, FindingSeverity::kError, std::move(tf),
          std::move(other), evidence, std::move(fix), {StepsOption(recommended)});
      return;
    }
    case Loop::kEstimator:
      Add(FindingKind::kInfiniteWithoutSteps, FindingSeverity::kError,
          "train() without steps runs until the input ends, which it never does", "", evidence,
          std::move(fix), {StepsOption(recommended)});
      return;
    case Loop::kForTf:
      Add(FindingKind::kInfiniteWithoutSteps, FindingSeverity::kError,
          fmt::format("the loop inside the tf.function never ends, and a break out of it "
                      "raises {}",
                      kBreakInDistributedLoop),
          "", evidence, std::move(fix), {StepsOption(recommended)});
      return;
    default:
      Add(FindingKind::kInfiniteWithoutSteps, BaseSeverity(FindingKind::kInfiniteWithoutSteps),
          "the loop never ends an epoch (by design): only a break of your own ends it", "",
          evidence, std::move(fix), {StepsOption(recommended)});
      return;
  }
}

void Checker::AddEmptyShard(const LayoutSummary& l) {
  std::vector<int64_t> empty;
  for (size_t w = 0; w < l.workers.size(); ++w) {
    // A worker whose pipeline gives no element (an empty batch of a split is
    // one: TensorFlow feeds it).
    const bool none = l.decision.batched ? l.workers[w].batches == 0 : l.workers[w].records == 0;
    if (none) empty.push_back(l.workers[w].worker);
  }
  if (empty.empty() || empty.size() == l.workers.size()) return;
  const bool by_file = l.decision.ShardsFiles(t_);
  std::string tf;
  if (TpuPod()) {
    tf = fmt::format(
        "the repeat() of an empty shard ends at once: {} at step 1 in the single "
        "client",
        kEndOfSequence);
  } else {
    tf = fmt::format(
        "the cardinality is taken from the dataset before sharding (INFINITE), so partial-batch "
        "handling is off: {} see{} repeat() of an empty shard and raise{} {} at step 1 while "
        "the others wait in the gradient all-reduce: a hang, until the failed process exits "
        "(TF 2.4 and later: then {})",
        WorkersText(empty), empty.size() == 1 ? "s" : "", empty.size() == 1 ? "s" : "",
        kEndOfSequence, fmt::format(kPeerDown, empty[0]));
  }
  const size_t with = l.workers.size() - empty.size();
  std::string fix;
  std::vector<FixOption> options;
  if (by_file && DataNeedsSeed()) {
    // Under DATA an unseeded shuffle feeds records twice or never: even
    // files keep FILE.
    fix = fmt::format(
        "rewrite the input into {} files of equal records (a multiple of the workers) and keep "
        "FILE; or {}, with {}",
        t_.workers, PolicyFix(AutoShardPolicy::kData), kDataSeedFix);
    options = {ReshardOption(t_.workers)};
  } else if (by_file) {
    fix = PolicyFix(AutoShardPolicy::kData);
    options = {FixOption::Policy(AutoShardPolicy::kData)};
  } else {
    fix = fmt::format("at most {} (those that get records)", Plural(with, "worker", "workers"));
    options = {FixOption{FixOption::Kind::kWorkers, static_cast<int64_t>(with)}};
  }
  Add(FindingKind::kEmptyShard, BaseSeverity(FindingKind::kEmptyShard), std::move(tf),
      TpuPod() ? "" : "TF 2.3 and before: a hang (no peer-failure detection)",
      fmt::format("{} receive{} no record in a pass over the data ({} sharding), before the "
                  "repeat()",
                  WorkersText(empty), empty.size() == 1 ? "s" : "", PolicyName(l.decision.applied)),
      std::move(fix), std::move(options));
}

void Checker::AddNoSteps(const LayoutSummary& l) {
  std::string tf, other;
  switch (ctx_.loop) {
    case Loop::kNext:
      tf = fmt::format("the first next() raises StopIteration (in a tf.function: {})",
                       kEndOfSequence);
      break;
    case Loop::kFit:
      if (ctx_.version.Keras3()) {
        tf = fmt::format("no step runs, no error: {} at each epoch", kKeras3RanOut);
      } else if (ctx_.version.minor >= 7) {
        tf = "model.fit runs no step, then raises ValueError: Unexpected result of "
             "`train_function` (Empty logs). This could be due to issues in input pipeline that "
             "resulted in an empty dataset. ...";
        other =
            "TF 2.14 to 2.15, where the dataset's size is known (not for file readers): "
            "ValueError: Expected input data to be non-empty. at the start of fit; TF 2.6 and "
            "before: ValueError: Expect x to be a non-empty array or dataset.";
      } else {
        tf = "model.fit runs no step, then raises ValueError: Expect x to be a non-empty array "
             "or dataset.";
      }
      break;
    case Loop::kEstimator:
      tf = "train() ends at once with OutOfRange: nothing is trained";
      break;
    default:
      tf = "the loop body never runs: nothing is trained (silent)";
      break;
  }
  const uint64_t received = l.ReceivedRecords();
  const uint64_t dropped = l.DroppedRecords();
  std::string evidence =
      fmt::format("an epoch feeds no step: {} received, {} dropped{}",
                  Plural(received, "record", "records"), dropped,
                  l.decision.global_batch_size
                      ? fmt::format(" (global batch {}{})", *l.decision.global_batch_size,
                                    l.decision.drop_remainder ? ", drop_remainder=True" : "")
                      : "");
  std::string fix = "give the pipeline records: its files hold none";
  if (dropped > 0 && l.decision.drop_remainder && l.decision.global_batch_size) {
    // Under FILE each worker batches its own records: the bound is the
    // smallest worker's; otherwise every worker batches the whole input.
    uint64_t bound = dropped;
    if (l.decision.ShardsFiles(t_)) {
      for (const WorkerSummary& w : l.workers) bound = std::min(bound, w.dropped_remainder);
    }
    fix = bound > 0
              ? fmt::format(
                    "batch({}) without drop_remainder=True (or a global batch size of at "
                    "most {})",
                    *l.decision.global_batch_size, bound)
              : fmt::format("batch({}) without drop_remainder=True", *l.decision.global_batch_size);
  } else if (dropped > 0) {
    fix = "keep records: the pipeline drops every one it reads (skip(), or a dropped step)";
  }
  Add(FindingKind::kNoSteps, FindingSeverity::kError, std::move(tf), std::move(other),
      std::move(evidence), std::move(fix));
}

void Checker::AddTooLarge(uint64_t available, uint64_t n_min,
                          const std::vector<int64_t>& first_out) {
  const uint64_t S = static_cast<uint64_t>(*ctx_.steps_per_epoch);
  const uint64_t E = static_cast<uint64_t>(ctx_.epochs);
  const uint64_t need = ctx_.loop == Loop::kEstimator ? S : S * E;
  const bool static_pod = TpuPod() && StaticShapes();
  const bool old_mwms = MultiWorker() && ctx_.version.minor <= 2;
  // A TPU pod with static shapes ends the iterator when its first host runs
  // out; elsewhere the longest worker's end ends it for all.
  const uint64_t feeds = static_pod ? n_min : available;
  const uint64_t fail_step = feeds + 1;
  const uint64_t epoch = (fail_step + S - 1) / S;
  std::string tf, other;
  FindingSeverity severity = FindingSeverity::kError;
  const std::string where = fmt::format("global step {} (epoch {})", fail_step, epoch);
  switch (ctx_.loop) {
    case Loop::kNext:
      tf = fmt::format("next() raises StopIteration at {} (in a tf.function: {}){}", where,
                       kEndOfSequence,
                       MultiWorker() ? ", on every worker at the same step (they agree in the "
                                       "per-step all-reduce)"
                                     : "");
      if (MultiWorker() && !old_mwms) {
        other = fmt::format(
            "TF 2.2 and before: a hang or an abort at step {} (no partial "
            "batches across workers)",
            n_min + 1);
      }
      break;
    case Loop::kFit:
      if (ctx_.version.Keras3()) {
        severity = FindingSeverity::kWarning;
        tf = fmt::format(
            "at {}, {}; that epoch is cut short, and the next one starts on a new "
            "iterator (training goes on, with epochs of at most {} steps)",
            where, kKeras3RanOut, available);
        other = fmt::format(
            "TF 2.2 to 2.15 (Keras 2): {}; fit stops: the remaining epochs "
            "never run (no exception)",
            fmt::format(kKeras2RanOut, need));
      } else {
        tf = fmt::format("at {}, {}; fit stops: the remaining epochs never run (no exception)",
                         where, fmt::format(kKeras2RanOut, need));
        other = fmt::format(
            "TF 2.16 and later (Keras 3): {}; only that epoch is cut, the next "
            "starts on a new iterator",
            kKeras3RanOut);
      }
      break;
    case Loop::kEstimator:
      tf = fmt::format(
          "train() stops at step {} when the input ends (OutOfRange), silently: "
          "{} fewer steps than asked",
          available, need - available);
      break;
    default:
      break;
  }
  if (ctx_.strategy == Strategy::kParameterServer) {
    severity = FindingSeverity::kError;
    tf = fmt::format(
        "a worker's iterator runs out after {} steps and the scheduled step "
        "raises {} on the coordinator (the docs: repeat the dataset and schedule a "
        "finite number of steps)",
        available, kEndOfSequence);
    other.clear();
  }
  if (old_mwms && n_min < available) {
    // Before 2.3 the first worker to run out fails alone, whatever the loop.
    severity = FindingSeverity::kError;
    tf = fmt::format(
        "{} run{} out at step {}: OutOfRange there, while the others enter the next "
        "collective: a hang, or an abort (\"StartAbort Out of range: End of sequence\", then "
        "Cancelled)",
        WorkersText(first_out), first_out.size() == 1 ? "s" : "", n_min + 1);
    other =
        "TF 2.3 and later: the workers that run out are padded, and the loop runs out of data "
        "at the step after the longest worker's last";
  }
  if (static_pod) {
    tf += fmt::format(
        "; with static shapes on a TPU pod the iterator ends when the first host "
        "runs out (step {}), and the other hosts' batches of that step are lost",
        fail_step);
  }
  std::string evidence = fmt::format(
      "steps_per_epoch {}{} needs {} global steps from one iterator; the data feeds {}{}", S,
      E > 1 && ctx_.loop != Loop::kEstimator ? fmt::format(" x {} epochs", E) : "", need,
      Plural(feeds, "step", "steps"),
      static_pod ? " (the shortest host's: static shapes)"
                 : (old_mwms || t_.workers == 1 ? "" : " (the longest worker's)"));
  // The largest steps_per_epoch that runs: the iterator feeds `available`
  // steps, but only `n_min` where the first worker's end fails the step
  // (uneven_steps is an error there); up to n_min every worker feeds each
  // step in full.
  const bool first_end_fails = static_pod || old_mwms;
  const uint64_t runs = first_end_fails ? n_min : available;
  const uint64_t largest = ctx_.loop == Loop::kEstimator ? runs : runs / E;
  const uint64_t recommended = RecommendedSteps(n_min);
  std::string fix = fmt::format(
      "add .repeat() after batch() (before distributing) to keep "
      "steps_per_epoch={}",
      S);
  std::vector<FixOption> options;
  // fit without steps_per_epoch makes a new iterator each epoch (Keras 2's
  // should_recreate_iterator; Keras 3 the same), each a full pass: it runs
  // where the workers' uneven ends do not fail the step.
  if (ctx_.loop == Loop::kFit && ctx_.strategy != Strategy::kParameterServer &&
      (!first_end_fails || n_min == available)) {
    fix = fmt::format(
              "model.fit(...) without steps_per_epoch (a new iterator each epoch, {} an epoch)",
              Plural(available, "step", "steps")) +
          ", or " + fix;
    options.insert(options.begin(), FixOption{FixOption::Kind::kDropSteps, 0});
  }
  // Up to `recommended` every worker feeds each step in full; up to
  // `largest` the job runs, the workers that ran out feeding empty batches.
  if (largest > recommended) {
    fix = StepsFix(largest) +
          " (the most that runs: the workers that run out first feed empty batches), or " + fix;
    options.insert(options.begin(), StepsOption(largest));
  }
  if (recommended > 0) {
    fix = StepsFix(recommended) + " (every worker feeds each step in full), or " + fix;
    options.insert(options.begin(), StepsOption(recommended));
  }
  Add(FindingKind::kStepsPerEpochTooLarge, severity, std::move(tf), std::move(other),
      std::move(evidence), std::move(fix), std::move(options));
}

void Checker::AddUneven(const std::vector<uint64_t>& steps, uint64_t need) {
  const uint64_t n_min = *std::min_element(steps.begin(), steps.end());
  const uint64_t n_max = *std::max_element(steps.begin(), steps.end());
  std::vector<int64_t> short_workers;
  for (size_t w = 0; w < steps.size(); ++w) {
    if (steps[w] < std::min(need, n_max)) short_workers.push_back(static_cast<int64_t>(w));
  }
  const uint64_t last = std::min(need, n_max);
  const bool static_pod = TpuPod() && StaticShapes() && ctx_.loop != Loop::kForTf;
  const bool old_mwms = MultiWorker() && ctx_.version.minor <= 2 && ctx_.loop != Loop::kForTf;
  FindingSeverity severity = BaseSeverity(FindingKind::kUnevenSteps);
  std::string tf, other;
  if (MultiWorker() && ctx_.loop == Loop::kEstimator) {
    // Each worker runs its own input function in graph mode (derived: no
    // padding is known to reach Estimator's per-worker iterators).
    severity = FindingSeverity::kError;
    tf = fmt::format(
        "{} reach{} the end of input at step {}: train() ends there on OutOfRange while "
        "the others wait in the step's collectives: a hang (derived from the source, not "
        "seen run)",
        WorkersText(FirstOut(steps)), FirstOut(steps).size() == 1 ? "es" : "", n_min + 1);
  } else if (static_pod) {
    severity = FindingSeverity::kError;
    tf = fmt::format(
        "static shapes on a TPU pod turn partial-batch handling off: the epoch "
        "ends at step {}, when the first host runs out, and the other hosts' "
        "batches after it are never fed (silent)",
        n_min);
  } else if (old_mwms) {
    severity = FindingSeverity::kError;
    const std::vector<int64_t> first = FirstOut(steps);
    tf = fmt::format(
        "{} run{} out at step {}: OutOfRange there, while the others enter the next "
        "collective: a hang, or an abort (\"StartAbort Out of range: End of "
        "sequence\", then Cancelled)",
        WorkersText(first), first.size() == 1 ? "s" : "", n_min + 1);
    other =
        "TF 2.3 and later: the workers that run out feed empty batches up to the longest "
        "worker's last step, silently";
  } else {
    tf = fmt::format(
        "nothing: silent; {} run{} out first and feed{} empty (0-size) batches up "
        "to step {}",
        WorkersText(short_workers), short_workers.size() == 1 ? "s" : "",
        short_workers.size() == 1 ? "s" : "", last);
    if (ctx_.loop == Loop::kNext) {
      tf +=
          "; every worker must call next() the same number of times (a count of its own "
          "deadlocks the per-step all-reduce)";
    }
    if (ctx_.loop == Loop::kFit && !ctx_.steps_per_epoch && ctx_.version.Keras3()) {
      tf += fmt::format("; Keras 3 also warns {} at the end of epoch 1", kKeras3RanOut);
    }
    if (MultiWorker() && ctx_.loop != Loop::kForTf) {
      other = fmt::format(
          "TF 2.2 and before: OutOfRange on the worker that runs out at step {}, "
          "and a hang or an abort on the others",
          n_min + 1);
    }
  }
  std::string per;
  for (size_t w = 0; w < steps.size() && w < 16; ++w) {
    per += fmt::format("{}{}", w ? ", " : "", steps[w]);
  }
  if (steps.size() > 16) per += ", ...";
  const uint64_t recommended = RecommendedSteps(n_min);
  Add(FindingKind::kUnevenSteps, severity, std::move(tf), std::move(other),
      fmt::format("the workers feed {} to {} steps an epoch ({}); {} run{} out before step {}",
                  n_min, n_max, per, WorkersText(short_workers),
                  short_workers.size() == 1 ? "s" : "", last),
      recommended > 0
          ? StepsFix(recommended) +
                fmt::format("; or rewrite the input into {} files of equal records", t_.workers)
          : fmt::format("rewrite the input into {} files of equal records", t_.workers),
      recommended > 0 ? std::vector<FixOption>{StepsOption(recommended), ReshardOption(t_.workers)}
                      : std::vector<FixOption>{ReshardOption(t_.workers)});
}

void Checker::AddEmptyBatches(const LayoutSummary& l, const std::vector<uint64_t>& steps) {
  // The empty batches the loop reaches: those of a worker's last steps with
  // data (a partial one), and of its idle steps up to where the loop ends.
  // Where the epoch ends at the first worker's end (uneven_steps' rules),
  // no worker feeds idle steps: graph mode (Estimator) ends the input at
  // the partial step; a TPU pod with static shapes ends it when the first
  // host runs out; multi-worker before 2.3 has no partial-batch handling.
  if (ctx_.loop == Loop::kEstimator) return;
  const bool static_pod = TpuPod() && StaticShapes() && ctx_.loop != Loop::kForTf;
  const bool old_mwms = MultiWorker() && ctx_.version.minor <= 2 && ctx_.loop != Loop::kForTf;
  if (static_pod) return;
  const uint64_t R = static_cast<uint64_t>(t_.replicas);
  const uint64_t n_first = *std::min_element(steps.begin(), steps.end());
  const uint64_t fed = old_mwms ? n_first : *std::max_element(steps.begin(), steps.end());
  uint64_t need = fed;
  if (ctx_.steps_per_epoch) {
    need = static_cast<uint64_t>(*ctx_.steps_per_epoch) *
           static_cast<uint64_t>(ctx_.loop == Loop::kEstimator ? 1 : ctx_.epochs);
  }
  uint64_t partial = 0, idle = 0;
  std::vector<int64_t> who;
  for (size_t i = 0; i < l.workers.size() && i < steps.size(); ++i) {
    const WorkerSummary& w = l.workers[i];
    const uint64_t in_idle = std::min(w.empty_batches, w.idle_steps * R);
    // A dropped step (one worker, static shapes) is not run, its padding
    // not fed; a for loop in a tf.function runs it.
    const bool dropped = l.dropped_step && ctx_.loop != Loop::kForTf;
    const uint64_t own =
        std::min(need, fed) >= steps[i] && !dropped ? w.empty_batches - in_idle : 0;
    // Repeated forever, no worker runs out: its idle steps in one pass are
    // steps of its next pass.
    const uint64_t reached =
        need > steps[i] && !shape_.endless_at ? (std::min(need, fed) - steps[i]) * R : 0;
    if (own + std::min(reached, in_idle) == 0) continue;
    partial += own;
    idle += std::min(reached, in_idle);
    who.push_back(w.worker);
  }
  const uint64_t empty = partial + idle;
  if (empty == 0) return;
  const uint64_t n_min = *std::min_element(steps.begin(), steps.end());
  std::string tf;
  std::string other;
  FindingSeverity severity = BaseSeverity(FindingKind::kEmptyBatches);
  tf = "the replicas without data get 0-size batches (silent)";
  if (Custom()) {
    tf += ctx_.version.minor >= 13
              ? "; compute_average_loss(loss) without global_batch_size gives them 0, so that "
                "step's loss is not the global mean (pass global_batch_size=G)"
              : fmt::format(
                    "; compute_average_loss(loss) without global_batch_size raises {} "
                    "on that step (pass global_batch_size=G)",
                    kGlobalBatchSizePositive);
    other = ctx_.version.minor >= 13
                ? fmt::format(
                      "TF 2.12 and before: compute_average_loss without "
                      "global_batch_size raises {}",
                      kGlobalBatchSizePositive)
                : "TF 2.13 and later: compute_average_loss returns 0 for an empty replica";
  } else {
    tf +=
        "; Keras divides each replica's loss by its own size, so the few examples of a "
        "small replica weigh more";
  }
  std::string fix;
  std::vector<FixOption> options;
  uint64_t files = 0;
  for (const WorkerSummary& w : l.workers) files += w.files;
  // A partial step: the final batch is short.
  const std::string drop =
      l.decision.global_batch_size
          ? fmt::format("batch({}, drop_remainder=True)", *l.decision.global_batch_size)
          : std::string("drop_remainder=True on the final batch()");
  if (partial == 0 && RecommendedSteps(n_min) == 0 && options_.api == Api::kFromFunction) {
    // A worker empty from step 1: no step count helps; its input does.
    fix = FromFunctionFix(files);
    options.push_back(ReshardOption(ReshardCount(files, t_.workers)));
  } else if (idle == 0) {
    fix = drop + ", so that no step is partial";
  } else {
    // Workers that ran out (over several workers drop_remainder=True does
    // not stop the padding of their idle steps): stop where every worker
    // feeds in full, or give every worker the same records.
    const uint64_t steps_fix = std::max<uint64_t>(1, RecommendedSteps(n_min));
    const bool by_file = l.decision.ShardsFiles(t_);
    fix = StepsFix(steps_fix) + ", so that no worker runs out";
    if (by_file)
      fix += fmt::format("; or rewrite the input into {} files of equal records", t_.workers);
    if (partial > 0) fix += fmt::format("; and {} for the partial step", drop);
    options.push_back(StepsOption(steps_fix));
    if (by_file) options.push_back(ReshardOption(t_.workers));
  }
  Add(FindingKind::kEmptyBatches, severity, std::move(tf), std::move(other),
      fmt::format("{} empty per-replica batches an epoch, on {}: {} in a partial step, {} in "
                  "steps after the worker ran out",
                  empty, WorkersText(who), partial, idle),
      std::move(fix), std::move(options));
}

void Checker::AddDropped(const LayoutSummary& l) {
  uint64_t remainder = 0, skipped = 0, step = 0;
  for (const WorkerSummary& w : l.DroppingRows()) {
    remainder += w.dropped_remainder;
    skipped += w.skipped;
    step += w.dropped_step;
  }
  // A for loop in a tf.function pads the step that static shapes drop
  // elsewhere (dist_dataset.reduce handles partial batches): it is fed.
  const uint64_t dropped = l.DroppedRecords() - (ctx_.loop == Loop::kForTf ? step : 0);
  if (ctx_.loop == Loop::kForTf) step = 0;
  if (dropped == 0) return;
  std::vector<std::string> parts;
  if (remainder)
    parts.push_back(fmt::format("{} in short final batches (drop_remainder=True)", remainder));
  if (skipped) parts.push_back(fmt::format("{} passed over by skip()", skipped));
  if (step) {
    parts.push_back(
        fmt::format("{} in the last step, which TensorFlow does not run: static "
                    "shapes and a replica without data",
                    step));
  }
  const uint64_t read = l.DistinctRecords();
  std::string fix;
  if (ctx_.strategy == Strategy::kTpu) {
    fix =
        "TPU needs static shapes: keep drop_remainder=True; a global batch size that divides "
        "each worker's records keeps them all";
  } else if (remainder || step) {
    fix = l.decision.global_batch_size
              ? fmt::format(
                    "batch({}) without drop_remainder=True: the last step is partial, "
                    "and fed",
                    *l.decision.global_batch_size)
              : "batch() without drop_remainder=True";
  } else {
    fix = "remove the skip(), if those records are meant to be trained on";
  }
  Add(FindingKind::kDroppedRecords, BaseSeverity(FindingKind::kDroppedRecords),
      "nothing: silent; the records are read and never fed, every epoch (a reshuffle changes "
      "which)",
      "",
      fmt::format("{} of {} records read are fed to no replica: {}", dropped, read,
                  fmt::format("{}", fmt::join(parts, "; "))),
      std::move(fix));
}

void Checker::AddAmplification(const LayoutSummary& l) {
  const auto [factor, why] = AmplificationOf(l, options_.api);
  if (factor <= 1.0 + 1e-9) return;
  std::string fix;
  std::vector<FixOption> options;
  if (options_.api == Api::kFromFunction) {
    fix =
        "shard in the input function: dataset.shard(input_context.num_input_pipelines, "
        "input_context.input_pipeline_id) on the file names, before the reader";
  } else if (l.decision.applied == AutoShardPolicy::kData && shape_.reader &&
             shape_.file_blocker.empty()) {
    fix = fmt::format(
        "{}, with at least {} files (rewrite the input into {} files of equal "
        "records)",
        PolicyFix(AutoShardPolicy::kFile), t_.workers, t_.workers);
    options = {FixOption::Policy(AutoShardPolicy::kFile), ReshardOption(t_.workers)};
  } else if (shape_.reader && shape_.file_blocker.empty()) {
    fix = PolicyFix(AutoShardPolicy::kFile);
    options = {FixOption::Policy(AutoShardPolicy::kFile)};
  } else {
    fix =
        "read files by name so that FILE can shard them (list_files or a list of names, then "
        "the reader)";
  }
  Add(FindingKind::kReadAmplification, BaseSeverity(FindingKind::kReadAmplification),
      "nothing: silent; every worker reads the input in full (a cost in I/O, not in what is "
      "fed)",
      "",
      fmt::format("the workers read the input {}x over: {}", std::round(factor * 100) / 100, why),
      std::move(fix), std::move(options));
}

void Checker::AddImbalance(const LayoutSummary& l) {
  if (t_.workers <= 1 || l.workers.size() <= 1) return;
  const double imbalance = ImbalanceOf(l);
  if (imbalance < kImbalanceFinding) return;
  uint64_t least = UINT64_MAX, most = 0;
  int64_t least_w = 0, most_w = 0;
  for (const WorkerSummary& w : l.workers) {
    if (w.records < least) least = w.records, least_w = w.worker;
    if (w.records > most) most = w.records, most_w = w.worker;
  }
  uint64_t files = 0;
  for (const WorkerSummary& w : l.workers) files += w.files;
  Add(FindingKind::kImbalance, BaseSeverity(FindingKind::kImbalance),
      shape_.endless_at
          ? "nothing: silent; each worker repeats its own share, so the records of the workers "
            "with fewer come round more often: the dataset is not trained on evenly"
          : "nothing: silent; the workers with more records set each epoch's length",
      "",
      fmt::format("worker {} receives {} records, worker {} {} (max/mean {:.2f})", most_w, most,
                  least_w, least, imbalance),
      options_.api == Api::kFromFunction
          ? FromFunctionFix(files)
          : (l.decision.ShardsFiles(t_)
                 ? fmt::format("rewrite the input into {} files of equal records (a multiple of "
                               "the {} workers)",
                               ReshardCount(files, t_.workers), t_.workers)
                 : PolicyFix(AutoShardPolicy::kData)),
      {l.decision.ShardsFiles(t_) || options_.api == Api::kFromFunction
           ? ReshardOption(ReshardCount(files, t_.workers))
           : FixOption::Policy(AutoShardPolicy::kData)});
}

void Checker::AddDynamicShape(const LayoutSummary& l) {
  if (ctx_.strategy != Strategy::kTpu || !l.decision.batched) return;
  if (StaticShapes()) return;
  // Only a partial step makes the dynamic dimension matter.
  const uint64_t partial = l.short_steps;
  bool uneven = false;
  for (const WorkerSummary& w : l.workers) {
    if ((w.smallest_batch && w.largest_batch && *w.smallest_batch != *w.largest_batch) ||
        w.empty_batches > 0) {
      uneven = true;
    }
  }
  if (partial == 0 && !uneven) return;
  std::string evidence =
      !shape_.global_batch_size
          ? "the batch size is not static (a map() after batch(), or a symbolic size)"
          : fmt::format("batch({}) keeps its short final batch (no drop_remainder=True): {}",
                        *shape_.global_batch_size,
                        partial > 0 ? fmt::format("{} with a partial global batch an epoch",
                                                  Plural(partial, "step", "steps"))
                                    : std::string("replicas fed batches of other sizes"));
  Add(FindingKind::kDynamicBatchShape, BaseSeverity(FindingKind::kDynamicBatchShape),
      "TPUStrategy.run pads the dynamic batch dimension (RunOptions."
      "experimental_enable_dynamic_batch_size, on by default): the partial step runs on padded "
      "batches, compiled for their shape",
      ctx_.version.minor < 3 ? "" : "before TF 2.3 the option is not documented: not verified",
      std::move(evidence),
      shape_.global_batch_size
          ? fmt::format("batch({}, drop_remainder=True)", *shape_.global_batch_size)
          : "batch(G, drop_remainder=True) with a literal G, and no map() after it");
}

// Scalar elements and no batch() over several replicas in sync: the legacy
// rebatch tf.distribute adds cannot split them (decide.cc's warning).
void Checker::AddScalarRebatch(const Decision& d) {
  for (const Warning& w : d.warnings) {
    if (w.kind != WarningKind::kScalarRebatch) continue;
    const std::string& m = w.message;
    const size_t from = m.find("(\"");
    const size_t to = m.find("\")", from == std::string::npos ? 0 : from);
    const std::string quoted = from != std::string::npos && to != std::string::npos
                                   ? m.substr(from + 2, to - from - 2)
                                   : std::string();
    Add(FindingKind::kScalarRebatch, BaseSeverity(FindingKind::kScalarRebatch),
        fmt::format("the rebatch tf.distribute adds fails at the first element: {}", quoted), "", m,
        "batch() the dataset to the global batch size: .batch(G), G a multiple of the "
        "replicas in sync");
    return;
  }
}

void Checker::SetSteps(const std::vector<uint64_t>& steps, bool endless) {
  if (steps.empty()) return;
  StepsPerEpoch s;
  s.min = *std::min_element(steps.begin(), steps.end());
  s.max = *std::max_element(steps.begin(), steps.end());
  if (endless) {
    s.at_min = fmt::format(
        "one pass over the shortest worker's data; repeat() goes on past it, "
        "so any steps_per_epoch feeds every worker in full");
    s.at_max = "one pass over the longest worker's data; repeat() goes on past it";
    result_.steps_per_epoch = std::move(s);
    return;
  }
  std::vector<int64_t> longer;
  for (size_t w = 0; w < steps.size(); ++w) {
    if (steps[w] > s.min) longer.push_back(static_cast<int64_t>(w));
  }
  if (s.min == s.max) {
    s.at_min = "the whole epoch, on every worker";
    s.at_max = s.at_min;
  } else {
    s.at_min = fmt::format(
        "every worker feeds each step in full; {} step(s) past it on {} wait for the next "
        "epoch with one iterator (next(), fit with steps_per_epoch), and are never fed by a "
        "loop that starts a new iterator each epoch",
        s.max - s.min, WorkersText(longer));
    const bool static_pod = TpuPod() && StaticShapes() && ctx_.loop != Loop::kForTf;
    if (static_pod) {
      s.at_max = fmt::format(
          "the iterator ends at step {} when the first host runs out "
          "(StopIteration, or {})",
          s.min + 1, kEndOfSequence);
    } else if (MultiWorker() && ctx_.version.minor <= 2 && ctx_.loop != Loop::kForTf) {
      s.at_max = fmt::format(
          "a hang or an abort at step {}, when the first worker runs out "
          "(TF 2.2 and before)",
          s.min + 1);
    } else {
      s.at_max = fmt::format(
          "the workers that run out first feed empty batches in steps {}..{}, "
          "silently",
          s.min + 1, s.max);
    }
  }
  result_.steps_per_epoch = std::move(s);
}

void Checker::AddStepFindings(const std::vector<uint64_t>& steps) {
  const uint64_t n_min = *std::min_element(steps.begin(), steps.end());
  const uint64_t n_max = *std::max_element(steps.begin(), steps.end());
  if (ctx_.steps_per_epoch) {
    const uint64_t S = static_cast<uint64_t>(*ctx_.steps_per_epoch);
    const uint64_t need =
        ctx_.loop == Loop::kEstimator ? S : S * static_cast<uint64_t>(ctx_.epochs);
    // Where the iterator ends: the longest worker's last step, or the
    // shortest's under a parameter server (each worker feeds alone). Where
    // the shortest worker's end already fails or hangs the step (a TPU pod
    // with static shapes, multi-worker before 2.3), uneven_steps says so.
    uint64_t available = n_max;
    if (ctx_.strategy == Strategy::kParameterServer) {
      available = n_min;
    }
    if (need > available) {
      AddTooLarge(available, n_min, FirstOut(steps));
    } else if (need > n_min) {
      AddUneven(steps, need);
    }
  } else if (n_min < n_max && ctx_.strategy != Strategy::kParameterServer) {
    AddUneven(steps, n_max);
  }
}

// The summary as layout --format summary makes it: from the files' record
// counts where SummarizeFiles applies, else streamed (bounded memory).
Result<LayoutSummary> Checker::Summarize(const data::Pipeline& pass, const DistributeOptions& o) {
  TFDIST_ASSIGN_OR_RETURN(std::optional<LayoutSummary> fast, SummarizeFiles(pass, o, build_));
  if (fast) return std::move(*fast);
  return SummarizeLayout(pass, o, build_);
}

Result<CheckResult> Checker::Run() {
  shape_ = Analyze(pipeline_);
  TFDIST_ASSIGN_OR_RETURN(const std::optional<uint64_t> too_few, TooFewFiles());
  if (too_few) {
    // Every worker fails or waits at step 1: no step is counted.
    AddTooFewFiles(*too_few, "");
    return std::move(result_);
  }
  // One pass over the data: a repeat() forever left out, its epochs counted
  // as the pipeline gives them before it.
  data::Pipeline pass = pipeline_;
  const bool endless = shape_.endless_at.has_value();
  if (endless) {
    pass.ops.erase(pass.ops.begin() + static_cast<std::ptrdiff_t>(*shape_.endless_at));
  }
  DistributeOptions o = options_;
  o.worker.reset();
  o.epochs = 1;
  o.max_steps.reset();
  o.read_by_index = false;  // what TensorFlow reads
  Result<LayoutSummary> summary = Summarize(pass, o);
  if (!summary.ok()) {
    // A concatenate()'s dataset with fewer files than workers: the same
    // failure as the reader's own.
    const Status& error = summary.status();
    const Remedy remedy = error.advice().remedy;
    if (remedy == Remedy::kDataPolicyOrMoreFiles) {
      AddTooFewFiles(FoundCount(error.advice()), fmt::format(" ({})", error.message()));
      return std::move(result_);
    }
    // DATA with fewer elements at the shard than workers (CheckDataShare):
    // TensorFlow's shard fails on the workers that get one.
    if (remedy == Remedy::kFewerWorkers) {
      AddTooFewFiles(FoundCount(error.advice()), "", true);
      return std::move(result_);
    }
    // HINT: the shard(SHARD_HINT, ...) TensorFlow rewrites requires a
    // non-empty share as well.
    if (remedy == Remedy::kMoreFilesFewerWorkers) {
      AddTooFewFiles(FoundCount(error.advice()), error.message(), true);
      return std::move(result_);
    }
    return summary.status();
  }
  const LayoutSummary& l = *summary;
  AddAutoPolicy(l.decision);
  AddScalarRebatch(l.decision);
  // Grouped by the data, or not batched: no exact step to count.
  std::vector<uint64_t> steps;
  if (l.decision.batched && !l.grouped) steps = WorkerSteps(l, ctx_.loop == Loop::kForTf);
  if (endless) {
    AddEmptyShard(l);
    const bool all_empty = l.ReceivedRecords() == 0;
    if (all_empty && l.decision.batched) AddNoSteps(l);
    if (!all_empty) AddInfinite(steps);
  } else if (!steps.empty()) {
    const uint64_t n_max = *std::max_element(steps.begin(), steps.end());
    if (n_max == 0) {
      AddNoSteps(l);
    } else {
      AddStepFindings(steps);
    }
  }
  // A batch() after the repeat() forever never ends a pass with a short
  // batch: the pass's own end (the summary's) is no step of the job.
  if (!shape_.batches_after_endless) {
    if (!steps.empty() && *std::max_element(steps.begin(), steps.end()) > 0) {
      AddEmptyBatches(l, steps);
    }
    AddDropped(l);
    AddDynamicShape(l);
  }
  AddAmplification(l);
  AddImbalance(l);
  // Record coverage (duplicate_records, missed_records, unseeded_shuffle,
  // nondeterministic): the findings come ready, with doc/check.md's
  // severities. The draw (an unseeded shuffle before the cut) follows the
  // run's seed where one is given, so a check can be repeated.
  CoverageOptions coverage;
  coverage.seed = build_.default_seed;
  TFDIST_ASSIGN_OR_RETURN(CoverageResult covered,
                          CoverageFindings(pass, o, build_, l, ctx_, coverage));
  for (Finding& f : covered.findings) result_.findings.push_back(std::move(f));
  SetSteps(steps, endless);
  if (!steps.empty() && *std::max_element(steps.begin(), steps.end()) == 0) {
    result_.steps_per_epoch.reset();
  }
  if (l.decision.HasWarning(WarningKind::kFilterUpperBound)) MarkUpperBounds();
  return std::move(result_);
}

// A filter() is counted as keeping every element: each count after it is
// an upper bound, and the steps worked out from one may be too many.
void Checker::MarkUpperBounds() {
  const std::string& filter = shape_.filter;
  result_.upper_bound = fmt::format("counts are upper bounds: {}", filter);
  for (Finding& f : result_.findings) {
    switch (f.kind) {
      case FindingKind::kNoSteps:
      case FindingKind::kInfiniteWithoutSteps:
      case FindingKind::kStepsPerEpochTooLarge:
      case FindingKind::kUnevenSteps:
      case FindingKind::kEmptyBatches:
      case FindingKind::kDroppedRecords:
      case FindingKind::kImbalance:
        f.evidence +=
            fmt::format(" (upper bounds: {} is counted as keeping every element)", filter);
        break;
      default:
        break;
    }
    for (const FixOption& o : f.options) {
      if (o.kind == FixOption::Kind::kStepsPerEpoch || o.kind == FixOption::Kind::kLoopNext) {
        f.fix += fmt::format(
            " (at most: the steps come from upper bounds; {} may keep fewer records)", filter);
        break;
      }
    }
  }
  if (result_.steps_per_epoch) {
    StepsPerEpoch& s = *result_.steps_per_epoch;
    const std::string note = fmt::format(
        " (at most {}: an upper bound, as {} is counted as keeping every element; a "
        "steps_per_epoch above what it keeps runs out of data)",
        "{}", filter);
    s.at_min += fmt::format(fmt::runtime(note), s.min);
    s.at_max += fmt::format(fmt::runtime(note), s.max);
  }
}

}  // namespace

Result<Loop> ParseLoop(std::string_view text) {
  if (text == "for") return Loop::kFor;
  if (text == "for-tf") return Loop::kForTf;
  if (text == "next") return Loop::kNext;
  if (text == "fit") return Loop::kFit;
  if (text == "estimator") return Loop::kEstimator;
  return Status::InvalidArgument(
      fmt::format("unknown loop '{}': for, for-tf, next, fit or estimator", text));
}

std::string_view LoopName(Loop loop) {
  switch (loop) {
    case Loop::kFor:
      return "for";
    case Loop::kForTf:
      return "for-tf";
    case Loop::kNext:
      return "next";
    case Loop::kFit:
      return "fit";
    case Loop::kEstimator:
      return "estimator";
  }
  return "?";
}

Result<Strategy> ParseStrategy(std::string_view text) {
  if (text == "mirrored") return Strategy::kMirrored;
  if (text == "multi-worker") return Strategy::kMultiWorker;
  if (text == "tpu") return Strategy::kTpu;
  if (text == "parameter-server") return Strategy::kParameterServer;
  return Status::InvalidArgument(
      fmt::format("unknown strategy '{}': mirrored, multi-worker, tpu or parameter-server", text));
}

std::string_view StrategyName(Strategy strategy) {
  switch (strategy) {
    case Strategy::kMirrored:
      return "mirrored";
    case Strategy::kMultiWorker:
      return "multi-worker";
    case Strategy::kTpu:
      return "tpu";
    case Strategy::kParameterServer:
      return "parameter-server";
  }
  return "?";
}

Result<TfVersion> ParseTfVersion(std::string_view text) {
  const std::string_view prefix = "2.";
  int minor = -1;
  if (text.substr(0, prefix.size()) == prefix && text.size() > prefix.size()) {
    const char* begin = text.data() + prefix.size();
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(begin, end, minor);
    if (ec != std::errc() || ptr != end) minor = -1;
  }
  if (minor < 0 || minor > kNewestTfVersion.minor) {
    return Status::InvalidArgument(
        fmt::format("TensorFlow version '{}': a 2.x release from 2.0 to 2.{} (e.g. 2.15)", text,
                    kNewestTfVersion.minor));
  }
  return TfVersion{minor};
}

std::string_view FindingName(FindingKind kind) {
  switch (kind) {
    case FindingKind::kTooFewFiles:
      return "too_few_files";
    case FindingKind::kEmptyShard:
      return "empty_shard";
    case FindingKind::kNoSteps:
      return "no_steps";
    case FindingKind::kInfiniteWithoutSteps:
      return "infinite_without_steps";
    case FindingKind::kStepsPerEpochTooLarge:
      return "steps_per_epoch_too_large";
    case FindingKind::kUnevenSteps:
      return "uneven_steps";
    case FindingKind::kDuplicateRecords:
      return "duplicate_records";
    case FindingKind::kMissedRecords:
      return "missed_records";
    case FindingKind::kDroppedRecords:
      return "dropped_records";
    case FindingKind::kReadAmplification:
      return "read_amplification";
    case FindingKind::kUnseededShuffle:
      return "unseeded_shuffle";
    case FindingKind::kNondeterministic:
      return "nondeterministic";
    case FindingKind::kDynamicBatchShape:
      return "dynamic_batch_shape";
    case FindingKind::kEmptyBatches:
      return "empty_batches";
    case FindingKind::kImbalance:
      return "imbalance";
    case FindingKind::kAutoPolicy:
      return "auto_policy";
    case FindingKind::kScalarRebatch:
      return "scalar_rebatch";
  }
  return "?";
}

std::string_view SeverityName(FindingSeverity severity) {
  switch (severity) {
    case FindingSeverity::kInfo:
      return "info";
    case FindingSeverity::kWarning:
      return "warning";
    case FindingSeverity::kError:
      return "error";
  }
  return "?";
}

FindingSeverity BaseSeverity(FindingKind kind) {
  switch (kind) {
    case FindingKind::kTooFewFiles:
    case FindingKind::kNoSteps:
    case FindingKind::kEmptyShard:             // an OutOfRange at step 1 while the peers wait
    case FindingKind::kStepsPerEpochTooLarge:  // a warning under Keras 3's fit only
    case FindingKind::kDuplicateRecords:
    case FindingKind::kMissedRecords:
    case FindingKind::kScalarRebatch:  // fails at the first element
      return FindingSeverity::kError;
    case FindingKind::kAutoPolicy:
    case FindingKind::kNondeterministic:  // order only, unless before a cut (an error)
      return FindingSeverity::kInfo;
    case FindingKind::kInfiniteWithoutSteps:  // error under fit, estimator and for-tf
    case FindingKind::kUnevenSteps:           // error where a worker's end fails or hangs the step
    case FindingKind::kDroppedRecords:
    case FindingKind::kReadAmplification:
    case FindingKind::kUnseededShuffle:
    case FindingKind::kDynamicBatchShape:
    case FindingKind::kEmptyBatches:
    case FindingKind::kImbalance:
      return FindingSeverity::kWarning;
  }
  return FindingSeverity::kWarning;
}

FindingSeverity CheckResult::Worst() const {
  FindingSeverity worst = FindingSeverity::kInfo;
  for (const Finding& f : findings) worst = std::max(worst, f.severity);
  return worst;
}

Strategy DefaultStrategy(const Topology& topology) {
  return topology.workers > 1 ? Strategy::kMultiWorker : Strategy::kMirrored;
}

Status ValidateCheck(const CheckContext& ctx, const DistributeOptions& options) {
  const Topology& t = options.topology;
  const int minor = ctx.version.minor;
  switch (ctx.strategy) {
    case Strategy::kMirrored:
      if (t.workers != 1) {
        return Status::InvalidArgument(
            fmt::format("MirroredStrategy (strategy mirrored) is one worker; {} workers are "
                        "MultiWorkerMirroredStrategy (strategy multi-worker)",
                        t.workers));
      }
      break;
    case Strategy::kMultiWorker:
      if (t.workers < 2) {
        return Status::InvalidArgument(
            "MultiWorkerMirroredStrategy (strategy multi-worker) needs 2 workers or more; one "
            "worker is MirroredStrategy (strategy mirrored)");
      }
      break;
    case Strategy::kTpu:
      break;
    case Strategy::kParameterServer:
      if (options.api != Api::kFromFunction) {
        return Status::InvalidArgument(
            "ParameterServerStrategy takes the per-worker dataset function "
            "(ClusterCoordinator.create_per_worker_dataset): the pipeline is an input function "
            "(API from-function)");
      }
      if (ctx.loop != Loop::kNext && ctx.loop != Loop::kFit) {
        return Status::InvalidArgument(fmt::format(
            "ParameterServerStrategy with the loop '{}': a ClusterCoordinator schedules a "
            "number of steps; use the loop next (or fit) with a steps_per_epoch",
            LoopName(ctx.loop)));
      }
      if (ctx.version.minor < 4) {
        return Status::InvalidArgument(
            "ParameterServerStrategy's ClusterCoordinator came in TensorFlow 2.4");
      }
      if (!ctx.steps_per_epoch) {
        return Status::InvalidArgument(
            "ParameterServerStrategy needs a steps_per_epoch: fit's steps_per_epoch=None is not "
            "supported with it, and scheduled steps are counted");
      }
      break;
  }
  if ((ctx.loop == Loop::kFor || ctx.loop == Loop::kForTf) && ctx.steps_per_epoch) {
    return Status::InvalidArgument(
        "a for loop over the dataset runs until the data ends: a steps_per_epoch is the loop "
        "next");
  }
  if (ctx.loop == Loop::kNext && !ctx.steps_per_epoch) {
    return Status::InvalidArgument(
        "the loop next needs a steps_per_epoch: the calls of next(iterator) an epoch");
  }
  if (ctx.loop == Loop::kEstimator) {
    if (minor >= 16) {
      return Status::InvalidArgument(fmt::format(
          "Estimator with TensorFlow 2.{}: tf.estimator was removed in TF 2.16; check a release "
          "of 2.15 or earlier",
          minor));
    }
    if (ctx.strategy == Strategy::kTpu || ctx.strategy == Strategy::kParameterServer) {
      return Status::InvalidArgument(
          fmt::format("Estimator with the strategy {}: Estimator takes MirroredStrategy or "
                      "MultiWorkerMirroredStrategy (on a TPU it is TPUEstimator, another API)",
                      StrategyName(ctx.strategy)));
    }
    if (ctx.strategy == Strategy::kMultiWorker && options.api != Api::kFromFunction) {
      return Status::InvalidArgument(
          "Estimator under MultiWorkerMirroredStrategy calls its input_fn on each worker, "
          "without auto-sharding: the pipeline is an input function (API from-function)");
    }
  }
  if (ctx.epochs < 1) {
    return Status::InvalidArgument(fmt::format("epochs must be at least 1; got {}", ctx.epochs));
  }
  if (ctx.steps_per_epoch && (*ctx.steps_per_epoch < 1 || *ctx.steps_per_epoch > kMaxSteps)) {
    return Status::InvalidArgument(
        fmt::format("steps_per_epoch must be in [1, {}]; got {}", kMaxSteps, *ctx.steps_per_epoch));
  }
  return Status::OK();
}

Result<CheckResult> Check(const data::Pipeline& pipeline, const DistributeOptions& options,
                          const data::BuildOptions& build, const CheckContext& ctx) {
  TFDIST_RETURN_IF_ERROR(ValidateCheck(ctx, options));
  Checker checker(pipeline, options, build, ctx);
  TFDIST_ASSIGN_OR_RETURN(CheckResult result, checker.Run());
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) {
                     if (a.severity != b.severity) return a.severity > b.severity;
                     return a.kind < b.kind;
                   });
  return result;
}

}  // namespace tfdist::dist
