// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist layout: what each worker and replica receives, step by step.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <numeric>

#include "commands.h"
#include "distribute_args.h"
#include "file_args.h"
#include "pipeline_args.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/distribute/layout.h"
#include "tfdist/distribute/recommend.h"
#include "validators.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

struct LayoutOptions {
  PipelineArgs pipeline;
  DistributeArgs distribute;
  FormatArgs format;
  bool compare = false;
  std::string label = "payload";
  int64_t epochs = 1;
};

// Cells wider than this show a batch as "size:first..last".
constexpr size_t kCellWidth = 28;
// The table's widths come from the rows of the first steps.
constexpr size_t kWidthRows = 64;
// More replicas than this in a step: a row per worker and step.
constexpr int64_t kWideColumns = 8;

nlohmann::ordered_json Labels(const std::vector<data::Element>& elements, data::LabelMode mode) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& e : elements) out.push_back(e.Label(mode));
  return out;
}

std::string Dump(const nlohmann::ordered_json& j) { return DumpJson(j); }

// What the host's CPUs decide in the pipeline, or empty: "autotune: ...".
std::string AutotuneText(const data::Pipeline& pipeline, const data::BuildOptions& build) {
  const int64_t cpus = data::AutotuneCpus(build);
  const auto args = data::AutotunedArguments(pipeline, cpus);
  if (args.empty()) return {};
  std::string values;
  for (size_t i = 0; i < args.size(); ++i) {
    values += fmt::format("{}{} = {}", i ? ", " : "", args[i].first, args[i].second);
  }
  if (build.cpus > 0) return fmt::format("autotune: {} (AUTOTUNE, --cpus {})", values, cpus);
  return fmt::format(
      "autotune: {} (AUTOTUNE: this machine's {} CPUs; --cpus N models "
      "another host)",
      values, cpus);
}

// The same as JSON: {"cpus", "from", "arguments", "values"}, or null.
nlohmann::ordered_json AutotuneJson(const data::Pipeline& pipeline,
                                    const data::BuildOptions& build) {
  const int64_t cpus = data::AutotuneCpus(build);
  const auto args = data::AutotunedArguments(pipeline, cpus);
  if (args.empty()) return nullptr;
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  nlohmann::ordered_json values = nlohmann::ordered_json::object();
  for (const auto& [name, value] : args) {
    names.push_back(name);
    values[name] = value;
  }
  return {{"cpus", cpus},
          {"from", build.cpus > 0 ? "--cpus" : "this machine"},
          {"arguments", names},
          {"values", values}};
}

// What a header says beside the decision: where the topology came from,
// what AUTOTUNE resolved to, and what tracing a Python input function found.
struct HeaderNotes {
  std::string source_text;               // " (from Open MPI: worker 1 of 4)" or empty
  std::string autotune;                  // "autotune: ..." or empty
  std::vector<std::string> threads;      // data::ThreadNotes(): "note: ..." lines
  std::string trace;                     // TraceHeader(): "input:" and "assumed:" lines, or empty
  nlohmann::ordered_json source;         // JSON topology_source
  nlohmann::ordered_json autotune_json;  // JSON autotune, or null
  nlohmann::ordered_json trace_json;     // TraceJson(): input and assumptions, or {}
};

void PrintTopology(const dist::Topology& t, const HeaderNotes& notes) {
  fmt::print("{}", notes.trace);
  fmt::print("topology: {} worker{} x {} replica{} = {} in sync{}\n", t.workers,
             t.workers == 1 ? "" : "s", t.replicas, t.replicas == 1 ? "" : "s",
             t.num_replicas_in_sync(), TerminalText(notes.source_text));
}

// The decision; its warnings are printed apart (PrintWarnings).
void PrintHeader(const dist::Decision& d, const dist::Topology& t, const HeaderNotes& notes) {
  PrintTopology(t, notes);
  fmt::print("policy:   {} (requested {}): {}\n", dist::PolicyName(d.applied),
             dist::PolicyName(d.requested), TerminalText(d.reason));
  fmt::print("split:    {}: {}\n", dist::SplitName(d.split), TerminalText(SplitReasonText(d)));
  if (d.global_batch_size) fmt::print("global batch: {}\n", *d.global_batch_size);
  if (!notes.autotune.empty()) fmt::print("{}\n", notes.autotune);
  for (const std::string& n : notes.threads) fmt::print("note:     {}\n", n);
}

