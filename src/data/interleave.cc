// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// interleave()/flat_map(): TensorFlow's slot-and-cursor order, read
// sequentially or by reader threads that fill per-input queues ahead of the
// cursor; and prefetch().

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "stages.h"

namespace tfdist::data {
namespace {

// Whether a reader's error ends its file quietly: ignore_errors() follows
// (an interrupt, or a full disk or no file descriptors left, which are the
// process's trouble and not the file's, still stops everything).
bool IgnoresError(const InterleaveOptions& o, const Status& s) {
  return o.end_file_on_error && s.code() != StatusCode::kCancelled &&
         s.code() != StatusCode::kResourceExhausted;
}

// The cursor over an interleave's cycle_length slots, of which only those
// it has reached exist: TensorFlow fills the slots in order, so every slot
// past the last one made is empty. Once the input is exhausted no slot is
// filled again, and the cursor skips those empty slots at once (an empty
// slot produces nothing, so the order is the same as visiting each).
class SlotCursor {
 public:
  explicit SlotCursor(int64_t cycle_length) : cycle_length_(static_cast<uint64_t>(cycle_length)) {}

  // The slot under the cursor, made (empty) when the cursor first reaches it.
  template <typename T>
  T& Current(std::vector<T>& slots) const {
    if (index_ == slots.size()) slots.emplace_back();
    return slots[index_];
  }

  // Moves to the next slot; past the last one made, to slot 0 when no more
  // slots can be filled (`input_done`).
  template <typename T>
  void Advance(const std::vector<T>& slots, bool input_done) {
    ++index_;
    if (index_ == cycle_length_ || (index_ >= slots.size() && input_done)) index_ = 0;
  }

  // Whether a slot that does not exist yet lies under the cursor's range.
  template <typename T>
  bool HasUnmade(const std::vector<T>& slots) const {
    return slots.size() < cycle_length_;
  }

  size_t index() const { return index_; }

 private:
  uint64_t cycle_length_;
  size_t index_ = 0;
};

// The order of tensorflow/core/kernels/data/interleave_dataset_op.cc: the
// cursor visits cycle_length slots; an empty slot takes the next input and
// produces from it at once; an open slot gives up to block_length elements,
// then the cursor moves on; an exhausted input empties its slot and the
// cursor moves on; empty slots are skipped once the input is exhausted.
//
// Slots are made as the cursor first reaches them (SlotCursor), so any
// cycle_length TensorFlow takes costs only the slots that hold an input.
class SequentialInterleave final : public Iterator {
 public:
  SequentialInterleave(std::unique_ptr<Iterator> input, const InterleaveOptions& o)
      : input_(std::move(input)), options_(o), cursor_(o.cycle_length) {}

  Status GetNext(Element& out, bool& end) override {
    for (;;) {
      if (input_done_ && open_ == 0) {
        end = true;
        return Status::OK();
      }
      std::unique_ptr<Iterator>& slot = cursor_.Current(slots_);
      if (slot) {
        bool slot_end = false;
        if (Status s = slot->GetNext(out, slot_end); !s.ok()) {
          if (!IgnoresError(options_, s)) return s;
          slot_end = true;  // ignore_errors(): the file ends at its error
        }
        if (!slot_end) {
          if (++block_ == options_.block_length) Advance();
          end = false;
          return Status::OK();
        }
        slot.reset();
        --open_;
        Advance();
      } else if (!input_done_) {
        Element name;
        bool input_end = false;
        TFDIST_RETURN_IF_ERROR(input_->GetNext(name, input_end));
        if (input_end) {
          input_done_ = true;
          continue;
        }
        // Read on this thread, as TensorFlow's sequential interleave does:
        // parallel reading is what num_parallel_calls asks for.
        ReadCounters* counter = options_.counters.get();
        if (counter != nullptr) counter->files.fetch_add(1, std::memory_order_relaxed);
        Result<std::unique_ptr<Iterator>> opened =
            options_.read_by_index
                ? OpenRecordIdsByIndex(name, options_.compression, counter, options_.record_ids)
                : OpenRecords(name, options_.compression, 0, counter, options_.record_ids);
        if (!opened.ok()) {
          if (!IgnoresError(options_, opened.status())) return opened.status();
          Advance();  // ignore_errors(): a file that cannot be read ends at once
          continue;
        }
        slot = std::move(*opened);
        ++open_;
      } else {
        Advance();
      }
    }
  }

 private:
  void Advance() {
    block_ = 0;
    cursor_.Advance(slots_, input_done_);
  }

