// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Sources and the element-wise stages: names, range, records, shard, repeat,
// take, skip, enumerate, batch, shuffle.

#include "stages.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <tuple>

#include "tfdist/base/interrupt.h"
#include "tfdist/base/philox.h"
#include "tfdist/io/record_fetch.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::data {

Status Iterator::Skip(uint64_t n, uint64_t& skipped, bool& end) {
  Element e;
  end = false;
  for (skipped = 0; skipped < n; ++skipped) {
    TFDIST_RETURN_IF_ERROR(GetNext(e, end));
    if (end) break;
  }
  return Status::OK();
}

namespace {

class NamesDataset final : public Dataset {
 public:
  explicit NamesDataset(StringList names) : names_(std::move(names)) {}

  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    class It final : public Iterator {
     public:
      explicit It(const StringList& names) : names_(names) {}
      Status GetNext(Element& out, bool& end) override {
        end = next_ >= names_.size();
        if (!end) out = Element::Name(std::string(names_[next_++]));
        return Status::OK();
      }
      Status Skip(uint64_t n, uint64_t& skipped, bool& end) override {
        skipped = std::min<uint64_t>(n, names_.size() - next_);
        next_ += static_cast<size_t>(skipped);
        end = skipped < n;
        return Status::OK();
      }

     private:
      const StringList& names_;
      size_t next_ = 0;
    };
    return std::unique_ptr<Iterator>(std::make_unique<It>(names_));
  }

 private:
  StringList names_;
};

class RangeDataset final : public Dataset {
 public:
  RangeDataset(int64_t start, int64_t stop, int64_t step)
      : start_(start), stop_(stop), step_(step) {}

  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    class It final : public Iterator {
     public:
      It(int64_t next, int64_t stop, int64_t step) : next_(next), stop_(stop), step_(step) {}
      Status GetNext(Element& out, bool& end) override {
        // The one source that reads no file, so no read notices a Ctrl-C:
        // range(N).repeat() and the like would otherwise never stop. At the
        // first element and every 1024th after: the call costs more than an
        // element (3-7% of take over range(20000000)).
        if (calls_++ % 1024 == 0 && Interrupted()) return Status::Interrupted();
        end = step_ > 0 ? next_ >= stop_ : next_ <= stop_;
        if (!end) {
          out = Element::Int(next_);
          // Saturate instead of overflowing past stop.
          if (__builtin_add_overflow(next_, step_, &next_)) next_ = stop_;
        }
        return Status::OK();
      }

     private:
      int64_t next_, stop_, step_;
      uint64_t calls_ = 0;
    };
    return std::unique_ptr<Iterator>(std::make_unique<It>(start_, stop_, step_));
  }

 private:
  int64_t start_, stop_, step_;
};

class RecordsIterator final : public Iterator {
 public:
  RecordsIterator(std::unique_ptr<io::RecordReader> reader, const std::string* file,
                  ReadCounters* counters)
      : reader_(std::move(reader)), file_(std::move(file)), counters_(counters) {}
  ~RecordsIterator() override {
    if (counters_ != nullptr) {
      counters_->FileClosed(file_, reader_->position(), reader_->records_read());
    }
  }

  Status GetNext(Element& out, bool& end) override {
    std::string_view record;
    end = !reader_->ReadRecord(record);
    if (end) return reader_->status();
    out.kind = Element::Kind::kRecord;
    out.bytes.assign(record.data(), record.size());
    out.storage.reset();
    out.items.clear();
    out.origin.file = file_;
    out.origin.index = reader_->records_read() - 1;
    out.origin.offset = reader_->last_record_offset();
    return Status::OK();
  }

 private:
  std::unique_ptr<io::RecordReader> reader_;
  const std::string* file_;
  ReadCounters* counters_;
};

// A file's records read and checked, as record ids (BuildOptions::record_ids).
class RecordIdsIterator final : public Iterator {
 public:
  RecordIdsIterator(std::unique_ptr<io::RecordReader> reader, const std::string* file,
                    ReadCounters* counters, RecordIds record_ids)
      : reader_(std::move(reader)), file_(file), counters_(counters), ids_(record_ids) {}
  ~RecordIdsIterator() override {
    if (counters_ != nullptr) {
      counters_->FileClosed(file_, reader_->position(), reader_->records_read());
    }
  }