void PrintWarnings(const dist::Decision& d, size_t from) {
  for (size_t i = from; i < d.warnings.size(); ++i) {
    const dist::Warning& w = d.warnings[i];
    fmt::print("{}  {}\n", w.severity == dist::Severity::kError ? "error:  " : "warning:",
               TerminalText(WarningText(w)));
  }
}

// How many times over the workers read the input, and why: W under DATA and
// OFF over several workers, 1 under FILE; from-function, as measured from
// the records each worker's readers took (W where the function does not
// shard). `why` is empty where there is nothing to say (one worker).
struct ReadAmplification {
  double factor = 1;
  std::string why;
};

// "2", "1.5", "1.33": as the text and the JSON give a factor.
double RoundedFactor(double f) { return std::round(f * 100) / 100; }
std::string FactorText(double f) { return fmt::format("{}", RoundedFactor(f)); }
nlohmann::ordered_json FactorJson(double f) {
  const double r = RoundedFactor(f);
  if (r == std::floor(r)) return static_cast<int64_t>(r);
  return r;
}

ReadAmplification AmplificationOf(const dist::LayoutSummary& l, dist::Api api) {
  const dist::Decision& d = l.decision;
  const int64_t W = l.topology.workers;
  if (W <= 1) return {};
  if (api == dist::Api::kFromFunction && l.reads) {
    const dist::ReadOverlap& r = *l.reads;
    std::string why = fmt::format("the workers' readers took {} records, {} of them distinct",
                                  r.total, r.distinct);
    if (r.passes > 1) why += fmt::format(", in {} epochs", r.passes);
    if (r.shared == 0) {
      why += ": each record read by one worker";
    } else if (r.shared == r.distinct) {
      why += ": every record read by more than one worker";
    } else {
      why += fmt::format(": {} read by more than one worker", r.shared);
    }
    if (r.unread && *r.unread > 0) {
      why += fmt::format("; {} in the listed files that no worker read", *r.unread);
    }
    return {r.Amplification(), std::move(why)};
  }
  if (api == dist::Api::kFromFunction) {
    if (d.function_shards) return {1, "the input function shards by its input context"};
    return {static_cast<double>(W),
            "the input function does not shard: every worker reads and feeds the same records"};
  }
  switch (d.applied) {
    case dist::AutoShardPolicy::kData:
      return {static_cast<double>(W),
              "DATA: every worker reads the whole dataset, as TensorFlow does"};
    case dist::AutoShardPolicy::kOff:
      return {static_cast<double>(W), "no sharding: every worker reads everything"};
    case dist::AutoShardPolicy::kFile:
      return {1, "FILE: each file is read by one worker"};
    default:
      return {};
  }
}

double Imbalance(const dist::LayoutSummary& l) {
  uint64_t max_records = 0;
  for (const auto& r : l.workers) max_records = std::max(max_records, r.records);
  const uint64_t total = l.ReceivedRecords();
  if (l.workers.empty() || total == 0) return 1.0;
  return static_cast<double>(max_records) * static_cast<double>(l.workers.size()) /
         static_cast<double>(total);
}

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
nlohmann::ordered_json BoundsJson(const dist::Bounds& b) {
  auto one = [](uint64_t v) {
    return v == dist::Bounds::kUnbounded ? nlohmann::ordered_json(nullptr)
                                         : nlohmann::ordered_json(v);
  };
  return {{"min", one(b.min)}, {"max", one(b.max)}};
}

nlohmann::ordered_json GroupedJson(const dist::GroupedSummary& g) {
  nlohmann::ordered_json out;
  out["bounds"] = true;
  out["op"] = g.op;
  out["steps"] = BoundsJson(g.steps);
  out["records_per_batch"] =
      g.batch_records ? BoundsJson(*g.batch_records) : nlohmann::ordered_json(nullptr);
  out["padded_steps"] = BoundsJson(g.padded_steps);
  out["input_repeats"] = g.input_repeats;
  out["workers"] = nlohmann::ordered_json::array();
  for (const dist::GroupedWorker& w : g.workers) {
    out["workers"].push_back({{"worker", w.worker},
                              {"elements", w.elements},
                              {"batches", BoundsJson(w.batches)},
                              {"steps", BoundsJson(w.steps)}});
  }
  return out;
}

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

