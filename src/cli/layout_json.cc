// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A layout as JSON: the document streamed as it is planned, the summary,
// and the comparison of policies (doc/json.md).

#include <fmt/format.h>

#include <cmath>

#include "distribute_args.h"
#include "layout_render.h"

namespace tfdist::cli {
namespace {

nlohmann::ordered_json Labels(const std::vector<data::Element>& elements, data::LabelMode mode) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& e : elements) out.push_back(e.Label(mode));
  return out;
}

std::string Dump(const nlohmann::ordered_json& j) { return DumpJson(j); }

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

}  // namespace

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

nlohmann::ordered_json SummaryDocument(const dist::LayoutSummary& l,
                                       const dist::DistributeOptions& d, const HeaderNotes& notes) {
  nlohmann::ordered_json out = HeadJson(l.decision, d, notes);
  out["summary"] = SummaryJson(l, d.api);
  out["warnings"] = WarningTexts(l.decision);
  return out;
}

nlohmann::ordered_json ComparisonJson(const Comparison& c, const dist::DistributeOptions& d,
                                      const HeaderNotes& notes) {
  using Row = Comparison::Row;
  const dist::LayoutSummary& any = c.AnySummary();
  nlohmann::ordered_json out = HeadJson(any.decision, d, notes);
  out.erase("policy");
  out.erase("split");
  out.erase("split_reason");
  out["compare"] = nlohmann::ordered_json::array();
  for (const Row& r : c.rows) {
    nlohmann::ordered_json row;
    row["policy"] = dist::PolicyName(r.policy);
    if (r.summary.ok()) {
      row["split"] = dist::SplitName(r.summary->decision.split);
      row["summary"] = SummaryJson(*r.summary, d.api);
      row["warnings"] = WarningTexts(r.summary->decision);
    } else {
      row["error"] = ErrorJson(r.summary.status());
    }
    out["compare"].push_back(std::move(row));
  }
  if (c.picked) {
    out["auto"] = {{"applied", dist::PolicyName(c.picked->applied)}, {"reason", c.picked->reason}};
  }
  if (c.recommended) {
    nlohmann::ordered_json rec;
    rec["policy"] = dist::PolicyName(c.recommended->policy);
    if (c.recommended->num_shards) rec["reshard_num_shards"] = *c.recommended->num_shards;
    nlohmann::ordered_json costs = nlohmann::ordered_json::object();
    // As the text rounds them: 0.47, not 0.47000000000000003.
    auto rounded = [](double v) { return std::round(v * 1000) / 1000; };
    for (const auto& [policy, cost] : c.recommended->costs) {
      costs[dist::PolicyName(policy)] = rounded(cost);
    }
    if (c.recommended->reshard_cost) {
      costs["FILE_after_reshard"] = rounded(*c.recommended->reshard_cost);
    }
    rec["costs"] = costs;
    rec["text"] = c.recommend_text;
    out["recommend"] = rec;
  }
  return out;
}

JsonSink::JsonSink(const dist::DistributeOptions& o, const HeaderNotes& notes, data::LabelMode mode)
    : options_(o), notes_(notes), mode_(mode) {}

void JsonSink::Capture(std::string* out, size_t limit) {
  capture_ = out;
  limit_ = limit;
}

void JsonSink::Out(std::string_view text) {
  if (capture_ == nullptr) {
    fmt::print("{}", text);
    return;
  }
  if (overflowed_) return;
  if (text.size() > limit_ - std::min(limit_, capture_->size())) {
    overflowed_ = true;
    std::string().swap(*capture_);
    return;
  }
  capture_->append(text);
}

Status JsonSink::Begin(const dist::Decision& d) {
  std::string text = Dump(HeadJson(d, options_, notes_));
  text.pop_back();  // the closing brace: more members follow
  Out(text);
  started_ = true;
  Out(d.batched ? ",\"steps\":[" : ",\"workers\":[");
  open_array_ = true;
  return Status::OK();
}

Status JsonSink::OnStep(const dist::Step& s) {
  if (overflowed_) return Status::OK();  // nothing more is kept
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
  Out(fmt::format("{}{}", items_++ ? "," : "", Dump(js)));
  return Status::OK();
}

Status JsonSink::OnElement(int64_t worker, const data::Element& e) {
  if (overflowed_) return Status::OK();
  if (!worker_open_) {
    Out(fmt::format("{}{{\"worker\":{},\"elements\":[", items_++ ? "," : "", worker));
    worker_open_ = true;
    elements_ = 0;
  }
  Out(fmt::format("{}{}", elements_++ ? "," : "", Dump(e.Label(mode_))));
  return Status::OK();
}

Status JsonSink::OnWorkerEnd(const dist::WorkerSummary& r) {
  if (!worker_open_)
    Out(fmt::format("{}{{\"worker\":{},\"elements\":[", items_++ ? "," : "", r.worker));
  Out(fmt::format("],\"files\":{}}}", Dump(r.file_names)));
  worker_open_ = false;
  return Status::OK();
}

Status JsonSink::End(const dist::LayoutSummary& summary) {
  if (open_array_) Out("]");
  open_array_ = false;
  if (summary.decision.batched) {
    nlohmann::ordered_json workers = nlohmann::ordered_json::array();
    for (const auto& r : summary.workers) {
      if (options_.worker && *options_.worker != r.worker) continue;
      workers.push_back({{"worker", r.worker}, {"files", r.file_names}});
    }
    Out(fmt::format(",\"workers\":{}", Dump(workers)));
  }
  Out(fmt::format(",\"summary\":{}", Dump(SummaryJson(summary, options_.api))));
  Out(fmt::format(",\"warnings\":{}}}\n", Dump(WarningTexts(summary.decision))));
  ended_ = true;
  return Status::OK();
}

bool JsonSink::Fail(const Status& status) {
  if (!started_ || ended_ || capture_ != nullptr) return false;
  if (worker_open_) Out("]}");
  if (open_array_) Out("]");
  Out(fmt::format(",\"error\":{}}}\n", Dump(ErrorJson(status))));
  FlushStdout();
  PrintMessage("error", Describe(status));
  return true;
}

}  // namespace tfdist::cli