  std::unique_ptr<Iterator> input_;
  InterleaveOptions options_;
  std::vector<std::unique_ptr<Iterator>> slots_;
  SlotCursor cursor_;
  int64_t block_ = 0;
  size_t open_ = 0;
  bool input_done_ = false;
};

// The same order, with every open input (and up to cycle_length inputs after
// them) read ahead by `parallelism` threads into bounded queues. The threads
// are the iterator's own rather than oneTBB workers: reads block on I/O, and
// oneTBB keeps cores - 1 workers (one on CI's two cores), which is less
// parallelism than asked for; raising its global limit per iterator left
// enqueued tasks stranded in testing. The consumer runs exactly
// the sequential algorithm over the queues, so the order cannot change;
// with !deterministic it moves on from a slot whose queue is empty instead
// of waiting, as TensorFlow's sloppy interleave does.
class ParallelInterleave final : public Iterator {
 public:
  ParallelInterleave(std::unique_ptr<Iterator> input, const InterleaveOptions& o)
      : input_(std::move(input)),
        options_(o),
        cursor_(o.cycle_length),
        // (block_length may be anything TensorFlow takes: the bound is in
        // bytes too, and 2^40 records fill no queue first.)
        capacity_(static_cast<size_t>(
            std::max<int64_t>(2 * std::min<int64_t>(o.block_length, int64_t{1} << 40), 4096))),
        futures_capacity_(static_cast<size_t>(
            std::min<int64_t>(o.cycle_length, 2 * std::max<int64_t>(o.parallelism, 1)))),
        ids_(o.record_ids != RecordIds::kNone),
        byte_capacity_(
            std::clamp<uint64_t>((ids_ ? kIdReadAheadBytes : kReadAheadBytes) /
                                     (static_cast<uint64_t>(o.cycle_length) + futures_capacity_),
                                 uint64_t{16} << 10, uint64_t{8} << 20)),
        packet_bytes_(std::min<size_t>(256 * 1024, byte_capacity_ / 2)) {
    for (int64_t i = 0; i < std::max<int64_t>(o.parallelism, 1); ++i) {
      threads_.emplace_back([this] { Work(); });
    }
  }

  ~ParallelInterleave() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    cv_.notify_all();
    work_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  Status GetNext(Element& out, bool& end) override {
    // Fast path, no lock: the current slot's consumer-side buffer.
    if (Slot* s = cursor_.index() < slots_.size() ? slots_[cursor_.index()].get() : nullptr;
        s != nullptr && !s->local.empty()) {
      Take(*s, out);
      end = false;
      return Status::OK();
    }
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (input_done_ && futures_.empty() && open_ == 0) {
        end = true;
        return Status::OK();
      }
      std::unique_ptr<Slot>& slot = cursor_.Current(slots_);
      if (slot) {
        Slot& s = *slot;
        if (!options_.deterministic && !Ready(s)) {
          cv_.wait(lock, [&] { return AnyReady(); });
          if (!Ready(s)) {
            Advance();
            continue;
          }
        }
        cv_.wait(lock, [&] { return Ready(s); });
        if (s.local.empty() && !s.queue.empty()) {
          // Take everything read so far in one go; the readers refill the
          // shared queue while the consumer drains its own.
          s.local.swap(s.queue);
          s.queue_bytes = 0;
          s.queue_records = 0;
          Refill(s);
        }
        if (!s.local.empty()) {
          Take(s, out);
          end = false;
          return Status::OK();
        }
        if (!s.status.ok()) return s.status;
        slot.reset();  // done and drained; no task holds it
        --open_;
        Advance();
      } else if (!input_done_ || !futures_.empty()) {
        TFDIST_RETURN_IF_ERROR(TopUpFutures(lock));
        if (futures_.empty()) continue;  // the input just ended
        slot = std::move(futures_.front());
        futures_.pop_front();
        ++open_;
        if (options_.counters) {  // a file is taken when it enters the cycle
          options_.counters->files.fetch_add(1, std::memory_order_relaxed);
          slot->counters = options_.counters.get();
        }
        TFDIST_RETURN_IF_ERROR(TopUpFutures(lock));
      } else {
        Advance();
      }
    }
  }

