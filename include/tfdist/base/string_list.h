// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// An immutable list of strings in one block, shared by its copies: a
// million file names take their bytes and 8 more each (a vector of
// std::string takes about 88 bytes for a 42-byte path), and a pipeline
// copied per worker does not copy its names.

#ifndef TFDIST_BASE_STRING_LIST_H_
#define TFDIST_BASE_STRING_LIST_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tfdist {

class StringList {
 public:
  // Builds a list by appending; Finish() makes it.
  class Builder {
   public:
    // Reserves for `strings` strings of `bytes` bytes in all.
    void Reserve(size_t strings, size_t bytes);
    void Add(std::string_view s);
    StringList Finish() &&;

   private:
    std::string bytes_;
    std::vector<uint64_t> ends_;
  };

  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::string_view;

    const_iterator() = default;
    const_iterator(const StringList* list, size_t i) : list_(list), i_(i) {}
    std::string_view operator*() const { return (*list_)[i_]; }
    std::string_view operator[](difference_type n) const { return (*list_)[i_ + n]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) { return {list_, i_++}; }
    const_iterator& operator--() {
      --i_;
      return *this;
    }
    const_iterator operator--(int) { return {list_, i_--}; }
    const_iterator& operator+=(difference_type n) {
      i_ += n;
      return *this;
    }
    const_iterator& operator-=(difference_type n) {
      i_ -= n;
      return *this;
    }
    friend const_iterator operator+(const_iterator a, difference_type n) { return a += n; }
    friend const_iterator operator+(difference_type n, const_iterator a) { return a += n; }
    friend const_iterator operator-(const_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const_iterator a, const_iterator b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const_iterator a, const_iterator b) { return a.i_ == b.i_; }
    friend auto operator<=>(const_iterator a, const_iterator b) { return a.i_ <=> b.i_; }

   private:
    const StringList* list_ = nullptr;
    size_t i_ = 0;
  };

  StringList() = default;
  StringList(std::initializer_list<std::string_view> strings);
  explicit StringList(std::span<const std::string> strings);
  explicit StringList(std::span<const std::string_view> strings);

  size_t size() const { return block_ == nullptr ? 0 : block_->ends.size(); }
  bool empty() const { return size() == 0; }
  std::string_view operator[](size_t i) const {
    const uint64_t begin = i == 0 ? 0 : block_->ends[i - 1];
    return std::string_view(block_->bytes).substr(begin, block_->ends[i] - begin);
  }
  std::string_view front() const { return (*this)[0]; }
  std::string_view back() const { return (*this)[size() - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

  std::vector<std::string> ToVector() const;

  friend bool operator==(const StringList& a, const StringList& b);
  friend bool operator==(const StringList& a, const std::vector<std::string>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  struct Block {
    std::string bytes;           // the strings, back to back
    std::vector<uint64_t> ends;  // where each ends in `bytes`
  };
  explicit StringList(std::shared_ptr<const Block> block) : block_(std::move(block)) {}
  std::shared_ptr<const Block> block_;
};

}  // namespace tfdist

#endif  // TFDIST_BASE_STRING_LIST_H_
