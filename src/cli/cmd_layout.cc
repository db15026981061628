// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist layout: what each worker and replica receives, step by step.

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <numeric>

#include "commands.h"
#include "pipeline_args.h"
#include "report.h"
#include "distribute_args.h"
#include "tfdist/distribute/layout.h"

namespace tfdist::cli {
namespace {

struct LayoutOptions {
  PipelineArgs pipeline;
  DistributeArgs distribute;
  std::string format = "table";
  std::string label = "payload";
};

std::string BatchText(const std::vector<data::Element>& batch, data::LabelMode mode) {
  std::string out = "[";
  for (size_t i = 0; i < batch.size(); ++i) out += (i ? "," : "") + batch[i].Label(mode);
  return out + "]";
}

nlohmann::ordered_json Labels(const std::vector<data::Element>& elements, data::LabelMode mode) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& e : elements) out.push_back(e.Label(mode));
  return out;
}

nlohmann::ordered_json LayoutJson(const dist::Layout& l, data::LabelMode mode,
                                  const nlohmann::ordered_json& source) {
  const dist::Decision& d = l.decision;
  nlohmann::ordered_json out;
  out["api"] = l.api == dist::Api::kDistribute ? "distribute" : "from-function";
  out["policy"] = {{"requested", dist::PolicyName(d.requested)},
                   {"applied", dist::PolicyName(d.applied)},
                   {"reason", d.reason}};
  out["split"] = dist::SplitName(d.split);
  out["split_reason"] = SplitReasonText(d);
  out["num_workers"] = l.topology.workers;
  out["replicas_per_worker"] = l.topology.replicas;
  out["num_replicas_in_sync"] = l.topology.num_replicas_in_sync();
  out["global_batch_size"] =
      d.global_batch_size ? nlohmann::ordered_json(*d.global_batch_size) : nullptr;
  out["topology_source"] = source;
  out["warnings"] = WarningTexts(d);
  out["workers"] = nlohmann::ordered_json::array();
  for (const auto& w : l.workers) {
    nlohmann::ordered_json jw;
    jw["worker"] = w.worker;
    jw["files"] = w.files;
    if (!d.batched) jw["elements"] = Labels(w.elements, mode);
    out["workers"].push_back(jw);
  }
  if (d.batched) {
    out["steps"] = nlohmann::ordered_json::array();
    for (const auto& s : l.steps) {
      nlohmann::ordered_json js;
      js["step"] = s.step;
      js["batches"] = nlohmann::ordered_json::array();
      for (const auto& b : s.batches) {
        nlohmann::ordered_json jb = {
            {"worker", b.worker}, {"replica", b.replica}, {"elements", Labels(b.elements, mode)}};
        if (b.padding) jb["padding"] = true;
        js["batches"].push_back(jb);
      }
      if (s.dropped) js["dropped"] = true;
      out["steps"].push_back(js);
    }
  }
  return out;
}

void PrintHeader(const dist::Decision& d, const dist::Topology& t, const std::string& source_text) {
  fmt::print("topology: {} worker{} x {} replica{} = {} in sync{}\n", t.workers,
             t.workers == 1 ? "" : "s", t.replicas, t.replicas == 1 ? "" : "s",
             t.num_replicas_in_sync(), source_text);
  fmt::print("policy:   {} (requested {}): {}\n", dist::PolicyName(d.applied),
             dist::PolicyName(d.requested), d.reason);
  fmt::print("split:    {}: {}\n", dist::SplitName(d.split), SplitReasonText(d));
  if (d.global_batch_size) fmt::print("global batch: {}\n", *d.global_batch_size);
  for (const auto& w : d.warnings) fmt::print("warning:  {}\n", WarningText(w));
}

