// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Sequential reading of objects: the read-ahead source over a
// RandomAccessObject, and the prefetch of the first ranges of the objects a
// reader will open next. (The process's RemoteOptions live with the HTTP
// engine, storage_http.cc, their first user.)
//
// Memory: every range read ahead holds its bytes of one budget, shared by
// the whole process (RemoteOptions::read_ahead_bytes), from the moment it is
// asked until the reader has taken its last byte (or, for a source closed
// early, until its read ends). A source may always ask one range even when
// the budget is spent, so that no reader waits for another: the bytes held
// stay within read_ahead_bytes + range_bytes per open source.

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tfdist/base/interrupt.h"
#include "tfdist/io/storage.h"

namespace tfdist::io {
namespace {

// The read-ahead bytes held, process-wide.
class Budget {
 public:
  static Budget& Get() {
    static Budget* budget = new Budget();  // never destroyed: reads may end after exit starts
    return *budget;
  }

  // Takes `bytes` when they fit under `limit` (or `force`).
  bool TryTake(uint64_t bytes, uint64_t limit, bool force) {
    std::lock_guard lock(mu_);
    if (!force && used_ + bytes > limit) return false;
    used_ += bytes;
    return true;
  }

  void Give(uint64_t bytes);

  uint64_t used() {
    std::lock_guard lock(mu_);
    return used_;
  }

 private:
  std::mutex mu_;
  uint64_t used_ = 0;
};

// Unmapped range buffers kept for reuse, at most kKeptBytes of them: many
// small objects map and unmap a buffer of one size per object, and a kept
// buffer saves the mapping, its page faults and the unmapping's TLB
// shootdown. Bounded, so that memory still leaves the process.
class KeptBuffers {
 public:
  static constexpr size_t kKeptBytes = size_t{8} << 20;

  static KeptBuffers& Get() {
    static KeptBuffers* k = new KeptBuffers();  // never destroyed, as Budget
    return *k;
  }

  // A kept buffer of exactly `size` bytes, or nullptr.
  char* Take(size_t size) {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < kept_.size(); ++i) {
      if (kept_[i].second == size) {
        char* p = kept_[i].first;
        kept_[i] = kept_.back();
        kept_.pop_back();
        bytes_ -= size;
        return p;
      }
    }
    return nullptr;
  }

  // Keeps `p` (of `size` bytes) if it fits; false if the caller unmaps it.
  bool Keep(char* p, size_t size) {
    std::lock_guard lock(mu_);
    if (size > kKeptBytes - bytes_) return false;
    kept_.emplace_back(p, size);
    bytes_ += size;
    return true;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<char*, size_t>> kept_;
  size_t bytes_ = 0;
};

// The bytes of one range, mapped for it alone and unmapped when freed
// (beyond the few KeptBuffers holds), so that what the budget gives back
// leaves the process at once: from the heap, blocks of megabytes may stay
// resident after they are freed (glibc's dynamic mmap threshold moves them
// into its arenas after the first free, and an arena keeps what it once
// held).
class RangeBuffer {
 public:
  explicit RangeBuffer(size_t size) : size_(size) {
    if (size_ == 0) return;
    data_ = KeptBuffers::Get().Take(size_);
    if (data_ != nullptr) return;
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<char*>(p);
  }
  ~RangeBuffer() {
    if (data_ != nullptr && !KeptBuffers::Get().Keep(data_, size_)) munmap(data_, size_);
  }
  RangeBuffer(const RangeBuffer&) = delete;
  RangeBuffer& operator=(const RangeBuffer&) = delete;

  char* get() const { return data_; }

 private:
  size_t size_;
  char* data_ = nullptr;
};

// A range read ahead: its buffer, and its outcome once the read ended.
// Holds its bytes of the budget until destroyed.
struct Chunk {
  Chunk(uint64_t offset_in, size_t size_in) : offset(offset_in), size(size_in), data(size_in) {}
  ~Chunk() { Budget::Get().Give(size); }
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  const uint64_t offset;  // in the object
  const size_t size;
  RangeBuffer data;
  size_t taken = 0;  // bytes the reader took

  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Status status;

