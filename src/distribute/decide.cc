// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The policy and split tf.distribute applies, and why (doc/semantics.md,
// "Auto-sharding", "Choosing the split").

#include "tfdist/distribute/decide.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace tfdist::dist {

Result<AutoShardPolicy> ParsePolicy(std::string_view text) {
  // TensorFlow's spelling too: tf.data.experimental.AutoShardPolicy.DATA.
  constexpr std::string_view kEnum = "AutoShardPolicy.";
  std::string_view name = text;
  if (const size_t at = name.find(kEnum); at != std::string_view::npos) {
    name.remove_prefix(at + kEnum.size());
  }
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "OFF") return AutoShardPolicy::kOff;
  if (upper == "AUTO") return AutoShardPolicy::kAuto;
  if (upper == "FILE") return AutoShardPolicy::kFile;
  if (upper == "DATA") return AutoShardPolicy::kData;
  if (upper == "HINT") return AutoShardPolicy::kHint;
  return Status::InvalidArgument(
      fmt::format("unknown policy '{}'; expected AUTO, FILE, DATA, OFF or HINT", text));
}

std::string_view PolicyName(AutoShardPolicy policy) {
  switch (policy) {
    case AutoShardPolicy::kOff:
      return "OFF";
    case AutoShardPolicy::kAuto:
      return "AUTO";
    case AutoShardPolicy::kFile:
      return "FILE";
    case AutoShardPolicy::kData:
      return "DATA";
    case AutoShardPolicy::kHint:
      return "HINT";
  }
  return "?";
}

Result<Split> ParseSplit(std::string_view text) {
  if (text == "auto") return Split::kAuto;
  if (text == "batch-sizes") return Split::kBatchSizes;
  if (text == "legacy") return Split::kLegacy;
  if (text == "none") return Split::kNone;
  return Status::InvalidArgument(
      fmt::format("unknown rebatch '{}'; expected auto, batch-sizes, legacy or none", text));
}

std::string_view SplitName(Split split) {
  switch (split) {
    case Split::kAuto:
      return "auto";
    case Split::kBatchSizes:
      return "batch-sizes";
    case Split::kLegacy:
      return "legacy";
    case Split::kNone:
      return "none";
  }
  return "?";
}

bool Decision::HasWarning(WarningKind kind) const {
  return std::any_of(warnings.begin(), warnings.end(),
                     [kind](const Warning& w) { return w.kind == kind; });
}

Status CheckTopology(const Topology& t) {
  const int64_t W = t.workers, R = t.replicas;
  if (W < 1 || R < 1) {
    return Status::InvalidArgument(fmt::format(
        "the topology needs at least 1 worker and 1 replica per worker; got {} workers x {} "
        "replicas",
        W, R));
  }
  if (W > kMaxWorkers) {
    return Status::InvalidArgument(fmt::format(
        "the topology is too large: at most {} workers (far beyond any published tf.distribute "
        "job); got {}",
        kMaxWorkers, W));
  }
  // Far beyond any cluster, and small enough that W x R and the per-worker
  // tables cannot overflow or exhaust memory.
  constexpr int64_t kMaxReplicasInSync = 1 << 20;
  if (W > kMaxReplicasInSync || R > kMaxReplicasInSync || W * R > kMaxReplicasInSync) {
    return Status::InvalidArgument(fmt::format(
        "the topology is too large: at most {} replicas in sync; got {} workers x {} replicas",
        kMaxReplicasInSync, W, R));
  }
  return Status::OK();
}

