// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A layout as text: the table streamed as it is planned, the summary, and
// the comparison of policies.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>

#include "distribute_args.h"
#include "layout_render.h"
#include "tfdist/base/text.h"

namespace tfdist::cli {
namespace {

// Cells wider than this show a batch as "size:first..last".
constexpr size_t kCellWidth = 28;
// The table's widths come from the rows of the first steps.
constexpr size_t kWidthRows = 64;
// More replicas than this in a step: a row per worker and step.
constexpr int64_t kWideColumns = 8;

std::string BatchSizes(const dist::WorkerSummary& r) {
  if (!r.smallest_batch) return "-";
  if (*r.smallest_batch == *r.largest_batch) return fmt::format("{}", *r.smallest_batch);
  return fmt::format("{}..{}", *r.smallest_batch, *r.largest_batch);
}

// "3", "1..4", "5..no end": a bound's range.
std::string BoundsText(const dist::Bounds& b) {
  auto one = [](uint64_t v) {
    return v == dist::Bounds::kUnbounded ? std::string("no end") : fmt::format("{}", v);
  };
  if (b.min == b.max) return one(b.min);
  return fmt::format("{}..{}", one(b.min), one(b.max));
}

// {"min": 1, "max": 4}; an unbounded max is null.
// The bounds of a grouping, for the table and the summary: never steps
// alone, always "bounds".
void PrintGrouped(const dist::GroupedSummary& g, std::optional<int64_t> only) {
  fmt::print("grouped by the data: {}; bounds (fewest..most), not exact steps\n",
             TerminalText(g.op));
  fmt::print("steps (bounds): {}\n", BoundsText(g.steps));
  fmt::print("records per batch (bounds): {}\n",
             g.batch_records ? BoundsText(*g.batch_records) : std::string("- (no batch)"));
  if (g.padded_steps.max > 0) {
    fmt::print(
        "steps in which a worker has no batch left, its replicas fed empty batches (bounds): "
        "{}\n",
        BoundsText(g.padded_steps));
  }
  for (const dist::GroupedWorker& w : g.workers) {
    if (only && *only != w.worker) continue;
    fmt::print("worker {}: {} element{} {}grouped, batches (bounds) {}, steps (bounds) {}\n",
               w.worker, w.elements, w.elements == 1 ? "" : "s",
               g.input_repeats ? "an epoch, repeated forever, " : "", BoundsText(w.batches),
               BoundsText(w.steps));
  }
}

}  // namespace

std::string TopologyText(const dist::Topology& t, const HeaderNotes& notes) {
  return fmt::format("{}topology: {} worker{} x {} replica{} = {} in sync{}\n", notes.trace,
                     t.workers, t.workers == 1 ? "" : "s", t.replicas, t.replicas == 1 ? "" : "s",
                     t.num_replicas_in_sync(), TerminalText(notes.source_text));
}

std::string HeaderText(const dist::Decision& d, const dist::Topology& t, const HeaderNotes& notes) {
  std::string out = TopologyText(t, notes);
  auto line = std::back_inserter(out);
  fmt::format_to(line, "policy:   {} (requested {}): {}\n", dist::PolicyName(d.applied),
                 dist::PolicyName(d.requested), TerminalText(d.reason));
  fmt::format_to(line, "split:    {}: {}\n", dist::SplitName(d.split),
                 TerminalText(SplitReasonText(d)));
  if (d.global_batch_size) fmt::format_to(line, "global batch: {}\n", *d.global_batch_size);
  if (!notes.autotune.empty()) fmt::format_to(line, "{}\n", notes.autotune);
  for (const std::string& n : notes.threads) fmt::format_to(line, "note:     {}\n", n);
  return out;
}

std::string WarningsText(const dist::Decision& d, size_t from) {
  std::string out;
  for (size_t i = from; i < d.warnings.size(); ++i) {
    const dist::Warning& w = d.warnings[i];
    fmt::format_to(std::back_inserter(out), "{}  {}\n",
                   w.severity == dist::Severity::kError ? "error:  " : "warning:",
                   TerminalText(WarningText(w)));
  }
  return out;
}

void PrintSummary(const dist::LayoutSummary& l, dist::Api api, const HeaderNotes& notes,
                  std::optional<int64_t> only) {
  const dist::Decision& d = l.decision;
  fmt::print("{}{}", HeaderText(d, l.topology, notes), WarningsText(d, 0));
  fmt::print("\n");
  fmt::print("{:>6}  {:>7}  {:>9}  {:>9}  {:>12}  {:>8}  {:>11}  {:>13}  {:>10}\n", "worker",
             "files", "records", "dropped", "bytes", "batches", "batch sizes", "empty batches",
             "idle steps");
  const uint64_t records = l.ReceivedRecords();
  for (const auto& r : l.workers) {
    if (only && *only != r.worker) continue;
    // Grouped by the data: no batch is exact (PrintGrouped bounds them).
    auto exact = [&](uint64_t v) { return l.grouped ? std::string("-") : fmt::format("{}", v); };
    fmt::print("{:>6}  {:>7}  {:>9}  {:>9}  {:>12}  {:>8}  {:>11}  {:>13}  {:>10}\n", r.worker,
               r.files, r.records, r.dropped(), r.bytes, exact(r.batches), BatchSizes(r),
               exact(r.empty_batches), exact(r.idle_steps));
  }
  if (d.batched) {
    fmt::print("steps: {}{}{}\n", l.steps, l.dropped_step ? " (the last one dropped)" : "",
               l.complete ? "" : " (planned; the data goes on)");
  }
  const uint64_t dropped = l.DroppedRecords();
  fmt::print("records: {} {}, {} dropped, {} read{}; {}\n", records,
             l.grouped ? "reach the grouping" : "received", dropped, l.DistinctRecords(),
             l.SharedInput() ? " (each worker reads them all)" : "", l.records_source);
  if (l.bytes_estimated) {
    fmt::print(
        "bytes: the dropped records' payload estimated from their files' (records were "
        "counted, not read)\n");
  }
  if (!l.workers.empty() && records > 0)
    fmt::print("imbalance (max/mean records): {:.2f}\n", Imbalance(l));
  // Bytes read from the files, when the pipeline ran (not for a summary
  // computed from record counts): the extremes, and the worker shown.
  std::optional<uint64_t> least, most;
  int64_t least_w = 0, most_w = 0;
  for (const auto& r : l.workers) {
    if (!r.bytes_read || r.files == 0) continue;
    if (!least || *r.bytes_read < *least) least = *r.bytes_read, least_w = r.worker;
    if (!most || *r.bytes_read > *most) most = *r.bytes_read, most_w = r.worker;
  }
  if (only && *only < static_cast<int64_t>(l.workers.size()) &&
      l.workers[static_cast<size_t>(*only)].bytes_read &&
      l.workers[static_cast<size_t>(*only)].files > 0) {
    fmt::print("bytes read by worker {}: {}\n", *only,
               *l.workers[static_cast<size_t>(*only)].bytes_read);
  } else if (least && *least == *most) {
    fmt::print("bytes read per worker: {}\n", *least);
  } else if (least) {
    fmt::print("bytes read per worker: {} (worker {}) to {} (worker {})\n", *least, least_w, *most,
               most_w);
  }
  // from-function: the records each worker's readers took, its own.
  if (l.reads) {
    std::optional<uint64_t> fewest, largest;
    int64_t fewest_w = 0, largest_w = 0;
    for (const auto& r : l.workers) {
      const uint64_t n = r.records_read.value_or(0);
      if (!fewest || n < *fewest) fewest = n, fewest_w = r.worker;
      if (!largest || n > *largest) largest = n, largest_w = r.worker;
    }
    if (only && *only < static_cast<int64_t>(l.workers.size())) {
      fmt::print("records read by worker {}: {}\n", *only,
                 l.workers[static_cast<size_t>(*only)].records_read.value_or(0));
    } else if (fewest && *fewest == *largest) {
      fmt::print("records read per worker: {}\n", *fewest);
    } else if (fewest) {
      fmt::print("records read per worker: {} (worker {}) to {} (worker {})\n", *fewest, fewest_w,
                 *largest, largest_w);
    }
  }
  const ReadAmplification amplification = AmplificationOf(l, api);
  if (!amplification.why.empty()) {
    fmt::print("read amplification: {}x ({})\n", FactorText(amplification.factor),
               amplification.why);
  }
  if (d.global_batch_size) {
    fmt::print(
        "steps with a global batch short of {}: {} (losses are divided by the global batch "
        "size)\n",
        *d.global_batch_size, l.short_steps);
  }
  if (l.grouped) PrintGrouped(*l.grouped, only);
}

TableSink::TableSink(const dist::Topology& t, std::optional<int64_t> only, int64_t epochs,
                     data::LabelMode mode, const HeaderNotes& notes)
    : topology_(t), only_(only), epochs_(epochs), mode_(mode), notes_(notes) {
  const int64_t workers = only ? 1 : t.workers;
  per_worker_rows_ = workers * t.replicas > kWideColumns && workers > 1;
}

Status TableSink::Begin(const dist::Decision& d) {
  fmt::print("{}{}", HeaderText(d, topology_, notes_), WarningsText(d, 0));
  warnings_shown_ = d.warnings.size();
  fmt::print("\n");
  return Status::OK();
}

Status TableSink::OnStep(const dist::Step& s) {
  if (heads_.empty()) {
    heads_ = {"step"};
    if (epochs_ > 1) heads_.insert(heads_.begin(), "epoch");
    if (per_worker_rows_) heads_.push_back("worker");
    for (const auto& b : s.batches) {
      if (per_worker_rows_ && b.worker != s.batches.front().worker) break;
      heads_.push_back(per_worker_rows_ ? fmt::format("r{}", b.replica)
                                        : fmt::format("w{}/r{}", b.worker, b.replica));
    }
  }
  const std::string step = fmt::format("{}{}", s.step, s.dropped ? "x" : "");
  std::vector<std::string> lead = {step};
  if (epochs_ > 1) lead.insert(lead.begin(), fmt::format("{}", s.epoch));
  std::vector<std::string> row = lead;
  for (size_t i = 0; i < s.batches.size(); ++i) {
    const dist::ReplicaBatch& b = s.batches[i];
    if (per_worker_rows_ && (i == 0 || b.worker != s.batches[i - 1].worker)) {
      if (i > 0) Row(std::move(row));
      row = lead;
      row.push_back(fmt::format("{}", b.worker));
    }
    row.push_back(Cell(b));
  }
  Row(std::move(row));
  last_dropped_ = s.dropped ? std::optional<int64_t>(s.step) : std::nullopt;
  any_steps_ = true;
  return Status::OK();
}

Status TableSink::OnElement(int64_t worker, const data::Element& e) {
  fmt::print("{}{}", line_started_ ? " " : fmt::format("worker {}: ", worker),
             TerminalText(e.Label(mode_)));
  line_started_ = true;
  return Status::OK();
}

Status TableSink::OnWorkerEnd(const dist::WorkerSummary& r) {
  if (!line_started_) fmt::print("worker {}: (nothing)", r.worker);
  fmt::print("\n");
  line_started_ = false;
  return Status::OK();
}

void TableSink::Abort() {
  if (line_started_) fmt::print("\n");
  line_started_ = false;
  Flush();
}

Status TableSink::End(const dist::LayoutSummary& summary) {
  if (!summary.decision.batched) {
    if (summary.grouped) PrintGrouped(*summary.grouped, only_);
    fmt::print("{}", WarningsText(summary.decision, warnings_shown_));
    return Status::OK();
  }
  Flush();
  if (!any_steps_) {
    fmt::print("(no steps: {})\n", summary.DistinctRecords() == 0 ? "the data is empty"
                                                                  : "every record read is dropped");
  }
  if (any_padding_) {
    fmt::print("[]* a replica with no data left: TensorFlow feeds it an empty batch\n");
  }
  if (abbreviated_) {
    fmt::print(
        "n:first..last a batch of n elements, from first to last (--format json lists "
        "them all)\n");
  }
  if (last_dropped_) {
    fmt::print(
        "{}x dropped: one worker with statically shaped batches; TensorFlow ends the "
        "iteration instead of running this step\n",
        *last_dropped_);
  }
  fmt::print("{}", WarningsText(summary.decision, warnings_shown_));
  return Status::OK();
}

std::string TableSink::Cell(const dist::ReplicaBatch& b) {
  if (b.padding) {
    any_padding_ = true;
    return "[]*";
  }
  std::string out = "[";
  for (size_t i = 0; i < b.elements.size() && out.size() <= kCellWidth; ++i) {
    out += (i ? "," : "") + TerminalText(b.elements[i].Label(mode_));
  }
  out += "]";
  if (out.size() <= kCellWidth) return out;
  abbreviated_ = true;
  return fmt::format("{}:{}..{}", b.elements.size(), TerminalText(b.elements.front().Label(mode_)),
                     TerminalText(b.elements.back().Label(mode_)));
}

// Rows wait until kWidthRows are in (their widths set the columns'),
// then go out as they come.
void TableSink::Row(std::vector<std::string> row) {
  pending_.push_back(std::move(row));
  if (pending_.size() >= kWidthRows || widths_fixed_) Flush();
}

void TableSink::Flush() {
  if (!widths_fixed_) {
    widths_.resize(heads_.size());
    for (size_t c = 0; c < heads_.size(); ++c) widths_[c] = heads_[c].size();
    for (const auto& row : pending_) {
      for (size_t c = 0; c < row.size() && c < widths_.size(); ++c)
        widths_[c] = std::max(widths_[c], row[c].size());
    }
    widths_fixed_ = true;
    if (!heads_.empty()) Print(heads_);
  }
  for (const auto& row : pending_) Print(row);
  pending_.clear();
}

void TableSink::Print(const std::vector<std::string>& row) const {
  std::string line;
  for (size_t c = 0; c < row.size(); ++c) {
    const size_t width = std::max(c < widths_.size() ? widths_[c] : 0, row[c].size());
    line += fmt::format("{:<{}}", row[c], c + 1 < row.size() ? width + 2 : 0);
  }
  fmt::print("{}\n", line);
}

void PrintComparison(const Comparison& c, const dist::DistributeOptions& d,
                     const HeaderNotes& notes) {
  using Row = Comparison::Row;
  const std::vector<Row>& rows = c.rows;
  const dist::Topology& t = d.topology;
  fmt::print("{}", TopologyText(t, notes));
  if (!notes.autotune.empty()) fmt::print("{}\n", notes.autotune);
  for (const std::string& n : notes.threads) fmt::print("note:     {}\n", n);
  fmt::print("\n{:<6}  {:>7}  {:>9}  {:>9}  {:>13}  {:>13}  {:>9}  {:>13}  {:>10}\n", "policy",
             "steps", "records", "dropped", "read/worker", "amplification", "imbalance",
             "empty batches", "idle steps");
  for (const Row& r : rows) {
    if (!r.summary.ok()) {
      fmt::print("{:<6}  cannot: {}\n", dist::PolicyName(r.policy),
                 TerminalText(r.summary.status().message()));
      continue;
    }
    const dist::LayoutSummary& l = *r.summary;
    const auto [empty, idle] = EmptyAndIdleOf(l);
    fmt::print("{:<6}  {:>7}  {:>9}  {:>9}  {:>13}  {:>12}x  {:>9.2f}  {:>13}  {:>10}\n",
               dist::PolicyName(r.policy), l.decision.batched ? fmt::format("{}", l.steps) : "-",
               l.ReceivedRecords(), l.DroppedRecords(), ReadPerWorker(l),
               FactorText(AmplificationOf(l, d.api).factor), Imbalance(l), empty, idle);
  }
  if (std::any_of(rows.begin(), rows.end(), [](const Row& r) {
        return r.summary.ok() && ReadPerWorker(*r.summary) == "-" &&
               std::any_of(r.summary->workers.begin(), r.summary->workers.end(),
                           [](const dist::WorkerSummary& w) { return w.files > 0; });
      })) {
    fmt::print("read/worker -: counted from the files' record counts, not read\n");
  }
  if (c.picked) {
    fmt::print("AUTO applies {}: {}\n", dist::PolicyName(c.picked->applied),
               TerminalText(c.picked->reason));
  }
  for (const Row& r : rows) {
    if (!r.summary.ok()) continue;
    for (const dist::Warning& w : r.summary->decision.warnings) {
      fmt::print("{} {}:  {}\n", dist::PolicyName(r.policy),
                 w.severity == dist::Severity::kError ? "error" : "warning",
                 TerminalText(WarningText(w)));
    }
  }
  if (c.recommended) fmt::print("recommend: {}\n", TerminalText(c.recommend_text));
}

}  // namespace tfdist::cli
