// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The two ways tf.distribute splits a global batch: RebatchDatasetV2 with
// batch_sizes_for_worker, and the legacy RebatchDataset.

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "tfdist/distribute/distribute.h"

namespace tfdist::dist {

Result<AutoShardPolicy> ParsePolicy(std::string_view text) {
  std::string upper(text);
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

std::vector<int64_t> BatchSizesForWorker(int64_t global_batch_size, int64_t workers,
                                         int64_t replicas_per_worker, int64_t worker) {
  const int64_t n = workers * replicas_per_worker;
  const int64_t floor = global_batch_size / n;
  const int64_t extra = global_batch_size - n * floor;
  std::vector<int64_t> sizes(static_cast<size_t>(n), floor);
  for (int64_t i = 0; i < extra; ++i) sizes[static_cast<size_t>(i)] = floor + 1;
  const size_t shift = static_cast<size_t>((worker * replicas_per_worker) % n);
  std::rotate(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(shift), sizes.end());
  return sizes;
}

BatchSplitter::BatchSplitter(Split split, std::vector<int64_t> sizes, int64_t pieces,
                             bool drop_remainder)
    : split_(split), sizes_(std::move(sizes)), pieces_(pieces), drop_remainder_(drop_remainder) {
  if (split_ == Split::kBatchSizes &&
      std::none_of(sizes_.begin(), sizes_.end(), [](int64_t n) { return n > 0; })) {
    sizes_.clear();  // nothing can ever be taken: no output (and no endless empty pieces)
  }
}

void BatchSplitter::Advance(std::vector<std::vector<data::Element>>& out) {
  // RebatchDatasetV2 emits a piece of size 0 as soon as the cursor reaches
  // it, without waiting for input.
  for (;;) {
    if (static_cast<int64_t>(current_.size()) < sizes_[index_]) return;
    out.push_back(std::move(current_));
    current_.clear();
    index_ = (index_ + 1) % sizes_.size();
  }
}

void BatchSplitter::Add(std::vector<data::Element> batch,
                        std::vector<std::vector<data::Element>>& out) {
  if (split_ == Split::kLegacy) {
    const size_t n = static_cast<size_t>(pieces_);
    const size_t per = (batch.size() + n - 1) / n;
    for (size_t i = 0; i < n; ++i) {
      const size_t begin = std::min(batch.size(), per * i);
      const size_t end = std::min(batch.size(), begin + per);
      out.emplace_back(std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(begin)),
                       std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(end)));
    }
    return;
  }
  if (split_ != Split::kBatchSizes) {
    out.push_back(std::move(batch));
    return;
  }
  if (sizes_.empty()) return;
  if (!started_) {
    started_ = true;
    Advance(out);
  }
  // A piece that starts the input batch is the batch itself, cut to size at
  // the end, when it is at least half of it (it keeps the batch's buffer);
  // the others are moved a range at a time into a piece sized once. (Per
  // element, a piece's regrowth, which moves every element again, would cost
  // more than the move.)
  auto it = batch.begin();
  size_t head = out.size();  // out[head] is batch's own prefix, when head_size > 0
  size_t head_size = 0;
  if (current_.empty() && static_cast<size_t>(sizes_[index_]) <= batch.size() &&
      2 * static_cast<size_t>(sizes_[index_]) >= batch.size()) {
    head_size = static_cast<size_t>(sizes_[index_]);
    out.emplace_back();
    it += static_cast<std::ptrdiff_t>(head_size);
    index_ = (index_ + 1) % sizes_.size();
    Advance(out);  // pieces of size 0 after it
  }
  while (it != batch.end()) {
    const auto want = static_cast<size_t>(sizes_[index_]);
    // (Not beyond what a real batch holds: a huge batch_size must not allocate up front.)
    if (current_.capacity() < want) current_.reserve(std::min<size_t>(want, size_t{1} << 16));
    const auto take = static_cast<std::ptrdiff_t>(
        std::min<size_t>(want - current_.size(), static_cast<size_t>(batch.end() - it)));
    current_.insert(current_.end(), std::make_move_iterator(it), std::make_move_iterator(it + take));
    it += take;
    Advance(out);
  }
  if (head_size > 0) {
    batch.resize(head_size);
    out[head] = std::move(batch);
  }
}

void BatchSplitter::Finish(std::vector<std::vector<data::Element>>& out) {
  if (split_ != Split::kBatchSizes || sizes_.empty()) return;
  if (!started_) {
    started_ = true;
    Advance(out);  // leading pieces of size 0 come out even from no input
  }
  // The piece being filled is short (a full one was emitted): it ends the
  // output, unless it is empty or drop_remainder drops it.
  if (!current_.empty() && !drop_remainder_) out.push_back(std::move(current_));
  current_.clear();
  sizes_.clear();
}

std::vector<std::vector<data::Element>> RebatchBySizes(
    const std::vector<std::vector<data::Element>>& batches, const std::vector<int64_t>& sizes,
    bool drop_remainder) {
  std::vector<std::vector<data::Element>> out;
  BatchSplitter splitter(Split::kBatchSizes, sizes, 0, drop_remainder);
  for (const auto& b : batches) splitter.Add(b, out);
  splitter.Finish(out);
  return out;
}

std::vector<std::vector<data::Element>> RebatchLegacy(
    const std::vector<std::vector<data::Element>>& batches, int64_t n) {
  std::vector<std::vector<data::Element>> out;
  BatchSplitter splitter(Split::kLegacy, {}, n, false);
  for (const auto& b : batches) splitter.Add(b, out);
  return out;
}

}  // namespace tfdist::dist
