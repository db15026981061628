// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist run: the distribution executed into device buffers, with the
// throughput of every stage.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>

#include "commands.h"
#include "distribute_args.h"
#include "file_args.h"
#include "html_page.h"
#include "job.h"
#include "pipeline_args.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/cluster/cluster.h"
#include "tfdist/io/atomic_file.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/proto/synthetic.h"
#include "tfdist/run/runner.h"
#include "validators.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

struct RunArgs {
  PipelineArgs pipeline;
  DistributeArgs distribute;
  bool all_workers = false;
  int64_t epochs = 1;
  std::string device = "auto";
  std::vector<int> gpus;
  std::optional<int64_t> prefetch;
  bool verify = false;
  bool cold = false;
  double step_time_ms = 0;
  std::optional<double> target_steps_per_s;
  FormatArgs format;
  std::optional<int64_t> corrupt_replica;
  std::optional<int64_t> fail_pinned_replica;
  int64_t pack_threads = -1;
  bool sync = false;
  uint64_t allreduce_bytes = 0;
  std::string timeline;  // --timeline FILE, or empty
  std::string timeline_steps = "1:1000";
};

// The events drawn on run's page, at most: the earliest of the window.
constexpr size_t kMaxDrawnEvents = 6000;

// The timeline and the input-wait histogram, as run's page draws them:
// doc["timeline"] {first_step, last_step, events_recorded, tracks,
// events_listed}, tracks: [{process, name, events: [[name, start_us,
// duration_us], ...]}]} (times from the timeline's start, the earliest
// kMaxDrawnEvents events), and doc["input_wait_histogram"]: the loop's
// waits for each step's input after the first, [{below_us, steps}], the
// last bucket's below_us null (every "input wait" event of the window but
// the first).
void AddTimelineJson(const run::Timeline& timeline, nlohmann::ordered_json& doc) {
  std::vector<run::Timeline::TrackSpans> tracks = timeline.Spans();
  std::vector<int64_t> starts;
  for (const auto& t : tracks) {
    for (const auto& e : t.spans) starts.push_back(e.start_ns);
  }
  const size_t recorded = starts.size();
  int64_t cut =
      std::numeric_limits<int64_t>::max();  // events starting at or after it are not listed
  if (starts.size() > kMaxDrawnEvents) {
    std::nth_element(starts.begin(), starts.begin() + kMaxDrawnEvents, starts.end());
    cut = starts[kMaxDrawnEvents];
  }
  nlohmann::ordered_json out;
  out["first_step"] = timeline.first_step();
  out["last_step"] = timeline.last_step();
  out["events_recorded"] = recorded;
  size_t listed = 0;
  std::vector<double> waits;
  out["tracks"] = nlohmann::ordered_json::array();
  for (const auto& t : tracks) {
    nlohmann::ordered_json events = nlohmann::ordered_json::array();
    for (const auto& e : t.spans) {
      if (t.process == "training loop" && e.name == "input wait") {
        waits.push_back(static_cast<double>(e.duration_ns) / 1e3);
      }
      if (e.start_ns >= cut) continue;
      ++listed;
      events.push_back({e.name, static_cast<double>(e.start_ns) / 1e3,
                        static_cast<double>(e.duration_ns) / 1e3});
    }
    out["tracks"].push_back({{"process", t.process}, {"name", t.name}, {"events", events}});
  }
  out["events_listed"] = listed;
  doc["timeline"] = std::move(out);
  // The first wait is the warm-up (files opened, buffers filled), which the
  // report's p50 and p99 leave out too; a wait that found an epoch's end
  // is counted (the loop waited for it as for a step).
  if (!waits.empty()) waits.erase(waits.begin());
  nlohmann::ordered_json histogram = nlohmann::ordered_json::array();
  double below = 1;
  for (int b = 0; b < 7; ++b, below *= 10) {
    const bool last = b == 6;
    const double from = b == 0 ? 0 : below / 10;
    const auto n = std::count_if(waits.begin(), waits.end(),
                                 [&](double w) { return w >= from && (last || w < below); });
    histogram.push_back(
        {{"below_us", last ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(below)},
         {"steps", n}});
  }
  doc["input_wait_histogram"] = std::move(histogram);
}

// "A:B" of --timeline-steps: the first and last global step, 1-based.
Result<std::pair<int64_t, int64_t>> ParseStepWindow(const std::string& text) {
  const size_t colon = text.find(':');
  int64_t a = 0, b = 0;
  auto number = [](std::string_view s, int64_t& out) {
    if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != s.npos) return false;
    out = std::stoll(std::string(s));
    return true;
  };
  if (colon == std::string::npos || !number(std::string_view(text).substr(0, colon), a) ||
      !number(std::string_view(text).substr(colon + 1), b) || a < 1 || b < a) {
    return Status::InvalidArgument(fmt::format(
        "--timeline-steps: '{}' is not FIRST:LAST, global steps from 1 with FIRST <= LAST",
        TerminalText(text)));
  }
  return std::pair<int64_t, int64_t>(a, b);
}

// Where a rank of a job writes its timeline: FILE with ".worker-W" before
// its extension, so that the ranks' files do not collide.
std::string TimelinePath(const std::string& path, std::optional<int64_t> worker) {
  if (!worker) return path;
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  const size_t at = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)
                        ? dot
                        : path.size();
  return path.substr(0, at) + fmt::format(".worker-{}", *worker) + path.substr(at);
}

// A worker's part in a job of several ranks (mpirun, srun): its all-reduces
// and what it sends rank 0.
struct JobWorker {
  bool sync = false;
  uint64_t allreduce_bytes = 0;
  double sync_seconds = 0;                       // in the all-reduces
  Status stopped;                                // why another rank's failure stopped this one
  std::optional<nlohmann::ordered_json> report;  // ReportJson, when the run ended
  std::optional<run::RunReport> run;
  bool own_failure = false;  // this rank failed on its own

  int64_t epochs = 1;
  std::optional<int64_t> max_steps;
  int64_t steps = 0;                                 // agreed steps taken
  int64_t epochs_done = 0;                           // agreed ends of an epoch
  std::chrono::steady_clock::time_point last_asked;  // cluster::FailureTold, running free

