// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// StreamLayout: every worker's stream dealt out into global steps, handed
// to a sink as they are made, the summary kept on the way; PlanLayout and
// SummarizeLayout are sinks over it.

#include "tfdist/distribute/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <span>
#include <unordered_set>

#include "tfdist/base/interrupt.h"
#include "tfdist/distribute/execute.h"
#include "tfdist/distribute/steps.h"
#include "tfdist/io/file_count.h"

namespace tfdist::dist {
namespace {

// One replica's batch of a step into its worker's row: padding is an empty
// batch; a dropped step's records are dropped. Returns the records it held.
uint64_t CountBatch(const ReplicaBatch& b, bool dropped_step, WorkerSummary& r) {
  if (b.padding) {
    ++r.empty_batches;
    return 0;
  }
  const uint64_t n = data::Leaves(b.elements);
  if (dropped_step) {
    r.dropped_step += n;
  } else {
    r.AddBatch(n);
    r.bytes += data::PayloadBytes(b.elements);
  }
  return n;
}

// The error for a pipeline that never ends when no max_steps bounds the plan.
Status CheckEnds(const data::Pipeline& pipeline, const DistributeOptions& options) {
  if (options.max_steps) return Status::OK();
  const PipelineShape shape = Analyze(pipeline);
  if (!shape.endless_at) return Status::OK();
  const data::Op& op = pipeline.ops[*shape.endless_at];
  return Status(data::PositionError(pipeline.text, op.pos,
                                    "repeat() without a count repeats forever, so the layout "
                                    "would never end."))
      .WithAdvice(Remedy::kPlanSteps);
}

// The file names a pipeline's reader can get, whatever its shards and
// shuffles take: a list of names followed only by shuffle, shard and
// prefetch before the reader, and no other files joined after it; nullptr
// otherwise.
const StringList* ListedFiles(const data::Pipeline& p) {
  const PipelineShape s = Analyze(p);
  if (!s.reader) return nullptr;
  for (size_t i = *s.reader + 1; i < p.ops.size(); ++i) {
    if (std::holds_alternative<data::ConcatenateOp>(p.ops[i].params)) return nullptr;
  }
  if (const auto* t = std::get_if<data::TFRecordOp>(&p.ops[0].params)) return &t->files;
  const auto* listed = std::get_if<data::FromTensorSlicesOp>(&p.ops[0].params);
  if (listed == nullptr || listed->integers) return nullptr;
  for (size_t i = 1; i < *s.reader; ++i) {
    const data::OpParams& op = p.ops[i].params;
    if (!std::holds_alternative<data::ShuffleOp>(op) &&
        !std::holds_alternative<data::ShardOp>(op) &&
        !std::holds_alternative<data::PrefetchOp>(op)) {
      return nullptr;
    }
  }
  return &listed->names;
}

// The records in the files the workers' functions list that none of them
// opened (ListedFiles), counted; nullopt where a function does not list
// its files so. Memory: a pointer per distinct file listed.
Result<std::optional<uint64_t>> UnreadRecords(const Execution& ex,
                                              const data::FileReadTally& tally) {
  std::unordered_set<const std::string*> seen;
  StringList::Builder unread;
  std::optional<io::Compression> compression;
  for (int64_t w : ex.workers()) {
    const data::Pipeline& p = ex.PipelineOf(w);
    const StringList* names = ListedFiles(p);
    if (names == nullptr) return std::optional<uint64_t>();
    const io::Compression c = ReaderCompression(p, Analyze(p));
    if (compression && *compression != c) return std::optional<uint64_t>();
    compression = c;
    for (size_t i = 0; i < names->size(); ++i) {
      const std::string* path = data::InternPath(std::string((*names)[i]));
      if (seen.insert(path).second && !tally.Read(path)) unread.Add(*path);
    }
  }
  const StringList files = std::move(unread).Finish();
  if (files.size() == 0) return std::optional<uint64_t>(0);
  io::FileCounter counter;
  TFDIST_ASSIGN_OR_RETURN(io::FileCounts counts,
                          counter.Count(files, compression.value_or(io::Compression::kNone)));
  uint64_t records = 0;
  for (const io::FileRecords& c : counts.counts) records += c.records;
  return std::optional<uint64_t>(records);
}

// One pass of a streaming layout: the execution, its streams, and the
// summary kept as they are read.
class Streamer {
 public:
  Streamer(const Execution& ex, const DistributeOptions& options, const LayoutOptions& lo,
           LayoutSink& sink)
      : ex_(ex), options_(options), layout_options_(lo), sink_(sink) {
    summary_.decision = ex.decision();
    summary_.topology = options.topology;
    for (int64_t w : ex.workers()) summary_.workers.emplace_back().worker = w;
  }