  // Waits for the read's end, waking for an interrupt.
  Status Wait() {
    std::unique_lock lock(mu);
    while (!done) {
      if (Interrupted()) return Status::Interrupted();
      cv.wait_for(lock, std::chrono::milliseconds(50));
    }
    return status;
  }
};

// Starts reading `chunk` of `object`; the read keeps both alive until it
// ends, and then calls `ended` (if any).
void StartChunk(const std::shared_ptr<RandomAccessObject>& object,
                const std::shared_ptr<Chunk>& chunk, std::function<void()> ended = nullptr) {
  object->ReadAtAsync(chunk->offset, std::span<char>(chunk->data.get(), chunk->size),
                      [object, chunk, ended = std::move(ended)](Status s) {
                        {
                          std::lock_guard lock(chunk->mu);
                          chunk->status = std::move(s);
                          chunk->done = true;
                          chunk->cv.notify_all();
                        }
                        if (ended) ended();
                      });
}

// Prefetches in flight at once, at most. Beyond a few dozen, more requests
// at once only open more connections (the engine keeps 64 for reuse) and
// queue at the server: with thousands of small objects, a prefetch of all
// the budget holds at once would be hundreds of requests.
constexpr int kMaxPrefetchesInFlight = 16;

// The prefetched first ranges (PrefetchObjects).
class Prefetcher {
 public:
  static Prefetcher& Get() {
    static Prefetcher* p = new Prefetcher();  // never destroyed, as Budget
    return *p;
  }

  void Hint(std::span<const std::string> names) {
    {
      std::lock_guard lock(mu_);
      names_.clear();
      index_.clear();
      for (const std::string& n : names) {
        if (IsRemote(n)) {
          index_.emplace(n, names_.size());
          names_.push_back(n);
        }
      }
      next_ = 0;
      ++hint_;
      ready_.clear();  // ranges still in flight end on their own
      if (!thread_.joinable() && !names_.empty()) {
        thread_ = std::thread([this] { Loop(); });
      }
    }
    cv_.notify_all();
  }

  // The prefetched first range of `name` at `version`, if any; waits for a
  // prefetch of it being started (its stat and open) to be started.
  std::shared_ptr<Chunk> Take(const std::string& name, const std::string& version) {
    std::shared_ptr<Chunk> chunk;
    {
      std::unique_lock lock(mu_);
      auto it = ready_.find(name);
      while (it != ready_.end() && it->second.starting) {
        cv_.wait(lock);
        it = ready_.find(name);
      }
      if (it == ready_.end()) {
        // A reader ahead of the prefetches: those up to its object are
        // of no more use.
        auto at = index_.find(name);
        if (at != index_.end() && at->second >= next_) next_ = at->second + 1;
        return nullptr;
      }
      if (it->second.version == version) chunk = std::move(it->second.chunk);
      ready_.erase(it);
    }
    cv_.notify_all();
    return chunk;
  }

  void Wake() { cv_.notify_all(); }

 private:
  struct Entry {
    bool starting = false;  // being stated and opened by the prefetch thread
    std::string version;
    std::shared_ptr<Chunk> chunk;
  };

  // Prefetches take at most half the budget: the rest is for the ranges
  // of the objects being read.
  void Loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      const RemoteOptions& o = GetRemoteOptions();
      const uint64_t range = std::max<uint64_t>(1, o.range_bytes);
      if (next_ >= names_.size() || Interrupted() || in_flight_ >= kMaxPrefetchesInFlight ||
          !Budget::Get().TryTake(range, o.read_ahead_bytes / 2, /*force=*/false)) {
        cv_.wait_for(lock, std::chrono::milliseconds(200));
        continue;
      }
      const std::string name = names_[next_++];
      const uint64_t hint = hint_;
      ready_[name].starting = true;  // a reader opening it now waits for it
      ++in_flight_;
      lock.unlock();
      std::optional<Entry> entry = Start(name, range, [this] { Ended(); });
      lock.lock();
      if (!entry) --in_flight_;  // nothing started
      // Start gave back what the chunk does not hold. A new hint dropped
      // this one's entries.
      auto it = ready_.find(name);
      if (hint == hint_ && it != ready_.end() && it->second.starting) {
        if (entry) {
          it->second = std::move(*entry);
        } else {
          ready_.erase(it);
        }
      }
      cv_.notify_all();
    }
  }

  void Ended() {
    {
      std::lock_guard lock(mu_);
      --in_flight_;
    }
    cv_.notify_all();
  }

