// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Each worker's stream of per-replica batches: its pipeline read, the global
// batches split (split.h), DATA's share kept (steps.h), kept records fetched.

#include "tfdist/distribute/execute.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <chrono>

#include "plan.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/distribute/steps.h"

namespace tfdist::dist {
// One iterator read once, its elements handed to several readers in order:
// each reader shares each element (const); an element is dropped once all
// took it. Each take costs O(1), whatever the number of readers.
class ElementTee {
 public:
  ElementTee(std::unique_ptr<data::Iterator> it, size_t readers)
      : it_(std::move(it)), readers_(readers), next_(readers, 0) {}

  Status Next(size_t reader, std::shared_ptr<const data::Element>& out, bool& end) {
    end = false;
    uint64_t& next = next_[reader];
    if (next == base_ + buffer_.size()) {
      if (!status_.ok()) return status_;
      if (done_) {
        end = true;
        return Status::OK();
      }
      auto e = std::make_shared<data::Element>();
      status_ = it_->GetNext(*e, done_);
      if (!status_.ok()) return status_;
      if (done_) {
        end = true;
        return Status::OK();
      }
      buffer_.push_back(std::move(e));
      taken_.push_back(0);
    }
    const size_t i = static_cast<size_t>(next - base_);
    out = buffer_[i];
    ++next;
    ++taken_[i];
    while (!taken_.empty() && taken_.front() == readers_) {
      buffer_.pop_front();
      taken_.pop_front();
      ++base_;
    }
    return Status::OK();
  }