 private:
  // Records read by one task in one go: their payloads side by side in one
  // buffer, which the Elements handed out view and keep alive. One handover
  // and one allocation per packet, not per record: per record, the lock and
  // another thread's frees cost more than reading a small record. Record
  // ids (InterleaveOptions::record_ids) hold their labels there instead, which
  // the Elements copy: a packet is free again as soon as it is taken.
  struct Packet {
    struct Item {
      size_t begin;
      size_t size;
      uint64_t index;
      uint64_t offset;
      uint64_t payload_size = 0;  // record ids: the payload's size
      bool labelled = false;      // record ids: data[begin, begin + size) is its label
    };
    std::string data;
    std::vector<Item> items;
  };

  // A slot counts what the consumer took from it, not what its tasks read
  // ahead: how far they got when a layout stops (--steps) depends on the
  // threads, and a layout's counts must not.
  struct Slot {
    ~Slot() {
      if (counters != nullptr && reader) counters->FileClosed(path, taken_end, taken_records);
    }
    ReadCounters* counters = nullptr;           // InterleaveOptions::counters, once in the cycle
    uint64_t taken_records = 0;                 // records the consumer took (consumer only)
    uint64_t taken_end = 0;                     // the offset just past the last of them
    Element input;                              // the file name
    const std::string* path = nullptr;          // interned input.bytes
    std::unique_ptr<io::RecordReader> reader;   // touched only by the task filling it
    std::unique_ptr<RecordIdReader> ids;        // the same; record ids: reads them
    std::deque<std::shared_ptr<Packet>> queue;  // read ahead (under mu_)
    std::deque<std::shared_ptr<Packet>> local;  // taken from queue (consumer only)
    size_t next = 0;                            // next item of local.front()
    uint64_t queue_bytes = 0;                   // payload bytes in queue
    uint64_t queue_records = 0;                 // records in queue
    bool task = false;                          // a fill task is scheduled or running
    bool done = false;                          // the input ended (queue may still hold elements)
    Status status;
  };

  void Advance() {
    block_ = 0;
    cursor_.Advance(slots_, input_done_ && futures_.empty());
  }

  // Hands out the next record of the slot's first packet without copying its
  // payload: the Element keeps the packet alive.
  void Take(Slot& s, Element& out) {
    const std::shared_ptr<Packet>& p = s.local.front();
    const Packet::Item& item = p->items[s.next];
    if (ids_) {
      out.kind = Element::Kind::kRecordId;
      out.payload_state =
          item.labelled ? Element::PayloadState::kLabelled : Element::PayloadState::kChecked;
      out.bytes.assign(p->data, item.begin, item.size);
      out.set_payload_size(item.payload_size);
      out.storage.reset();
      out.view = {};
    } else {
      out.kind = Element::Kind::kRecord;
      out.bytes.clear();
      out.storage = p;
      out.view = std::string_view(p->data.data() + item.begin, item.size);
    }
    out.items.clear();
    out.origin.file = s.path;
    out.origin.index = item.index;
    out.origin.offset = item.offset;
    ++s.taken_records;
    s.taken_end = item.offset + item.payload_size + io::kRecordFramingBytes;
    if (++s.next == p->items.size()) {
      s.local.pop_front();  // back to pool_ once no Element holds it
      s.next = 0;
    }
    if (++block_ == options_.block_length) Advance();
  }

  // Whether the consumer can act on the slot: take an element, or finish it.
  static bool Ready(const Slot& s) {
    return !s.local.empty() || !s.queue.empty() || s.done || !s.status.ok();
  }

  bool AnyReady() const {
    if (cursor_.HasUnmade(slots_) && (!futures_.empty() || !input_done_)) return true;
    for (const auto& s : slots_) {
      if (!s) {
        if (!futures_.empty() || !input_done_) return true;
        continue;
      }
      if (Ready(*s)) return true;
    }
    return false;
  }

  // Keeps up to cycle_length future inputs opened and reading, in order.
  // REQUIRES: mu_ held (released while the input is pulled).
  Status TopUpFutures(std::unique_lock<std::mutex>& lock) {
    while (!input_done_ && futures_.size() < futures_capacity_) {
      Element name;
      bool input_end = false;
      lock.unlock();
      Status s = input_->GetNext(name, input_end);
      lock.lock();
      TFDIST_RETURN_IF_ERROR(s);
      if (input_end) {
        input_done_ = true;
        break;
      }
      auto slot = std::make_unique<Slot>();
      if (name.kind == Element::Kind::kName) slot->path = InternPath(name.bytes);
      slot->input = std::move(name);
      Refill(*slot);
      futures_.push_back(std::move(slot));
    }
    return Status::OK();
  }