  // The step's all-reduce (RunOptions::agree_step).
  Result<std::pair<bool, bool>> Agree(bool any_batch, bool any_end) {
    const auto start = std::chrono::steady_clock::now();
    Result<cluster::StepVote> vote =
        cluster::StepAllReduce(allreduce_bytes, {false, any_batch, any_end});
    sync_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!vote.ok()) return vote.status();
    if (vote->failed) {
      stopped = Status::Cancelled("stopped: another rank failed");
      return stopped;
    }
    if (vote->any_batch) {
      ++steps;
    } else {
      ++epochs_done;
    }
    return std::pair<bool, bool>(vote->any_batch, vote->any_end);
  }

  // Whether the job's loop is over: the others take no more all-reduces.
  bool LoopDone() const { return epochs_done >= epochs || (max_steps && steps >= *max_steps); }

  // A failed rank's last all-reduce, which tells the others to stop.
  void Fail() {
    if (LoopDone()) return;
    (void)cluster::StepAllReduce(allreduce_bytes, {true, false, false});
  }
};

// The exit status of a run that misses --target-steps-per-s.
constexpr int kExitTooSlow = 4;

double Rate(double amount, double seconds) { return seconds > 0 ? amount / seconds : 0; }

// 953, 7.0k, 12.8M, 3.1G.
std::string Compact(double v) {
  if (v < 1e3) return fmt::format("{:.0f}", v);
  if (v < 1e6) return fmt::format("{:.1f}k", v / 1e3);
  if (v < 1e9) return fmt::format("{:.1f}M", v / 1e6);
  return fmt::format("{:.1f}G", v / 1e9);
}

// The stage's description, with the flag that asks for the stage.
std::string StageWhat(const run::StageReport& s) {
  switch (s.option) {
    case run::StageReport::Option::kNone:
      return s.what;
    case run::StageReport::Option::kStepTimeMs:
      return s.what + " (--step-time-ms)";
  }
  return s.what;
}