  Status GetNext(Element& out, bool& end) override {
    bool labelled = false;
    end = !ids_.Next(*reader_, labelled, out.bytes);
    if (end) return reader_->status();
    out.kind = Element::Kind::kRecordId;
    out.payload_state =
        labelled ? Element::PayloadState::kLabelled : Element::PayloadState::kChecked;
    if (!labelled) out.bytes.clear();
    out.set_payload_size(reader_->last_record_size());
    out.storage.reset();
    out.view = {};
    out.items.clear();
    out.origin.file = file_;
    out.origin.index = reader_->records_read() - 1;
    out.origin.offset = reader_->last_record_offset();
    return Status::OK();
  }

 private:
  std::unique_ptr<io::RecordReader> reader_;
  const std::string* file_;
  ReadCounters* counters_;
  RecordIdReader ids_;
};

// Read by index: a file's records from its index, as record ids not read yet.
class RecordIdsByIndexIterator final : public Iterator {
 public:
  RecordIdsByIndexIterator(std::vector<io::RecordExtent> extents, const std::string* file)
      : extents_(std::move(extents)), file_(file) {}

  Status GetNext(Element& out, bool& end) override {
    end = next_ >= extents_.size();
    if (end) return Status::OK();
    const io::RecordExtent& e = extents_[next_];
    out.kind = Element::Kind::kRecordId;
    out.payload_state = Element::PayloadState::kUnread;
    out.bytes.clear();
    out.storage.reset();
    out.view = {};
    out.items.clear();
    out.set_payload_size(e.size - 16);
    out.origin.file = file_;
    out.origin.index = next_++;
    out.origin.offset = e.offset;
    return Status::OK();
  }

 private:
  std::vector<io::RecordExtent> extents_;
  const std::string* file_;
  size_t next_ = 0;
};

// A stage whose iterator wraps one iterator of its input: the dataset only
// keeps the input and the stage's arguments, and makes `It(input, args...)`.
template <typename It, typename... Args>
class UnaryDataset final : public Dataset {
 public:
  explicit UnaryDataset(DatasetPtr input, Args... args)
      : input_(std::move(input)), args_(args...) {}

  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    TFDIST_ASSIGN_OR_RETURN(auto in, input_->MakeIterator());
    return std::apply(
        [&](const Args&... a) {
          return std::unique_ptr<Iterator>(std::make_unique<It>(std::move(in), a...));
        },
        args_);
  }

 private:
  DatasetPtr input_;
  std::tuple<Args...> args_;
};

class ShardIterator final : public Iterator {
 public:
  ShardIterator(std::unique_ptr<Iterator> in, int64_t n, int64_t i, TooFewForShards too_few)
      : in_(std::move(in)), n_(n), i_(i), too_few_(std::move(too_few)) {}
  Status GetNext(Element& out, bool& end) override {
    // Past the other shards' elements to this shard's next one (by a jump
    // where the input can: a list of names).
    const int64_t behind = (i_ - position_ % n_ + n_) % n_;
    if (behind > 0) {
      uint64_t skipped = 0;
      TFDIST_RETURN_IF_ERROR(in_->Skip(static_cast<uint64_t>(behind), skipped, end));
      position_ += static_cast<int64_t>(skipped);
      if (end) return AtEnd();
    }
    TFDIST_RETURN_IF_ERROR(in_->GetNext(out, end));
    if (end) return AtEnd();
    ++position_;
    if (too_few_ && position_ < n_) TFDIST_RETURN_IF_ERROR(SkipFirstRound());
    return Status::OK();
  }

 private:
  Status AtEnd() const {
    if (too_few_ && position_ > 0 && position_ < n_) return too_few_(position_);
    return Status::OK();
  }