  Status Run() {
    TFDIST_RETURN_IF_ERROR(sink_.Begin(summary_.decision));
    if (ex_.batched()) {
      TFDIST_RETURN_IF_ERROR(DealSteps());
    } else {
      TFDIST_RETURN_IF_ERROR(EachWorker());
    }
    // Records read from files (a function of range() reads none: its
    // records are those received and dropped, as before).
    if (const data::FileReadTally* tally = ex_.read_tally();
        tally && tally->totals().distinct > 0) {
      const data::FileReadTally::Totals totals = tally->totals();
      ReadOverlap& reads = summary_.reads.emplace();
      for (const WorkerSummary& r : summary_.workers) reads.total += r.records_read.value_or(0);
      reads.distinct = totals.distinct;
      reads.shared = totals.shared;
      reads.passes = std::max<int64_t>(passes_, 1);
      if (summary_.complete) {
        TFDIST_ASSIGN_OR_RETURN(reads.unread, UnreadRecords(ex_, *tally));
      }
    }
    Decision& d = summary_.decision;
    if (d.ShardsFiles(options_.topology)) {
      std::vector<uint64_t> records;
      for (const WorkerSummary& r : summary_.workers) records.push_back(r.records);
      if (auto w = UnevenFilesWarning(records, d.batched, padded_steps_)) {
        d.warnings.push_back(std::move(*w));
      }
    }
    AddAccountingWarnings(summary_);
    return sink_.End(summary_);
  }

 private:
  bool Shown(int64_t worker) const { return !options_.worker || *options_.worker == worker; }

  // Global steps: step k takes R batches from every worker; a replica
  // without data gets an empty batch while any replica has data (NextStep).
  Status DealSteps() {
    int64_t k = 1;
    bool ended_all = true;
    for (int64_t epoch = 1; ended_all && epoch <= options_.epochs; ++epoch) {
      passes_ = epoch;
      TFDIST_RETURN_IF_ERROR(DealEpoch(epoch, k, ended_all));
    }
    summary_.complete = ended_all;  // else max_steps came first
    for (size_t w = 0; w < summary_.workers.size(); ++w) {
      TFDIST_RETURN_IF_ERROR(FinishRow(summary_.workers[w], ex_.reads_once() ? 0 : w));
    }
    return Status::OK();
  }

  // One pass over every worker's stream (a new iterator each, as each epoch
  // of fit() makes): its steps numbered on from `k`; `ended_all` when the
  // data ended rather than max_steps.
  Status DealEpoch(int64_t epoch, int64_t& k, bool& ended_all) {
    ended_all = false;
    StreamOptions so;
    so.audit_split = true;
    TFDIST_ASSIGN_OR_RETURN(StepDealer dealer, StepDealer::Open(ex_, so));
    const auto& streams = dealer.streams();
    Step step, shown;
    for (; !options_.max_steps || k <= *options_.max_steps; ++k) {
      // A step costs at least N batches: the flag is cheap beside it.
      if (Interrupted()) return Status::Interrupted();
      step.step = k;
      step.epoch = epoch;
      bool end = false;
      TFDIST_RETURN_IF_ERROR(dealer.Next(step, end));
      if (end) {
        ended_all = true;
        break;
      }
      Count(step);
      if (options_.worker) {
        shown.step = step.step;
        shown.epoch = step.epoch;
        shown.dropped = step.dropped;
        shown.batches.clear();
        for (ReplicaBatch& b : step.batches) {
          if (b.worker == *options_.worker) shown.batches.push_back(std::move(b));
        }
        TFDIST_RETURN_IF_ERROR(sink_.OnStep(shown));
      } else {
        TFDIST_RETURN_IF_ERROR(sink_.OnStep(step));
      }
      if (step.dropped) {
        ++k;
        ended_all = true;  // TensorFlow ends the epoch's iteration here
        break;
      }
    }
    if (!ended_all) ended_all = dealer.AllEnded();
    for (size_t w = 0; w < streams.size(); ++w) {
      // Added once: for the first worker whose split differs.
      if (const SplitAudit* audit = streams[w]->audit();
          audit != nullptr && audit->differs() &&
          !summary_.decision.HasWarning(WarningKind::kGuideVersusCode)) {
        summary_.decision.warnings.push_back(GuideVersusCodeWarning(audit->crosses()));
      }
      summary_.workers[w].bytes_read =
          summary_.workers[w].bytes_read.value_or(0) + streams[w]->fetched_bytes();
    }
    dealer.Close();  // the readers closed: their bytes are counted
    return Status::OK();
  }