  // Opens `name` and starts its first range, calling `ended` when its read
  // ends; `range` bytes of the budget are taken, and given back but for the
  // chunk's own.
  static std::optional<Entry> Start(const std::string& name, uint64_t range,
                                    std::function<void()> ended) {
    auto give_back = [&](uint64_t keep) { Budget::Get().Give(range - keep); };
    Result<Location> location = ParseLocation(name);
    Result<ObjectInfo> info = location.ok() ? StatObject(name) : location.status();
    if (!info.ok() || info->size == 0) {
      give_back(0);  // the reader's own open says what is wrong
      return std::nullopt;
    }
    Result<std::unique_ptr<RandomAccessObject>> object = StorageFor(location->scheme).Open(*info);
    if (!object.ok()) {
      give_back(0);
      return std::nullopt;
    }
    const size_t size = static_cast<size_t>(std::min<uint64_t>(range, info->size));
    give_back(size);
    auto chunk = std::make_shared<Chunk>(0, size);
    StartChunk(std::shared_ptr<RandomAccessObject>(std::move(*object)), chunk, std::move(ended));
    return Entry{false, info->version, std::move(chunk)};
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, size_t> index_;  // in names_
  size_t next_ = 0;
  int in_flight_ = 0;  // prefetches started whose read has not ended
  uint64_t hint_ = 0;  // Hint calls so far
  std::unordered_map<std::string, Entry> ready_;
  std::thread thread_;  // runs to the end of the process
};

void Budget::Give(uint64_t bytes) {
  {
    std::lock_guard lock(mu_);
    used_ -= std::min(used_, bytes);
  }
  Prefetcher::Get().Wake();
}

class ObjectSource : public ByteSource {
 public:
  ObjectSource(std::unique_ptr<RandomAccessObject> object, uint64_t offset)
      : object_(std::move(object)),
        name_(object_->info().name),
        end_(object_->info().size),
        next_(std::min(offset, end_)),
        size_(end_ - next_) {
    if (offset == 0) {
      if (auto chunk = Prefetcher::Get().Take(name_, object_->info().version)) {
        next_ = chunk->size;
        chunks_.push_back(std::move(chunk));
      }
    }
  }

  Result<size_t> Read(std::span<char> dst) override {
    if (!error_.ok()) return error_;
    size_t n = 0;
    while (n < dst.size()) {
      Refill();
      if (chunks_.empty()) break;  // the end
      Chunk& chunk = *chunks_.front();
      Status s = chunk.Wait();
      if (!s.ok()) {
        error_ = Error(std::move(s), chunk);
        if (n > 0) return n;  // the bytes before the error first
        return error_;
      }
      const size_t take = std::min(dst.size() - n, chunk.size - chunk.taken);
      std::memcpy(dst.data() + n, chunk.data.get() + chunk.taken, take);
      chunk.taken += take;
      n += take;
      if (chunk.taken == chunk.size) chunks_.pop_front();
    }
    return n;
  }

  const std::string& name() const override { return name_; }
  std::optional<uint64_t> size() const override { return size_; }

 private:
  // Asks the next ranges while the budget allows, and one at least. An
  // object whose reads end before ReadAtAsync returns (the default, a
  // synchronous ReadAt) is read one range at a time, as the reader goes:
  // reading ahead on the reader's own thread would only delay its first
  // bytes.
  void Refill() {
    const RemoteOptions& o = GetRemoteOptions();
    const uint64_t range = std::max<uint64_t>(1, o.range_bytes);
    while (next_ < end_) {
      const size_t size = static_cast<size_t>(std::min(range, end_ - next_));
      if (!Budget::Get().TryTake(size, o.read_ahead_bytes, /*force=*/chunks_.empty())) return;
      auto chunk = std::make_shared<Chunk>(next_, size);
      StartChunk(object_, chunk);
      bool ended;
      {
        std::lock_guard lock(chunk->mu);
        ended = chunk->done;
      }
      chunks_.push_back(std::move(chunk));
      next_ += size;
      if (ended) return;
    }
  }

  Status Error(Status s, const Chunk& chunk) const {
    if (s.code() == StatusCode::kOutOfRange) {
      return Status::DataLoss(fmt::format(
          "{}: the object ends before byte {}, its size when opened ({}); it changed while read",
          name_, chunk.offset + chunk.size, end_));
    }
    return s;
  }

  std::shared_ptr<RandomAccessObject> object_;
  std::string name_;
  uint64_t end_;
  uint64_t next_;  // the first byte not yet asked
  uint64_t size_;
  std::deque<std::shared_ptr<Chunk>> chunks_;
  Status error_;
};

}  // namespace

std::unique_ptr<ByteSource> NewObjectSource(std::unique_ptr<RandomAccessObject> object,
                                            uint64_t offset) {
  return std::make_unique<ObjectSource>(std::move(object), offset);
}

void PrefetchObjects(std::span<const std::string> names) { Prefetcher::Get().Hint(names); }

}  // namespace tfdist::io
