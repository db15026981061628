// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Building the datasets of a pipeline's ops (private).

#ifndef TFDIST_DATA_BUILDER_H_
#define TFDIST_DATA_BUILDER_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "stages.h"
#include "tfdist/base/result.h"
#include "tfdist/data/ops.h"
#include "tfdist/data/seeds.h"

namespace tfdist::data {

struct BuildOptions;  // pipeline.h: BuildDataset's, which the Builder implements

// Turns ops into datasets, one stage per op, resolving ctx.* names,
// SHARD_HINT and AUTOTUNE from the BuildOptions and checking every value as
// TensorFlow does when it builds.
//
// Thread-safety: one thread at a time. `pipeline` and `options` must outlive
// the Builder.
class Builder {
 public:
  Builder(const Pipeline& pipeline, const BuildOptions& options);

  // The dataset of all the ops, in order.
  // Error: InvalidArgument at the position of a bad value (PositionError),
  // with Remedy::kFromFunction for a ctx.* name without a context and
  // Remedy::kHintPolicy for SHARD_HINT without a hint; list_files' errors.
  Result<DatasetPtr> Build();

 private:
  // One per alternative of OpParams: the stage of `op` reading `in` (null
  // for a source).
  Result<DatasetPtr> Apply(const ListFilesOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const FromTensorSlicesOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const TFRecordOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const RangeOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const ShardOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const InterleaveOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const ShuffleOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const RepeatOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const BatchOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const TakeOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const SkipOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const EnumerateOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const PrefetchOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const MapOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const UnbatchOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const RebatchOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const CacheOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const FilterOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const IgnoreErrorsOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const ConcatenateOp& p, const Op& op, DatasetPtr in);
  Result<DatasetPtr> Apply(const GroupByWindowOp& p, const Op& op, DatasetPtr in);

  Status ErrorAt(size_t pos, std::string_view what) const;
  // The value of `a` in op `op`, with ctx.* names and SHARD_HINT resolved.
  Result<int64_t> Resolve(const IntArg& a, std::string_view op) const;
  // Resolve, checked to be in [min, max] ("positive" when min is 1); with
  // `autotune`, AUTOTUNE stands for the CPUs (at most `max`).
  Result<int64_t> AtLeast(const IntArg& a, int64_t min, std::string_view op, std::string_view what,
                          bool autotune = false,
                          int64_t max = std::numeric_limits<int64_t>::max()) const;
  // Resolve, checked as TensorFlow checks num_parallel_calls: > 0 or
  // AUTOTUNE, which is returned as kAutotune.
  Result<int64_t> PositiveOrAutotune(const IntArg& a, std::string_view op,
                                     std::string_view what) const;
  // What every reader stage takes from the build options (and from an
  // ignore_errors() after the op being built).
  InterleaveOptions ReaderOptions() const;
  // Whether an ignore_errors() follows the op being built (here, or in the
  // pipeline this one is built inside).
  bool IgnoresErrors() const;
  // The options of a pipeline built inside this one at the op being built
  // (a cache()'s input rebuilt, a concatenate()'s dataset): these, with
  // `seed` for its unseeded stages and IgnoresErrors() passed on.
  BuildOptions InnerOptions(uint64_t seed) const;
  // A shuffle's kernel seeds: TensorFlow's from its op seed (its own, or
  // one ResolveOpSeeds gave it) and the global seed; without either, a pair
  // drawn from the run's seed (random unless given).
  SeedPair Seeds(std::optional<int64_t> op_seed);

  const Pipeline& pipeline_;
  const BuildOptions& options_;
  int64_t cpus_;
  uint64_t seed_;
  uint64_t unseeded_ = 0;
  size_t index_ = 0;  // of the op being built
};

}  // namespace tfdist::data

#endif  // TFDIST_DATA_BUILDER_H_