  // A step's batches into the rows; a dropped step's records are dropped.
  void Count(const Step& step) {
    ++summary_.steps;
    summary_.dropped_step = summary_.dropped_step || step.dropped;
    uint64_t total = 0;
    bool padded = false;
    size_t i = 0;
    for (size_t w = 0; w < summary_.workers.size(); ++w) {
      WorkerSummary& r = summary_.workers[w];
      bool has_data = false;
      for (int64_t k = 0; k < options_.topology.replicas; ++k, ++i) {
        const ReplicaBatch& b = step.batches[i];
        padded = padded || b.padding;
        has_data = has_data || !b.padding;
        total += CountBatch(b, step.dropped, r);
      }
      if (!has_data) ++r.idle_steps;
    }
    padded_steps_ += padded ? 1 : 0;
    const auto& g = summary_.decision.global_batch_size;
    if (g && total < static_cast<uint64_t>(*g)) ++summary_.short_steps;
  }

  // An unbatched pipeline: each worker's element stream, one worker after
  // another (each its own pass, as each TensorFlow worker reads its own).
  Status EachWorker() {
    for (size_t w = 0; w < summary_.workers.size(); ++w) {
      WorkerSummary& r = summary_.workers[w];
      int64_t n = 0;
      bool end = false;
      for (int64_t epoch = 1; epoch <= options_.epochs; ++epoch) {
        passes_ = std::max(passes_, epoch);
        TFDIST_ASSIGN_OR_RETURN(auto stream, ex_.Open(r.worker));
        std::vector<data::Element> one;
        end = false;
        for (; !options_.max_steps || n < *options_.max_steps; ++n) {
          if (n % 1024 == 0 && Interrupted()) return Status::Interrupted();
          TFDIST_RETURN_IF_ERROR(stream->Next(one, end));
          if (end) break;
          for (const data::Element& e : one) {
            r.records += e.Leaves();
            r.bytes += e.PayloadBytes();
            if (Shown(r.worker)) TFDIST_RETURN_IF_ERROR(sink_.OnElement(r.worker, e));
          }
        }
        r.bytes_read = r.bytes_read.value_or(0) + stream->fetched_bytes();
        if (!end) break;  // max_steps came first
      }
      summary_.complete = summary_.complete && end;
      TFDIST_RETURN_IF_ERROR(FinishRow(r, w));
      if (Shown(r.worker)) TFDIST_RETURN_IF_ERROR(sink_.OnWorkerEnd(r));
    }
    return Status::OK();
  }

  // What worker r.worker's pipeline counted (`counted`: the index of the
  // worker whose pipeline ran for it): files, bytes, drops.
  Status FinishRow(WorkerSummary& r, size_t counted) {
    const data::ReadCounters& c = ex_.Counters(ex_.workers()[counted]);
    r.files = c.files.load();
    r.bytes_read = r.bytes_read.value_or(0) + c.bytes_read.load();
    r.dropped_remainder = c.dropped_remainder.load();
    r.skipped = c.skipped.load();
    if (ex_.read_tally() != nullptr) r.records_read = c.records_read.load();
    if (layout_options_.list_files) {
      TFDIST_ASSIGN_OR_RETURN(r.file_names, ex_.FileNamesOf(r.worker, r.files));
    }
    return Status::OK();
  }

