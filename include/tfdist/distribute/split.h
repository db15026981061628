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

// The sizes a batch-sizes split cycles through: a list given whole, or
// BatchSizesForWorker's list held as its arithmetic (floor, extra and the
// rotation), so that a split over N replicas costs no N-long list per worker.
class SizeCycle {
 public:
  SizeCycle() = default;
  SizeCycle(std::vector<int64_t> sizes);  // NOLINT: a list is a cycle
  // BatchSizesForWorker(G, W, R, w), without the list.
  static SizeCycle ForWorker(int64_t global_batch_size, int64_t workers,
                             int64_t replicas_per_worker, int64_t worker);

  uint64_t length() const { return n_; }
  int64_t operator[](uint64_t i) const {
    if (!list_.empty()) return list_[i];
    return (i + shift_) % n_ < extra_ ? floor_ + 1 : floor_;
  }
  // The sizes of 0 from position i on, in a row, up to the cycle's end.
  uint64_t ZerosFrom(uint64_t i) const;
  bool AllZero() const { return n_ == 0 || ZerosFrom(0) == n_; }
  void Clear() { *this = SizeCycle(); }

 private:
  std::vector<int64_t> list_;
  uint64_t n_ = 0;
  int64_t floor_ = 0;
  uint64_t extra_ = 0, shift_ = 0;
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
// Its cuts are pulled one at a time (Begin, Next, End), so that memory
// holds no list of a batch's pieces, however many replicas it is cut for.
class SplitRule {
 public:
  // REQUIRES: pieces > 0 for kLegacy.
  SplitRule(Split split, SizeCycle sizes, int64_t pieces, bool drop_remainder);

  // The split of `worker`'s batches under `d` (its sizes, N pieces).
  static SplitRule For(const Decision& d, const Topology& t, int64_t worker);

  Split split() const { return split_; }

  // The next input batch, of `size` elements.
  // REQUIRES: Next returned false since the last Begin; End not called.
  void Begin(uint64_t size);
  // The input ended. REQUIRES: as Begin.
  void End();
  // The next cut of the input given so far into `cut`; false when the rule
  // needs the next input batch (or after End, when it is done).
  bool Next(Cut& cut);
  // kLegacy: passes over up to `n` pieces of the current batch without
  // cutting them (DATA sharding's pieces of other workers); returns how many,
  // and adds the elements they hold to `elements`. 0 for other splits.
  uint64_t Pass(uint64_t n, uint64_t& elements);
  // kBatchSizes: how many empty pieces Next gives next in a row (at most to
  // the cycle's end), and passing over them.
  uint64_t EmptyRun() const;
  void PassEmpty(uint64_t n);

  // Appends the cuts of the next input batch, of `size` elements.
  void Add(uint64_t size, std::vector<Cut>& cuts);
  // The input ended: appends the cuts that remain (a short final piece;
  // the leading empty pieces of an input that had no batch). A piece still
  // filling without a cut here is dropped.
  void Finish(std::vector<Cut>& cuts);

 private:
  void Advance() {
    if (++index_ == sizes_.length()) index_ = 0;
  }

  Split split_;
  SizeCycle sizes_;
  int64_t pieces_;
  bool drop_remainder_;
  bool started_ = false, ended_ = false;
  uint64_t remaining_ = 0;  // elements of the current batch not cut yet
  uint64_t index_ = 0;      // batch-sizes: the size the current piece fills to
  uint64_t filled_ = 0;     // batch-sizes: elements in the current piece
  uint64_t batch_ = 0;      // legacy, none: the current batch's size
  uint64_t piece_ = 0;      // legacy: the next piece of it; none: 1 once cut
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
// the per-replica batches' sizes go to `pieces` as soon as they are
// complete, `count` pieces of `size` at a time (a run of empty pieces in
// one call: memory and time grow with the runs, not with the replicas).
class SizeSplitter {
 public:
  using Pieces = std::function<void(uint64_t size, uint64_t count)>;
  SizeSplitter(SplitRule rule, Pieces pieces)
      : rule_(std::move(rule)), pieces_(std::move(pieces)) {}
  void Add(uint64_t size);
  // The input ended.
  void Finish();

 private:
  void Drain();
  SplitRule rule_;
  Pieces pieces_;
  uint64_t filling_ = 0;  // elements in the piece being filled
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
  explicit SplitAudit(int64_t num_replicas_in_sync)
      : n_(static_cast<uint64_t>(num_replicas_in_sync)) {}

  // An input batch of `size` elements went into the split.
  void Input(uint64_t size);
  // The split gave `count` pieces of `size` elements (in order).
  void Output(uint64_t size, uint64_t count = 1);

  // Once every input and output was given: whether the pieces differ.
  bool differs() const { return differs_ || !legacy_.empty() || !outputs_.empty(); }
  bool crosses() const { return crosses_; }

 private:
  // `count` pieces of `size`: the pieces not compared yet, a run at a time
  // (a legacy batch is at most three runs), so memory does not grow with N.
  struct Run {
    uint64_t size = 0, count = 0;
  };
  static void Push(std::deque<Run>& runs, uint64_t size, uint64_t count);
  void Compare();

  uint64_t n_;
  std::deque<Run> legacy_;     // legacy piece sizes not compared yet
  std::deque<Run> outputs_;    // output piece sizes not compared yet
  std::deque<uint64_t> ends_;  // input batch ends after the current output's start
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