  // TensorFlow's non-empty check, at the shard's first element: the other
  // shards' elements of the first round must all be there. They are no
  // element of this shard, so they are dropped.
  Status SkipFirstRound() {
    uint64_t skipped = 0;
    bool end = false;
    TFDIST_RETURN_IF_ERROR(in_->Skip(static_cast<uint64_t>(n_ - position_), skipped, end));
    position_ += static_cast<int64_t>(skipped);
    if (end) return too_few_(position_);
    return Status::OK();
  }

  std::unique_ptr<Iterator> in_;
  int64_t n_, i_;
  TooFewForShards too_few_;
  int64_t position_ = 0;
};

class RepeatDataset final : public Dataset {
 public:
  RepeatDataset(DatasetPtr input, int64_t count) : input_(std::move(input)), count_(count) {}

  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    class It final : public Iterator {
     public:
      It(DatasetPtr input, int64_t count) : input_(std::move(input)), count_(count) {}
      Status GetNext(Element& out, bool& end) override {
        for (;;) {
          if (count_ >= 0 && epoch_ >= count_) {
            end = true;
            return Status::OK();
          }
          if (!current_) {
            TFDIST_ASSIGN_OR_RETURN(current_, input_->MakeIterator());
            produced_in_epoch_ = false;
          }
          TFDIST_RETURN_IF_ERROR(current_->GetNext(out, end));
          if (!end) {
            produced_in_epoch_ = true;
            return Status::OK();
          }
          current_.reset();
          ++epoch_;
          // An epoch with no element would repeat forever: stop, as TensorFlow does.
          if (!produced_in_epoch_) {
            end = true;
            return Status::OK();
          }
        }
      }

     private:
      DatasetPtr input_;
      int64_t count_;
      int64_t epoch_ = 0;
      bool produced_in_epoch_ = false;
      std::unique_ptr<Iterator> current_;
    };
    return std::unique_ptr<Iterator>(std::make_unique<It>(input_, count_));
  }

 private:
  DatasetPtr input_;
  int64_t count_;
};

class TakeIterator final : public Iterator {
 public:
  TakeIterator(std::unique_ptr<Iterator> in, int64_t left) : in_(std::move(in)), left_(left) {}
  Status GetNext(Element& out, bool& end) override {
    if (left_ == 0) {
      end = true;
      return Status::OK();
    }
    TFDIST_RETURN_IF_ERROR(in_->GetNext(out, end));
    if (!end && left_ > 0) --left_;
    return Status::OK();
  }

 private:
  std::unique_ptr<Iterator> in_;
  int64_t left_;
};

class SkipIterator final : public Iterator {
 public:
  SkipIterator(std::unique_ptr<Iterator> in, int64_t skip,
               const std::shared_ptr<ReadCounters>& counters)
      : in_(std::move(in)), skip_(skip), counters_(counters) {}
  Status GetNext(Element& out, bool& end) override {
    while (skip_ != 0) {
      TFDIST_RETURN_IF_ERROR(in_->GetNext(out, end));
      if (end) return Status::OK();
      if (skip_ > 0) --skip_;
      if (counters_) counters_->skipped.fetch_add(RecordLeaves(out), std::memory_order_relaxed);
    }
    return in_->GetNext(out, end);
  }

 private:
  std::unique_ptr<Iterator> in_;
  int64_t skip_;
  std::shared_ptr<ReadCounters> counters_;
};

class EnumerateIterator final : public Iterator {
 public:
  EnumerateIterator(std::unique_ptr<Iterator> in, int64_t next) : in_(std::move(in)), next_(next) {}
  Status GetNext(Element& out, bool& end) override {
    // TensorFlow zips with range(start, int64 max), which ends first: the
    // index never reaches the maximum, let alone wraps.
    if (next_ == std::numeric_limits<int64_t>::max()) {
      end = true;
      return Status::OK();
    }
    Element inner;
    TFDIST_RETURN_IF_ERROR(in_->GetNext(inner, end));
    if (end) return Status::OK();
    out = Element();
    out.kind = Element::Kind::kPair;
    out.set_pair_index(next_++);
    out.items.push_back(std::move(inner));
    return Status::OK();
  }

