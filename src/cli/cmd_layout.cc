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
#include "layout_render.h"
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

// Every call to each of `sinks`, in order; the first error stops it.
class TeeSink : public dist::LayoutSink {
 public:
  explicit TeeSink(std::vector<dist::LayoutSink*> sinks) : sinks_(std::move(sinks)) {}
  Status Begin(const dist::Decision& d) override {
    return Each([&](dist::LayoutSink* s) { return s->Begin(d); });
  }
  Status OnStep(const dist::Step& step) override {
    return Each([&](dist::LayoutSink* s) { return s->OnStep(step); });
  }
  Status OnElement(int64_t worker, const data::Element& e) override {
    return Each([&](dist::LayoutSink* s) { return s->OnElement(worker, e); });
  }
  Status OnWorkerEnd(const dist::WorkerSummary& r) override {
    return Each([&](dist::LayoutSink* s) { return s->OnWorkerEnd(r); });
  }
  Status End(const dist::LayoutSummary& summary) override {
    return Each([&](dist::LayoutSink* s) { return s->End(summary); });
  }

 private:
  template <typename F>
  Status Each(F f) {
    for (dist::LayoutSink* s : sinks_) TFDIST_RETURN_IF_ERROR(f(s));
    return Status::OK();
  }
  std::vector<dist::LayoutSink*> sinks_;
};

// FILE summaries come from file names and record counts, without running
// the pipeline, where its shape allows; else the layout streams, or the
// summary of the layout `streamed` already (with the same options) is it.
Result<dist::LayoutSummary> Summary(const data::Pipeline& pipeline,
                                    const dist::DistributeOptions& d,
                                    const data::BuildOptions& build,
                                    const dist::LayoutSummary* streamed = nullptr) {
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
  dist::LayoutSummary summary;
  if (streamed != nullptr) {
    summary = *streamed;
  } else {
    TFDIST_ASSIGN_OR_RETURN(summary, dist::SummarizeLayout(pipeline, d, build));
  }
  if (!why_run.empty()) summary.records_source += fmt::format(", as {}", why_run);
  return summary;
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
            const data::BuildOptions& build, const HeaderNotes& notes, const FormatArgs& format) {
  const bool json = format.json();
  if (d.api != dist::Api::kDistribute) {
    return ReportError(Status::InvalidArgument("--compare compares the auto-shard policies of "
                                               "--api distribute"),
                       json);
  }
  Comparison c;
  for (dist::AutoShardPolicy policy :
       {dist::AutoShardPolicy::kFile, dist::AutoShardPolicy::kData, dist::AutoShardPolicy::kOff}) {
    dist::DistributeOptions o = d;
    o.policy = policy;
    o.worker.reset();
    c.rows.push_back({policy, Summary(pipeline, o, build)});
  }
  if (std::none_of(c.rows.begin(), c.rows.end(),
                   [](const Comparison::Row& r) { return r.summary.ok(); })) {
    return ReportPipelineError(c.rows.front().summary.status(), pipeline.text, json);
  }
  dist::DistributeOptions automatic = d;
  automatic.policy = dist::AutoShardPolicy::kAuto;
  Result<dist::Decision> picked = dist::Decide(dist::Analyze(pipeline), automatic);
  if (picked.ok()) c.picked = std::move(*picked);
  std::vector<dist::PolicyOutcome> outcomes;
  for (const Comparison::Row& r : c.rows) {
    outcomes.push_back(OutcomeOf(r.policy, r.summary, d.api));
  }
  const dist::PolicyOutcome& data_row = outcomes[1];
  const dist::AutoShardPolicy auto_applies =
      c.picked ? c.picked->applied : dist::AutoShardPolicy::kAuto;
  c.recommended = dist::Recommend(outcomes, d.topology.workers, auto_applies,
                                  data_row.applies && data_row.files > 0);
  if (c.recommended) {
    c.recommend_text =
        RecommendedAction(*c.recommended, auto_applies, data_row, d.topology.workers);
    if (!c.recommended->against.empty()) {
      c.recommend_text += fmt::format(": {}", fmt::join(c.recommended->against, "; "));
    }
    c.recommend_text += fmt::format(" (costs, lower is better: {})", CostsText(*c.recommended));
  }
  if (format.html()) {
    fmt::print("{}", ComparisonPage(c, d, notes));
  } else if (json) {
    PrintJson(ComparisonJson(c, d, notes));
  } else {
    PrintComparison(c, d, notes);
  }
  return 0;
}

// --format html: the page, printed whole once the layout has streamed (so
// an error leaves no part of it). It embeds the layout's JSON where that
// fits kPageJsonLimit, else the summary's with the heat map's grid.
int LayoutHtml(const data::Pipeline& pipeline, const dist::DistributeOptions& d,
               const data::BuildOptions& build, const HeaderNotes& notes, data::LabelMode mode) {
  std::string text;
  JsonSink json(d, notes, mode);
  json.Capture(&text, kPageJsonLimit);
  HeatMap map(d.topology, d.worker);
  std::optional<dist::LayoutSummary> streamed;
  SummarySink summary_sink(streamed);
  TeeSink sink({&json, &map, &summary_sink});
  dist::LayoutOptions lo;
  lo.list_files = true;
  lo.labels = mode == data::LabelMode::kPayload;
  Status s = dist::StreamLayout(pipeline, d, build, sink, lo);
  if (!s.ok()) return ReportPipelineError(s, pipeline.text, false);
  FitHeatMap(map);
  LayoutPageInput in;
  in.api = d.api;
  in.replicas = d.topology.replicas;
  in.header =
      HeaderText(streamed->decision, d.topology, notes) + WarningsText(streamed->decision, 0);
  in.map = streamed->decision.batched ? &map : nullptr;
  std::optional<dist::LayoutSummary> summarized;
  if (!json.overflowed()) {
    in.summary = &*streamed;
  } else {
    // What --format summary --json prints, and the grid drawn.
    Result<dist::LayoutSummary> summary = Summary(pipeline, d, build, &*streamed);
    if (!summary.ok()) return ReportPipelineError(summary.status(), pipeline.text, false);
    summarized = std::move(*summary);
    nlohmann::ordered_json document = SummaryDocument(*summarized, d, notes);
    if (in.map) document["grid"] = HeatMapJson(map);
    text = DumpJson(document);
    in.summary = &*summarized;
    in.aggregate = fmt::format(
        "The layout's JSON (every batch's records) is over {} KiB, so this page holds the "
        "summary's (tfdist layout --format summary --json) and the grid drawn; --format json "
        "lists every batch.",
        kPageJsonLimit >> 10);
  }
  in.document_text = text;
  fmt::print("{}", LayoutPage(in));
  return 0;
}

int RunLayout(const LayoutOptions& o) {
  const bool json = o.format.json();
  if (Status s = o.format.CheckHtml(); !s.ok()) return ReportError(s, false);
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
  if (o.compare) return Compare(pipeline, d, build, notes, o.format);
  if (o.format.html()) return LayoutHtml(pipeline, d, build, notes, mode);
  if (o.format.summary()) {
    Result<dist::LayoutSummary> summary = Summary(pipeline, d, build);
    if (!summary.ok()) return ReportPipelineError(summary.status(), pipeline.text, json);
    if (!json) {
      PrintSummary(*summary, d.api, notes, d.worker);
      return 0;
    }
    PrintJson(SummaryDocument(*summary, d, notes));
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
                   "per-worker totals, records dropped, steps", "table",
                   "one self-contained page (heat map of records per replica by worker and "
                   "step, per-worker bars, the header; the JSON it draws embedded); with "
                   "--compare, the policies as bars");
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
