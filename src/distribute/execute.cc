// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The streaming form of PlanLayout: the same decision and per-worker
// pipelines, with batches split and sharded as they are read.

#include "tfdist/distribute/execute.h"

#include <fmt/format.h>

#include <chrono>

#include "plan.h"
#include "policy.h"

namespace tfdist::dist {

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
    std::vector<std::vector<data::Element>> pieces;
    const auto start = std::chrono::steady_clock::now();
    if (eos) {
      input_done_ = true;
      if (splitter_) splitter_->Finish(pieces);
    } else if (batched_) {
      splitter_->Add(std::move(e.items), pieces);
    } else {
      pieces.emplace_back();
      pieces.back().push_back(std::move(e));
    }
    split_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (auto& piece : pieces) {
      if (static_cast<int64_t>(pieces_ % static_cast<uint64_t>(keep_every_)) == keep_index_) {
        ready_.push_back(std::move(piece));
        // Index files: the kept records are read now, by offset (the
        // deque keeps the pieces in place until Fetch).
        if (deferred_) fetcher_.Add(std::span(ready_.back()));
      }
      ++pieces_;
    }
    if (deferred_) TFDIST_RETURN_IF_ERROR(fetcher_.Fetch());
    // DATA: every worker must get a share, unless there is nothing at all.
    if (input_done_ && keep_every_ > 1 && pieces_ > 0 &&
        pieces_ < static_cast<uint64_t>(keep_every_)) {
      return Status::InvalidArgument(fmt::format(
          "DATA sharding needs at least {0} {1} for {0} workers, so that each worker gets "
          "one; found {2}",
          keep_every_, batched_ ? "per-replica batches" : "elements", pieces_));
    }
  }
}

Result<Execution> Execution::Plan(const data::Pipeline& original,
                                  const DistributeOptions& options,
                                  const data::BuildOptions& build) {
  TFDIST_ASSIGN_OR_RETURN(const Distribution dist, PlanDistribution(original, options, build));
  const Topology& t = options.topology;
  const Structure& s = dist.structure;
  Execution ex;
  ex.topology_ = t;
  ex.decision_ = dist.decision;
  const Decision& d = ex.decision_;
  ex.batched_ = s.batched;
  // DATA with index files: the workers' pipelines give records without
  // payloads; each worker reads those it keeps (WorkerStream::Next).
  ex.deferred_ = dist.build.deferred_payloads;
  if (options.worker) {
    ex.workers_.push_back(*options.worker);
  } else {
    for (int64_t w = 0; w < t.workers; ++w) ex.workers_.push_back(w);
  }
  // A dataset of its own for each worker, even where all run the same
  // pipeline: each counts its own epochs, so their shuffles agree.
  for (int64_t w : ex.workers_) {
    const std::optional<data::Pipeline> shard = dist.WorkerShard(options, w);
    const data::BuildOptions b = dist.WorkerBuild(options, w);
    TFDIST_ASSIGN_OR_RETURN(auto dataset, data::BuildDataset(shard ? *shard : dist.pipeline, b));
    ex.plans_.push_back({w, std::move(dataset), b.bytes_read});
  }
  ex.drops_short_step_ = s.batched && t.workers == 1 && d.split == Split::kNone && s.drop_remainder;
  return ex;
}

uint64_t Execution::FileBytesRead(int64_t worker) const {
  for (const WorkerPlan& p : plans_) {
    if (p.worker == worker) return p.bytes_read->load();
  }
  return 0;
}

Result<std::unique_ptr<WorkerStream>> Execution::Open(int64_t worker) const {
  const WorkerPlan* plan = nullptr;
  for (const WorkerPlan& p : plans_) {
    if (p.worker == worker) plan = &p;
  }
  if (plan == nullptr) {
    return Status::Internal(fmt::format("worker {} is not part of this execution", worker));
  }
  std::unique_ptr<WorkerStream> stream(new WorkerStream);
  TFDIST_ASSIGN_OR_RETURN(stream->it_, plan->dataset->MakeIterator());
  stream->batched_ = batched_;
  stream->deferred_ = deferred_;
  const Topology& t = topology_;
  if (batched_) {
    std::vector<int64_t> sizes;
    if (decision_.split == Split::kBatchSizes) {
      sizes = BatchSizesForWorker(*decision_.global_batch_size, t.workers, t.replicas, worker);
    }
    stream->splitter_ = std::make_unique<BatchSplitter>(decision_.split, std::move(sizes),
                                                        t.num_replicas_in_sync(), false);
  }
  if (decision_.applied == AutoShardPolicy::kData && t.workers > 1) {
    stream->keep_every_ = t.workers;
    stream->keep_index_ = worker;
  }
  return stream;
}

}  // namespace tfdist::dist
