// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// From ops to datasets: one stage per op, its values resolved and checked.

#include "builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <thread>
#include <utility>
#include <variant>

#include "tfdist/base/random.h"
#include "tfdist/data/pipeline.h"

namespace tfdist::data {
namespace {

// tf.data.experimental.SHARD_HINT's value.
constexpr int64_t kShardHintValue = -1;

}  // namespace

Builder::Builder(const Pipeline& pipeline, const BuildOptions& options)
    : pipeline_(pipeline), options_(options) {
  cpus_ = AutotuneCpus(options);
  seed_ = options.default_seed ? *options.default_seed
                               : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
}

Result<DatasetPtr> Builder::Build() {
  DatasetPtr ds;
  for (index_ = 0; index_ < pipeline_.ops.size(); ++index_) {
    const Op& op = pipeline_.ops[index_];
    TFDIST_ASSIGN_OR_RETURN(
        ds, std::visit([&](const auto& p) { return Apply(p, op, std::move(ds)); }, op.params));
  }
  return ds;
}

Result<DatasetPtr> Builder::Apply(const ListFilesOp&, const Op& op, DatasetPtr) {
  // Built as the ops it stands for, the ones the planner plans.
  TFDIST_ASSIGN_OR_RETURN(std::vector<Op> ops, LowerListFiles(op, pipeline_.text));
  DatasetPtr ds = NewNamesDataset(std::move(std::get<FromTensorSlicesOp>(ops[0].params).names));
  for (size_t i = 1; i < ops.size(); ++i) {
    TFDIST_ASSIGN_OR_RETURN(
        ds,
        std::visit([&](const auto& p) { return Apply(p, ops[i], std::move(ds)); }, ops[i].params));
  }
  return ds;
}

Result<DatasetPtr> Builder::Apply(const FromTensorSlicesOp& p, const Op&, DatasetPtr) {
  if (p.integers) return NewIntsDataset(p.ints);
  return NewNamesDataset(p.names);
}

Result<DatasetPtr> Builder::Apply(const TFRecordOp& p, const Op& op, DatasetPtr) {
  InterleaveOptions o = ReaderOptions();
  o.compression = p.compression;
  // TensorFlow (readers.py): num_parallel_reads=N is a parallel interleave
  // of cycle_length N, N reading; AUTOTUNE is interleave(num_parallel_calls=
  // AUTOTUNE), whose cycle length is AutotuneCycleLength's.
  if (p.num_parallel_reads) {
    TFDIST_ASSIGN_OR_RETURN(
        int64_t n, PositiveOrAutotune(*p.num_parallel_reads, op.name, "num_parallel_reads"));
    o.cycle_length = n == kAutotune ? AutotuneCycleLength(kAutotune, cpus_) : n;
    o.parallelism = ReaderThreads(n, o.cycle_length, cpus_);
  }
  return NewInterleaveDataset(NewNamesDataset(p.files), o);
}

Result<DatasetPtr> Builder::Apply(const RangeOp& p, const Op& op, DatasetPtr) {
  TFDIST_ASSIGN_OR_RETURN(int64_t start, Resolve(p.start, op.name));
  TFDIST_ASSIGN_OR_RETURN(int64_t stop, Resolve(p.stop, op.name));
  TFDIST_ASSIGN_OR_RETURN(int64_t step, Resolve(p.step, op.name));
  if (step == 0) return ErrorAt(p.step.pos, "range(): step must be a non-zero integer; got 0");
  return NewRangeDataset(start, stop, step);
}

Result<DatasetPtr> Builder::Apply(const ShardOp& p, const Op& op, DatasetPtr in) {
  // The HINT rewrite matches num_shards alone, by its value (SHARD_HINT is
  // the constant -1, however it is written), and replaces both arguments:
  // the index written is ignored, as the num_shards placeholder is.
  const IntArg& num_shards = p.num_shards;
  if (options_.shard_hint &&
      (num_shards.symbol == IntArg::Symbol::kShardHint ||
       (num_shards.symbol == IntArg::Symbol::kLiteral && num_shards.value == kShardHintValue))) {
    // (Not a structured binding: the lambda below captures it, which
    // clang 14 does not allow.)
    const int64_t workers = options_.shard_hint->first;
    const int64_t worker = options_.shard_hint->second;
    // TensorFlow's error for a rewritten shard over too few elements
    // (shard_dataset_op.cc), which speaks of files whatever the input is.
    // As PositionError words it; the position is found now, as the stage
    // does not keep the expression.
    TooFewForShards too_few = [where = DescribePosition(pipeline_.text, op.pos), pos = op.pos,
                               workers](int64_t found) {
      return Status::InvalidArgument(
                 fmt::format("{}: shard(): Could not apply FILE based sharding: the dataset only "
                             "has {} file(s), which is not enough for the required {} "
                             "shards/workers.",
                             where, found, workers))
          .WithPosition(pos)
          .WithAdvice(Remedy::kMoreFilesFewerWorkers, std::to_string(found));
    };
    return NewShardDataset(std::move(in), workers, worker, std::move(too_few));
  }
  TFDIST_ASSIGN_OR_RETURN(const int64_t n, Resolve(num_shards, op.name));
  if (n <= 0) {
    return ErrorAt(num_shards.pos,
                   fmt::format("shard(): num_shards must be greater than zero; got {}", n));
  }
  // Not rewritten (its num_shards is a number), so its index stays -1.
  if (p.index.symbol == IntArg::Symbol::kShardHint) {
    return ErrorAt(p.index.pos, fmt::format("shard(): index must be in [0, num_shards); got "
                                            "SHARD_HINT for {} shards (the HINT policy fills in "
                                            "only shard(SHARD_HINT, ...))",
                                            n));
  }
  TFDIST_ASSIGN_OR_RETURN(const int64_t i, Resolve(p.index, op.name));
  if (i < 0 || i >= n) {
    return ErrorAt(p.index.pos, fmt::format("shard(): index must be in [0, num_shards); got "
                                            "index {} for {} shards",
                                            i, n));
  }
  return NewShardDataset(std::move(in), n, i);
}

Result<DatasetPtr> Builder::Apply(const InterleaveOp& p, const Op& op, DatasetPtr in) {
  InterleaveOptions o = ReaderOptions();
  o.compression = p.compression;
  if (!p.flat_map) {
    // TensorFlow's checks (interleave_dataset_op.cc and
    // parallel_interleave_dataset_op.cc), in its order, and its cycle
    // length for AUTOTUNE.
    IntArg autotune;
    autotune.value = kAutotune;
    autotune.pos = op.pos;
    const IntArg& cycle_arg = p.cycle_length.value_or(autotune);
    TFDIST_ASSIGN_OR_RETURN(const int64_t cycle,
                            PositiveOrAutotune(cycle_arg, op.name, "cycle_length"));
    if (p.block_length) {
      TFDIST_ASSIGN_OR_RETURN(o.block_length, AtLeast(*p.block_length, 1, op.name, "block_length"));
    }
    std::optional<int64_t> calls;
    if (p.num_parallel_calls) {
      TFDIST_ASSIGN_OR_RETURN(
          calls, PositiveOrAutotune(*p.num_parallel_calls, op.name, "num_parallel_calls"));
      if (cycle != kAutotune && *calls != kAutotune && *calls > cycle) {
        return ErrorAt(p.num_parallel_calls->pos,
                       fmt::format("interleave(): if cycle_length is set to a fixed value, "
                                   "num_parallel_calls must be either AUTOTUNE or a value less "
                                   "than or equal to cycle_length; got num_parallel_calls {} and "
                                   "cycle_length {}",
                                   *calls, cycle));
      }
    }
    o.cycle_length = cycle == kAutotune ? AutotuneCycleLength(calls, cpus_) : cycle;
    if (calls) o.parallelism = ReaderThreads(*calls, o.cycle_length, cpus_);
    o.deterministic = p.deterministic.value_or(true);
  }
  return NewInterleaveDataset(std::move(in), o);
}

Result<DatasetPtr> Builder::Apply(const ShuffleOp& p, const Op& op, DatasetPtr in) {
  TFDIST_ASSIGN_OR_RETURN(int64_t size, AtLeast(p.buffer_size, 1, op.name, "buffer_size"));
  return NewShuffleDataset(std::move(in), size, Seeds(p.seed), p.reshuffle_each_iteration,
                           options_.shuffle_watch, op.pos,
                           options_.counters ? options_.counters->worker : 0);
}

Result<DatasetPtr> Builder::Apply(const RepeatOp& p, const Op& op, DatasetPtr in) {
  // TensorFlow's repeat_dataset_op.cc: any count below 0 is forever.
  int64_t count = -1;
  if (p.count) {
    TFDIST_ASSIGN_OR_RETURN(count, Resolve(*p.count, op.name));
  }
  return NewRepeatDataset(std::move(in), std::max<int64_t>(count, -1));
}

Result<DatasetPtr> Builder::Apply(const BatchOp& p, const Op& op, DatasetPtr in) {
  TFDIST_ASSIGN_OR_RETURN(int64_t size, AtLeast(p.batch_size, 1, op.name, "batch_size"));
  return NewBatchDataset(std::move(in), size, p.drop_remainder, options_.counters);
}

Result<DatasetPtr> Builder::Apply(const TakeOp& p, const Op& op, DatasetPtr in) {
  // TensorFlow's take_dataset_op.cc: any count below 0 is everything.
  TFDIST_ASSIGN_OR_RETURN(int64_t count, Resolve(p.count, op.name));
  return NewTakeDataset(std::move(in), std::max<int64_t>(count, -1));
}

Result<DatasetPtr> Builder::Apply(const SkipOp& p, const Op& op, DatasetPtr in) {
  // TensorFlow's skip_dataset_op.cc: any count below 0 skips everything.
  TFDIST_ASSIGN_OR_RETURN(int64_t count, Resolve(p.count, op.name));
  return NewSkipDataset(std::move(in), std::max<int64_t>(count, -1), options_.counters);
}

Result<DatasetPtr> Builder::Apply(const EnumerateOp& p, const Op& op, DatasetPtr in) {
  TFDIST_ASSIGN_OR_RETURN(int64_t start, Resolve(p.start, op.name));
  return NewEnumerateDataset(std::move(in), start);
}

Result<DatasetPtr> Builder::Apply(const PrefetchOp& p, const Op& op, DatasetPtr in) {
  TFDIST_ASSIGN_OR_RETURN(int64_t size, AtLeast(p.buffer_size, 0, op.name, "buffer_size", true));
  // A prefetch changes when records are read, never which or in what order.
  // A layout (record ids) runs it without its thread, so what a layout that
  // stops at --steps counts as read is what its steps took, the same on
  // every run, not what the thread happened to fetch ahead of them.
  if (size == 0 || options_.record_ids != RecordIds::kNone) return in;
  return NewPrefetchDataset(std::move(in), size);
}

Result<DatasetPtr> Builder::Apply(const UnbatchOp&, const Op&, DatasetPtr in) {
  return NewUnbatchDataset(std::move(in));
}

Result<DatasetPtr> Builder::Apply(const RebatchOp& p, const Op& op, DatasetPtr in) {
  std::vector<int64_t> sizes;
  int64_t total = 0;
  for (const IntArg& a : p.sizes) {
    TFDIST_ASSIGN_OR_RETURN(int64_t size, AtLeast(a, 0, op.name, "batch_size"));
    sizes.push_back(size);
    total = std::max(total, size);
  }
  if (total == 0) {
    return ErrorAt(op.pos,
                   "rebatch(): every batch size is 0 (TensorFlow would give empty batches "
                   "forever, never reading its input)");
  }
  return NewRebatchDataset(std::move(in), std::move(sizes), p.drop_remainder, options_.counters);
}

// Later passes build the ops before the cache again: the same stages, seeds
// and epoch counts as the first pass had, so the same elements in its order.
Result<DatasetPtr> Builder::Apply(const CacheOp&, const Op&, DatasetPtr in) {
  auto prefix = std::make_shared<Pipeline>();
  prefix->text = pipeline_.text;
  prefix->ops.assign(pipeline_.ops.begin(),
                     pipeline_.ops.begin() + static_cast<std::ptrdiff_t>(index_));
  BuildOptions options = InnerOptions(seed_);
  // TensorFlow reads the input once: later passes count in a counter of
  // their own, which no report reads.
  if (options.counters) options.counters = std::make_shared<ReadCounters>();
  return NewCacheDataset(std::move(in), [prefix, options]() -> Result<DatasetPtr> {
    return Builder(*prefix, options).Build();
  });
}

Result<DatasetPtr> Builder::Apply(const FilterOp&, const Op&, DatasetPtr in) { return in; }

// The joined pipeline is built with the same options; its unseeded
// shuffles draw from a seed of their own, not the same as this one's.
Result<DatasetPtr> Builder::Apply(const ConcatenateOp& p, const Op&, DatasetPtr in) {
  TFDIST_ASSIGN_OR_RETURN(
      DatasetPtr other,
      Builder(*p.dataset, InnerOptions(seed_ ^ (0x9e3779b97f4a7c15ULL * (index_ + 1)))).Build());
  return NewConcatenateDataset(std::move(in), std::move(other));
}

// The readers before it end a file at its error (ReaderOptions).
Result<DatasetPtr> Builder::Apply(const IgnoreErrorsOp&, const Op&, DatasetPtr in) { return in; }

// Its groups are decided by a function of the data that tfdist does not
// run: no pipeline with it runs (layouts bound its batches instead).
Result<DatasetPtr> Builder::Apply(const GroupByWindowOp& p, const Op& op, DatasetPtr) {
  return ErrorAt(op.pos, fmt::format("{}(): its groups depend on {}({}), a function of the data "
                                     "that tfdist does not run; a layout shows the batches "
                                     "it makes as bounds; to read the data, end the pipeline "
                                     "before {}()",
                                     op.name, p.buckets ? "element_length_func" : "key_func",
                                     p.key_func, op.name));
}

// Records pass through: they are parsed where batches are staged.
Result<DatasetPtr> Builder::Apply(const MapOp& p, const Op& op, DatasetPtr in) {
  // Checked as TensorFlow checks it (parallel_map_dataset_op.cc,
  // parse_example_dataset_op.cc), then unused: tfdist runs no function.
  if (p.num_parallel_calls) {
    TFDIST_RETURN_IF_ERROR(
        PositiveOrAutotune(*p.num_parallel_calls, op.name, "num_parallel_calls"));
  }
  return in;
}

Status Builder::ErrorAt(size_t pos, std::string_view what) const {
  return PositionError(pipeline_.text, pos, what);
}

Result<int64_t> Builder::Resolve(const IntArg& a, std::string_view op) const {
  auto need_context = [&](std::string_view name) -> Result<int64_t> {
    return ErrorAt(a.pos,
                   fmt::format("{} is only known inside distribute_datasets_from_function", name))
        .WithAdvice(Remedy::kFromFunction);
  };
  switch (a.symbol) {
    case IntArg::Symbol::kLiteral:
      return a.value;
    case IntArg::Symbol::kShardHint:
      return ErrorAt(a.pos, fmt::format("{}(): SHARD_HINT stands for the worker count and index "
                                        "only under the HINT auto-shard policy",
                                        op))
          .WithAdvice(Remedy::kHintPolicy);
    case IntArg::Symbol::kNumInputPipelines:
      if (!options_.context) return need_context("ctx.num_input_pipelines");
      return options_.context->num_input_pipelines;
    case IntArg::Symbol::kInputPipelineId:
      if (!options_.context) return need_context("ctx.input_pipeline_id");
      return options_.context->input_pipeline_id;
    case IntArg::Symbol::kNumReplicasInSync:
      if (!options_.context) return need_context("ctx.num_replicas_in_sync");
      return options_.context->num_replicas_in_sync;
    case IntArg::Symbol::kPerReplicaBatchSize: {
      if (!options_.context) return need_context("ctx.get_per_replica_batch_size()");
      const int64_t n = options_.context->num_replicas_in_sync;
      if (n <= 0 || a.value % n != 0) {
        return ErrorAt(a.pos, fmt::format("get_per_replica_batch_size(): the global batch size {} "
                                          "is not divisible by num_replicas_in_sync {}",
                                          a.value, n));
      }
      return a.value / n;
    }
  }
  return a.value;
}

Result<int64_t> Builder::AtLeast(const IntArg& a, int64_t min, std::string_view op,
                                 std::string_view what, bool autotune, int64_t max) const {
  TFDIST_ASSIGN_OR_RETURN(int64_t v, Resolve(a, op));
  if (autotune && v == kAutotune) return std::min(cpus_, max);
  if (v < min) {
    // TensorFlow's words: "batch_size must be greater than zero."
    return ErrorAt(a.pos,
                   fmt::format("{}(): {} must be {}{}; got {}", op, what,
                               min == 1 ? "greater than zero" : fmt::format("at least {}", min),
                               autotune ? " or AUTOTUNE" : "", v));
  }
  if (v > max) {
    return ErrorAt(a.pos, fmt::format("{}(): {} must be at most {}; got {}", op, what, max, v));
  }
  return v;
}

Result<int64_t> Builder::PositiveOrAutotune(const IntArg& a, std::string_view op,
                                            std::string_view what) const {
  TFDIST_ASSIGN_OR_RETURN(int64_t v, Resolve(a, op));
  if (v > 0 || v == kAutotune) return v;
  return ErrorAt(
      a.pos, fmt::format("{}(): {} must be greater than zero or AUTOTUNE; got {}", op, what, v));
}

InterleaveOptions Builder::ReaderOptions() const {
  InterleaveOptions o;
  o.read_by_index = options_.read_by_index;
  o.record_ids = options_.record_ids;
  o.counters = options_.counters;
  o.end_file_on_error = IgnoresErrors();
  return o;
}

BuildOptions Builder::InnerOptions(uint64_t seed) const {
  BuildOptions options = options_;
  options.default_seed = seed;
  options.errors_ignored = IgnoresErrors();
  return options;
}

bool Builder::IgnoresErrors() const {
  return options_.errors_ignored ||
         std::any_of(
             pipeline_.ops.begin() + static_cast<std::ptrdiff_t>(index_), pipeline_.ops.end(),
             [](const Op& op) { return std::holds_alternative<IgnoreErrorsOp>(op.params); });
}

SeedPair Builder::Seeds(std::optional<int64_t> op_seed) {
  if (op_seed) {
    std::optional<int64_t> global;
    if (options_.global_seed) global = options_.global_seed->seed;
    return OpSeeds(global, *op_seed);
  }
  // Random in TensorFlow (two 64-bit seeds from its random source): here
  // from the run's seed, so that a run can be repeated.
  Rng rng(seed_ + ++unseeded_);
  SeedPair p{static_cast<int64_t>(rng.Next()), static_cast<int64_t>(rng.Next())};
  if (p.seed == 0 && p.seed2 == 0) p.seed2 = 1;
  return p;
}

}  // namespace tfdist::data