 private:
  std::unique_ptr<data::Iterator> it_;
  size_t readers_;
  std::deque<std::shared_ptr<const data::Element>> buffer_;  // elements base_, base_ + 1, ...
  std::deque<size_t> taken_;  // per element of buffer_: the readers that took it
  uint64_t base_ = 0;
  std::vector<uint64_t> next_;  // per reader: the element it takes next
  bool done_ = false;
  Status status_;
};

void WorkerStream::TakeElements(uint64_t n, uint64_t piece_size) {
  if (n == 0) return;
  const size_t take = static_cast<size_t>(n);
  if (!shared_ && at_ == 0 && current_.empty() && 2 * take >= batch_.size()) {
    // A piece that starts the input batch, at least half of it, is the
    // batch itself cut to size (it keeps the batch's buffer); the rest
    // moves to a batch of its own.
    std::vector<data::Element> rest(
        std::make_move_iterator(batch_.begin() + static_cast<std::ptrdiff_t>(take)),
        std::make_move_iterator(batch_.end()));
    batch_.resize(take);
    current_ = std::move(batch_);
    batch_ = std::move(rest);
    return;
  }
  // Sized for the whole piece at once, but a huge batch_size must not
  // allocate up front: past 64Ki elements the room doubles as it fills.
  const size_t need = current_.size() + take;
  if (current_.capacity() < need) {
    const size_t room = std::max<size_t>(2 * current_.capacity(), size_t{1} << 16);
    current_.reserve(std::max(need, static_cast<size_t>(std::min<uint64_t>(piece_size, room))));
  }
  const auto at = static_cast<std::ptrdiff_t>(at_), end = at + static_cast<std::ptrdiff_t>(take);
  if (shared_) {
    current_.insert(current_.end(), shared_->items.begin() + at, shared_->items.begin() + end);
  } else {
    current_.insert(current_.end(), std::make_move_iterator(batch_.begin() + at),
                    std::make_move_iterator(batch_.begin() + end));
  }
  at_ += take;
}

void WorkerStream::Piece(std::vector<data::Element> piece) {
  if (audit_) audit_->Output(piece.size());
  const bool kept = !shards_data_ || KeepsPiece(made_, workers_, worker_);
  ++made_;
  if (!kept) return;
  ready_.push_back(std::move(piece));
  // Read by index: the kept records are fetched by offset (the deque keeps the
  // pieces in place until Fetch).
  if (read_by_index_) fetcher_.Add(std::span(ready_.back()));
}

bool WorkerStream::CutPieces() {
  // DATA over the legacy split passes over the other workers' pieces
  // without cutting them: a worker's work per batch grows with its R
  // pieces, not with the N of the split.
  const bool pass = shards_data_ && rule_->split() == Split::kLegacy;
  Cut cut;
  for (;;) {
    if (pass) {
      const uint64_t W = static_cast<uint64_t>(workers_);
      uint64_t elements = 0;
      made_ += rule_->Pass((static_cast<uint64_t>(worker_) + W - made_ % W) % W, elements);
      at_ += static_cast<size_t>(elements);
    }
    if (!rule_->Next(cut)) return false;
    TakeElements(cut.take, cut.size);
    if (!cut.emit) continue;
    const size_t before = ready_.size();
    Piece(std::move(current_));
    current_.clear();
    if (ready_.size() > before && !read_by_index_) return true;
  }
}

Status WorkerStream::Read() {
  data::Element own;
  std::shared_ptr<const data::Element> shared;
  bool eos = false;
  if (tee_) {
    TFDIST_RETURN_IF_ERROR(tee_->Next(reader_, shared, eos));
  } else {
    TFDIST_RETURN_IF_ERROR(it_->GetNext(own, eos));
  }
  if (eos) {
    input_done_ = true;
    // DATA: every worker must get a share, unless there is nothing at all.
    // Every piece is made by now: DATA splits by the legacy rule or not at
    // all, which cut a batch whole before asking for the next.
    if (shards_data_) TFDIST_RETURN_IF_ERROR(CheckDataShare(made_, workers_, batched_));
    if (rule_) rule_->End();
    return Status::OK();
  }
  ++elements_read_;
  if (!batched_) {
    std::vector<data::Element> one;
    one.push_back(shared ? *shared : std::move(own));
    Piece(std::move(one));
    return Status::OK();
  }
  if (shared) {
    shared_ = std::move(shared);
    batch_.clear();
  } else {
    shared_.reset();
    batch_ = std::move(own.items);
  }
  at_ = 0;
  if (audit_) audit_->Input(Items().size());
  rule_->Begin(Items().size());
  return Status::OK();
}

Status WorkerStream::Next(std::vector<data::Element>& out, bool& end) {
  end = false;
  for (;;) {
    if (!ready_.empty()) {
      out = std::move(ready_.front());
      ready_.pop_front();
      return Status::OK();
    }
    if (batched_) {
      const auto start = std::chrono::steady_clock::now();
      const bool cut = CutPieces();
      split_seconds_ +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (read_by_index_ && !ready_.empty()) TFDIST_RETURN_IF_ERROR(fetcher_.Fetch());
      if (cut || !ready_.empty()) continue;
    }
    if (input_done_) {
      end = true;
      return Status::OK();
    }
    TFDIST_RETURN_IF_ERROR(Read());
    if (!batched_ && read_by_index_ && !ready_.empty()) TFDIST_RETURN_IF_ERROR(fetcher_.Fetch());
  }
}

Result<Execution> Execution::Plan(const data::Pipeline& original, const DistributeOptions& options,
                                  const data::BuildOptions& build) {
  TFDIST_ASSIGN_OR_RETURN(const Distribution dist, PlanDistribution(original, options, build));
  Execution ex;
  ex.topology_ = options.topology;
  ex.decision_ = dist.decision;
  // DATA read by index: the workers' pipelines give record ids; each worker
  // fetches the payloads of those it keeps (WorkerStream::Next).
  ex.read_by_index_ = dist.build.read_by_index;
  ex.record_ids_ = dist.build.record_ids;
  ex.same_for_all_ = dist.SamePipelineForAll(options);
  ex.tally_ = dist.tally;
  if (options.worker) {
    ex.workers_.push_back(*options.worker);
  } else {
    for (int64_t w = 0; w < ex.topology_.workers; ++w) ex.workers_.push_back(w);
  }
  // A dataset of its own for each worker, even where all run the same
  // pipeline: each counts its own epochs, so their shuffles agree.
  for (int64_t w : ex.workers_) {
    if (w % 256 == 0 && Interrupted()) return Status::Interrupted();
    WorkerPlan plan;
    plan.worker = w;
    plan.pipeline = dist.WorkerPipeline(ex.topology_, w).value_or(dist.pipeline);
    plan.build = dist.WorkerBuild(options, w);
    TFDIST_ASSIGN_OR_RETURN(plan.dataset, data::BuildDataset(plan.pipeline, plan.build));
    ex.plans_.push_back(std::move(plan));
  }
  return ex;
}

bool Execution::drops_short_step() const { return DropsShortStep(decision_, topology_); }

const Execution::WorkerPlan& Execution::PlanOf(int64_t worker) const {
  // All workers (the usual case): at their index, without a search.
  if (static_cast<uint64_t>(worker) < plans_.size() &&
      plans_[static_cast<size_t>(worker)].worker == worker) {
    return plans_[static_cast<size_t>(worker)];
  }
  const auto it = std::find_if(plans_.begin(), plans_.end(),
                               [worker](const WorkerPlan& p) { return p.worker == worker; });
  assert(it != plans_.end() && "REQUIRES: the worker is one of workers()");
  return *it;
}

uint64_t Execution::FileBytesRead(int64_t worker) const {
  return Counters(worker).bytes_read.load();
}

const data::ReadCounters& Execution::Counters(int64_t worker) const {
  return *PlanOf(worker).build.counters;
}

Result<std::vector<std::string>> Execution::FileNamesOf(int64_t worker, uint64_t limit) const {
  const WorkerPlan& plan = PlanOf(worker);
  const PipelineShape shape = Analyze(plan.pipeline);
  std::vector<std::string> names;
  if (!shape.reader) return names;
  data::BuildOptions b = plan.build;
  b.counters.reset();
  TFDIST_ASSIGN_OR_RETURN(auto dataset, data::BuildDataset(FileNames(plan.pipeline, shape), b));
  TFDIST_ASSIGN_OR_RETURN(auto it, dataset->MakeIterator());
  while (names.size() < limit) {
    if (names.size() % 1024 == 0 && Interrupted()) return Status::Interrupted();
    data::Element e;
    bool end = false;
    TFDIST_RETURN_IF_ERROR(it->GetNext(e, end));
    if (end) break;
    names.push_back(std::move(e.bytes));
  }
  return names;
}

std::unique_ptr<WorkerStream> Execution::NewStream(int64_t worker,
                                                   const StreamOptions& options) const {
  std::unique_ptr<WorkerStream> stream(new WorkerStream);
  stream->batched_ = decision_.batched;
  stream->read_by_index_ = read_by_index_;
  stream->fetcher_ = data::PayloadFetcher(record_ids_);
  if (decision_.batched) {
    stream->rule_.emplace(SplitRule::For(decision_, topology_, worker));
    if (options.audit_split && decision_.split == Split::kBatchSizes) {
      stream->audit_.emplace(topology_.num_replicas_in_sync());
    }
  }
  stream->shards_data_ = decision_.ShardsData(topology_);
  stream->workers_ = topology_.workers;
  stream->worker_ = worker;
  return stream;
}

Result<std::unique_ptr<WorkerStream>> Execution::Open(int64_t worker,
                                                      const StreamOptions& options) const {
  std::unique_ptr<WorkerStream> stream = NewStream(worker, options);
  TFDIST_ASSIGN_OR_RETURN(stream->it_, PlanOf(worker).dataset->MakeIterator());
  return stream;
}

Result<std::vector<std::unique_ptr<WorkerStream>>> Execution::OpenAll(
    const StreamOptions& options) const {
  std::vector<std::unique_ptr<WorkerStream>> streams;
  if (!reads_once()) {
    for (int64_t w : workers_) {
      TFDIST_ASSIGN_OR_RETURN(auto stream, Open(w, options));
      streams.push_back(std::move(stream));
    }
    return streams;
  }
  TFDIST_ASSIGN_OR_RETURN(auto it, plans_.front().dataset->MakeIterator());
  auto tee = std::make_shared<ElementTee>(std::move(it), workers_.size());
  for (size_t i = 0; i < workers_.size(); ++i) {
    std::unique_ptr<WorkerStream> stream = NewStream(workers_[i], options);
    stream->tee_ = tee;
    stream->reader_ = i;
    streams.push_back(std::move(stream));
  }
  return streams;
}

}  // namespace tfdist::dist