 private:
  std::unique_ptr<Iterator> in_;
  int64_t next_;
};

class BatchIterator final : public Iterator {
 public:
  BatchIterator(std::unique_ptr<Iterator> in, int64_t size, bool drop,
                const std::shared_ptr<ReadCounters>& counters)
      : in_(std::move(in)), size_(static_cast<size_t>(size)), drop_(drop), counters_(counters) {}
  Status GetNext(Element& out, bool& end) override {
    out = Element();
    out.kind = Element::Kind::kBatch;
    // Grown once, not by doubling: each regrowth moves every element so far.
    out.items.reserve(std::min<size_t>(size_, kMaxReserve));
    while (!input_done_ && out.items.size() < size_) {
      Element e;
      bool in_end = false;
      TFDIST_RETURN_IF_ERROR(in_->GetNext(e, in_end));
      if (in_end) {
        input_done_ = true;
        break;
      }
      out.items.push_back(std::move(e));
    }
    end = EndsBatches(out, size_, drop_, counters_.get());
    return Status::OK();
  }

 private:
  // A batch_size far above any real dataset must not allocate up front.
  static constexpr size_t kMaxReserve = size_t{1} << 16;
  std::unique_ptr<Iterator> in_;
  size_t size_;
  bool drop_;
  std::shared_ptr<ReadCounters> counters_;
  bool input_done_ = false;
};

// TensorFlow's shuffle (ShuffleDatasetV3 in eager mode). The dataset owns
// the seed generator: each new iterator (each pass, each epoch of a repeat()
// after it) takes a pair from it, the next two outputs of a Philox stream
// over the op's seeds when reshuffling (so even the first pass does not use
// them directly), the op's seeds themselves otherwise. An iterator fills
// its buffer to buffer_size, then each output is element r mod n of the n
// buffered (r the next output of Philox over the iterator's pair), whose
// place the oldest element takes; one input refills it.
class ShuffleDataset final : public Dataset {
 public:
  ShuffleDataset(DatasetPtr input, int64_t buffer_size, SeedPair seeds, bool reshuffle,
                 std::shared_ptr<ShuffleWatch> watch, size_t pos, int64_t worker)
      : input_(std::move(input)),
        buffer_size_(buffer_size),
        seeds_(seeds),
        reshuffle_(reshuffle),
        watch_(std::move(watch)),
        pos_(pos),
        worker_(worker),
        generator_(static_cast<uint64_t>(seeds.seed), static_cast<uint64_t>(seeds.seed2)) {}

  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    class It final : public Iterator, public ShuffleWatch::Buffer {
     public:
      It(std::unique_ptr<Iterator> in, size_t capacity, SeedPair seeds,
         std::shared_ptr<ShuffleWatch> watch, size_t pos, int64_t worker)
          : in_(std::move(in)),
            capacity_(capacity),
            rng_(static_cast<uint64_t>(seeds.seed), static_cast<uint64_t>(seeds.seed2)),
            watch_(std::move(watch)) {
        if (watch_) watch_->Register(this, pos, worker);
      }
      ~It() override {
        if (watch_) watch_->Unregister(this);
      }
      void CopyTo(std::vector<Element>& out) const override {
        for (size_t i = 0; i < n_; ++i) {
          const size_t at = head_ + i;
          out.push_back(slots_[at < slots_.size() ? at : at - slots_.size()]);
        }
      }
      Status GetNext(Element& out, bool& end) override {
        // The buffer is a ring of slots: element i of the n buffered (the
        // oldest first) is in slot (head_ + i) % slots_.size(). It grows to
        // capacity_ while filling first (head_ is 0 until the first draw),
        // and inputs are read straight into their slots.
        while (!input_done_ && n_ < capacity_) {
          if (n_ == slots_.size()) slots_.emplace_back();
          bool in_end = false;
          TFDIST_RETURN_IF_ERROR(in_->GetNext(Slot(n_), in_end));
          if (in_end) {
            input_done_ = true;
            break;
          }
          ++n_;
        }
        end = n_ == 0;
        if (end) return Status::OK();
        const size_t pick = rng_.Next() % n_;
        out = std::move(Slot(pick));
        if (pick != 0) {
          // The oldest element stays on: it has been buffered for the last
          // n_ draws, and may stay as long again. Its payload is copied out
          // of the packet it shares, so that the elements sharing packets
          // are only those read in the last n_ draws (a packet for 64 small
          // records, not one each); the 63% of records drawn before they
          // get this far are never copied.
          Slot(pick) = std::move(Slot(0));
          OwnSmallPayloads(Slot(pick));
        }
        if (++head_ == slots_.size()) head_ = 0;
        --n_;
        return Status::OK();
      }

     private:
      // REQUIRES: i < slots_.size() (head_ always is).
      Element& Slot(size_t i) {
        const size_t at = head_ + i;
        return slots_[at < slots_.size() ? at : at - slots_.size()];
      }

      std::unique_ptr<Iterator> in_;
      size_t capacity_;
      Philox rng_;
      std::shared_ptr<ShuffleWatch> watch_;
      std::vector<Element> slots_;
      size_t head_ = 0;
      size_t n_ = 0;  // elements buffered
      bool input_done_ = false;
    };
    SeedPair seeds = seeds_;
    if (reshuffle_) {
      std::lock_guard<std::mutex> lock(mu_);
      seeds.seed = generator_.Next();
      seeds.seed2 = generator_.Next();
    }
    TFDIST_ASSIGN_OR_RETURN(auto in, input_->MakeIterator());
    return std::unique_ptr<Iterator>(std::make_unique<It>(
        std::move(in), static_cast<size_t>(buffer_size_), seeds, watch_, pos_, worker_));
  }

 private:
  DatasetPtr input_;
  int64_t buffer_size_;
  SeedPair seeds_;
  bool reshuffle_;
  std::shared_ptr<ShuffleWatch> watch_;
  size_t pos_;
  int64_t worker_;
  mutable std::mutex mu_;
  mutable Philox generator_;  // guarded by mu_
};

}  // namespace