nlohmann::ordered_json SummaryJson(const dist::LayoutSummary& l, dist::Api api) {
  nlohmann::ordered_json out;
  out["complete"] = l.complete;
  if (l.decision.batched) {
    out["steps"] = l.steps;
    out["dropped_step"] = l.dropped_step;
    out["short_steps"] = l.short_steps;
  }
  // filter() was counted as keeping everything: the counts are upper bounds.
  if (l.decision.HasWarning(dist::WarningKind::kFilterUpperBound)) out["upper_bound"] = true;
  if (l.grouped) out["grouped"] = GroupedJson(*l.grouped);
  out["records"] = l.ReceivedRecords();
  out["dropped_records"] = l.DroppedRecords();
  out["records_read"] = l.DistinctRecords();
  out["records_source"] = l.records_source;
  if (l.bytes_estimated) out["bytes_estimated"] = true;
  out["imbalance"] = Imbalance(l);
  out["read_amplification"] = FactorJson(AmplificationOf(l, api).factor);
  if (l.reads) {
    out["records_read_by_several_workers"] = l.reads->shared;
    out["records_unread"] = l.reads->unread ? nlohmann::ordered_json(*l.reads->unread) : nullptr;
  }
  out["workers"] = nlohmann::ordered_json::array();
  for (const auto& r : l.workers) {
    nlohmann::ordered_json w;
    w["worker"] = r.worker;
    w["files"] = r.files;
    w["records"] = r.records;
    w["dropped_records"] = r.dropped();
    w["dropped"] = {
        {"remainder", r.dropped_remainder}, {"skip", r.skipped}, {"step", r.dropped_step}};
    w["bytes"] = r.bytes;
    if (l.decision.batched) {
      w["batches"] = r.batches;
      w["empty_batches"] = r.empty_batches;
      w["idle_steps"] = r.idle_steps;
      w["batch_sizes"] = r.smallest_batch ? nlohmann::ordered_json{{"min", *r.smallest_batch},
                                                                   {"max", *r.largest_batch}}
                                          : nlohmann::ordered_json(nullptr);
    }
    w["bytes_read"] = r.bytes_read ? nlohmann::ordered_json(*r.bytes_read) : nullptr;
    if (l.reads) w["records_read"] = r.records_read.value_or(0);
    out["workers"].push_back(std::move(w));
  }
  return out;
}