  const Execution& ex_;
  const DistributeOptions& options_;
  const LayoutOptions& layout_options_;
  LayoutSink& sink_;
  LayoutSummary summary_;
  uint64_t padded_steps_ = 0;  // steps in which some replica got padding
  int64_t passes_ = 0;         // epochs begun (by any worker)
};

// Collects a whole layout: a row for every worker shown, in order.
class Collector : public LayoutSink {
 public:
  Collector(Layout& layout, std::optional<int64_t> only) : layout_(layout) {
    for (int64_t w = 0; w < layout.topology.workers; ++w) {
      if (!only || *only == w) layout_.workers.emplace_back().worker = w;
    }
  }
  Status OnStep(const Step& step) override {
    layout_.steps.push_back(step);
    for (const ReplicaBatch& b : step.batches) {
      if (!b.padding) Row(b.worker).batches.push_back(b.elements);
    }
    return Status::OK();
  }
  Status OnElement(int64_t worker, const data::Element& e) override {
    Row(worker).elements.push_back(e);
    return Status::OK();
  }
  Status End(const LayoutSummary& summary) override {
    layout_.decision = summary.decision;
    for (WorkerLayout& wl : layout_.workers) {
      const WorkerSummary& r = summary.workers[static_cast<size_t>(wl.worker)];
      wl.files = r.file_names;
      wl.bytes_read = r.bytes_read.value_or(0);
    }
    return Status::OK();
  }

 private:
  WorkerLayout& Row(int64_t worker) {
    const size_t i = layout_.workers.size() == 1 ? 0 : static_cast<size_t>(worker);
    return layout_.workers[i];
  }

  Layout& layout_;
};

class SummaryOnly : public LayoutSink {
 public:
  explicit SummaryOnly(LayoutSummary& out) : out_(out) {}
  Status End(const LayoutSummary& summary) override {
    out_ = summary;
    return Status::OK();
  }

 private:
  LayoutSummary& out_;
};

// The sink of the pipeline up to a grouping: shows its elements with the
// whole pipeline's split, and adds the grouping's bounds at the end.
class GroupedSink : public LayoutSink {
 public:
  GroupedSink(const data::Pipeline& pipeline, size_t at, const Decision& full,
              const DistributeOptions& options, bool input_repeats, bool at_most, LayoutSink& inner)
      : pipeline_(pipeline),
        at_(at),
        full_(full),
        options_(options),
        input_repeats_(input_repeats),
        at_most_(at_most),
        inner_(inner) {}

  Status Begin(const Decision& d) override {
    const data::Op& op = pipeline_.ops[at_];
    if (options_.api == Api::kDistribute && d.ShardsData(options_.topology)) {
      return data::PositionError(
          pipeline_.text, op.pos,
          fmt::format("{}(): DATA sharding deals out the batches it makes, whose number only "
                      "the data decides; tfdist bounds a grouping under FILE, OFF or "
                      "distribute_datasets_from_function",
                      op.name));
    }
    return inner_.Begin(Merged(d));
  }
  Status OnElement(int64_t worker, const data::Element& e) override {
    return inner_.OnElement(worker, e);
  }
  Status OnWorkerEnd(const WorkerSummary& row) override { return inner_.OnWorkerEnd(row); }
  Status End(const LayoutSummary& summary) override {
    LayoutSummary out = summary;
    out.decision = Merged(summary.decision);
    std::vector<uint64_t> elements;
    for (const WorkerSummary& r : summary.workers) elements.push_back(r.records);
    out.grouped =
        BoundGrouping(pipeline_, at_, full_, options_, elements, input_repeats_, at_most_);
    return inner_.End(out);
  }

