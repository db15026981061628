// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Stages that regroup batches (unbatch, rebatch), replay a pass (cache),
// join two datasets (concatenate), and the integers of from_tensor_slices.

#include <fmt/format.h>

#include <atomic>

#include "stages.h"

namespace tfdist::data {
namespace {

class IntsDataset final : public Dataset {
 public:
  explicit IntsDataset(std::vector<int64_t> values) : values_(std::move(values)) {}

  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    class It final : public Iterator {
     public:
      explicit It(const std::vector<int64_t>& values) : values_(values) {}
      Status GetNext(Element& out, bool& end) override {
        end = next_ >= values_.size();
        if (!end) out = Element::Int(values_[next_++]);
        return Status::OK();
      }

     private:
      const std::vector<int64_t>& values_;
      size_t next_ = 0;
    };
    return std::unique_ptr<Iterator>(std::make_unique<It>(values_));
  }

 private:
  std::vector<int64_t> values_;
};

// The items of the input's batches, one at a time.
class BatchItems {
 public:
  explicit BatchItems(std::unique_ptr<Iterator> in) : in_(std::move(in)) {}

  // The next item, or `end` when the input has no more.
  Status Next(Element& out, bool& end, std::string_view op) {
    while (next_ >= batch_.items.size()) {
      if (done_) {
        end = true;
        return Status::OK();
      }
      bool in_end = false;
      TFDIST_RETURN_IF_ERROR(in_->GetNext(batch_, in_end));
      next_ = 0;
      if (in_end) {
        done_ = true;
        batch_.items.clear();
        continue;
      }
      if (batch_.kind != Element::Kind::kBatch) {
        return Status::InvalidArgument(fmt::format(
            "{}() takes batches; its input gives {} (batch() it first)", op,
            batch_.kind == Element::Kind::kPair ? "(index, element) pairs" : "single elements"));
      }
    }
    end = false;
    out = std::move(batch_.items[next_++]);
    return Status::OK();
  }

 private:
  std::unique_ptr<Iterator> in_;
  Element batch_;
  size_t next_ = 0;
  bool done_ = false;
};

class UnbatchIterator final : public Iterator {
 public:
  explicit UnbatchIterator(std::unique_ptr<Iterator> in) : items_(std::move(in)) {}
  Status GetNext(Element& out, bool& end) override { return items_.Next(out, end, "unbatch"); }

 private:
  BatchItems items_;
};

class RebatchIterator final : public Iterator {
 public:
  RebatchIterator(std::unique_ptr<Iterator> in, const std::vector<int64_t>& sizes, bool drop,
                  const std::shared_ptr<ReadCounters>& counters)
      : items_(std::move(in)), sizes_(sizes), drop_(drop), counters_(counters) {}

  Status GetNext(Element& out, bool& end) override {
    out = Element();
    out.kind = Element::Kind::kBatch;
    end = false;
    if (done_) {
      end = true;
      return Status::OK();
    }
    const size_t size = static_cast<size_t>(sizes_[turn_]);
    turn_ = (turn_ + 1) % sizes_.size();
    if (size == 0) {
      // An empty batch, without a read: like TensorFlow's kernel, the
      // iterator finds the end of its input only when a size above 0 needs
      // an item (or a short batch was the last), so the sizes of 0 after a
      // full last batch still give theirs.
      return Status::OK();
    }
    while (out.items.size() < size) {
      Element e;
      bool in_end = false;
      TFDIST_RETURN_IF_ERROR(items_.Next(e, in_end, "rebatch"));
      if (in_end) {
        done_ = true;
        break;
      }
      out.items.push_back(std::move(e));
    }
    end = EndsBatches(out, size, drop_, counters_.get());
    return Status::OK();
  }

 private:
  BatchItems items_;
  const std::vector<int64_t>& sizes_;
  bool drop_;
  std::shared_ptr<ReadCounters> counters_;
  size_t turn_ = 0;
  bool done_ = false;
};

class UnbatchDataset final : public Dataset {
 public:
  explicit UnbatchDataset(DatasetPtr input) : input_(std::move(input)) {}
  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    TFDIST_ASSIGN_OR_RETURN(auto in, input_->MakeIterator());
    return std::unique_ptr<Iterator>(std::make_unique<UnbatchIterator>(std::move(in)));
  }