// Rows for `only` (all when nullopt); the totals always cover every worker.
void PrintSummary(const dist::LayoutSummary& l, dist::Api api, const HeaderNotes& notes,
                  std::optional<int64_t> only) {
  const dist::Decision& d = l.decision;
  PrintHeader(d, l.topology, notes);
  PrintWarnings(d, 0);
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

// The table, printed as the layout streams: steps down, worker/replica
// across (a row per worker and step past kWideColumns replicas); an
// unbatched pipeline as a line per worker.
class TableSink : public dist::LayoutSink {
 public:
  TableSink(const dist::Topology& t, std::optional<int64_t> only, int64_t epochs,
            data::LabelMode mode, const HeaderNotes& notes)
      : topology_(t), only_(only), epochs_(epochs), mode_(mode), notes_(notes) {
    const int64_t workers = only ? 1 : t.workers;
    per_worker_rows_ = workers * t.replicas > kWideColumns && workers > 1;
  }

  Status Begin(const dist::Decision& d) override {
    PrintHeader(d, topology_, notes_);
    PrintWarnings(d, 0);
    warnings_shown_ = d.warnings.size();
    fmt::print("\n");
    return Status::OK();
  }

  Status OnStep(const dist::Step& s) override {
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

  Status OnElement(int64_t worker, const data::Element& e) override {
    fmt::print("{}{}", line_started_ ? " " : fmt::format("worker {}: ", worker),
               TerminalText(e.Label(mode_)));
    line_started_ = true;
    return Status::OK();
  }

  Status OnWorkerEnd(const dist::WorkerSummary& r) override {
    if (!line_started_) fmt::print("worker {}: (nothing)", r.worker);
    fmt::print("\n");
    line_started_ = false;
    return Status::OK();
  }

  // After an error: ends the line being written.
  void Abort() {
    if (line_started_) fmt::print("\n");
    line_started_ = false;
    Flush();
  }

  Status End(const dist::LayoutSummary& summary) override {
    if (!summary.decision.batched) {
      if (summary.grouped) PrintGrouped(*summary.grouped, only_);
      PrintWarnings(summary.decision, warnings_shown_);
      return Status::OK();
    }
    Flush();
    if (!any_steps_) {
      fmt::print("(no steps: {})\n", summary.DistinctRecords() == 0
                                         ? "the data is empty"
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
    PrintWarnings(summary.decision, warnings_shown_);
    return Status::OK();
  }

 private:
  std::string Cell(const dist::ReplicaBatch& b) {
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
    return fmt::format("{}:{}..{}", b.elements.size(),
                       TerminalText(b.elements.front().Label(mode_)),
                       TerminalText(b.elements.back().Label(mode_)));
  }

  // Rows wait until kWidthRows are in (their widths set the columns'),
  // then go out as they come.
  void Row(std::vector<std::string> row) {
    pending_.push_back(std::move(row));
    if (pending_.size() >= kWidthRows || widths_fixed_) Flush();
  }

  void Flush() {
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

  void Print(const std::vector<std::string>& row) const {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const size_t width = std::max(c < widths_.size() ? widths_[c] : 0, row[c].size());
      line += fmt::format("{:<{}}", row[c], c + 1 < row.size() ? width + 2 : 0);
    }
    fmt::print("{}\n", line);
  }

  dist::Topology topology_;
  std::optional<int64_t> only_;
  int64_t epochs_ = 1;  // > 1: an epoch column
  data::LabelMode mode_;
  const HeaderNotes& notes_;
  bool per_worker_rows_ = false;
  size_t warnings_shown_ = 0;
  std::vector<std::string> heads_;
  std::vector<std::vector<std::string>> pending_;
  std::vector<size_t> widths_;
  bool widths_fixed_ = false;
  bool any_padding_ = false;
  bool any_steps_ = false;
  bool abbreviated_ = false;
  bool line_started_ = false;
  std::optional<int64_t> last_dropped_;
};

// The members of the JSON document before the layout: the decision and
// the topology.
nlohmann::ordered_json HeadJson(const dist::Decision& d, const dist::DistributeOptions& o,
                                const HeaderNotes& notes) {
  const dist::Topology& t = o.topology;
  nlohmann::ordered_json head;
  head["api"] = o.api == dist::Api::kDistribute ? "distribute" : "from-function";
  head["policy"] = {{"requested", dist::PolicyName(d.requested)},
                    {"applied", dist::PolicyName(d.applied)},
                    {"reason", d.reason}};
  head["split"] = dist::SplitName(d.split);
  head["split_reason"] = SplitReasonText(d);
  head["num_workers"] = t.workers;
  head["replicas_per_worker"] = t.replicas;
  head["num_replicas_in_sync"] = t.num_replicas_in_sync();
  head["global_batch_size"] =
      d.global_batch_size ? nlohmann::ordered_json(*d.global_batch_size) : nullptr;
  head["topology_source"] = notes.source;
  if (!notes.autotune_json.is_null()) head["autotune"] = notes.autotune_json;
  if (!notes.threads.empty()) head["notes"] = notes.threads;
  for (const auto& [key, value] : notes.trace_json.items()) head[key] = value;
  return head;
}

// The JSON document, written as the layout streams (one line). An error
// part way closes it with an "error" member, so the output stays one valid
// JSON object.
class JsonSink : public dist::LayoutSink {
 public:
  JsonSink(const dist::DistributeOptions& o, const HeaderNotes& notes, data::LabelMode mode)
      : options_(o), notes_(notes), mode_(mode) {}

  Status Begin(const dist::Decision& d) override {
    std::string text = Dump(HeadJson(d, options_, notes_));
    text.pop_back();  // the closing brace: more members follow
    fmt::print("{}", text);
    started_ = true;
    fmt::print("{}", d.batched ? ",\"steps\":[" : ",\"workers\":[");
    open_array_ = true;
    return Status::OK();
  }

  Status OnStep(const dist::Step& s) override {
    nlohmann::ordered_json js;
    if (options_.epochs > 1) js["epoch"] = s.epoch;
    js["step"] = s.step;
    js["batches"] = nlohmann::ordered_json::array();
    for (const auto& b : s.batches) {
      nlohmann::ordered_json jb = {
          {"worker", b.worker}, {"replica", b.replica}, {"elements", Labels(b.elements, mode_)}};
      if (b.padding) jb["padding"] = true;
      js["batches"].push_back(std::move(jb));
    }
    if (s.dropped) js["dropped"] = true;
    fmt::print("{}{}", items_++ ? "," : "", Dump(js));
    return Status::OK();
  }

  Status OnElement(int64_t worker, const data::Element& e) override {
    if (!worker_open_) {
      fmt::print("{}{{\"worker\":{},\"elements\":[", items_++ ? "," : "", worker);
      worker_open_ = true;
      elements_ = 0;
    }
    fmt::print("{}{}", elements_++ ? "," : "", Dump(e.Label(mode_)));
    return Status::OK();
  }

  Status OnWorkerEnd(const dist::WorkerSummary& r) override {
    if (!worker_open_)
      fmt::print("{}{{\"worker\":{},\"elements\":[", items_++ ? "," : "", r.worker);
    fmt::print("],\"files\":{}}}", Dump(r.file_names));
    worker_open_ = false;
    return Status::OK();
  }

  Status End(const dist::LayoutSummary& summary) override {
    if (open_array_) fmt::print("]");
    open_array_ = false;
    if (summary.decision.batched) {
      nlohmann::ordered_json workers = nlohmann::ordered_json::array();
      for (const auto& r : summary.workers) {
        if (options_.worker && *options_.worker != r.worker) continue;
        workers.push_back({{"worker", r.worker}, {"files", r.file_names}});
      }
      fmt::print(",\"workers\":{}", Dump(workers));
    }
    fmt::print(",\"summary\":{}", Dump(SummaryJson(summary, options_.api)));
    fmt::print(",\"warnings\":{}}}\n", Dump(WarningTexts(summary.decision)));
    ended_ = true;
    return Status::OK();
  }

  // After an error: closes what is open and adds the error. False when
  // nothing was printed yet (the caller prints the error object alone).
  bool Fail(const Status& status) {
    if (!started_ || ended_) return false;
    if (worker_open_) fmt::print("]}}");
    if (open_array_) fmt::print("]");
    fmt::print(",\"error\":{}}}\n", Dump(ErrorJson(status)));
    FlushStdout();
    PrintMessage("error", Describe(status));
    return true;
  }

 private:
  const dist::DistributeOptions& options_;
  const HeaderNotes& notes_;
  data::LabelMode mode_;
  bool started_ = false, ended_ = false;
  bool open_array_ = false, worker_open_ = false;
  uint64_t items_ = 0, elements_ = 0;
};

class SummarySink : public dist::LayoutSink {
 public:
  explicit SummarySink(std::optional<dist::LayoutSummary>& out) : out_(out) {}
  Status End(const dist::LayoutSummary& summary) override {
    out_ = summary;
    return Status::OK();
  }

 private:
  std::optional<dist::LayoutSummary>& out_;
};

// FILE summaries come from file names and record counts, without running
// the pipeline, where its shape allows; else the layout streams.
Result<dist::LayoutSummary> Summary(const data::Pipeline& pipeline,
                                    const dist::DistributeOptions& d,
                                    const data::BuildOptions& build) {
  dist::DistributeOptions all = d;
  all.worker.reset();
  const bool tty = isatty(STDERR_FILENO);
  auto progress = [tty](uint64_t done, uint64_t total) {
    if (tty) {
      fmt::print(stderr, "\rcounting records: {}/{} files{}", done, total,
                 done == total ? "\n" : "");
    }
  };
  // One epoch's counts: the files' records are its arithmetic.
  std::string why_run;
  if (d.epochs == 1) {
    TFDIST_ASSIGN_OR_RETURN(std::optional<dist::LayoutSummary> fast,
                            dist::SummarizeFiles(pipeline, all, build, progress, &why_run));
    if (fast) return std::move(*fast);
  }
  TFDIST_ASSIGN_OR_RETURN(dist::LayoutSummary summary, dist::SummarizeLayout(pipeline, d, build));
  if (!why_run.empty()) summary.records_source += fmt::format(", as {}", why_run);
  return summary;
}

std::string ReadPerWorker(const dist::LayoutSummary& l) {
  std::optional<uint64_t> most;
  for (const auto& r : l.workers) {
    if (r.bytes_read && r.files > 0) most = std::max(most.value_or(0), *r.bytes_read);
  }
  return most ? fmt::format("{}", *most) : "-";
}

// What a --compare row found, for the recommendation.
dist::PolicyOutcome OutcomeOf(dist::AutoShardPolicy policy,
                              const Result<dist::LayoutSummary>& summary, dist::Api api) {
  dist::PolicyOutcome o;
  o.policy = policy;
  if (!summary.ok()) {
    o.applies = false;
    o.needs_more_files = summary.status().advice().remedy == Remedy::kDataPolicyOrMoreFiles;
    return o;
  }
  const dist::LayoutSummary& l = *summary;
  o.records_read = l.DistinctRecords();
  o.received = l.ReceivedRecords();
  o.dropped = l.DroppedRecords();
  o.read_amplification = static_cast<int64_t>(std::ceil(AmplificationOf(l, api).factor));
  o.imbalance = Imbalance(l);
  o.steps = l.decision.batched ? l.steps : 0;
  for (const auto& w : l.workers) {
    o.idle_steps += w.idle_steps;
    o.files = std::max(o.files, w.files);
  }
  return o;
}

// "DATA (set AutoShardPolicy.DATA; AUTO applies FILE)", or the reshard
// and the policy after it.
std::string RecommendedAction(const dist::Recommendation& r, dist::AutoShardPolicy automatic,
                              const dist::PolicyOutcome& data, int64_t workers) {
  if (r.num_shards) {
    const uint64_t w = static_cast<uint64_t>(workers);
    return fmt::format(
        "tfdist reshard --num-shards {} (the input's {} file{} into {}, {} per worker, about {} "
        "records "
        "a worker), then FILE{}",
        *r.num_shards, data.files, data.files == 1 ? "" : "s", *r.num_shards, *r.num_shards / w,
        (data.records_read + w / 2) / w,
        automatic == dist::AutoShardPolicy::kFile ? " (what AUTO applies)" : "");
  }
  const std::string_view name = dist::PolicyName(r.policy);
  if (r.policy == automatic) return fmt::format("{} (what AUTO applies)", name);
  return fmt::format("{} (set AutoShardPolicy.{}; AUTO applies {})", name, name,
                     dist::PolicyName(automatic));
}

std::string CostsText(const dist::Recommendation& r) {
  std::string out;
  for (const auto& [policy, cost] : r.costs) {
    out += fmt::format("{}{} {:.3f}", out.empty() ? "" : ", ", dist::PolicyName(policy), cost);
  }
  if (r.reshard_cost) out += fmt::format(", FILE after a reshard {:.3f}", *r.reshard_cost);
  return out;
}

// FILE, DATA and OFF side by side (each summary as --format summary makes
// it), the one AUTO applies, and the one to use (dist::Recommend).
int Compare(const data::Pipeline& pipeline, const dist::DistributeOptions& d,
            const data::BuildOptions& build, const HeaderNotes& notes, bool json) {
  if (d.api != dist::Api::kDistribute) {
    return ReportError(Status::InvalidArgument("--compare compares the auto-shard policies of "
                                               "--api distribute"),
                       json);
  }
  struct Row {
    dist::AutoShardPolicy policy;
    Result<dist::LayoutSummary> summary;
  };
  std::vector<Row> rows;
  for (dist::AutoShardPolicy policy :
       {dist::AutoShardPolicy::kFile, dist::AutoShardPolicy::kData, dist::AutoShardPolicy::kOff}) {
    dist::DistributeOptions o = d;
    o.policy = policy;
    o.worker.reset();
    rows.push_back({policy, Summary(pipeline, o, build)});
  }
  if (std::none_of(rows.begin(), rows.end(), [](const Row& r) { return r.summary.ok(); })) {
    return ReportPipelineError(rows.front().summary.status(), pipeline.text, json);
  }
  dist::DistributeOptions automatic = d;
  automatic.policy = dist::AutoShardPolicy::kAuto;
  Result<dist::Decision> picked = dist::Decide(dist::Analyze(pipeline), automatic);
  std::vector<dist::PolicyOutcome> outcomes;
  for (const Row& r : rows) outcomes.push_back(OutcomeOf(r.policy, r.summary, d.api));
  const dist::PolicyOutcome& data_row = outcomes[1];
  const dist::AutoShardPolicy auto_applies =
      picked.ok() ? picked->applied : dist::AutoShardPolicy::kAuto;
  const std::optional<dist::Recommendation> recommended = dist::Recommend(
      outcomes, d.topology.workers, auto_applies, data_row.applies && data_row.files > 0);
  std::string recommend_text;
  if (recommended) {
    recommend_text = RecommendedAction(*recommended, auto_applies, data_row, d.topology.workers);
    if (!recommended->against.empty()) {
      recommend_text += fmt::format(": {}", fmt::join(recommended->against, "; "));
    }
    recommend_text += fmt::format(" (costs, lower is better: {})", CostsText(*recommended));
  }
  if (json) {
    const dist::LayoutSummary& any = *std::find_if(rows.begin(), rows.end(), [](const Row& r) {
                                        return r.summary.ok();
                                      })->summary;
    nlohmann::ordered_json out = HeadJson(any.decision, d, notes);
    out.erase("policy");
    out.erase("split");
    out.erase("split_reason");
    out["compare"] = nlohmann::ordered_json::array();
    for (const Row& r : rows) {
      nlohmann::ordered_json c;
      c["policy"] = dist::PolicyName(r.policy);
      if (r.summary.ok()) {
        c["split"] = dist::SplitName(r.summary->decision.split);
        c["summary"] = SummaryJson(*r.summary, d.api);
        c["warnings"] = WarningTexts(r.summary->decision);
      } else {
        c["error"] = ErrorJson(r.summary.status());
      }
      out["compare"].push_back(std::move(c));
    }
    if (picked.ok()) {
      out["auto"] = {{"applied", dist::PolicyName(picked->applied)}, {"reason", picked->reason}};
    }
    if (recommended) {
      nlohmann::ordered_json rec;
      rec["policy"] = dist::PolicyName(recommended->policy);
      if (recommended->num_shards) rec["reshard_num_shards"] = *recommended->num_shards;
      nlohmann::ordered_json costs = nlohmann::ordered_json::object();
      // As the text rounds them: 0.47, not 0.47000000000000003.
      auto rounded = [](double c) { return std::round(c * 1000) / 1000; };
      for (const auto& [policy, cost] : recommended->costs) {
        costs[dist::PolicyName(policy)] = rounded(cost);
      }
      if (recommended->reshard_cost) {
        costs["FILE_after_reshard"] = rounded(*recommended->reshard_cost);
      }
      rec["costs"] = costs;
      rec["text"] = recommend_text;
      out["recommend"] = rec;
    }
    PrintJson(out);
    return 0;
  }
  const dist::Topology& t = d.topology;
  PrintTopology(t, notes);
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
    uint64_t empty = 0, idle = 0;
    for (const auto& w : l.workers) {
      empty += w.empty_batches;
      idle += w.idle_steps;
    }
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
  if (picked.ok()) {
    fmt::print("AUTO applies {}: {}\n", dist::PolicyName(picked->applied),
               TerminalText(picked->reason));
  }
  for (const Row& r : rows) {
    if (!r.summary.ok()) continue;
    for (const dist::Warning& w : r.summary->decision.warnings) {
      fmt::print("{} {}:  {}\n", dist::PolicyName(r.policy),
                 w.severity == dist::Severity::kError ? "error" : "warning",
                 TerminalText(WarningText(w)));
    }
  }
  if (recommended) fmt::print("recommend: {}\n", TerminalText(recommend_text));
  return 0;
}

int RunLayout(const LayoutOptions& o) {
  const bool json = o.format.json();
  Result<ResolvedDistribute> resolved = ResolveDistributeArgs(o.distribute);
  if (!resolved.ok()) return ReportError(resolved.status(), json);
  dist::DistributeOptions& d = resolved->options;
  d.epochs = o.epochs;

  // Parse here (not BuildPipeline): layout builds one pipeline per worker.
  Result<LoadedPipeline> loaded = LoadDistributedPipeline(o.pipeline, o.distribute, d, json);
  if (!loaded.ok()) return ExitCodeFor(loaded.status());
  const data::Pipeline& pipeline = loaded->pipeline;
  const data::LabelMode mode = o.label == "ref" ? data::LabelMode::kRef : data::LabelMode::kPayload;
  const data::BuildOptions build = o.pipeline.build_options(*loaded);
  HeaderNotes notes;
  notes.source_text = resolved->source_text;
  notes.source = resolved->source;
  notes.autotune = AutotuneText(pipeline, build);
  notes.autotune_json = AutotuneJson(pipeline, build);
  notes.threads = data::ThreadNotes(pipeline, build);
  notes.trace = TraceHeader(*loaded);
  notes.trace_json = TraceJson(*loaded);
  if (o.compare) return Compare(pipeline, d, build, notes, json);
  if (o.format.summary()) {
    Result<dist::LayoutSummary> summary = Summary(pipeline, d, build);
    if (!summary.ok()) return ReportPipelineError(summary.status(), pipeline.text, json);
    if (!json) {
      PrintSummary(*summary, d.api, notes, d.worker);
      return 0;
    }
    nlohmann::ordered_json out = HeadJson(summary->decision, d, notes);
    out["summary"] = SummaryJson(*summary, d.api);
    out["warnings"] = WarningTexts(summary->decision);
    PrintJson(out);
    return 0;
  }
  if (json) {
    JsonSink sink(d, notes, mode);
    dist::LayoutOptions lo;
    lo.list_files = true;
    lo.labels = mode == data::LabelMode::kPayload;
    Status s = dist::StreamLayout(pipeline, d, build, sink, lo);
    if (!s.ok() && !sink.Fail(s)) return ReportPipelineError(s, pipeline.text, json);
    return ExitCodeFor(s);
  }
  TableSink sink(d.topology, d.worker, d.epochs, mode, notes);
  dist::LayoutOptions lo;
  lo.labels = mode == data::LabelMode::kPayload;
  Status s = dist::StreamLayout(pipeline, d, build, sink, lo);
  if (!s.ok()) sink.Abort();
  FlushStdout();
  if (!s.ok()) return ReportPipelineError(s, pipeline.text, json);
  return 0;
}

}  // namespace

void AddLayoutCommand(CLI::App& app, Action* action) {
  auto o = std::make_shared<LayoutOptions>();
  CLI::App* cmd = app.add_subcommand(
      "layout",
      "Show what each worker and replica receives under tf.distribute, step by step: "
      "auto-sharding (FILE, DATA, AUTO, OFF, HINT), the split of global batches, empty batches");
  AddPipelineArgs(*cmd, &o->pipeline);
  AddIndexDirOption(*cmd);
  AddDistributeArgs(*cmd, &o->distribute,
                    "Show only this worker; default: from the launcher's environment, else all",
                    "Plan only the first N global steps (needed for a pipeline that repeats "
                    "forever)");
  AddFormatOptions(*cmd, &o->format, "the table, streamed as it is planned",
                   "the layout as one JSON object (the contract for scripts)",
                   "per-worker totals, records dropped, steps", "table");
  cmd->add_flag("--compare", o->compare,
                "FILE, DATA and OFF side by side (steps, records received and dropped, bytes "
                "read per worker, read amplification, imbalance, empty batches, idle steps), "
                "the one AUTO applies, and a recommend: line (a policy, or tfdist reshard "
                "--num-shards K where that makes FILE even)");
  cmd->add_option("--epochs", o->epochs,
                  "Passes over the data, one after another, as fit(epochs=N) makes them: steps "
                  "are numbered on, and reshuffling shuffles draw a new order each epoch")
      ->default_val(1)
      ->check(IntAtLeast(1));
  cmd->add_option("--label", o->label,
                  "payload (a record's text when printable) or ref (file:index)")
      ->check(CLI::IsMember({"payload", "ref"}))
      ->default_str("payload");
  cmd->callback([o, action] { *action = [o] { return RunLayout(*o); }; });
}

}  // namespace tfdist::cli
