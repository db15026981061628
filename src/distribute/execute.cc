// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Each worker's stream of per-replica batches: its pipeline read, the global
// batches split (split.h), DATA's share kept (steps.h), kept records fetched.

#include "tfdist/distribute/execute.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <chrono>

#include "plan.h"
#include "tfdist/distribute/steps.h"

namespace tfdist::dist {
namespace {

// One iterator read once, its elements handed to several readers in order:
// each reader gets a copy; an element is dropped once all took it.
class Tee {
 public:
  Tee(std::unique_ptr<data::Iterator> it, size_t readers)
      : it_(std::move(it)), next_(readers, 0) {}

  Status Next(size_t reader, data::Element& out, bool& end) {
    end = false;
    uint64_t& next = next_[reader];
    if (next == base_ + buffer_.size()) {
      if (!status_.ok()) return status_;
      if (done_) {
        end = true;
        return Status::OK();
      }
      data::Element e;
      status_ = it_->GetNext(e, done_);
      if (!status_.ok()) return status_;
      if (done_) {
        end = true;
        return Status::OK();
      }
      buffer_.push_back(std::move(e));
    }
    out = buffer_[static_cast<size_t>(next - base_)];
    ++next;
    const uint64_t slowest = *std::min_element(next_.begin(), next_.end());
    while (base_ < slowest) {
      buffer_.pop_front();
      ++base_;
    }
    return Status::OK();
  }

 private:
  std::unique_ptr<data::Iterator> it_;
  std::deque<data::Element> buffer_;  // elements base_, base_ + 1, ...
  uint64_t base_ = 0;
  std::vector<uint64_t> next_;  // per reader: the element it takes next
  bool done_ = false;
  Status status_;
};

class TeeReader : public data::Iterator {
 public:
  TeeReader(std::shared_ptr<Tee> tee, size_t reader) : tee_(std::move(tee)), reader_(reader) {}
  Status GetNext(data::Element& out, bool& end) override { return tee_->Next(reader_, out, end); }

 private:
  std::shared_ptr<Tee> tee_;
  size_t reader_;
};

}  // namespace

void WorkerStream::Take(data::Element* e) {
  const auto start = std::chrono::steady_clock::now();
  pieces_.clear();
  if (e == nullptr) {
    if (splitter_) splitter_->Finish(pieces_);
  } else if (batched_) {
    if (audit_) audit_->Input(e->items.size());
    splitter_->Add(std::move(e->items), pieces_);
  } else {
    pieces_.emplace_back();
    pieces_.back().push_back(std::move(*e));
  }
  split_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto& piece : pieces_) {
    if (audit_) audit_->Output(piece.size());
    if (!shards_data_ || KeepsPiece(made_, workers_, worker_)) {
      ready_.push_back(std::move(piece));
      // Index files: the kept records are read now, by offset (the deque
      // keeps the pieces in place until Fetch).
      if (deferred_) fetcher_.Add(std::span(ready_.back()));
    }
    ++made_;
  }
}

Status WorkerStream::Next(std::vector<data::Element>& out, bool& end) {
  end = false;
  for (;;) {
    if (!ready_.empty()) {
      out = std::move(ready_.front());
      ready_.pop_front();
      return Status::OK();
    }
    if (input_done_) {
      end = true;
      return Status::OK();
    }
    data::Element e;
    bool eos = false;
    TFDIST_RETURN_IF_ERROR(it_->GetNext(e, eos));
    if (eos) {
      input_done_ = true;
      Take(nullptr);
    } else {
      ++elements_read_;
      Take(&e);
    }
    if (deferred_) TFDIST_RETURN_IF_ERROR(fetcher_.Fetch());
    // DATA: every worker must get a share, unless there is nothing at all.
    if (input_done_ && shards_data_) {
      TFDIST_RETURN_IF_ERROR(CheckDataShare(made_, workers_, batched_));
    }
  }
}

Result<Execution> Execution::Plan(const data::Pipeline& original,
                                  const DistributeOptions& options,
                                  const data::BuildOptions& build) {
  TFDIST_ASSIGN_OR_RETURN(const Distribution dist, PlanDistribution(original, options, build));
  Execution ex;
  ex.topology_ = options.topology;
  ex.decision_ = dist.decision;
  // DATA with index files: the workers' pipelines give records without
  // payloads; each worker reads those it keeps (WorkerStream::Next).
  ex.deferred_ = dist.build.deferred_payloads;
  ex.same_for_all_ = dist.SamePipelineForAll(options);
  if (options.worker) {
    ex.workers_.push_back(*options.worker);
  } else {
    for (int64_t w = 0; w < ex.topology_.workers; ++w) ex.workers_.push_back(w);
  }
  // A dataset of its own for each worker, even where all run the same
  // pipeline: each counts its own epochs, so their shuffles agree.
  for (int64_t w : ex.workers_) {
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
  stream->deferred_ = deferred_;
  if (decision_.batched) {
    stream->splitter_.emplace(SplitRule::For(decision_, topology_, worker));
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
  auto tee = std::make_shared<Tee>(std::move(it), workers_.size());
  for (size_t i = 0; i < workers_.size(); ++i) {
    std::unique_ptr<WorkerStream> stream = NewStream(workers_[i], options);
    stream->it_ = std::make_unique<TeeReader>(tee, i);
    streams.push_back(std::move(stream));
  }
  return streams;
}

}  // namespace tfdist::dist
