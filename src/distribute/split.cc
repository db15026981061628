// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The two ways tf.distribute splits a global batch: RebatchDatasetV2 with
// batch_sizes_for_worker, and the legacy RebatchDataset.

#include "tfdist/distribute/split.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>

namespace tfdist::dist {

std::vector<int64_t> BatchSizesForWorker(int64_t global_batch_size, int64_t workers,
                                         int64_t replicas_per_worker, int64_t worker) {
  const SizeCycle cycle =
      SizeCycle::ForWorker(global_batch_size, workers, replicas_per_worker, worker);
  std::vector<int64_t> sizes(cycle.length());
  for (uint64_t i = 0; i < cycle.length(); ++i) sizes[i] = cycle[i];
  return sizes;
}

SizeCycle::SizeCycle(std::vector<int64_t> sizes) : list_(std::move(sizes)), n_(list_.size()) {}

SizeCycle SizeCycle::ForWorker(int64_t global_batch_size, int64_t workers,
                               int64_t replicas_per_worker, int64_t worker) {
  assert(global_batch_size >= 0 && workers > 0 && replicas_per_worker > 0);
  assert(0 <= worker && worker < workers);
  const int64_t n = workers * replicas_per_worker;
  SizeCycle c;
  c.n_ = static_cast<uint64_t>(n);
  c.floor_ = global_batch_size / n;
  c.extra_ = static_cast<uint64_t>(global_batch_size - n * c.floor_);
  // Rotated left by w*R: position i holds the unrotated list's (i + shift) mod n.
  c.shift_ = static_cast<uint64_t>((worker * replicas_per_worker) % n);
  return c;
}

uint64_t SizeCycle::ZerosFrom(uint64_t i) const {
  if (!list_.empty()) {
    uint64_t j = i;
    while (j < n_ && list_[j] == 0) ++j;
    return j - i;
  }
  if (floor_ > 0 || i >= n_) return 0;
  if (extra_ == 0) return n_ - i;         // G = 0: all zeros
  const uint64_t at = (i + shift_) % n_;  // in the unrotated list: zeros from extra_ to n_
  if (at < extra_) return 0;
  return std::min(n_ - at, n_ - i);
}

SplitRule::SplitRule(Split split, SizeCycle sizes, int64_t pieces, bool drop_remainder)
    : split_(split), sizes_(std::move(sizes)), pieces_(pieces), drop_remainder_(drop_remainder) {
  assert(split_ != Split::kLegacy || pieces_ > 0);
  if (split_ == Split::kBatchSizes && sizes_.AllZero()) {
    sizes_.Clear();  // nothing can ever be taken: no output (and no endless empty pieces)
  }
}

SplitRule SplitRule::For(const Decision& d, const Topology& t, int64_t worker) {
  SizeCycle sizes;
  if (d.split == Split::kBatchSizes) {
    assert(d.global_batch_size);
    sizes = SizeCycle::ForWorker(*d.global_batch_size, t.workers, t.replicas, worker);
  }
  return SplitRule(d.split, std::move(sizes), t.num_replicas_in_sync(), false);
}

void SplitRule::Begin(uint64_t size) {
  started_ = true;
  remaining_ = size;
  batch_ = size;
  piece_ = 0;
}

void SplitRule::End() {
  started_ = true;
  ended_ = true;
  remaining_ = 0;
  batch_ = 0;
  piece_ = split_ == Split::kLegacy ? static_cast<uint64_t>(pieces_) : 1;
}

bool SplitRule::Next(Cut& cut) {
  if (split_ == Split::kLegacy) {
    const uint64_t n = static_cast<uint64_t>(pieces_);
    if (!started_ || piece_ >= n) return false;
    const uint64_t per = (batch_ + n - 1) / n;
    const uint64_t take = std::min(batch_, per * (piece_ + 1)) - std::min(batch_, per * piece_);
    ++piece_;
    cut = {take, true, take};
    return true;
  }
  if (split_ != Split::kBatchSizes) {
    if (!started_ || piece_ > 0) return false;
    piece_ = 1;
    cut = {batch_, true, batch_};
    return true;
  }
  if (sizes_.length() == 0 || !started_) return false;
  // RebatchDatasetV2 emits a piece of size 0 as soon as the cycle reaches
  // it, without waiting for input.
  if (filled_ == 0 && sizes_[index_] == 0) {
    cut = {0, true, 0};
    Advance();
    return true;
  }
  if (remaining_ > 0) {
    const uint64_t full = static_cast<uint64_t>(sizes_[index_]);
    const uint64_t take = std::min(full - filled_, remaining_);
    remaining_ -= take;
    filled_ += take;
    if (filled_ < full) {
      cut = {take, false, full};
      return true;
    }
    cut = {take, true, full};
    filled_ = 0;
    Advance();
    return true;
  }
  if (!ended_) return false;
  // The piece being filled is short (a full one was cut): it ends the
  // output, unless drop_remainder drops it.
  const bool short_piece = filled_ > 0 && !drop_remainder_;
  if (short_piece) cut = {0, true, filled_};
  filled_ = 0;
  sizes_.Clear();
  return short_piece;
}

uint64_t SplitRule::Pass(uint64_t n, uint64_t& elements) {
  if (split_ != Split::kLegacy || !started_) return 0;
  const uint64_t pieces = static_cast<uint64_t>(pieces_);
  const uint64_t k = std::min(n, pieces - std::min(pieces, piece_));
  if (k == 0) return 0;
  const uint64_t per = (batch_ + pieces - 1) / pieces;
  elements += std::min(batch_, per * (piece_ + k)) - std::min(batch_, per * piece_);
  piece_ += k;
  return k;
}

uint64_t SplitRule::EmptyRun() const {
  if (split_ != Split::kBatchSizes || !started_ || filled_ > 0 || sizes_.length() == 0) return 0;
  return sizes_.ZerosFrom(index_);
}

void SplitRule::PassEmpty(uint64_t n) {
  assert(n <= EmptyRun());
  index_ = (index_ + n) % sizes_.length();
}

void SplitRule::Add(uint64_t size, std::vector<Cut>& cuts) {
  Begin(size);
  Cut cut;
  while (Next(cut)) cuts.push_back(cut);
}

void SplitRule::Finish(std::vector<Cut>& cuts) {
  End();
  Cut cut;
  while (Next(cut)) cuts.push_back(cut);
}

void BatchSplitter::Apply(std::vector<data::Element>* batch,
                          std::vector<std::vector<data::Element>>& out) {
  // A piece that starts the input batch, at least half of it, is the batch
  // itself cut to size at the end (it keeps the batch's buffer); the others
  // are moved a range at a time into a piece sized once. (Per element, a
  // piece's regrowth, which moves every element again, would cost more.)
  size_t at = 0;
  size_t head = out.size();  // out[head] becomes the batch's own prefix, when head_size > 0
  size_t head_size = 0;
  for (const Cut& cut : cuts_) {
    const size_t take = static_cast<size_t>(cut.take);
    if (batch != nullptr && at == 0 && take > 0 && cut.emit && current_.empty() &&
        2 * take >= batch->size()) {
      head = out.size();
      head_size = take;
      out.emplace_back();
      at = take;
      continue;
    }
    if (take > 0) {
      // Sized for the whole piece at once, but a huge batch_size must not
      // allocate up front: past 64Ki elements the room doubles as it fills.
      const size_t need = current_.size() + take;
      if (current_.capacity() < need) {
        const uint64_t room = std::max<uint64_t>(2 * current_.capacity(), 1 << 16);
        current_.reserve(std::max<size_t>(need, static_cast<size_t>(std::min(cut.size, room))));
      }
      const auto first = batch->begin() + static_cast<std::ptrdiff_t>(at);
      current_.insert(current_.end(), std::make_move_iterator(first),
                      std::make_move_iterator(first + static_cast<std::ptrdiff_t>(take)));
      at += take;
    }
    if (cut.emit) {
      out.push_back(std::move(current_));
      current_.clear();
    }
  }
  if (head_size > 0) {
    batch->resize(head_size);
    out[head] = std::move(*batch);
  }
}

void BatchSplitter::Add(std::vector<data::Element> batch,
                        std::vector<std::vector<data::Element>>& out) {
  cuts_.clear();
  rule_.Add(batch.size(), cuts_);
  Apply(&batch, out);
}

void BatchSplitter::Finish(std::vector<std::vector<data::Element>>& out) {
  cuts_.clear();
  rule_.Finish(cuts_);
  Apply(nullptr, out);
  current_.clear();  // a piece without a final cut is dropped
}

void SizeSplitter::Add(uint64_t size) {
  rule_.Begin(size);
  Drain();
}

void SizeSplitter::Finish() {
  rule_.End();
  Drain();
}

void SizeSplitter::Drain() {
  Cut c;
  for (;;) {
    if (const uint64_t run = rule_.EmptyRun(); run > 1) {
      rule_.PassEmpty(run);
      pieces_(0, run);
      continue;
    }
    if (!rule_.Next(c)) return;
    filling_ += c.take;
    if (c.emit) {
      pieces_(filling_, 1);
      filling_ = 0;
    }
  }
}

std::vector<uint64_t> SplitSizes(SplitRule rule, const std::vector<uint64_t>& sizes) {
  std::vector<uint64_t> out;
  SizeSplitter splitter(std::move(rule), [&out](uint64_t piece, uint64_t count) {
    out.insert(out.end(), count, piece);
  });
  for (uint64_t b : sizes) splitter.Add(b);
  splitter.Finish();
  return out;
}

namespace {

std::vector<std::vector<data::Element>> SplitAll(
    SplitRule rule, const std::vector<std::vector<data::Element>>& batches) {
  std::vector<std::vector<data::Element>> out;
  BatchSplitter splitter(std::move(rule));
  for (const auto& b : batches) splitter.Add(b, out);
  splitter.Finish(out);
  return out;
}

}  // namespace

std::vector<std::vector<data::Element>> RebatchBySizes(
    const std::vector<std::vector<data::Element>>& batches, const std::vector<int64_t>& sizes,
    bool drop_remainder) {
  return SplitAll(SplitRule(Split::kBatchSizes, sizes, 0, drop_remainder), batches);
}

std::vector<std::vector<data::Element>> RebatchLegacy(
    const std::vector<std::vector<data::Element>>& batches, int64_t n) {
  return SplitAll(SplitRule(Split::kLegacy, {}, n, false), batches);
}

void SplitAudit::Push(std::deque<Run>& runs, uint64_t size, uint64_t count) {
  if (count == 0) return;
  if (!runs.empty() && runs.back().size == size) {
    runs.back().count += count;
  } else {
    runs.push_back({size, count});
  }
}

void SplitAudit::Input(uint64_t size) {
  input_end_ += size;
  ends_.push_back(input_end_);
  // The legacy split's N pieces of this batch, as runs: full pieces of
  // ceil(b / N), a short one, empty ones.
  const uint64_t per = (size + n_ - 1) / n_;
  const uint64_t full = per == 0 ? 0 : size / per;
  const uint64_t rest = size - full * per;
  Push(legacy_, per, full);
  Push(legacy_, rest, rest > 0 ? 1 : 0);
  Push(legacy_, 0, n_ - full - (rest > 0 ? 1 : 0));
  Compare();
}

void SplitAudit::Output(uint64_t size, uint64_t count) {
  for (uint64_t i = 0; i < count && size > 0; ++i) {
    const uint64_t start = output_end_;
    output_end_ += size;
    while (!ends_.empty() && ends_.front() <= start) ends_.pop_front();
    if (!ends_.empty() && output_end_ > ends_.front()) crosses_ = true;
  }
  Push(outputs_, size, count);
  Compare();
}

void SplitAudit::Compare() {
  while (!legacy_.empty() && !outputs_.empty()) {
    Run& l = legacy_.front();
    Run& o = outputs_.front();
    differs_ = differs_ || l.size != o.size;
    const uint64_t k = std::min(l.count, o.count);
    l.count -= k;
    o.count -= k;
    if (l.count == 0) legacy_.pop_front();
    if (o.count == 0) outputs_.pop_front();
  }
}

Warning GuideVersusCodeWarning(bool crosses) {
  return Warning{WarningKind::kGuideVersusCode,
                 fmt::format("guide versus code: TensorFlow 2.x splits with "
                             "batch_sizes_for_worker{}, so the per-replica batches differ from the "
                             "legacy split that TensorFlow's distributed input guide prints",
                             crosses ? ", taking batches across global batch boundaries" : ""),
                 Advice{Remedy::kLegacySplit, ""}};
}

}  // namespace tfdist::dist