 private:
  // The decision of the pipeline up to the grouping (its policy and
  // warnings), with the whole pipeline's split, and the bounds said.
  Decision Merged(const Decision& d) const {
    Decision out = d;
    out.split = full_.split;
    out.split_reason = full_.split_reason;
    out.split_requested = full_.split_requested;
    out.batched = false;
    out.global_batch_size.reset();
    out.drop_remainder = full_.drop_remainder;
    // Whether the rebatch fails on scalars is the whole pipeline's question:
    // the grouping batches the prefix's scalars.
    std::erase_if(out.warnings,
                  [](const Warning& w) { return w.kind == WarningKind::kScalarRebatch; });
    for (const Warning& w : full_.warnings) {
      if (w.kind == WarningKind::kScalarRebatch) out.warnings.push_back(w);
    }
    if (!out.HasWarning(WarningKind::kGroupedBounds)) {
      const data::Op& op = pipeline_.ops[at_];
      const auto& g = std::get<data::GroupByWindowOp>(op.params);
      out.Warn(WarningKind::kGroupedBounds,
               fmt::format("{}({}) ({}) groups by a function of the data that tfdist does not "
                           "run: the records each worker reads up to it are exact, but its "
                           "batches, their sizes and the steps are bounds (fewest..most), not "
                           "exact steps",
                           op.name, g.key_func, data::DescribePosition(pipeline_.text, op.pos)));
    }
    return out;
  }