  // Schedules a fill task when the queue is below half. REQUIRES: mu_ held.
  void Refill(Slot& s) {
    if (s.task || s.done || !s.status.ok() || s.queue_records > capacity_ / 2 ||
        s.queue_bytes > byte_capacity_ / 2) {
      return;
    }
    s.task = true;
    jobs_.push_back(&s);
    work_cv_.notify_one();
  }

  void Work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [this] { return cancelled_ || !jobs_.empty(); });
      if (cancelled_) return;
      Slot* s = jobs_.front();
      jobs_.pop_front();
      lock.unlock();
      Fill(*s);
      lock.lock();
    }
  }

  // Reads into the slot's queue until it is full, the input ends, or an
  // error. Stopping and clearing `task` happen under the lock that checks
  // the queue's size, so the consumer's Refill() never misses a stop.
  void Fill(Slot& s) {
    Status status;
    if (!s.reader) {
      Result<std::unique_ptr<io::RecordReader>> reader =
          OpenRecordReader(s.input, options_.compression, 0, options_.record_ids);
      if (reader.ok()) {
        s.reader = std::move(*reader);
        if (ids_) s.ids = std::make_unique<RecordIdReader>(options_.record_ids);
      } else {
        status = reader.status();
      }
    }
    // Records are handed over a packet at a time: one lock per record would
    // cost more than reading a small one.
    constexpr size_t kPacketRecords = 64;
    for (;;) {
      std::unique_ptr<Packet> reused;
      {
        std::lock_guard<std::mutex> lock(pool_->mu);
        if (!pool_->free.empty()) {
          reused = std::move(pool_->free.back());
          pool_->free.pop_back();
        }
      }
      if (!reused) {
        reused = std::make_unique<Packet>();
        if (!ids_) reused->data.reserve(packet_bytes_ + 4096);
      }
      std::shared_ptr<Packet> packet(reused.release(), Recycle{pool_});
      packet->data.clear();
      packet->items.clear();
      bool end = false;
      std::string_view record;
      std::string label;  // record ids: the last one's
      while (status.ok() && packet->items.size() < kPacketRecords &&
             packet->data.size() < packet_bytes_) {
        bool labelled = false;
        if (ids_ ? !s.ids->Next(*s.reader, labelled, label) : !s.reader->ReadRecord(record)) {
          status = s.reader->status();
          end = status.ok();
          break;
        }
        if (ids_) record = labelled ? std::string_view(label) : std::string_view();
        packet->items.push_back({packet->data.size(), record.size(), s.reader->records_read() - 1,
                                 s.reader->last_record_offset(), s.reader->last_record_size(),
                                 labelled});
        packet->data.append(record);
      }
      if (!status.ok() && IgnoresError(options_, status)) {
        status = Status::OK();  // ignore_errors(): the file ends at its error
        end = true;
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (!packet->items.empty()) {
        // Record ids: their items count, as they are most of what is held.
        s.queue_bytes +=
            packet->data.size() + (ids_ ? packet->items.size() * sizeof(Packet::Item) : 0);
        s.queue_records += packet->items.size();
        s.queue.push_back(std::move(packet));
      }
      cv_.notify_all();
      if (!status.ok() || end) {
        s.status = status;
        s.done = end;
        s.task = false;
        return;
      }
      if (cancelled_ || s.queue_records >= capacity_ || s.queue_bytes >= byte_capacity_) {
        s.task = false;
        return;
      }
    }
  }

  std::unique_ptr<Iterator> input_;
  const InterleaveOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Slot>> slots_;
  SlotCursor cursor_;
  std::deque<std::unique_ptr<Slot>> futures_;
  // Read ahead per input: elements, and payload bytes (kReadAheadBytes
  // shared by the open and future inputs, 16 KiB to 8 MiB each). Future
  // inputs are opened ahead only as far as the readers can use them (2 per
  // thread): each holds an open file.
  //
  // 8 MiB, not more: the consumer then takes records while they are still in
  // the last-level cache, and fewer fresh packets are faulted in. Measured on
  // page-cached files (tools/bench-run, bench-pipeline), 64 MiB was 20-30%
  // slower for uncompressed records and no faster for GZIP. The kernel reads
  // ahead of each file on its own.
  static constexpr uint64_t kReadAheadBytes = uint64_t{8} << 20;
  // Record ids hold no payload: 1 MiB of ids and labels is thousands of
  // records ahead per input.
  static constexpr uint64_t kIdReadAheadBytes = uint64_t{1} << 20;
  const size_t capacity_;
  const size_t futures_capacity_;
  const bool ids_;  // InterleaveOptions::record_ids: record ids
  const uint64_t byte_capacity_;
  const size_t packet_bytes_;
  int64_t block_ = 0;
  size_t open_ = 0;
  bool input_done_ = false;
  bool cancelled_ = false;
  std::condition_variable work_cv_;
  std::deque<Slot*> jobs_;  // slots to fill, in the order asked
  // Packets are reused: a fresh 256 KiB buffer per packet would be a fresh
  // mmap and its page faults; and freeing the packets that a shuffle()
  // lets go of in random order, then reading into fresh ones, fragments
  // the heap, whose footprint then grows with the steps run. A packet
  // comes back to the pool when the last Element holding it lets go, on
  // whichever thread that is; the pool outlives the iterator while any does.
  static constexpr size_t kMaxFreePackets = 256;
  struct PacketPool {
    std::mutex mu;
    std::vector<std::unique_ptr<Packet>> free;  // under mu; at most kMaxFreePackets
  };
  // The deleter of a packet's shared_ptr: returns it to the pool. (The
  // pool's lock orders the last owner's reads of the payload before the
  // buffer is written again.)
  struct Recycle {
    std::shared_ptr<PacketPool> pool;
    void operator()(Packet* p) const {
      std::unique_ptr<Packet> packet(p);  // freed after the lock, if the pool is full
      std::lock_guard<std::mutex> lock(pool->mu);
      if (pool->free.size() < kMaxFreePackets) pool->free.push_back(std::move(packet));
    }
  };
  const std::shared_ptr<PacketPool> pool_ = std::make_shared<PacketPool>();
  std::vector<std::thread> threads_;
};