namespace {

// The policy that applies, and why.
Status DecidePolicy(const PipelineShape& s, const DistributeOptions& options, Decision& d) {
  const int64_t W = options.topology.workers;
  d.applied = options.policy;
  switch (options.policy) {
    case AutoShardPolicy::kAuto:
      if (s.file_blocker.empty()) {
        d.applied = AutoShardPolicy::kFile;
        d.reason = "AUTO: the pipeline reads files, so FILE sharding applies";
      } else {
        d.applied = AutoShardPolicy::kData;
        d.reason = fmt::format("AUTO: FILE sharding cannot apply ({}), so DATA", s.file_blocker);
      }
      break;
    case AutoShardPolicy::kFile:
      if (!s.file_blocker.empty() && W > 1) {
        return Status::InvalidArgument(
                   fmt::format("FILE sharding cannot apply: {}", s.file_blocker))
            .WithAdvice(Remedy::kDataPolicy);
      }
      d.reason = W == 1 ? "FILE: one worker, nothing to shard" : "FILE: the file names are sharded";
      break;
    case AutoShardPolicy::kData:
      d.reason = "DATA: every worker runs the whole pipeline and keeps its share of the pieces";
      break;
    case AutoShardPolicy::kOff:
      d.reason = "OFF: no sharding, every worker reads everything";
      break;
    case AutoShardPolicy::kHint:
      d.reason = "HINT: every shard(SHARD_HINT, ...) becomes shard(num_workers, worker)";
      break;
  }
  if (d.ShardsData(options.topology)) {
    d.Warn(WarningKind::kDataReadsEverything,
           fmt::format("DATA sharding: each of the {0} workers reads the whole dataset and keeps "
                       "1/{0} of it ({0}x the reads of FILE sharding)",
                       W));
  }
  return Status::OK();
}

// The split that applies, and why.
Status DecideSplit(const PipelineShape& s, const DistributeOptions& options, Decision& d) {
  const int64_t N = options.topology.num_replicas_in_sync();
  const Split asked = options.split;
  if (!s.batched && N > 1 && asked != Split::kNone) {
    // input_lib: compute_batch_size finds no batch (-1), so the legacy
    // RebatchDataset splits each element's first dimension into N pieces
    // of ceil(n / N), which a scalar does not have.
    d.split = Split::kNone;
    if (!s.element_rows.empty()) {
      // Every feature's first dimension n is cut into N pieces of ceil(n /
      // N) rows, the last ones short or empty: each replica gets a piece
      // of every element.
      std::string pieces;
      for (const auto& [name, n] : s.element_rows) {
        const int64_t per = (n + N - 1) / N;
        std::vector<int64_t> rows;
        for (int64_t r = 0; r < N; ++r) rows.push_back(std::clamp<int64_t>(n - r * per, 0, per));
        pieces += fmt::format("{}{}: {} -> {} rows", pieces.empty() ? "" : "; ", name, n,
                              fmt::join(rows, " + "));
      }
      d.split_reason = fmt::format(
          "the pipeline does not end in batch(): tf.distribute cuts each element's first "
          "dimension into {} pieces (legacy RebatchDataset), so every replica gets a piece of "
          "every element, not elements of its own ({}); shown one element a step",
          N, pieces);
    } else {
      d.split_reason = fmt::format(
          "the pipeline does not end in batch(): tf.distribute splits each element's first "
          "dimension over the {} replicas in sync (legacy RebatchDataset), which tfdist {}; "
          "shown unsplit",
          N, s.scalar_elements ? "cannot do to scalars" : "cannot see in these elements");
    }
    if (s.scalar_elements) {
      d.Warn(
          WarningKind::kScalarRebatch,
          fmt::format("{} and the pipeline has no batch(): with {} "
                      "replicas in sync TensorFlow fails at the first element (\"Cannot "
                      "rebatch dataset: All components must have at least one dimension. "
                      "Perhaps your input dataset is not batched? Component {} is scalar.\"); "
                      "batch() the dataset to the global batch size",
                      s.scalar_feature.empty()
                          ? std::string("the elements are scalars")
                          : fmt::format("the elements' feature '{}' is a scalar", s.scalar_feature),
                      N, s.scalar_component),
          {}, Severity::kError);
    }
  } else if (!s.batched) {
    d.split = Split::kNone;
    d.split_reason = "the pipeline does not end in batch(): no split";
  } else if (N == 1) {
    // tf.distribute adds a rebatch only for more than one replica in sync
    // (input_lib), whatever the policy: the global batch is the replica's.
    d.split = Split::kNone;
    if (asked == Split::kNone) {
      d.split_requested = true;
      d.split_reason = "each element is one replica's batch";
    } else if (asked == Split::kAuto) {
      d.split_reason = "one replica in sync: nothing to split";
    } else {
      d.split_reason = fmt::format(
          "one replica in sync: tf.distribute adds no rebatch, so the {} split asked for does "
          "not apply",
          SplitName(asked));
    }
  } else if (d.applied == AutoShardPolicy::kData) {
    d.split = Split::kLegacy;
    d.split_reason = "DATA sharding forces the legacy split (RebatchDataset)";
    if (asked == Split::kBatchSizes) {
      d.Warn(WarningKind::kBatchSizesUnderData,
             "a batch-sizes split does not apply under DATA sharding; the legacy split is used, "
             "as in TensorFlow");
    } else if (asked == Split::kNone) {
      d.split = Split::kNone;
      d.split_requested = true;
      d.split_reason = "each element is one replica's batch";
    }
  } else if (asked == Split::kAuto) {
    if (s.global_batch_size) {
      d.split = Split::kBatchSizes;
      d.split_reason = fmt::format(
          "the global batch size {} is static: RebatchDatasetV2 with batch_sizes_for_worker",
          *s.global_batch_size);
    } else {
      d.split = Split::kLegacy;
      d.split_reason = "the global batch size is not static: legacy RebatchDataset";
    }
  } else {
    if (asked == Split::kBatchSizes && !s.global_batch_size) {
      return Status::InvalidArgument(
          "a batch-sizes split needs a static global batch size: batch(G) with a number, "
          "followed only by prefetch, repeat, shard, shuffle, skip or take");
    }
    d.split = asked;
    d.split_requested = true;
  }
  return Status::OK();
}

void WarnFilter(const PipelineShape& shape, Decision& d) {
  if (shape.filter.empty()) return;
  d.Warn(WarningKind::kFilterUpperBound,
         fmt::format("{} is counted as keeping every element (tfdist does not run its "
                     "predicate): the records, batches and steps after it are upper bounds",
                     shape.filter));
}

}  // namespace

