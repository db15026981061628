// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A bounded FIFO between two threads, closable from either side.

#ifndef TFDIST_RUN_CHANNEL_H_
#define TFDIST_RUN_CHANNEL_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

namespace tfdist::run {

// Thread-safe. Push blocks while `capacity` items wait; Pop blocks while none
// does. Close() wakes both: Push then fails, Pop drains what is left.
template <typename T>
class Channel {
 public:
  explicit Channel(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // False if the channel was closed (the item is dropped).
  bool Push(T item) {
    {
      std::unique_lock lock(mu_);
      not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
      if (closed_) return false;
      items_.push_back(std::move(item));
    }
    // After unlocking: a waiter woken under the lock would only block on it.
    not_empty_.notify_one();
    return true;
  }

  enum class PopResult { kItem, kClosed, kTimeout };

  // Waits up to `timeout` for an item.
  PopResult PopFor(T& out, std::chrono::milliseconds timeout) {
    {
      std::unique_lock lock(mu_);
      if (!not_empty_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); })) {
        return PopResult::kTimeout;
      }
      if (items_.empty()) return PopResult::kClosed;
      out = std::move(items_.front());
      items_.pop_front();
    }
    not_full_.notify_one();
    return PopResult::kItem;
  }

  // False once the channel is closed and empty.
  bool Pop(T& out) {
    for (;;) {
      const PopResult r = PopFor(out, std::chrono::milliseconds(1000));
      if (r != PopResult::kTimeout) return r == PopResult::kItem;
    }
  }

  // Items waiting now.
  size_t size() {
    std::lock_guard lock(mu_);
    return items_.size();
  }

  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace tfdist::run

#endif  // TFDIST_RUN_CHANNEL_H_