class InterleaveDataset final : public Dataset {
 public:
  InterleaveDataset(DatasetPtr input, const InterleaveOptions& o)
      : input_(std::move(input)), options_(o) {}

  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    TFDIST_ASSIGN_OR_RETURN(auto in, input_->MakeIterator());
    if (options_.parallelism > 0 && !options_.read_by_index) {
      return std::unique_ptr<Iterator>(
          std::make_unique<ParallelInterleave>(std::move(in), options_));
    }
    return std::unique_ptr<Iterator>(
        std::make_unique<SequentialInterleave>(std::move(in), options_));
  }

 private:
  DatasetPtr input_;
  InterleaveOptions options_;
};

// Pulls from the input on a thread of its own into a bounded queue.
class PrefetchIterator final : public Iterator {
 public:
  PrefetchIterator(std::unique_ptr<Iterator> input, size_t capacity)
      : input_(std::move(input)), capacity_(capacity) {
    thread_ = std::thread([this] { Run(); });
  }
  ~PrefetchIterator() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  Status GetNext(Element& out, bool& end) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !queue_.empty() || done_; });
    if (!queue_.empty()) {
      out = std::move(queue_.front());
      queue_.pop_front();
      end = false;
      cv_.notify_all();
      return Status::OK();
    }
    end = true;
    return status_;
  }

 private:
  void Run() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return cancelled_ || queue_.size() < capacity_; });
        if (cancelled_) return;
      }
      Element e;
      bool end = false;
      Status s = input_->GetNext(e, end);
      std::lock_guard<std::mutex> lock(mu_);
      if (!s.ok() || end) {
        status_ = s;
        done_ = true;
        cv_.notify_all();
        return;
      }
      queue_.push_back(std::move(e));
      cv_.notify_all();
    }
  }

  std::unique_ptr<Iterator> input_;
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Element> queue_;
  Status status_;
  bool done_ = false;
  bool cancelled_ = false;
  std::thread thread_;
};

class PrefetchDataset final : public Dataset {
 public:
  PrefetchDataset(DatasetPtr input, int64_t size) : input_(std::move(input)), size_(size) {}

  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    TFDIST_ASSIGN_OR_RETURN(auto in, input_->MakeIterator());
    return std::unique_ptr<Iterator>(
        std::make_unique<PrefetchIterator>(std::move(in), static_cast<size_t>(size_)));
  }

 private:
  DatasetPtr input_;
  int64_t size_;
};

}  // namespace

DatasetPtr NewInterleaveDataset(DatasetPtr input, const InterleaveOptions& options) {
  return std::make_shared<InterleaveDataset>(std::move(input), options);
}

DatasetPtr NewPrefetchDataset(DatasetPtr input, int64_t buffer_size) {
  return std::make_shared<PrefetchDataset>(std::move(input), buffer_size);
}

}  // namespace tfdist::data