Result<Decision> Decide(const PipelineShape& shape, const DistributeOptions& options) {
  Decision d;
  d.requested = options.policy;
  d.batched = shape.batched;
  d.global_batch_size = shape.global_batch_size;
  d.drop_remainder = shape.drop_remainder;
  TFDIST_RETURN_IF_ERROR(DecidePolicy(shape, options, d));
  TFDIST_RETURN_IF_ERROR(DecideSplit(shape, options, d));
  WarnFilter(shape, d);
  return d;
}

Status CheckFileCount(uint64_t found, int64_t workers) {
  if (found == 0 || found >= static_cast<uint64_t>(workers)) return Status::OK();
  return Status::InvalidArgument(
             fmt::format("FILE sharding needs at least {0} files for {0} workers; "
                         "found {1}",
                         workers, found))
      .WithAdvice(Remedy::kDataPolicyOrMoreFiles, std::to_string(found));
}

Decision DecideFromFunction(const PipelineShape& shape, const DistributeOptions& options) {
  Decision d;
  d.requested = options.policy;
  d.batched = shape.batched;
  d.global_batch_size = shape.global_batch_size;
  d.drop_remainder = shape.drop_remainder;
  d.applied = AutoShardPolicy::kOff;
  d.reason =
      "distribute_datasets_from_function: the input function is each worker's pipeline; "
      "nothing is sharded or split by tf.distribute";
  d.split = Split::kNone;
  d.split_reason = "distribute_datasets_from_function does not split batches";
  if (shape.shard_after_unseeded_shuffle) {
    d.Warn(WarningKind::kShardAfterUnseededShuffle,
           "shard() follows an unseeded shuffle of file names: each worker shuffles differently, "
           "so workers disagree on the order and files are read twice or never; give the "
           "shuffle a seed, or shard before shuffling");
  }
  // Pipelines of their own per worker: the function gives each its share.
  d.function_shards = shape.shards_by_context || options.worker_pipelines != nullptr;
  if (!d.function_shards && options.topology.workers > 1) {
    d.Warn(WarningKind::kFunctionDoesNotShard,
           fmt::format("the input function does not shard by its input context (shard("
                       "ctx.num_input_pipelines, ctx.input_pipeline_id)): all {} workers read "
                       "and feed the same records",
                       options.topology.workers));
  }
  WarnFilter(shape, d);
  return d;
}

}  // namespace tfdist::dist
