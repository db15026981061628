// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// PlanLayout: every worker's stream collected and dealt out into global
// steps; Summarize: the totals of a layout.

#include "tfdist/distribute/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "tfdist/distribute/execute.h"
#include "tfdist/distribute/steps.h"

namespace tfdist::dist {
namespace {

using Batches = std::vector<std::vector<data::Element>>;

// How many elements of each worker's pipeline a layout reads, and whether
// reading more is an error. With max_steps, enough for that many steps on
// every worker: DATA keeps one piece in W, so W times as much; more is
// harmless. The plan is kept in memory, so never more than max_elements:
// beyond that, max_steps is an error as an endless pipeline is.
struct ElementLimit {
  int64_t limit;
  bool is_error;
};

ElementLimit LimitOf(const DistributeOptions& o) {
  const Topology& t = o.topology;
  const int64_t wanted =
      o.max_steps ? (*o.max_steps + 1) * t.replicas * t.workers + 1 : o.max_elements;
  return {std::min(wanted, o.max_elements), !o.max_steps || wanted > o.max_elements};
}

Status TooManyElements(int64_t worker, int64_t limit, std::optional<int64_t> max_steps) {
  if (max_steps) {
    return Status::InvalidArgument(
               fmt::format("worker {} produced more than {} elements before step {}: layout keeps "
                           "its plan in memory and plans at most {} elements per worker",
                           worker, limit, *max_steps, limit))
        .WithAdvice(Remedy::kFewerSteps);
  }
  return Status::InvalidArgument(
             fmt::format("worker {} produced more than {} elements: does the pipeline repeat() "
                         "forever?",
                         worker, limit))
      .WithAdvice(Remedy::kPlanSteps);
}

// Worker `w`'s whole stream into `wl` (batches, or elements when unbatched).
Status Collect(WorkerStream& stream, bool batched, WorkerLayout& wl) {
  for (;;) {
    std::vector<data::Element> batch;
    bool end = false;
    TFDIST_RETURN_IF_ERROR(stream.Next(batch, end));
    if (end) return Status::OK();
    if (batched) {
      wl.batches.push_back(std::move(batch));
    } else {
      for (auto& e : batch) wl.elements.push_back(std::move(e));
    }
  }
}

// Global steps: step k takes R batches from every worker; a replica without
// data gets an empty batch while any replica has data (NextStep).
std::vector<Step> DealSteps(const std::vector<WorkerLayout>& workers, const Topology& t,
                            std::optional<int64_t> max_steps, bool drops_short_step) {
  const size_t R = static_cast<size_t>(t.replicas);
  size_t steps = 0;
  for (const auto& w : workers) steps = std::max(steps, (w.batches.size() + R - 1) / R);
  if (max_steps) steps = std::min(steps, static_cast<size_t>(*max_steps));
  std::vector<Step> out;
  for (size_t k = 0; k < steps; ++k) {
    Step step;
    step.step = static_cast<int64_t>(k) + 1;
    bool any_batch = false, any_missing = false;
    for (const auto& w : workers) {
      for (size_t r = 0; r < R; ++r) {
        ReplicaBatch rb;
        rb.worker = w.worker;
        rb.replica = static_cast<int64_t>(r);
        const size_t i = k * R + r;
        if (i < w.batches.size()) {
          rb.elements = w.batches[i];
          any_batch = true;
        } else {
          rb.padding = true;
          any_missing = true;
        }
        step.batches.push_back(std::move(rb));
      }
    }
    const StepKind kind = NextStep(any_batch, any_missing, drops_short_step);
    if (kind == StepKind::kEnd) break;
    step.dropped = kind == StepKind::kDropped;
    out.push_back(std::move(step));
    if (out.back().dropped) break;
  }
  return out;
}

// FILE sharding over uneven files: who reads more, and who sits idle.
std::optional<Warning> UnevenFiles(const Layout& l) {
  std::vector<uint64_t> records;
  for (const WorkerLayout& w : l.workers) {
    uint64_t n = w.elements.size();
    for (const auto& b : w.batches) n += b.size();
    records.push_back(n);
  }
  uint64_t padded_steps = 0;
  for (const Step& step : l.steps) {
    padded_steps += std::any_of(step.batches.begin(), step.batches.end(),
                                [](const ReplicaBatch& b) { return b.padding; });
  }
  return UnevenFilesWarning(records, l.decision.batched, padded_steps);
}

}  // namespace

Result<Layout> PlanLayout(const data::Pipeline& original, const DistributeOptions& options,
                          const data::BuildOptions& build) {
  // Every worker runs: the steps, the uneven files' counts and DATA's share
  // need them all; options.worker only selects what is shown.
  DistributeOptions all = options;
  all.worker.reset();
  TFDIST_ASSIGN_OR_RETURN(const Execution ex, Execution::Plan(original, all, build));
  const Topology& t = options.topology;
  Layout layout;
  layout.topology = t;
  layout.api = options.api;
  layout.decision = ex.decision();
  Decision& d = layout.decision;

  const ElementLimit limit = LimitOf(options);
  StreamOptions so;
  so.max_elements = limit.limit;
  so.audit_split = true;
  {
    TFDIST_ASSIGN_OR_RETURN(auto streams, ex.OpenAll(so));
    for (size_t i = 0; i < streams.size(); ++i) {
      WorkerStream& stream = *streams[i];
      WorkerLayout& wl = layout.workers.emplace_back();
      wl.worker = ex.workers()[i];
      TFDIST_RETURN_IF_ERROR(Collect(stream, d.batched, wl));
      if (stream.exceeded() && limit.is_error) {
        return TooManyElements(wl.worker, limit.limit, options.max_steps);
      }
      // Added once: for the first worker whose split differs.
      if (const SplitAudit* audit = stream.audit();
          audit != nullptr && audit->differs() && !d.HasWarning(WarningKind::kGuideVersusCode)) {
        d.warnings.push_back(GuideVersusCodeWarning(audit->crosses()));
      }
      wl.bytes_read = stream.fetched_bytes();
    }
  }  // the streams' readers closed: their bytes are counted
  for (WorkerLayout& wl : layout.workers) {
    TFDIST_ASSIGN_OR_RETURN(wl.files, ex.FileNamesOf(wl.worker));
    wl.bytes_read += ex.FileBytesRead(ex.reads_once() ? ex.workers().front() : wl.worker);
  }

  if (d.batched) layout.steps = DealSteps(layout.workers, t, options.max_steps, ex.drops_short_step());
  if (d.ShardsFiles(t)) {
    if (std::optional<Warning> w = UnevenFiles(layout)) d.warnings.push_back(std::move(*w));
  }
  // Without batches there are no steps: max_steps N shows N elements a worker.
  if (!d.batched && options.max_steps) {
    for (WorkerLayout& wl : layout.workers) {
      if (static_cast<int64_t>(wl.elements.size()) > *options.max_steps) {
        wl.elements.resize(static_cast<size_t>(*options.max_steps));
      }
    }
  }
  if (options.worker) {
    WorkerLayout only = std::move(layout.workers[static_cast<size_t>(*options.worker)]);
    layout.workers.clear();
    layout.workers.push_back(std::move(only));
    for (Step& step : layout.steps) {
      std::erase_if(step.batches,
                    [&](const ReplicaBatch& b) { return b.worker != *options.worker; });
    }
  }
  return layout;
}

LayoutSummary Summarize(const Layout& l) {
  LayoutSummary out;
  out.decision = l.decision;
  out.topology = l.topology;
  std::map<int64_t, WorkerSummary> rows;
  for (const auto& w : l.workers) {
    WorkerSummary& r = rows[w.worker];
    r.worker = w.worker;
    r.files = w.files.size();
    r.bytes_read = w.bytes_read;
    for (const auto& e : w.elements) {
      ++r.records;
      r.bytes += e.PayloadBytes();
    }
  }
  for (const Step& s : l.steps) {
    uint64_t total = 0;
    std::map<int64_t, bool> has_data;
    for (const ReplicaBatch& b : s.batches) {
      WorkerSummary& r = rows[b.worker];
      if (b.padding) {
        ++r.empty_batches;
        continue;
      }
      ++r.batches;
      if (b.elements.empty()) ++r.empty_batches;
      has_data[b.worker] = true;
      r.records += b.elements.size();
      for (const auto& e : b.elements) r.bytes += e.PayloadBytes();
      total += b.elements.size();
    }
    for (auto& [w, r] : rows) r.idle_steps += has_data[w] ? 0 : 1;
    const auto& g = l.decision.global_batch_size;
    if (g && total < static_cast<uint64_t>(*g)) ++out.short_steps;
    out.dropped_step = out.dropped_step || s.dropped;
  }
  out.steps = l.steps.size();
  for (auto& [w, r] : rows) out.workers.push_back(r);
  return out;
}

}  // namespace tfdist::dist