std::string Megabytes(uint64_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

// The p99 wait per step, as a share of a simulated step, up to which the
// input keeps up.
constexpr double kKeepsUpShare = 0.05;

// What the run says of the input against the simulated step (only with
// one) and the target rate (only with one).
struct Verdict {
  std::optional<bool> keeps_up;  // with --step-time-ms
  std::string text;
  std::optional<bool> meets_target;  // with --target-steps-per-s
  // Why a target was missed: "step" (the simulated step alone cannot reach
  // it), "input" (the loop waited for batches), "loop" (receiving and
  // giving back the staged batches), "step-overrun" (the step ran long on a
  // busy machine), "warm-up" (no steady state); empty when it was met.
  std::string target_cause;
  std::string target_text;
};

// Records each worker run here delivered, in the order of r.workers.
std::vector<uint64_t> WorkerRecords(const run::RunReport& r) {
  std::vector<uint64_t> out(r.workers.size(), 0);
  for (const auto& rr : r.replicas) {
    for (size_t i = 0; i < r.workers.size(); ++i) {
      if (r.workers[i] == rr.worker) out[i] += rr.records;
    }
  }
  return out;
}

double SteadyStepsPerSecond(const run::RunReport& r) {
  return Rate(static_cast<double>(r.steady_steps), r.steady_seconds);
}

// Why a run of `rate` global steps/s misses `target`, in `v`: the asked
// step alone, else the largest share of a step beyond the asked step: the
// input's wait, the loop's own time, or the step running long.
void JudgeMiss(const run::RunReport& r, double step_time_ms, double target, double rate,
               Verdict& v) {
  const std::string missed = fmt::format(
      "misses the target of {:g} global steps/s: {:.1f} in the steady state", target, rate);
  if (r.steady_steps == 0) {
    v.target_cause = "warm-up";
    v.target_text = fmt::format(
        "misses the target of {:g} global steps/s: no steady state, one step is the warm-up "
        "alone (run more steps)",
        target);
    return;
  }
  const double budget_ms = 1e3 / target;
  if (step_time_ms > 0 && step_time_ms >= budget_ms) {
    v.target_cause = "step";
    v.target_text = fmt::format(
        "{}; the cause is the simulated step alone: a {:g} ms step allows at most {:.1f} "
        "steps/s whatever the input, so lower --step-time-ms (below {:.4g} ms for {:g} "
        "steps/s) or the target",
        missed, step_time_ms, 1e3 / step_time_ms, budget_ms, target);
    return;
  }
  const double steps = static_cast<double>(r.steady_steps);
  const double per_step_ms = r.steady_seconds / steps * 1e3;
  const double wait_ms = r.steady_wait_seconds / steps * 1e3;
  const double step_ms = r.step_mean_seconds * 1e3;
  const double loop_ms = std::max(0.0, per_step_ms - wait_ms - step_ms);
  const double overrun_ms = std::max(0.0, step_ms - step_time_ms);
  const std::string parts = fmt::format(
      "a step took {:.3f} ms where {:.4g} ms is the most for {:g} steps/s: {:.3f} ms waiting for "
      "batches (p99 {:.3f} ms), {}{:.3f} ms receiving and giving back staged batches",
      per_step_ms, budget_ms, target, wait_ms, r.wait_p99_seconds * 1e3,
      step_time_ms > 0 ? fmt::format("{:.3f} ms in the {:g} ms step, ", step_ms, step_time_ms) : "",
      loop_ms);
  if (overrun_ms > wait_ms && overrun_ms > loop_ms) {
    v.target_cause = "step-overrun";
    v.target_text = fmt::format(
        "{}; the cause is the simulated step running long, not the input ({}): other threads "
        "took this machine's CPUs while it ran; rerun on an idle machine",
        missed, parts);
  } else if (wait_ms >= loop_ms) {
    v.target_cause = "input";
    v.target_text = fmt::format(
        "{}; the cause is the input ({}): make it faster (parallel reads, prefetch, fewer "
        "bytes per step)",
        missed, parts);
  } else {
    v.target_cause = "loop";
    v.target_text = fmt::format(
        "{}; the cause is the loop, not the input ({}): fewer replicas per host, or a "
        "larger batch per step",
        missed, parts);
  }
}

Verdict Judge(const run::RunReport& r, double step_time_ms, std::optional<double> target) {
  Verdict v;
  const double p99_ms = r.wait_p99_seconds * 1e3;
  if (step_time_ms > 0) {
    v.keeps_up = r.steady_steps > 0 && p99_ms <= kKeepsUpShare * step_time_ms;
    v.text = r.steady_steps == 0 ? "no verdict: one step is the warm-up alone (run more steps)"
             : *v.keeps_up       ? fmt::format(
                                       "input keeps up: waited p99 {:.2f} ms per {:g} ms step (at most "
                                             "{:.0f}% of it)",
                                       p99_ms, step_time_ms, 100 * kKeepsUpShare)
                           : fmt::format(
                                 "input-bound: waited p99 {:.2f} ms per {:g} ms step (more than "
                                 "{:.0f}% of it)",
                                 p99_ms, step_time_ms, 100 * kKeepsUpShare);
  }
  if (target) {
    const double rate = SteadyStepsPerSecond(r);
    v.meets_target = r.steady_steps > 0 && rate >= *target;
    if (*v.meets_target) {
      v.target_text = fmt::format(
          "meets the target of {:g} global steps/s: {:.1f} in the steady state", *target, rate);
    } else {
      JudgeMiss(r, step_time_ms, *target, rate, v);
    }
  }
  return v;
}

nlohmann::ordered_json ReportJson(const run::RunReport& r, const nlohmann::ordered_json& source,
                                  const nlohmann::ordered_json& trace, const Verdict& verdict) {
  nlohmann::ordered_json out;
  out["device"] = r.device;
  for (const auto& [key, value] : trace.items()) out[key] = value;
  out["notes"] = r.notes;
  out["policy"] = {{"requested", dist::PolicyName(r.decision.requested)},
                   {"applied", dist::PolicyName(r.decision.applied)},
                   {"reason", r.decision.reason}};
  out["split"] = dist::SplitName(r.decision.split);
  out["num_workers"] = r.topology.workers;
  out["replicas_per_worker"] = r.topology.replicas;
  out["workers_run"] = r.workers;
  out["topology_source"] = source;
  out["format"] = r.format == run::WireFormat::kFeatures ? "features" : "records";
  out["epochs"] = r.epochs;
  out["cold"] = io::ColdReads();
  out["records"] = r.records;
  out["bytes"] = r.bytes;
  out["wire_bytes"] = r.wire_bytes;
  out["batches"] = r.batches;
  out["steps"] = r.steps;
  out["dropped_steps"] = r.dropped_steps;
  out["seconds"] = r.seconds;
  out["records_per_s"] = Rate(static_cast<double>(r.records), r.seconds);
  out["mb_per_s"] = Rate(static_cast<double>(r.bytes) / 1e6, r.seconds);
  out["per_worker"] = nlohmann::ordered_json::array();
  const std::vector<uint64_t> worker_records = WorkerRecords(r);
  for (size_t i = 0; i < r.workers.size(); ++i) {
    out["per_worker"].push_back(
        {{"worker", r.workers[i]},
         {"records", worker_records[i]},
         {"records_per_s", Rate(static_cast<double>(worker_records[i]), r.seconds)}});
  }
  out["bytes_read"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.workers.size() && i < r.worker_bytes_read.size(); ++i) {
    out["bytes_read"].push_back({{"worker", r.workers[i]}, {"bytes", r.worker_bytes_read[i]}});
  }
  out["wait_seconds"] = r.wait_seconds;
  out["wait_share"] = r.seconds > 0 ? r.wait_seconds / r.seconds : 0.0;
  out["first_batch_seconds"] = r.first_batch_seconds;
  out["steady"] = {
      {"seconds", r.steady_seconds},
      {"steps", r.steady_steps},
      {"steps_per_s", SteadyStepsPerSecond(r)},
      {"records_per_s", Rate(static_cast<double>(r.steady_records), r.steady_seconds)}};
  out["wait_per_step_ms"] = {{"p50", r.wait_p50_seconds * 1e3}, {"p99", r.wait_p99_seconds * 1e3}};
  if (verdict.keeps_up) out["keeps_up"] = *verdict.keeps_up;
  if (!verdict.text.empty()) out["verdict"] = verdict.text;
  if (r.step_mean_seconds > 0) {
    out["step_ms"] = {{"mean", r.step_mean_seconds * 1e3}, {"p99", r.step_p99_seconds * 1e3}};
  }
  if (verdict.meets_target) {
    out["meets_target"] = *verdict.meets_target;
    out["target"] = {
        {"text", verdict.target_text},
        {"cause", verdict.target_cause.empty() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(verdict.target_cause)}};
  }
  out["verified"] = r.verified;
  out["warnings"] = WarningTexts(r.decision);
  out["replicas"] = nlohmann::ordered_json::array();
  for (const auto& rr : r.replicas) {
    out["replicas"].push_back(
        {{"worker", rr.worker},
         {"replica", rr.replica},
         {"device", rr.device},
         {"records", rr.records},
         {"bytes", rr.bytes},
         {"wire_bytes", rr.wire_bytes},
         {"batches", rr.batches},
         {"empty_batches", rr.empty_batches},
         {"copy_seconds", rr.copy_seconds},
         {"h2d_gb_per_s", Rate(static_cast<double>(rr.wire_bytes) / 1e9, rr.copy_seconds)},
         {"pinned", rr.pinned}});
  }
  out["stages"] = nlohmann::ordered_json::array();
  for (const auto& s : r.stages) {
    out["stages"].push_back({{"name", s.name},
                             {"seconds", s.seconds},
                             {"bytes", s.bytes},
                             {"items", s.items},
                             {"unit", s.unit},
                             {"what", StageWhat(s)}});
  }
  return out;
}

void PrintReport(const run::RunReport& r, const Verdict& verdict, const std::string& source_text,
                 const std::string& trace) {
  const dist::Decision& d = r.decision;
  fmt::print("{}", trace);
  const dist::Topology& t = r.topology;
  std::string workers = r.workers.size() == static_cast<size_t>(t.workers) && t.workers > 1
                            ? fmt::format("all {} workers", t.workers)
                            : fmt::format("worker {} of {}", r.workers.front(), t.workers);
  fmt::print(
      "run:      {} x {} replica{} on {}{}\n", workers, t.replicas, t.replicas == 1 ? "" : "s",
      r.device == "cuda" ? "CUDA devices" : "host replicas (cpu)", TerminalText(source_text));
  for (const auto& note : r.notes) fmt::print("note:     {}\n", TerminalText(note));
  fmt::print("policy:   {} (requested {}): {}\n", dist::PolicyName(d.applied),
             dist::PolicyName(d.requested), TerminalText(d.reason));
  fmt::print("split:    {}: {}\n", dist::SplitName(d.split), TerminalText(SplitReasonText(d)));
  fmt::print("format:   {}\n", r.format == run::WireFormat::kFeatures
                                   ? "feature columns (parse_example)"
                                   : "records (uint64 offsets + payloads)");
  if (io::ColdReads()) {
    fmt::print(
        "cache:    cold: each input file was evicted from the page cache before it was "
        "read\n");
  }
  for (const auto& w : d.warnings) fmt::print("warning:  {}\n", TerminalText(WarningText(w)));
  fmt::print(
      "\ndelivered {} records ({}) in {} per-replica batches, {} step{}{}, {:.3f} s: "
      "{:.0f} records/s, {:.1f} MB/s{}\n",
      r.records, Megabytes(r.bytes), r.batches, r.steps, r.steps == 1 ? "" : "s",
      r.epochs > 1 ? fmt::format(" over {} epochs", r.epochs) : "", r.seconds,
      Rate(static_cast<double>(r.records), r.seconds),
      Rate(static_cast<double>(r.bytes) / 1e6, r.seconds),
      r.verified ? "; every batch verified" : "");
  if (r.workers.size() > 1) {
    std::string per;
    for (size_t i = 0; i < r.worker_bytes_read.size() && i < 16; ++i) {
      per += fmt::format("{}{}", i ? ", " : "", r.worker_bytes_read[i]);
    }
    if (r.worker_bytes_read.size() > 16) per += ", ...";
    fmt::print("read:     bytes read from files per worker: {}\n", per);
    // Each host of the job runs one worker: what one worker delivered is
    // the figure to hold against a host's GPUs, not this host's total.
    const std::vector<uint64_t> records = WorkerRecords(r);
    std::string rates;
    for (size_t i = 0; i < records.size() && i < 16; ++i) {
      rates += fmt::format("{}{}", i ? ", " : "",
                           Compact(Rate(static_cast<double>(records[i]), r.seconds)));
    }
    if (records.size() > 16) rates += ", ...";
    fmt::print(
        "workers:  records/s per worker: {} ({} workers shared this host's CPUs, where "
        "each host of the job runs one)\n",
        rates, r.workers.size());
  }
  if (r.dropped_steps > 0) {
    fmt::print("dropped:  {} short step{} (one worker, statically shaped batches)\n",
               r.dropped_steps, r.dropped_steps == 1 ? "" : "s");
  }

  fmt::print("\n{:<16} {:>8} {:>9} {:>9} {:>15}  {}\n", "stage", "seconds", "MB", "MB/s",
             "per second", "what");
  for (const auto& s : r.stages) {
    const std::string mb = s.bytes ? fmt::format("{:.1f}", static_cast<double>(s.bytes) / 1e6) : "";
    const std::string mbs =
        s.bytes && s.seconds > 0
            ? fmt::format("{:.1f}", static_cast<double>(s.bytes) / 1e6 / s.seconds)
            : "";
    const std::string items =
        s.items && s.seconds > 0
            ? fmt::format("{} {}", Compact(static_cast<double>(s.items) / s.seconds), s.unit)
            : "";
    fmt::print("{:<16} {:>8.3f} {:>9} {:>9} {:>15}  {}\n", s.name, s.seconds, mb, mbs, items,
               StageWhat(s));
  }

  fmt::print("\n{:>6} {:>7} {:<8} {:>9} {:>12} {:>8} {:>6} {:>9}\n", "worker", "replica", "device",
             "records", "bytes", "batches", "empty", "copy GB/s");
  for (const auto& rr : r.replicas) {
    const std::string gbs =
        rr.copy_seconds > 0
            ? fmt::format("{:.2f}", Rate(static_cast<double>(rr.wire_bytes) / 1e9, rr.copy_seconds))
        : rr.device == "cpu" ? "in place"
                             : "-";
    fmt::print("{:>6} {:>7} {:<8} {:>9} {:>12} {:>8} {:>6} {:>9}\n", rr.worker, rr.replica,
               rr.device, rr.records, rr.bytes, rr.batches, rr.empty_batches, gbs);
  }
  const double share = r.seconds > 0 ? r.wait_seconds / r.seconds : 0;
  const std::string first = r.first_batch_seconds < 1
                                ? fmt::format("{:.2f} ms", r.first_batch_seconds * 1e3)
                                : fmt::format("{:.3f} s", r.first_batch_seconds);
  fmt::print(
      "\nfirst batch after {}; steady state (after it): {:.1f} global steps/s, {} "
      "records/s\n",
      first, SteadyStepsPerSecond(r),
      Compact(Rate(static_cast<double>(r.steady_records), r.steady_seconds)));
  fmt::print("input wait per step: p50 {:.3f} ms, p99 {:.3f} ms ({:.0f}% of the run)\n",
             r.wait_p50_seconds * 1e3, r.wait_p99_seconds * 1e3, 100 * share);
  if (r.step_mean_seconds > 0) {
    fmt::print("simulated step: mean {:.3f} ms, p99 {:.3f} ms\n", r.step_mean_seconds * 1e3,
               r.step_p99_seconds * 1e3);
  }
  if (!verdict.text.empty()) {
    fmt::print("verdict: {}\n", verdict.text);
  } else {
    fmt::print(
        "no step was simulated, so the loop takes each batch as soon as it is ready and "
        "always waits: these figures are the input's ceiling; --step-time-ms T gives a "
        "verdict\n");
  }
  if (!verdict.target_text.empty()) fmt::print("target: {}\n", verdict.target_text);
}

// Runs this process's worker(s); in a job (`job`), keeps the report in
// `job` rather than printing it, and ends each step in the all-reduce with
// --sync.
int RunWorker(const RunArgs& o, JobWorker* job) {
  const bool json = o.format.json();
  if (Status s = o.format.CheckHtml(); !s.ok()) return ReportError(s, false);
  if (o.format.html() && job != nullptr) {
    return ReportError(Status::InvalidArgument("--format html is for one process; under mpirun "
                                               "or srun give --timeline FILE"),
                       false);
  }
  Result<ResolvedDistribute> resolved = ResolveDistributeArgs(o.distribute, o.all_workers);
  if (!resolved.ok()) return ReportError(resolved.status(), json);
  run::RunOptions options;
  options.distribute = resolved->options;
  dist::DistributeOptions& d = options.distribute;
  if (job != nullptr) {
    if (o.all_workers) {
      return ReportError(
          Status::InvalidArgument(
              "--all-workers runs every worker in one process; under mpirun or srun each rank "
              "runs its own"),
          json);
    }
    if (d.topology.workers != cluster::Size() || d.worker != cluster::Rank()) {
      return ReportError(
          Status::InvalidArgument(fmt::format(
              "under mpirun or srun each of the {} ranks runs its own worker; this rank ({}) "
              "was given worker {} of {}",
              cluster::Size(), cluster::Rank(), d.worker ? fmt::format("{}", *d.worker) : "none",
              d.topology.workers)),
          json);
    }
    if (o.sync) {
      job->epochs = o.epochs;
      job->max_steps = d.max_steps;
      options.agree_step = [job](bool any_batch, bool any_end) {
        return job->Agree(any_batch, any_end);
      };
    } else {
      // Running free, the step is this worker's own; another rank's
      // failure, when told, stops it. Asked at most every 50 ms: an MPI
      // call of an oversubscribed rank yields its core.
      options.agree_step = [job](bool any_batch, bool any_end) -> Result<std::pair<bool, bool>> {
        const auto now = std::chrono::steady_clock::now();
        if (now - job->last_asked >= std::chrono::milliseconds(50)) {
          job->last_asked = now;
          if (cluster::FailureTold()) {
            job->stopped = Status::Cancelled("stopped: another rank failed");
            return job->stopped;
          }
        }
        return std::pair<bool, bool>(any_batch, any_end);
      };
    }
  } else if (o.sync || o.allreduce_bytes > 0) {
    return ReportError(
        Status::InvalidArgument("--sync and --allreduce-bytes are for a job of several ranks, "
                                "started by mpirun or srun"),
        json);
  }
  if (o.all_workers) {
    if (o.distribute.worker) {
      return ReportError(Status::InvalidArgument("--all-workers and --worker exclude each other"),
                         json);
    }
    d.worker.reset();
  } else if (!d.worker) {
    if (d.topology.workers > 1) {
      return ReportError(
          Status::InvalidArgument(fmt::format(
              "which worker? give --worker I (0 to {}), or --all-workers to run all {} here",
              d.topology.workers - 1, d.topology.workers)),
          json);
    }
    d.worker = 0;
  }
  options.epochs = o.epochs;
  Result<device::DeviceKind> kind = device::ParseDeviceKind(o.device);
  if (!kind.ok()) return ReportError(kind.status(), json);
  if (*kind == device::DeviceKind::kCpu && !o.gpus.empty()) {
    return ReportError(
        Status::InvalidArgument("--gpus names GPUs, but --device cpu uses host replicas"), json);
  }
  options.staging.device = *kind;
  options.staging.gpus = o.gpus;
  options.staging.depth = o.prefetch.value_or(std::max<int64_t>(2, d.topology.replicas));
  if (options.staging.depth < 1) {
    return ReportError(Status::InvalidArgument("--prefetch must be at least 1"), json);
  }
  io::SetColdReads(o.cold);
  options.staging.verify = o.verify;
  // NaN compares false with everything.
  if (!(o.step_time_ms >= 0 && o.step_time_ms <= run::kMaxStepTimeMs)) {
    return ReportError(Status::InvalidArgument(
                           fmt::format("--step-time-ms must be from 0 to {:.0f} (a day); got {}",
                                       run::kMaxStepTimeMs, o.step_time_ms)),
                       json);
  }
  options.step_time_ms = o.step_time_ms;
  options.corrupt_replica_for_testing = o.corrupt_replica;
  options.fail_pinned_replica_for_testing = o.fail_pinned_replica;
  if (o.pack_threads < -1) {
    return ReportError(Status::InvalidArgument("--pack-threads must be at least 0"), json);
  }
  options.pack_threads = o.pack_threads;
  // The timeline's file is made before the run (a bad path fails first) and
  // committed after it: a failed run leaves none.
  std::optional<run::Timeline> timeline;
  std::unique_ptr<io::AtomicFile> timeline_file;
  if (!o.timeline.empty() || o.format.html()) {
    Result<std::pair<int64_t, int64_t>> window = ParseStepWindow(o.timeline_steps);
    if (!window.ok()) return ReportError(window.status(), json);
    if (!o.timeline.empty()) {
      Result<std::unique_ptr<io::AtomicFile>> file = io::AtomicFile::Create(
          TimelinePath(o.timeline, job != nullptr ? d.worker : std::nullopt), /*overwrite=*/true);
      if (!file.ok()) return ReportError(file.status(), json);
      timeline_file = std::move(*file);
    }
    timeline.emplace(window->first, window->second);
    options.timeline = &*timeline;
  }

  const bool tty = isatty(STDERR_FILENO);
  bool progress_shown = false;
  if (tty) {
    options.progress = [&progress_shown](const run::Progress& p) {
      std::string eta;
      if (p.total_steps && p.steps > 0 && *p.total_steps >= p.steps) {
        eta = fmt::format(", ETA {:.0f} s", p.seconds / static_cast<double>(p.steps) *
                                                static_cast<double>(*p.total_steps - p.steps));
      }
      fmt::print(stderr, "\r\033[Kstep {}{}: {} records, {:.1f} MB/s{}", p.steps,
                 p.total_steps ? fmt::format("/{}", *p.total_steps) : "", p.records,
                 Rate(static_cast<double>(p.bytes) / 1e6, p.seconds), eta);
      progress_shown = true;
    };
  }

  Result<LoadedPipeline> loaded = LoadDistributedPipeline(o.pipeline, o.distribute, d, json);
  if (!loaded.ok()) return ExitCodeFor(loaded.status());
  options.build = o.pipeline.build_options(*loaded);
  const data::Pipeline* pipeline = &loaded->pipeline;
  // After the pipeline, whose mistakes come first.
  if (o.epochs < 1) {
    return ReportError(
        Status::InvalidArgument(fmt::format("--epochs must be at least 1; got {}", o.epochs)),
        json);
  }
  Result<run::RunReport> report = run::Run(*pipeline, options);
  if (progress_shown) fmt::print(stderr, "\r\033[K");
  if (!report.ok()) return ReportPipelineError(report.status(), pipeline->text, json);
  if (timeline_file) {
    const std::string other = fmt::format(
        "\"tool\":\"tfdist run\",\"steps\":{},\"timeline_steps\":[{},{}],\"workers\":{},"
        "\"replicas\":{},\"device\":\"{}\"",
        report->steps, timeline->first_step(), timeline->last_step(),
        DumpJson(nlohmann::ordered_json(report->workers)), report->topology.replicas,
        report->device);
    std::unique_ptr<io::ByteSink> sink = timeline_file->TakeSink(/*sync=*/false);
    Status written = sink->Write(timeline->Json(other));
    if (written.ok()) written = sink->Finish();
    sink.reset();
    if (written.ok()) written = timeline_file->Commit();
    if (!written.ok()) return ReportError(written, json);
  }
  // The pipeline's own notes (fewer reader threads than asked) first.
  std::vector<std::string> thread_notes = data::ThreadNotes(*pipeline, options.build);
  report->notes.insert(report->notes.begin(), thread_notes.begin(), thread_notes.end());
  const Verdict verdict = Judge(*report, o.step_time_ms, o.target_steps_per_s);
  if (job != nullptr) {
    job->report = ReportJson(*report, resolved->source, TraceJson(*loaded), verdict);
    job->run = std::move(*report);
    return 0;
  }
  if (o.format.html()) {
    nlohmann::ordered_json doc = ReportJson(*report, resolved->source, TraceJson(*loaded), verdict);
    AddTimelineJson(*timeline, doc);
    fmt::print("{}", RunPage(doc));
  } else if (json) {
    PrintJson(ReportJson(*report, resolved->source, TraceJson(*loaded), verdict));
  } else {
    PrintReport(*report, verdict, resolved->source_text, TraceHeader(*loaded));
  }
  // For CI: a run short of the target rate fails, whatever the cause.
  if (verdict.meets_target && !*verdict.meets_target) return kExitTooSlow;
  return 0;
}

using Json = nlohmann::ordered_json;

// The costliest stage of a worker's run (a report's "stages"): of those its
// producers and packers run, not the loop's waits or the simulated step.
std::pair<std::string, double> CostliestStage(const Json& report) {
  std::pair<std::string, double> top{"none", 0.0};
  for (const Json& stage : report["stages"]) {
    const std::string name = stage["name"];
    if (name == "wait" || name == "copy wait" || name == "step") continue;
    const double seconds = stage["seconds"];
    if (seconds > top.second) top = {name, seconds};
  }
  return top;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A worker's row of the cluster report, from what its rank sent.
Json WorkerRow(const Json& rank) {
  const Json& r = rank["report"];
  const auto [stage, stage_seconds] = CostliestStage(r);
  Json row;
  row["worker"] = r["workers_run"][0];
  row["rank"] = rank["rank"];
  row["host"] = rank["host"];
  row["records"] = r["records"];
  row["bytes"] = r["bytes"];
  row["batches"] = r["batches"];
  row["steps"] = r["steps"];
  row["seconds"] = r["seconds"];
  row["records_per_s"] = r["records_per_s"];
  row["steps_per_s"] = r["steady"]["steps_per_s"];
  row["first_batch_seconds"] = r["first_batch_seconds"];
  row["wait_per_step_ms"] = r["wait_per_step_ms"];
  row["input_wait_per_step_ms"] = rank["input_wait_per_step_ms"];
  row["allreduce_seconds"] = rank["allreduce_seconds"];
  row["bytes_read"] = r["bytes_read"][0]["bytes"];
  row["costliest_stage"] = {{"name", stage}, {"seconds", stage_seconds}};
  if (r.contains("keeps_up")) row["keeps_up"] = r["keeps_up"];
  return row;
}

// The cluster's report at rank 0, from every rank's (each a JSON object:
// rank, host, exit, own_failure, messages, error, report); returns the job's
// exit status.
int ClusterReport(const RunArgs& o, const std::vector<Json>& ranks) {
  const bool json = o.format.json();
  // Rank 0's own messages as it would have printed them; a failed rank's
  // errors named by rank and host.
  CaptureMessages(false);
  // (Not the error of its own stop by another rank's failure, which that
  // rank's error says.)
  for (const Json& m : ranks[0]["messages"]) {
    const std::string line = m;
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    if (ranks[0]["stopped"].get<bool>() && line.starts_with("error: ")) continue;
    PrintMessage(line.substr(0, colon), line.substr(colon + 2));
  }
  const Json* failed = nullptr;
  for (const Json& r : ranks) {
    if (!r["own_failure"].get<bool>()) continue;
    if (failed == nullptr) failed = &r;
    if (r["rank"] == 0) continue;
    for (const Json& m : r["messages"]) {
      const std::string line = m;
      if (line.starts_with("error: ")) {
        PrintMessage("error", fmt::format("rank {} ({}): {}", r["rank"].get<int>(),
                                          r["host"].get<std::string>(), line.substr(7)));
      }
    }
  }
  Json out;
  out["ranks"] = ranks.size();
  std::vector<std::string> hosts;
  for (const Json& r : ranks) hosts.push_back(r["host"]);
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  out["hosts"] = hosts;
  out["sync"] = o.sync;
  out["allreduce_bytes"] = o.allreduce_bytes;
  if (failed != nullptr) {
    const int rc = (*failed)["exit"];
    if (json) {
      Json f;
      f["rank"] = (*failed)["rank"];
      f["host"] = (*failed)["host"];
      f["exit"] = rc;
      out["failed"] = f;
      out["error"] = (*failed)["error"];
      PrintJson(out);
    }
    return rc;
  }

  Json rows = Json::array();
  uint64_t records = 0, bytes = 0, batches = 0, bytes_read = 0;
  for (const Json& r : ranks) {
    rows.push_back(WorkerRow(r));
    records += rows.back()["records"].get<uint64_t>();
    bytes += rows.back()["bytes"].get<uint64_t>();
    batches += rows.back()["batches"].get<uint64_t>();
    bytes_read += rows.back()["bytes_read"].get<uint64_t>();
  }
  // The job runs at its slowest worker's rate. Under --sync every worker
  // steps together, and the one that holds the others back comes last to
  // each step's all-reduce: it waits there the least, the others wait for
  // it. Running free, it is the one with the lowest rate over its whole run
  // (a longer window than the steady state's, which a worker of small
  // batches may pass in milliseconds).
  std::vector<double> rates, waits, run_rates;
  for (const Json& row : rows) {
    rates.push_back(row["steps_per_s"]);
    const double steps = std::max<double>(1, row["steps"].get<double>());
    waits.push_back(row["allreduce_seconds"].get<double>() / steps * 1e3);
    run_rates.push_back(Rate(row["steps"].get<double>(), row["seconds"].get<double>()));
  }
  const double cluster_rate = *std::min_element(rates.begin(), rates.end());
  size_t slow = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    if (o.sync ? waits[i] < waits[slow] : run_rates[i] < run_rates[slow]) slow = i;
  }
  const Json& s = rows[slow];
  Json straggler;
  straggler["worker"] = s["worker"];
  straggler["rank"] = s["rank"];
  straggler["host"] = s["host"];
  straggler["costliest_stage"] = s["costliest_stage"];
  std::string behind;
  if (o.sync) {
    const double median = Median(waits);
    straggler["allreduce_ms_per_step"] = waits[slow];
    straggler["median_allreduce_ms_per_step"] = median;
    straggler["behind_ms_per_step"] = median - waits[slow];
    behind = fmt::format(
        "last to each step's all-reduce, where the median worker waited {:.3f} ms per step "
        "for the others and it {:.3f} ms: {:.3f} ms behind",
        median, waits[slow], median - waits[slow]);
  } else {
    const double median = Median(run_rates);
    const double share = median > 0 ? (median - run_rates[slow]) / median : 0;
    straggler["run_steps_per_s"] = run_rates[slow];
    straggler["median_run_steps_per_s"] = median;
    straggler["behind_share"] = share;
    behind = fmt::format("{:.1f} steps/s over its run, {:.0f}% behind the median worker's {:.1f}",
                         run_rates[slow], 100 * share, median);
  }
  // The verdict of the whole job: the input keeps up where every worker's
  // does; the target is the cluster's rate.
  std::optional<bool> keeps_up;
  std::vector<std::string> bound;
  for (const Json& row : rows) {
    if (!row.contains("keeps_up")) continue;
    keeps_up = keeps_up.value_or(true) && row["keeps_up"].get<bool>();
    if (!row["keeps_up"].get<bool>()) bound.push_back(fmt::format("{}", row["worker"].get<int>()));
  }
  std::string verdict;
  if (keeps_up) {
    verdict =
        *keeps_up
            ? fmt::format("input keeps up on every worker ({:g} ms steps)", o.step_time_ms)
            : fmt::format("input-bound on worker{} {} ({:g} ms steps)",
                          bound.size() == 1 ? "" : "s", fmt::join(bound, ", "), o.step_time_ms);
  }
  std::optional<bool> meets;
  if (o.target_steps_per_s) meets = cluster_rate >= *o.target_steps_per_s;

  if (json) {
    out["workers"] = rows;
    out["records"] = records;
    out["bytes"] = bytes;
    out["batches"] = batches;
    out["bytes_read"] = bytes_read;
    out["steps_per_s"] = cluster_rate;
    out["straggler"] = straggler;
    if (keeps_up) {
      out["keeps_up"] = *keeps_up;
      out["verdict"] = verdict;
    }
    if (meets) {
      out["meets_target"] = *meets;
      out["target"] = {{"steps_per_s", *o.target_steps_per_s}};
    }
    out["reports"] = Json::array();
    for (const Json& r : ranks) out["reports"].push_back(r["report"]);
    PrintJson(out);
  } else {
    fmt::print("cluster:  {} workers, one per rank, on {} host{}{}\n", ranks.size(), hosts.size(),
               hosts.size() == 1 ? "" : "s",
               o.sync ? fmt::format("; synchronous: an all-reduce of {} bytes ends every step",
                                    o.allreduce_bytes)
                      : "; each worker runs free (--sync makes them step together)");
    fmt::print("{:>6}  {:>4}  {:<16}  {:>8}  {:>9}  {:>7}  {:>11}  {:>11}  {:>10}  {:>10}  {}\n",
               "worker", "rank", "host", "records", "records/s", "steps/s", "first batch",
               "wait p50/99", "all-reduce", "bytes read", "costliest stage");
    for (const Json& row : rows) {
      fmt::print(
          "{:>6}  {:>4}  {:<16}  {:>8}  {:>9}  {:>7.1f}  {:>9.3f} s  {:>11}  {:>8.3f} s  {:>10}  "
          "{} ({:.3f} s)\n",
          row["worker"].get<int>(), row["rank"].get<int>(),
          TerminalText(row["host"].get<std::string>()), row["records"].get<uint64_t>(),
          Compact(row["records_per_s"].get<double>()), row["steps_per_s"].get<double>(),
          row["first_batch_seconds"].get<double>(),
          fmt::format("{:.2f}/{:.2f} ms", row["wait_per_step_ms"]["p50"].get<double>(),
                      row["wait_per_step_ms"]["p99"].get<double>()),
          row["allreduce_seconds"].get<double>(), row["bytes_read"].get<uint64_t>(),
          row["costliest_stage"]["name"].get<std::string>(),
          row["costliest_stage"]["seconds"].get<double>());
    }
    fmt::print("total:    {} records, {} bytes, {} batches; {} bytes read\n", records, bytes,
               batches, bytes_read);
    fmt::print("cluster:  {:.1f} global steps/s in the steady state (its slowest worker's)\n",
               cluster_rate);
    fmt::print("straggler: worker {} (rank {}, {}): {}; its costliest stage: {} ({:.3f} s)\n",
               s["worker"].get<int>(), s["rank"].get<int>(),
               TerminalText(s["host"].get<std::string>()), behind,
               s["costliest_stage"]["name"].get<std::string>(),
               s["costliest_stage"]["seconds"].get<double>());
    if (keeps_up) fmt::print("verdict:  {}\n", verdict);
    if (meets) {
      fmt::print("target:   {} the target of {:g} global steps/s: {:.1f} in the steady state\n",
                 *meets ? "meets" : "misses", *o.target_steps_per_s, cluster_rate);
    }
  }
  return meets && !*meets ? kExitTooSlow : 0;
}

int RunRun(const RunArgs& o) {
  if (cluster::Size() == 1) return RunWorker(o, nullptr);
  JobWorker job;
  job.sync = o.sync;
  job.allreduce_bytes = o.allreduce_bytes;
  const int rc = RunWorker(o, &job);
  job.own_failure = !job.report && job.stopped.ok();
  if (job.own_failure) {
    if (o.sync) {
      job.Fail();
    } else {
      cluster::TellFailure();
    }
  }
  Json mine;
  mine["rank"] = cluster::Rank();
  mine["host"] = cluster::HostName();
  mine["exit"] = rc;
  mine["own_failure"] = job.own_failure;
  mine["stopped"] = !job.stopped.ok();
  mine["allreduce_seconds"] = job.sync_seconds;
  // The input's wait per step of the steady state: under --sync, what a
  // worker adds to every step of the job.
  mine["input_wait_per_step_ms"] =
      job.run && job.run->steady_steps > 0
          ? job.run->steady_wait_seconds / static_cast<double>(job.run->steady_steps) * 1e3
          : 0.0;
  mine["messages"] = TakeCapturedMessages();
  mine["error"] = TakeCapturedErrorJson();
  mine["report"] = job.report ? *job.report : Json(nullptr);
  Result<std::vector<std::string>> all = cluster::Gather(mine.dump());
  if (!all.ok()) {
    CaptureMessages(false);
    return ReportJobError(all.status(), false);
  }
  if (!cluster::IsRoot()) return rc;
  std::vector<Json> ranks;
  for (const std::string& r : *all) ranks.push_back(Json::parse(r));
  return ClusterReport(o, ranks);
}

}  // namespace

