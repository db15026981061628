// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Grouping by the data (group_by_window, bucket_by_sequence_length): the
// bounds of the batches a grouping makes from a known number of elements,
// carried through the ops after it and the distribution (doc/semantics.md,
// "Grouping by the data"). Pure: no I/O.

#ifndef TFDIST_DISTRIBUTE_GROUPED_H_
#define TFDIST_DISTRIBUTE_GROUPED_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/data/ops.h"
#include "tfdist/distribute/decide.h"

namespace tfdist::dist {

// A count known only between two values, both included; kUnbounded as the
// max: no end (a repeat() forever).
struct Bounds {
  static constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();
  uint64_t min = 0;
  uint64_t max = 0;
  bool operator==(const Bounds&) const = default;
};

// The batches `op` makes from `n` elements in one pass, over every way its
// key function could group them: TensorFlow's GroupByWindowDataset puts each
// element in its key's window, batches a window when it holds the key's
// window size, and at the end of its input batches every window left (so a
// window is one batch, short or not, unless drop_remainder drops the short
// ones). group_by_window's keys are any number; bucket_by_sequence_length's
// are its buckets.
// REQUIRES: the op's sizes are positive literals (the binder checks them).
Bounds GroupedBatches(const data::GroupByWindowOp& op, uint64_t n);

// The elements in one of those batches; nullopt when n allows none.
std::optional<Bounds> GroupedBatchSize(const data::GroupByWindowOp& op, uint64_t n);

// The index of the first grouping op of `pipeline`, or nullopt.
std::optional<size_t> FindGrouping(const data::Pipeline& pipeline);

// The ops after the grouping at `at` as bounds act on its batches, and what
// each of them assumes, ("filter(f) ...") for the message.
// Error: InvalidArgument at an op whose count cannot be bounded (another
// batch, unbatch, rebatch, shard, concatenate, a second grouping, or a
// count not given as a number).
Status CheckAfterGrouping(const data::Pipeline& pipeline, size_t at);

// `batches` of one pass through the ops after the grouping at `at`
// (CheckAfterGrouping passed).
Bounds AfterGrouping(const data::Pipeline& pipeline, size_t at, Bounds batches);

// A worker's batches under a grouping, and its global steps.
struct GroupedWorker {
  int64_t worker = 0;
  uint64_t elements = 0;  // reaching the grouping in one epoch
  Bounds batches;         // the pipeline's elements (batches), over the epochs
  Bounds steps;           // global steps in which a replica of it has a batch
};

// The bounds a layout of a grouping pipeline shows instead of exact steps.
struct GroupedSummary {
  std::string op;                       // "bucket_by_sequence_length(len) (line 3, column 5)"
  Bounds steps;                         // global steps (max_steps applied)
  std::optional<Bounds> batch_records;  // records in one replica's batch; nullopt: none made
  // Steps in which some worker has no batch left while another has (its
  // replicas are fed empty batches): each worker's count differs as its
  // data does.
  Bounds padded_steps;
  std::vector<GroupedWorker> workers;  // every worker
  bool input_repeats = false;          // a repeat() forever feeds the grouping
};

// The grouping's bounds from each worker's `elements` in one epoch
// (elements[w] for worker w), for a distribution decided as `d` (its
// split) under `options` (api, replicas, epochs, max_steps).
// `input_repeats`: a repeat() forever before the grouping, before which
// `elements` were counted; `at_most`: the elements are upper bounds (a
// filter() before the grouping, counted as keeping everything).
GroupedSummary BoundGrouping(const data::Pipeline& pipeline, size_t at, const Decision& d,
                             const DistributeOptions& options,
                             const std::vector<uint64_t>& elements, bool input_repeats,
                             bool at_most);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_GROUPED_H_
