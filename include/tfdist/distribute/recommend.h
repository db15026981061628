// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The choice `layout --compare` recommends among FILE, DATA and OFF (or a
// reshard that makes FILE even), from what each policy's summary found.
// Pure arithmetic, no I/O; doc/semantics.md, "What --compare recommends",
// states the rule and its weights in words.

#ifndef TFDIST_DISTRIBUTE_RECOMMEND_H_
#define TFDIST_DISTRIBUTE_RECOMMEND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tfdist/distribute/decide.h"

namespace tfdist::dist {

// What one policy's layout summary found, in the terms the rule weighs.
struct PolicyOutcome {
  AutoShardPolicy policy = AutoShardPolicy::kFile;
  // False: the policy cannot apply to the pipeline (its error).
  bool applies = true;
  // FILE cannot apply for lack of files (fewer files than workers): a
  // reshard into more files is a fix.
  bool needs_more_files = false;
  uint64_t records_read = 0;       // distinct records read (LayoutSummary::DistinctRecords)
  uint64_t received = 0;           // records the replicas receive, over all workers
  uint64_t dropped = 0;            // records no replica receives, each counted once
  int64_t read_amplification = 1;  // how many times over the workers read the input
  double imbalance = 1.0;          // max/mean records per worker
  uint64_t steps = 0;              // global steps (0: an unbatched pipeline)
  uint64_t idle_steps = 0;         // steps a worker had no data, summed over workers
  uint64_t files = 0;              // files one worker reads (DATA, OFF: all of them)
};

// Weights of the cost (doc/semantics.md): each term is a fraction of an
// epoch's worth of training data or time; lower is better.
inline constexpr double kDroppedWeight = 1.0;     // per fraction of records never fed
inline constexpr double kDuplicatedWeight = 1.0;  // per fraction of records fed once more
inline constexpr double kImbalanceWeight = 0.5;   // per unit of (max/mean - 1)
inline constexpr double kIdleWeight = 0.5;        // per fraction of worker-steps idle
inline constexpr double kExtraReadWeight = 0.01;  // per extra read of the whole input
inline constexpr double kRewriteCost = 0.02;      // a reshard: one read and one write

// The terms of one policy's cost, weighted, and their sum.
struct Cost {
  double dropped = 0, duplicated = 0, imbalance = 0, idle = 0, reads = 0;
  double total() const { return dropped + duplicated + imbalance + idle + reads; }
};
Cost CostOf(const PolicyOutcome& outcome, int64_t workers);

struct Recommendation {
  // The policy to use (after the reshard, when num_shards is set: FILE).
  AutoShardPolicy policy = AutoShardPolicy::kFile;
  // Rewrite the input into this many files first (tfdist reshard), when
  // that is the best fix: a multiple of the workers, so that each reads
  // num_shards / workers files of near-equal record counts.
  std::optional<uint64_t> num_shards;
  // The costs weighed: each policy that applies, in the order given, and
  // the reshard's estimate when one was considered.
  std::vector<std::pair<AutoShardPolicy, double>> costs;
  std::optional<double> reshard_cost;
  // What counts against the choices not taken, one clause each ("FILE drops
  // 51.0% of the records").
  std::vector<std::string> against;
};

// The recommendation among `outcomes` (FILE, DATA and OFF, in any order)
// for `workers` workers; `automatic` is what AUTO applies (preferred on a
// tie, then FILE, DATA, OFF in that order). A reshard is weighed when the
// pipeline reads files (`reads_files`), W > 1 and DATA applies: FILE after
// it is estimated as DATA's row (the same per-worker shares of the records)
// read once, plus kRewriteCost; it is recommended only when it costs less
// than every policy as the data is now.
// nullopt when no policy applies.
std::optional<Recommendation> Recommend(const std::vector<PolicyOutcome>& outcomes, int64_t workers,
                                        AutoShardPolicy automatic, bool reads_files);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_RECOMMEND_H_