void AddRunCommand(CLI::App& app, Action* action) {
  auto o = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run the distributed pipeline for real: every per-replica batch staged in pinned host "
      "buffers and copied to its GPU (or host replica), with the throughput of every stage");
  AddPipelineArgs(*cmd, &o->pipeline);
  AddIndexDirOption(*cmd);
  AddDistributeArgs(*cmd, &o->distribute,
                    "Run this worker; default: from the launcher's environment, else worker 0 "
                    "of a single worker",
                    "Stop after N global steps");
  AddReadByIndexFlag(*cmd, &o->distribute);
  cmd->add_flag("--all-workers", o->all_workers,
                "Run every worker of the topology on this host (each reads its own share)");
  cmd->add_option("--epochs", o->epochs, "Passes over the data (each reshuffles)")->default_val(1);
  cmd->add_option("--device", o->device,
                  "auto (CUDA when a GPU is usable, else host replicas), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->default_str("auto");
  cmd->add_option("--gpus", o->gpus,
                  "GPU ordinals to use, comma-separated, e.g. 0,1 (replicas go round-robin over "
                  "them); default: all visible")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--prefetch", o->prefetch,
                  "Staging slots per replica (batches in flight); default: the replicas per "
                  "worker, at least 2");
  cmd->add_flag("--cold", o->cold,
                "Evict each input file from the page cache before reading it, so that the "
                "figures describe the storage (a first epoch), not memory");
  cmd->add_flag("--verify", o->verify,
                "Check every batch: a checksum on the device (or the host replica) against "
                "the host's");
  cmd->add_option("--target-steps-per-s", o->target_steps_per_s,
                  "Exit 4 when the steady state runs fewer global steps per second than this, "
                  "with the simulated step when given (for CI); the report says whether the "
                  "input, the step alone or the loop is the cause")
      ->check(Finite())
      ->check(Positive());
  cmd->add_option("--step-time-ms", o->step_time_ms,
                  "Simulate a training step of this many milliseconds: does the input keep up? "
                  "(the report gives the step's measured mean and p99)")
      ->check(Finite());
  cmd->add_option("--pack-threads", o->pack_threads,
                  "Threads packing or parsing batches into staging slots; 0: each worker's "
                  "reading thread; default: 0 on two cores or fewer, else one per replica, "
                  "up to the cores when parsing, the cores less two for raw records");
  cmd->add_flag("--sync", o->sync,
                "Under mpirun or srun: end every global step in an all-reduce across the ranks, "
                "so that the job steps at its slowest worker's rate, as synchronous training");
  cmd->add_option_function<std::string>(
         "--allreduce-bytes",
         [o](const std::string& v) { o->allreduce_bytes = proto::ParseByteCount(v).value(); },
         "With --sync: the bytes each step's all-reduce sums, a gradient's size; k, M and G "
         "are powers of 1024 (default 0: the all-reduce carries only the ranks' state)")
      ->type_name("BYTES")
      ->check(
          [](const std::string& v) -> std::string {
            Result<uint64_t> n = proto::ParseByteCount(v);
            return n.ok() ? std::string() : std::string(n.status().message());
          },
          "");
  cmd->add_option("--timeline", o->timeline,
                  "Write the run as a Chrome trace (trace-event JSON, for Perfetto or "
                  "chrome://tracing) to FILE: a process per worker with a track for its reads "
                  "and one per replica (slot wait, pack or parse, copy), the training loop's "
                  "input wait, receive and step, and the staging rings' fill; under mpirun "
                  "each rank writes FILE with .worker-W before its extension")
      ->type_name("FILE");
  cmd->add_option("--timeline-steps", o->timeline_steps,
                  "With --timeline: the global steps FIRST:LAST whose time it records; the "
                  "file and its memory grow with the window")
      ->default_str("1:1000")
      ->type_name("FIRST:LAST");
  AddFormatOptions(*cmd, &o->format, "the report", "the report as one JSON object", {}, {},
                   "one self-contained page: the report, the timeline of --timeline-steps "
                   "drawn (its first 6,000 events) and a histogram of the loop's input waits; "
                   "what it draws embedded as JSON");
  cmd->add_option("--corrupt-replica-for-testing", o->corrupt_replica)->group("");
  cmd->add_option("--fail-pinned-for-testing", o->fail_pinned_replica)->group("");
  cmd->callback([o, action] { *action = [o] { return RunRun(*o); }; });
}

}  // namespace tfdist::cli