bool EndsBatches(const Element& batch, size_t size, bool drop_remainder, ReadCounters* counters) {
  const bool end = batch.items.empty() || (drop_remainder && batch.items.size() < size);
  if (end && !batch.items.empty() && counters != nullptr) {
    counters->dropped_remainder.fetch_add(RecordLeaves(batch), std::memory_order_relaxed);
  }
  return end;
}

uint64_t RecordLeaves(const Element& e) {
  if (e.kind == Element::Kind::kName) return 0;
  if (e.items.empty()) return e.kind == Element::Kind::kBatch ? 0 : 1;
  uint64_t n = 0;
  for (const Element& item : e.items) n += RecordLeaves(item);
  return n;
}

DatasetPtr NewNamesDataset(StringList names) {
  return std::make_shared<NamesDataset>(std::move(names));
}

DatasetPtr NewRangeDataset(int64_t start, int64_t stop, int64_t step) {
  return std::make_shared<RangeDataset>(start, stop, step);
}

Result<std::unique_ptr<io::RecordReader>> OpenRecordReader(const Element& name,
                                                           io::Compression compression,
                                                           int read_ahead, RecordIds record_ids) {
  if (name.kind != Element::Kind::kName) {
    return Status::InvalidArgument(
        "tfrecord needs file names as input; this element is not one (is the reader applied "
        "twice?)");
  }
  io::RecordReaderOptions options;
  options.compression = compression;
  options.read_ahead = read_ahead;
  if (record_ids != RecordIds::kNone) options.block_size = kIdBlockBytes;
  return io::RecordReader::Open(name.bytes, options);
}

RecordIdReader::RecordIdReader(RecordIds record_ids)
    : record_ids_(record_ids), add_([this](std::string_view piece) { label_.Add(piece); }) {}

bool RecordIdReader::Next(io::RecordReader& reader, bool& labelled, std::string& label) {
  labelled = false;
  if (record_ids_ != RecordIds::kLabelled) return reader.SkipRecord();
  if (!reader.ScanRecord(add_)) {
    label_.Finish(label);  // a record that does not count: its pieces forgotten
    return false;
  }
  labelled = label_.Finish(label);
  return true;
}

