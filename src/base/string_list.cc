// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0

#include "tfdist/base/string_list.h"

#include <algorithm>

namespace tfdist {

void StringList::Builder::Reserve(size_t strings, size_t bytes) {
  ends_.reserve(strings);
  bytes_.reserve(bytes);
}

void StringList::Builder::Add(std::string_view s) {
  bytes_.append(s);
  ends_.push_back(bytes_.size());
}

StringList StringList::Builder::Finish() && {
  if (ends_.empty()) return StringList();
  auto block = std::make_shared<Block>();
  block->bytes = std::move(bytes_);
  block->ends = std::move(ends_);
  // Trimmed only when much was left over (a trim copies the whole block).
  if (block->bytes.capacity() > block->bytes.size() + block->bytes.size() / 8) {
    block->bytes.shrink_to_fit();
  }
  if (block->ends.capacity() > block->ends.size() + block->ends.size() / 8) {
    block->ends.shrink_to_fit();
  }
  return StringList(std::shared_ptr<const Block>(std::move(block)));
}

namespace {

template <typename Strings>
StringList Build(const Strings& strings) {
  size_t bytes = 0;
  for (const auto& s : strings) bytes += std::string_view(s).size();
  StringList::Builder b;
  b.Reserve(std::size(strings), bytes);
  for (const auto& s : strings) b.Add(s);
  return std::move(b).Finish();
}

}  // namespace

StringList::StringList(std::initializer_list<std::string_view> strings)
    : StringList(Build(strings)) {}
StringList::StringList(std::span<const std::string> strings) : StringList(Build(strings)) {}
StringList::StringList(std::span<const std::string_view> strings) : StringList(Build(strings)) {}

std::vector<std::string> StringList::ToVector() const { return {begin(), end()}; }

bool operator==(const StringList& a, const StringList& b) {
  return a.block_ == b.block_ || std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace tfdist
