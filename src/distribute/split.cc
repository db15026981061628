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
  assert(global_batch_size >= 0 && workers > 0 && replicas_per_worker > 0);
  assert(0 <= worker && worker < workers);
  const int64_t n = workers * replicas_per_worker;
  const int64_t floor = global_batch_size / n;
  const int64_t extra = global_batch_size - n * floor;
  std::vector<int64_t> sizes(static_cast<size_t>(n), floor);
  for (int64_t i = 0; i < extra; ++i) sizes[static_cast<size_t>(i)] = floor + 1;
  const size_t shift = static_cast<size_t>((worker * replicas_per_worker) % n);
  std::rotate(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(shift), sizes.end());
  return sizes;
}

SplitRule::SplitRule(Split split, std::vector<int64_t> sizes, int64_t pieces, bool drop_remainder)
    : split_(split), sizes_(std::move(sizes)), pieces_(pieces), drop_remainder_(drop_remainder) {
  assert(split_ != Split::kLegacy || pieces_ > 0);
  if (split_ == Split::kBatchSizes &&
      std::none_of(sizes_.begin(), sizes_.end(), [](int64_t n) { return n > 0; })) {
    sizes_.clear();  // nothing can ever be taken: no output (and no endless empty pieces)
  }
}

SplitRule SplitRule::For(const Decision& d, const Topology& t, int64_t worker) {
  std::vector<int64_t> sizes;
  if (d.split == Split::kBatchSizes) {
    assert(d.global_batch_size);
    sizes = BatchSizesForWorker(*d.global_batch_size, t.workers, t.replicas, worker);
  }
  return SplitRule(d.split, std::move(sizes), t.num_replicas_in_sync(), false);
}

void SplitRule::CutEmpty(std::vector<Cut>& cuts) {
  // RebatchDatasetV2 emits a piece of size 0 as soon as the cycle reaches
  // it, without waiting for input.
  while (filled_ == 0 && sizes_[index_] == 0) {
    cuts.push_back({0, true, 0});
    index_ = (index_ + 1) % sizes_.size();
  }
}

void SplitRule::Add(uint64_t size, std::vector<Cut>& cuts) {
  if (split_ == Split::kLegacy) {
    const uint64_t n = static_cast<uint64_t>(pieces_);
    const uint64_t per = (size + n - 1) / n;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t take = std::min(size, per * (i + 1)) - std::min(size, per * i);
      cuts.push_back({take, true, take});
    }
    return;
  }
  if (split_ != Split::kBatchSizes) {
    cuts.push_back({size, true, size});
    return;
  }
  if (sizes_.empty()) return;
  if (!started_) {
    started_ = true;
    CutEmpty(cuts);
  }
  while (size > 0) {
    const uint64_t full = static_cast<uint64_t>(sizes_[index_]);
    const uint64_t take = std::min(full - filled_, size);
    size -= take;
    filled_ += take;
    if (filled_ < full) {
      cuts.push_back({take, false, full});
      break;
    }
    cuts.push_back({take, true, full});
    filled_ = 0;
    index_ = (index_ + 1) % sizes_.size();
    CutEmpty(cuts);
  }
}

void SplitRule::Finish(std::vector<Cut>& cuts) {
  if (split_ != Split::kBatchSizes || sizes_.empty()) return;
  if (!started_) {
    started_ = true;
    CutEmpty(cuts);  // leading pieces of size 0 come out even from no input
  }
  // The piece being filled is short (a full one was cut): it ends the
  // output, unless drop_remainder drops it.
  if (filled_ > 0 && !drop_remainder_) cuts.push_back({0, true, filled_});
  filled_ = 0;
  sizes_.clear();
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
  rule_.Add(size, cuts_);
  Apply();
}

void SizeSplitter::Finish() {
  rule_.Finish(cuts_);
  Apply();
}

void SizeSplitter::Apply() {
  for (const Cut& c : cuts_) {
    filling_ += c.take;
    if (c.emit) {
      piece_(filling_);
      filling_ = 0;
    }
  }
  cuts_.clear();
}

std::vector<uint64_t> SplitSizes(SplitRule rule, const std::vector<uint64_t>& sizes) {
  std::vector<uint64_t> out;
  SizeSplitter splitter(std::move(rule), [&out](uint64_t piece) { out.push_back(piece); });
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

void SplitAudit::Input(uint64_t size) {
  input_end_ += size;
  ends_.push_back(input_end_);
  std::vector<Cut> cuts;
  SplitRule(Split::kLegacy, {}, static_cast<int64_t>(n_), false).Add(size, cuts);
  for (const Cut& c : cuts) legacy_.push_back(c.take);
  Compare();
}

void SplitAudit::Output(uint64_t size) {
  const uint64_t start = output_end_;
  output_end_ += size;
  while (!ends_.empty() && ends_.front() <= start) ends_.pop_front();
  if (size > 0 && !ends_.empty() && output_end_ > ends_.front()) crosses_ = true;
  outputs_.push_back(size);
  Compare();
}

void SplitAudit::Compare() {
  while (!legacy_.empty() && !outputs_.empty()) {
    differs_ = differs_ || legacy_.front() != outputs_.front();
    legacy_.pop_front();
    outputs_.pop_front();
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