  const data::Pipeline& pipeline_;
  size_t at_;
  const Decision& full_;
  const DistributeOptions& options_;
  bool input_repeats_, at_most_;
  LayoutSink& inner_;
};

// The pipeline up to the grouping at `at`, with a repeat() forever in it
// left out (`repeats` is then set): what each worker's grouping gets in one
// epoch of its input.
Result<data::Pipeline> BeforeGrouping(const data::Pipeline& pipeline, size_t at, bool& repeats) {
  TFDIST_RETURN_IF_ERROR(CheckAfterGrouping(pipeline, at));
  data::Pipeline prefix;
  prefix.text = pipeline.text;
  prefix.ops.assign(pipeline.ops.begin(), pipeline.ops.begin() + static_cast<std::ptrdiff_t>(at));
  const PipelineShape shape = Analyze(prefix);
  if (shape.batched) {
    const data::Op& op = pipeline.ops[at];
    return data::PositionError(pipeline.text, op.pos,
                               fmt::format("{}() of batches: tfdist bounds a grouping of "
                                           "records (or other single elements)",
                                           op.name));
  }
  if (shape.endless_at) {
    prefix.ops.erase(prefix.ops.begin() + static_cast<std::ptrdiff_t>(*shape.endless_at));
    repeats = true;
  }
  return prefix;
}

Status StreamGrouped(const data::Pipeline& pipeline, size_t at, const DistributeOptions& options,
                     const data::BuildOptions& build, LayoutSink& sink,
                     const LayoutOptions& layout_options) {
  bool repeats = false;
  TFDIST_ASSIGN_OR_RETURN(data::Pipeline prefix, BeforeGrouping(pipeline, at, repeats));
  DistributeOptions before = options;
  before.max_steps.reset();
  before.epochs = 1;
  before.split = Split::kAuto;
  if (options.worker_pipelines) {
    auto prefixes = std::make_shared<std::vector<data::Pipeline>>();
    for (const data::Pipeline& p : *options.worker_pipelines) {
      const std::optional<size_t> own = FindGrouping(p);
      if (!own) {
        return data::PositionError(pipeline.text, pipeline.ops[at].pos,
                                   fmt::format("{}(): the input function groups on some workers "
                                               "and not on others; tfdist bounds one grouping "
                                               "for all",
                                               pipeline.ops[at].name));
      }
      bool own_repeats = false;
      TFDIST_ASSIGN_OR_RETURN(data::Pipeline q, BeforeGrouping(p, *own, own_repeats));
      prefixes->push_back(std::move(q));
    }
    before.worker_pipelines = std::move(prefixes);
  }
  const PipelineShape shape = Analyze(pipeline);
  Decision full;
  if (options.api == Api::kDistribute) {
    TFDIST_ASSIGN_OR_RETURN(full, Decide(shape, options));
  } else {
    full = DecideFromFunction(shape, options);
  }
  const bool at_most = !Analyze(prefix).filter.empty();
  GroupedSink grouped(pipeline, at, full, options, repeats, at_most, sink);
  return StreamLayout(prefix, before, build, grouped, layout_options);
}

}  // namespace

void WorkerSummary::AddBatches(uint64_t size, uint64_t count) {
  if (count == 0) return;
  batches += count;
  records += size * count;
  if (size == 0) empty_batches += count;
  smallest_batch = std::min(smallest_batch.value_or(size), size);
  largest_batch = std::max(largest_batch.value_or(size), size);
}

double ReadOverlap::Amplification() const {
  if (distinct == 0) return 1;
  return static_cast<double>(total) /
         (static_cast<double>(distinct) * static_cast<double>(std::max<int64_t>(passes, 1)));
}

bool LayoutSummary::SharedInput() const {
  const Decision& d = decision;
  if (reads) {
    // Every record read by more than one worker, and as many reads as every
    // worker reading each once (exact for two workers; beyond, a worker
    // that read a file twice could stand in for one that missed it).
    const uint64_t W = static_cast<uint64_t>(topology.workers);
    return W > 1 && reads->distinct > 0 && reads->shared == reads->distinct &&
           reads->total == W * reads->distinct * static_cast<uint64_t>(reads->passes);
  }
  // A function that reads no file and shards by its context: each its own.
  if (d.function_shards) return false;
  return topology.workers > 1 && !d.ShardsFiles(topology) && d.applied != AutoShardPolicy::kHint &&
         (d.applied == AutoShardPolicy::kData || d.applied == AutoShardPolicy::kOff);
}

std::span<const WorkerSummary> LayoutSummary::DroppingRows() const {
  if (SharedInput() && !workers.empty()) return std::span(workers).first(1);
  return workers;
}

uint64_t LayoutSummary::ReceivedRecords() const {
  uint64_t n = 0;
  for (const WorkerSummary& r : workers) n += r.records;
  return n;
}

uint64_t LayoutSummary::DroppedRecords() const {
  uint64_t n = 0;
  for (const WorkerSummary& r : DroppingRows()) n += r.dropped();
  return n;
}

uint64_t LayoutSummary::DistinctRecords() const {
  if (workers.empty()) return 0;
  if (reads) return reads->distinct;
  if (SharedInput() && decision.applied == AutoShardPolicy::kOff) {
    return workers.front().records + workers.front().dropped();
  }
  return ReceivedRecords() + DroppedRecords();
}

void AddAccountingWarnings(LayoutSummary& s) {
  if (!s.complete || s.workers.empty()) return;
  const uint64_t dropped = s.DroppedRecords();
  const uint64_t total = s.DistinctRecords();
  if (dropped == 0) return;
  std::vector<std::string> causes;
  uint64_t remainder = 0, skipped = 0, step = 0;
  for (const WorkerSummary& r : s.DroppingRows()) {
    remainder += r.dropped_remainder;
    skipped += r.skipped;
    step += r.dropped_step;
  }
  const bool per_worker = s.decision.ShardsFiles(s.topology) && s.workers.size() > 1;
  if (remainder > 0) {
    causes.push_back(fmt::format("{} by batch(drop_remainder=True){}", remainder,
                                 per_worker ? ", which drops each worker's short last batch" : ""));
  }
  if (skipped > 0) causes.push_back(fmt::format("{} by skip()", skipped));
  if (step > 0) causes.push_back(fmt::format("{} in the dropped last step", step));
  std::string why;
  for (size_t i = 0; i < causes.size(); ++i) {
    why += (i == 0 ? "" : i + 1 == causes.size() ? " and " : ", ") + causes[i];
  }
  if (dropped == total) {
    const uint64_t steps = s.steps - (s.dropped_step ? 1 : 0);
    s.decision.Warn(
        WarningKind::kNoSteps,
        fmt::format("an epoch has no {}: all {} records read are dropped ({}); training would {}",
                    steps == 0 ? "steps" : "data", total, why,
                    steps == 0 ? std::string("not run a single step")
                               : fmt::format("run {} step{} of empty batches", steps,
                                             steps == 1 ? "" : "s")),
        {}, Severity::kError);
    return;
  }
  s.decision.Warn(
      WarningKind::kRecordsDropped,
      fmt::format("{} of {} records ({:.1f}%) never reach a replica in an epoch: {}", dropped,
                  total, 100.0 * static_cast<double>(dropped) / static_cast<double>(total), why));
}

Result<StepDealer> StepDealer::Open(const Execution& ex, const StreamOptions& options) {
  StepDealer d;
  d.ex_ = &ex;
  TFDIST_ASSIGN_OR_RETURN(d.streams_, ex.OpenAll(options));
  d.ended_.assign(d.streams_.size(), false);
  d.drops_short_step_ = ex.drops_short_step();
  return d;
}

Status StepDealer::Next(Step& step, bool& end) {
  step.batches.clear();
  step.dropped = false;
  end = over_;
  if (over_) return Status::OK();
  const int64_t R = ex_->topology().replicas;
  bool any_batch = false, any_missing = false;
  for (size_t w = 0; w < streams_.size(); ++w) {
    for (int64_t r = 0; r < R; ++r) {
      ReplicaBatch& rb = step.batches.emplace_back();
      rb.worker = ex_->workers()[w];
      rb.replica = r;
      if (!ended_[w]) {
        bool e = false;
        TFDIST_RETURN_IF_ERROR(streams_[w]->Next(rb.elements, e));
        ended_[w] = e;
      }
      rb.padding = ended_[w];
      any_batch = any_batch || !rb.padding;
      any_missing = any_missing || rb.padding;
    }
  }
  const StepKind kind = NextStep(any_batch, any_missing, drops_short_step_);
  if (kind == StepKind::kEnd) {
    step.batches.clear();
    end = over_ = true;
    return Status::OK();
  }
  step.dropped = kind == StepKind::kDropped;
  over_ = step.dropped;
  return Status::OK();
}

bool StepDealer::AllEnded() const {
  return std::all_of(ended_.begin(), ended_.end(), [](bool e) { return e; });
}

Status StreamLayout(const data::Pipeline& pipeline, const DistributeOptions& options,
                    const data::BuildOptions& build, LayoutSink& sink,
                    const LayoutOptions& layout_options) {
  TFDIST_RETURN_IF_ERROR(CheckEnds(pipeline, options));
  if (const std::optional<size_t> at = FindGrouping(pipeline)) {
    return StreamGrouped(pipeline, *at, options, build, sink, layout_options);
  }
  // Every worker runs: the steps, the uneven files' counts and DATA's share
  // need them all; options.worker only selects what is shown.
  DistributeOptions all = options;
  all.worker.reset();
  data::BuildOptions ids = build;
  ids.record_ids = layout_options.labels ? data::RecordIds::kLabelled : data::RecordIds::kPlain;
  TFDIST_ASSIGN_OR_RETURN(const Execution ex, Execution::Plan(pipeline, all, ids));
  Streamer streamer(ex, options, layout_options, sink);
  return streamer.Run();
}

Result<Layout> PlanLayout(const data::Pipeline& pipeline, const DistributeOptions& options,
                          const data::BuildOptions& build) {
  Layout layout;
  layout.topology = options.topology;
  layout.api = options.api;
  Collector collector(layout, options.worker);
  LayoutOptions lo;
  lo.list_files = true;
  lo.labels = true;
  TFDIST_RETURN_IF_ERROR(StreamLayout(pipeline, options, build, collector, lo));
  return layout;
}

Result<LayoutSummary> SummarizeLayout(const data::Pipeline& pipeline,
                                      const DistributeOptions& options,
                                      const data::BuildOptions& build,
                                      const LayoutOptions& layout_options) {
  LayoutSummary out;
  SummaryOnly sink(out);
  TFDIST_RETURN_IF_ERROR(StreamLayout(pipeline, options, build, sink, layout_options));
  return out;
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
      r.records += e.Leaves();
      r.bytes += e.PayloadBytes();
    }
  }
  for (const Step& s : l.steps) {
    uint64_t total = 0;
    std::map<int64_t, bool> has_data;
    for (const ReplicaBatch& b : s.batches) {
      has_data[b.worker] = has_data[b.worker] || !b.padding;
      total += CountBatch(b, s.dropped, rows[b.worker]);
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