Result<std::unique_ptr<Iterator>> OpenRecords(const Element& name, io::Compression compression,
                                              int read_ahead, ReadCounters* counters,
                                              RecordIds record_ids) {
  TFDIST_ASSIGN_OR_RETURN(auto reader, OpenRecordReader(name, compression, read_ahead, record_ids));
  if (record_ids != RecordIds::kNone) {
    return std::unique_ptr<Iterator>(std::make_unique<RecordIdsIterator>(
        std::move(reader), InternPath(name.bytes), counters, record_ids));
  }
  return std::unique_ptr<Iterator>(
      std::make_unique<RecordsIterator>(std::move(reader), InternPath(name.bytes), counters));
}

Result<std::unique_ptr<Iterator>> OpenRecordIdsByIndex(const Element& name,
                                                       io::Compression compression,
                                                       ReadCounters* counters,
                                                       RecordIds record_ids) {
  if (name.kind == Element::Kind::kName &&
      (compression == io::Compression::kNone || compression == io::Compression::kAuto)) {
    std::string stale;
    std::optional<std::vector<io::RecordExtent>> extents =
        io::ReadRecordExtents(name.bytes, &stale);
    if (extents) {
      return std::unique_ptr<Iterator>(
          std::make_unique<RecordIdsByIndexIterator>(std::move(*extents), InternPath(name.bytes)));
    }
  }
  return OpenRecords(name, compression, 0, counters, record_ids);
}

DatasetPtr NewShardDataset(DatasetPtr input, int64_t num_shards, int64_t index,
                           TooFewForShards too_few) {
  return std::make_shared<UnaryDataset<ShardIterator, int64_t, int64_t, TooFewForShards>>(
      std::move(input), num_shards, index, std::move(too_few));
}

DatasetPtr NewRepeatDataset(DatasetPtr input, int64_t count) {
  return std::make_shared<RepeatDataset>(std::move(input), count);
}

DatasetPtr NewTakeDataset(DatasetPtr input, int64_t count) {
  return std::make_shared<UnaryDataset<TakeIterator, int64_t>>(std::move(input), count);
}

DatasetPtr NewSkipDataset(DatasetPtr input, int64_t count, std::shared_ptr<ReadCounters> counters) {
  return std::make_shared<UnaryDataset<SkipIterator, int64_t, std::shared_ptr<ReadCounters>>>(
      std::move(input), count, std::move(counters));
}

DatasetPtr NewEnumerateDataset(DatasetPtr input, int64_t start) {
  return std::make_shared<UnaryDataset<EnumerateIterator, int64_t>>(std::move(input), start);
}

DatasetPtr NewBatchDataset(DatasetPtr input, int64_t batch_size, bool drop_remainder,
                           std::shared_ptr<ReadCounters> counters) {
  return std::make_shared<
      UnaryDataset<BatchIterator, int64_t, bool, std::shared_ptr<ReadCounters>>>(
      std::move(input), batch_size, drop_remainder, std::move(counters));
}

DatasetPtr NewShuffleDataset(DatasetPtr input, int64_t buffer_size, SeedPair seeds,
                             bool reshuffle_each_iteration, std::shared_ptr<ShuffleWatch> watch,
                             size_t pos, int64_t worker) {
  return std::make_shared<ShuffleDataset>(std::move(input), buffer_size, seeds,
                                          reshuffle_each_iteration, std::move(watch), pos, worker);
}

void ShuffleWatch::Register(const Buffer* buffer, size_t pos, int64_t worker) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.push_back({buffer, pos, worker});
}

void ShuffleWatch::Unregister(const Buffer* buffer) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(live_, [buffer](const Entry& e) { return e.buffer == buffer; });
}

std::vector<ShuffleWatch::State> ShuffleWatch::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<State> out;
  for (const Entry& e : live_) {
    State& s = out.emplace_back();
    s.pos = e.pos;
    s.worker = e.worker;
    e.buffer->CopyTo(s.elements);
  }
  return out;
}

}  // namespace tfdist::data