 private:
  DatasetPtr input_;
};

class RebatchDataset final : public Dataset {
 public:
  RebatchDataset(DatasetPtr input, std::vector<int64_t> sizes, bool drop,
                 std::shared_ptr<ReadCounters> counters)
      : input_(std::move(input)),
        sizes_(std::move(sizes)),
        drop_(drop),
        counters_(std::move(counters)) {}
  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    TFDIST_ASSIGN_OR_RETURN(auto in, input_->MakeIterator());
    return std::unique_ptr<Iterator>(
        std::make_unique<RebatchIterator>(std::move(in), sizes_, drop_, counters_));
  }

 private:
  DatasetPtr input_;
  std::vector<int64_t> sizes_;
  bool drop_;
  std::shared_ptr<ReadCounters> counters_;
};

// An iterator of a dataset it keeps alive (iterators refer to their
// dataset's members).
class OwningIterator final : public Iterator {
 public:
  OwningIterator(DatasetPtr dataset, std::unique_ptr<Iterator> it)
      : dataset_(std::move(dataset)), it_(std::move(it)) {}
  Status GetNext(Element& out, bool& end) override { return it_->GetNext(out, end); }

 private:
  DatasetPtr dataset_;  // destroyed after it_
  std::unique_ptr<Iterator> it_;
};

class CacheDataset final : public Dataset {
 public:
  CacheDataset(DatasetPtr input, std::function<Result<DatasetPtr>()> rebuild)
      : input_(std::move(input)), rebuild_(std::move(rebuild)) {}

  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    if (!first_taken_.exchange(true)) return input_->MakeIterator();
    TFDIST_ASSIGN_OR_RETURN(DatasetPtr fresh, rebuild_());
    TFDIST_ASSIGN_OR_RETURN(auto it, fresh->MakeIterator());
    return std::unique_ptr<Iterator>(std::make_unique<OwningIterator>(fresh, std::move(it)));
  }

 private:
  DatasetPtr input_;
  std::function<Result<DatasetPtr>()> rebuild_;
  mutable std::atomic<bool> first_taken_{false};
};

class ConcatenateDataset final : public Dataset {
 public:
  ConcatenateDataset(DatasetPtr first, DatasetPtr second)
      : first_(std::move(first)), second_(std::move(second)) {}

  Result<std::unique_ptr<Iterator>> MakeIterator() const override {
    class It final : public Iterator {
     public:
      It(std::unique_ptr<Iterator> first, const Dataset& second)
          : current_(std::move(first)), second_(second) {}
      Status GetNext(Element& out, bool& end) override {
        for (;;) {
          TFDIST_RETURN_IF_ERROR(current_->GetNext(out, end));
          if (!end || on_second_) return Status::OK();
          // The second input's iterator is made when the first ends.
          TFDIST_ASSIGN_OR_RETURN(current_, second_.MakeIterator());
          on_second_ = true;
        }
      }

     private:
      std::unique_ptr<Iterator> current_;
      const Dataset& second_;
      bool on_second_ = false;
    };
    TFDIST_ASSIGN_OR_RETURN(auto first, first_->MakeIterator());
    return std::unique_ptr<Iterator>(std::make_unique<It>(std::move(first), *second_));
  }

 private:
  DatasetPtr first_, second_;
};

}  // namespace

DatasetPtr NewConcatenateDataset(DatasetPtr first, DatasetPtr second) {
  return std::make_shared<ConcatenateDataset>(std::move(first), std::move(second));
}

DatasetPtr NewIntsDataset(std::vector<int64_t> values) {
  return std::make_shared<IntsDataset>(std::move(values));
}

DatasetPtr NewUnbatchDataset(DatasetPtr input) {
  return std::make_shared<UnbatchDataset>(std::move(input));
}

DatasetPtr NewRebatchDataset(DatasetPtr input, std::vector<int64_t> sizes, bool drop_remainder,
                             std::shared_ptr<ReadCounters> counters) {
  return std::make_shared<RebatchDataset>(std::move(input), std::move(sizes), drop_remainder,
                                          std::move(counters));
}

DatasetPtr NewCacheDataset(DatasetPtr input, std::function<Result<DatasetPtr>()> rebuild) {
  return std::make_shared<CacheDataset>(std::move(input), std::move(rebuild));
}

}  // namespace tfdist::data
