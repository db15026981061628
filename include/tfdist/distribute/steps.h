// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Which per-replica batches a worker keeps, which replica each goes to, and
// how global steps are made of them (doc/semantics.md, "DATA" and "Replicas
// and steps"). Pure rules, shared by layouts, summaries and runs.

#ifndef TFDIST_DISTRIBUTE_STEPS_H_
#define TFDIST_DISTRIBUTE_STEPS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "tfdist/base/status.h"
#include "tfdist/distribute/decide.h"

namespace tfdist::dist {

// DATA sharding: worker `worker` of `workers` keeps the pieces (per-replica
// batches, or elements of an unbatched pipeline) at positions p with
// p % workers == worker, counted before the filter.
inline bool KeepsPiece(uint64_t piece, int64_t workers, int64_t worker) {
  return piece % static_cast<uint64_t>(workers) == static_cast<uint64_t>(worker);
}

// DATA sharding needs a piece for every worker, unless there is nothing at
// all: `pieces` were made before the filter.
// Error: InvalidArgument when 0 < pieces < workers.
Status CheckDataShare(uint64_t pieces, int64_t workers, bool batched);

// The local replica that a worker's i-th per-replica batch goes to; it is
// part of global step i / R + 1.
inline int64_t LocalReplica(uint64_t i, int64_t replicas) {
  return static_cast<int64_t>(i % static_cast<uint64_t>(replicas));
}

// TensorFlow's one exception to padding: with one worker and statically
// shaped batches (batched, no split, drop_remainder), a step in which some
// replica has no data is dropped and the iteration ends.
bool DropsShortStep(const Decision& d, const Topology& t);

// What the next global step is: none (no replica has a batch: the
// iteration is over), a step (replicas without a batch get an empty one),
// or a dropped step (DropsShortStep, and some replica has none).
enum class StepKind { kEnd, kStep, kDropped };
StepKind NextStep(bool any_batch, bool any_missing, bool drops_short_step);

// FILE sharding over files of uneven record counts: the records each worker
// reads (`records`, per worker: all of them up to 8 workers, else the least
// and the most with their workers) and, when batched, the steps in which
// some replica was fed an empty batch. nullopt when the counts are even.
std::optional<Warning> UnevenFilesWarning(const std::vector<uint64_t>& records, bool batched,
                                          uint64_t padded_steps);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_STEPS_H_
