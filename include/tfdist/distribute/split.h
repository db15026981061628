// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// How a worker's global batches become per-replica batches: the two splits
// of tf.distribute (doc/semantics.md, "Batch splits"). SplitRule is the one
// statement of both, on sizes; BatchSplitter applies it to elements (layout
// and run), SplitSizes to record counts (the FILE summary).

#ifndef TFDIST_DISTRIBUTE_SPLIT_H_
#define TFDIST_DISTRIBUTE_SPLIT_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "tfdist/data/dataset.h"
#include "tfdist/distribute/decide.h"

namespace tfdist::dist {

// TensorFlow's batch_sizes_for_worker: floor = G // N, extra = G - N*floor;
// worker 0's sizes are [floor+1]*extra + [floor]*(N - extra); worker w uses
// that list rotated left by w*R. REQUIRES: G >= 0, W, R > 0, 0 <= w < W.
std::vector<int64_t> BatchSizesForWorker(int64_t global_batch_size, int64_t workers,
                                         int64_t replicas_per_worker, int64_t worker);

// One piece of a split: it takes the next `take` elements of the input, after
// the previous piece's, and is complete when `emit` (else it goes on filling
// from the next input batch, up to `size` elements in all).
struct Cut {
  uint64_t take = 0;
  bool emit = false;
  uint64_t size = 0;  // the most the piece holds once complete
};

// A split as a rule on sizes: where each input batch is cut.
//  * Split::kBatchSizes (RebatchDatasetV2): outputs cycle through `sizes`;
//    each takes elements from the input batches, crossing batch boundaries,
//    until it reaches its size or the input ends; a size of 0 gives an empty
//    piece as soon as the cycle reaches it; at the end a short piece is
//    emitted unless drop_remainder.
//  * Split::kLegacy (RebatchDataset): every batch of b elements becomes
//    exactly `pieces` pieces of ceil(b / pieces) (the last ones may be short
//    or empty); pieces never cross batches.
//  * Split::kNone and kAuto: each input batch passes as one piece.
class SplitRule {
 public:
  // REQUIRES: pieces > 0 for kLegacy.
  SplitRule(Split split, std::vector<int64_t> sizes, int64_t pieces, bool drop_remainder);

  // The split of `worker`'s batches under `d` (its sizes, N pieces).
  static SplitRule For(const Decision& d, const Topology& t, int64_t worker);

  Split split() const { return split_; }

  // Appends the cuts of the next input batch, of `size` elements.
  void Add(uint64_t size, std::vector<Cut>& cuts);
  // The input ended: appends the cuts that remain (a short final piece;
  // the leading empty pieces of an input that had no batch). A piece still
  // filling without a cut here is dropped.
  void Finish(std::vector<Cut>& cuts);

 private:
  // Cuts the empty pieces the cycle has reached.
  void CutEmpty(std::vector<Cut>& cuts);

  Split split_;
  std::vector<int64_t> sizes_;
  int64_t pieces_;
  bool drop_remainder_;
  size_t index_ = 0;     // batch-sizes: the size the current piece fills to
  uint64_t filled_ = 0;  // batch-sizes: elements in the current piece
  bool started_ = false;
};

// A SplitRule applied to elements: input batches go in one at a time, and
// each per-replica batch comes out as soon as it is complete.
class BatchSplitter {
 public:
  explicit BatchSplitter(SplitRule rule) : rule_(std::move(rule)) {}

  // Takes one input batch; appends the per-replica batches now complete.
  void Add(std::vector<data::Element> batch, std::vector<std::vector<data::Element>>& out);
  // The input ended: appends what remains.
  void Finish(std::vector<std::vector<data::Element>>& out);

 private:
  void Apply(std::vector<data::Element>* batch, std::vector<std::vector<data::Element>>& out);

  SplitRule rule_;
  std::vector<Cut> cuts_;               // reused
  std::vector<data::Element> current_;  // the piece being filled
};

// A SplitRule applied to sizes: input batch sizes go in one at a time, and
// each per-replica batch's size goes to `piece` as soon as it is complete.
class SizeSplitter {
 public:
  SizeSplitter(SplitRule rule, std::function<void(uint64_t)> piece)
      : rule_(std::move(rule)), piece_(std::move(piece)) {}
  void Add(uint64_t size);
  // The input ended.
  void Finish();

 private:
  void Apply();
  SplitRule rule_;
  std::function<void(uint64_t)> piece_;
  std::vector<Cut> cuts_;  // reused
  uint64_t filling_ = 0;   // elements in the piece being filled
};

// The sizes of the per-replica batches that `rule` makes of input batches of
// `sizes`, then of the input's end.
std::vector<uint64_t> SplitSizes(SplitRule rule, const std::vector<uint64_t>& sizes);

// The per-replica batches of whole lists (for tests and small tools).
std::vector<std::vector<data::Element>> RebatchBySizes(
    const std::vector<std::vector<data::Element>>& batches, const std::vector<int64_t>& sizes,
    bool drop_remainder);
std::vector<std::vector<data::Element>> RebatchLegacy(
    const std::vector<std::vector<data::Element>>& batches, int64_t n);

// Whether a batch-sizes split differs from the legacy split that
// TensorFlow's distributed input guide prints for the same input, and
// whether it takes elements across global batch boundaries. Fed as the
// split runs: memory holds only the pieces not compared yet.
class SplitAudit {
 public:
  explicit SplitAudit(int64_t num_replicas_in_sync) : n_(static_cast<uint64_t>(num_replicas_in_sync)) {}

  // An input batch of `size` elements went into the split.
  void Input(uint64_t size);
  // The split gave a piece of `size` elements (in order).
  void Output(uint64_t size);

  // Once every input and output was given: whether the pieces differ.
  bool differs() const { return differs_ || !legacy_.empty() || !outputs_.empty(); }
  bool crosses() const { return crosses_; }

 private:
  void Compare();

  uint64_t n_;
  std::deque<uint64_t> legacy_;   // legacy piece sizes not compared yet
  std::deque<uint64_t> outputs_;  // output piece sizes not compared yet
  std::deque<uint64_t> ends_;     // input batch ends after the current output's start
  uint64_t input_end_ = 0;
  uint64_t output_end_ = 0;
  bool differs_ = false;
  bool crosses_ = false;
};

// The warning for a split that differs from the guide's (WarningKind::
// kGuideVersusCode), worded by whether it crosses batch boundaries.
Warning GuideVersusCodeWarning(bool crosses);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_SPLIT_H_