void PrintTable(const dist::Layout& l, data::LabelMode mode, const std::string& source_text) {
  PrintHeader(l.decision, l.topology, source_text);
  fmt::print("\n");
  if (!l.decision.batched) {
    for (const auto& w : l.workers) {
      std::string line;
      for (const auto& e : w.elements) line += (line.empty() ? "" : " ") + e.Label(mode);
      fmt::print("worker {}: {}\n", w.worker, line.empty() ? "(nothing)" : line);
    }
    return;
  }
  // Steps down, worker/replica across.
  std::vector<std::string> heads = {"step"};
  if (!l.steps.empty()) {
    for (const auto& b : l.steps[0].batches)
      heads.push_back(fmt::format("w{}/r{}", b.worker, b.replica));
  }
  std::vector<std::vector<std::string>> rows;
  bool any_padding = false;
  for (const auto& s : l.steps) {
    std::vector<std::string> row = {fmt::format("{}{}", s.step, s.dropped ? "x" : "")};
    for (const auto& b : s.batches) {
      row.push_back(b.padding ? "[]*" : BatchText(b.elements, mode));
      any_padding = any_padding || b.padding;
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(heads.size());
  for (size_t c = 0; c < heads.size(); ++c) widths[c] = heads[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += fmt::format("{:<{}}", row[c], c + 1 < row.size() ? widths[c] + 2 : 0);
    }
    fmt::print("{}\n", line);
  };
  print_row(heads);
  for (const auto& row : rows) print_row(row);
  if (l.steps.empty()) fmt::print("(no steps: the data is empty)\n");
  if (any_padding)
    fmt::print("[]* a replica with no data left: TensorFlow feeds it an empty batch\n");
  if (!l.steps.empty() && l.steps.back().dropped) {
    fmt::print(
        "{}x dropped: one worker with statically shaped batches; TensorFlow ends the "
        "iteration instead of running this step\n",
        l.steps.back().step);
  }
}

// Rows for `only` (all when nullopt); the totals always cover every worker.
void PrintSummary(const dist::LayoutSummary& l, const std::string& source_text,
                  std::optional<int64_t> only) {
  PrintHeader(l.decision, l.topology, source_text);
  fmt::print("\n");
  const dist::Decision& d = l.decision;
  fmt::print("{:>6}  {:>7}  {:>9}  {:>12}  {:>8}  {:>13}  {:>10}\n", "worker", "files", "records",
             "bytes", "batches", "empty batches", "idle steps");
  uint64_t max_records = 0, total_records = 0;
  for (const auto& r : l.workers) {
    if (!only || *only == r.worker) {
      fmt::print("{:>6}  {:>7}  {:>9}  {:>12}  {:>8}  {:>13}  {:>10}\n", r.worker, r.files,
                 r.records, r.bytes, r.batches, r.empty_batches, r.idle_steps);
    }
    max_records = std::max(max_records, r.records);
    total_records += r.records;
  }
  if (d.batched) fmt::print("steps: {}{}\n", l.steps, l.dropped_step ? " (the last one dropped)" : "");
  fmt::print("records: {}\n", l.records_source);
  if (!l.workers.empty() && total_records > 0) {
    const double mean = static_cast<double>(total_records) / static_cast<double>(l.workers.size());
    fmt::print("imbalance (max/mean records): {:.2f}\n", static_cast<double>(max_records) / mean);
  }
  // Bytes read from the files, when the pipeline ran (not for a summary
  // computed from record counts).
  std::string read;
  size_t listed = 0;
  for (const auto& r : l.workers) {
    if (!r.bytes_read || (only && *only != r.worker)) continue;
    if (++listed > 16) {
      read += ", ...";
      break;
    }
    read += fmt::format("{}{}", read.empty() ? "" : ", ", *r.bytes_read);
  }
  if (!read.empty()) {
    fmt::print("bytes read {}: {}\n", only ? fmt::format("by worker {}", *only) : "per worker",
               read);
  }
  if (d.applied == dist::AutoShardPolicy::kData && l.topology.workers > 1 && d.record_index) {
    fmt::print("read amplification: 1x (DATA with index files: each worker reads only its own "
               "records)\n");
  } else if (d.applied == dist::AutoShardPolicy::kData && l.topology.workers > 1) {
    fmt::print("read amplification: {}x (every worker reads the whole dataset)\n",
               l.topology.workers);
  } else if (d.applied == dist::AutoShardPolicy::kOff && l.topology.workers > 1) {
    fmt::print("read amplification: {}x (no sharding)\n", l.topology.workers);
  }
  if (d.global_batch_size) {
    fmt::print(
        "steps with a global batch short of {}: {} (losses are divided by the global batch "
        "size)\n",
        *d.global_batch_size, l.short_steps);
  }
}

int RunLayout(const LayoutOptions& o) {
  const bool json = o.format == "json";
  Result<ResolvedDistribute> resolved = ResolveDistributeArgs(o.distribute);
  if (!resolved.ok()) return ReportError(resolved.status(), json);
  const dist::DistributeOptions& d = resolved->options;
  const nlohmann::ordered_json& source = resolved->source;
  const std::string& source_text = resolved->source_text;

  // Parse here (not BuildPipeline): layout builds one pipeline per worker.
  Result<data::Pipeline> pipeline = ParsePipelineArgs(o.pipeline, json);
  if (!pipeline.ok()) return ExitCodeFor(pipeline.status());
  const data::LabelMode mode = o.label == "ref" ? data::LabelMode::kRef : data::LabelMode::kPayload;
  const data::BuildOptions build = o.pipeline.build_options();
  if (o.format == "summary") {
    // The summary is over all workers (short steps and imbalance need them
    // all); --worker only selects the rows shown.
    dist::DistributeOptions all = d;
    all.worker.reset();
    auto shown = [&](const dist::LayoutSummary& summary) {
      PrintSummary(summary, source_text, d.worker);
      return 0;
    };
    // FILE layouts are summarized from file names and record counts, without
    // running the pipeline, where its shape allows.
    const bool tty = isatty(STDERR_FILENO);
    auto progress = [tty](uint64_t done, uint64_t total) {
      if (tty) fmt::print(stderr, "\rcounting records: {}/{} files{}", done, total, done == total ? "\n" : "");
    };
    Result<std::optional<dist::LayoutSummary>> fast =
        dist::SummarizeFiles(*pipeline, all, o.pipeline.build_options(), progress);
    if (!fast.ok()) return ReportPipelineError(fast.status(), pipeline->text, json);
    if (*fast) return shown(**fast);
    Result<dist::Layout> layout = dist::PlanLayout(*pipeline, all, build);
    if (!layout.ok()) return ReportPipelineError(layout.status(), pipeline->text, json);
    return shown(dist::Summarize(*layout));
  }
  Result<dist::Layout> layout = dist::PlanLayout(*pipeline, d, build);
  if (!layout.ok()) return ReportPipelineError(layout.status(), pipeline->text, json);
  if (json) {
    PrintJson(LayoutJson(*layout, mode, source));
  } else {
    PrintTable(*layout, mode, source_text);
  }
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
  AddDistributeArgs(*cmd, &o->distribute,
                    "Show only this worker; default: from the launcher's environment, else all",
                    "Plan only the first N global steps (needed for a pipeline that repeats "
                    "forever)");
  cmd->add_option("--format", o->format, "table, json (the contract for scripts) or summary")
      ->check(CLI::IsMember({"table", "json", "summary"}))
      ->default_str("table");
  cmd->add_option("--label", o->label,
                  "payload (a record's text when printable) or ref (file:index)")
      ->check(CLI::IsMember({"payload", "ref"}))
      ->default_str("payload");
  cmd->callback([o, action] { *action = [o] { return RunLayout(*o); }; });
}

}  // namespace tfdist::cli
