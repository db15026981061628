// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist check: a pre-launch verdict on a distributed input pipeline, with a
// finding per problem (what TensorFlow does at run time, the evidence, the
// fix) and the steps_per_epoch values worth knowing.

#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "distribute_args.h"
#include "file_args.h"
#include "html_page.h"
#include "pipeline_args.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/distribute/check.h"
#include "validators.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

// The exit status when a finding is an error: the job would fail, hang, or
// feed records twice or never, without having been asked to.
constexpr int kExitFindingError = 6;

struct CheckOptions {
  PipelineArgs pipeline;
  DistributeArgs distribute;
  FormatArgs format;
  std::string loop = "for";
  std::optional<std::string> strategy;
  std::string tf_version;
  std::optional<int64_t> steps_per_epoch;
  int64_t epochs = 1;
};

std::string StrategyText(dist::Strategy s, const dist::Topology& t) {
  auto n = [](int64_t v, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", v, v == 1 ? one : many);
  };
  switch (s) {
    case dist::Strategy::kMirrored:
      return fmt::format("mirrored: 1 worker x {}", n(t.replicas, "replica", "replicas"));
    case dist::Strategy::kMultiWorker:
      return fmt::format("multi-worker: {} x {}", n(t.workers, "worker", "workers"),
                         n(t.replicas, "replica", "replicas"));
    case dist::Strategy::kTpu:
      return fmt::format("tpu: {} x {}", n(t.workers, "host", "hosts"),
                         n(t.replicas, "core", "cores"));
    case dist::Strategy::kParameterServer:
      return fmt::format("parameter-server: {}", n(t.workers, "worker", "workers"));
  }
  return {};
}

// A fix's options as check's flags (or the command to run first).
std::string FlagsText(const dist::FixOption& f) {
  switch (f.kind) {
    case dist::FixOption::Kind::kPolicy:
      return fmt::format("--policy {}", dist::PolicyName(f.policy));
    case dist::FixOption::Kind::kStepsPerEpoch:
      return fmt::format("--steps-per-epoch {}", f.value);
    case dist::FixOption::Kind::kLoopNext:
      return fmt::format("--loop next --steps-per-epoch {}", f.value);
    case dist::FixOption::Kind::kReshard:
      return fmt::format("tfdist reshard --num-shards {}", f.value);
    case dist::FixOption::Kind::kWorkers:
      return fmt::format("--workers {}", f.value);
    case dist::FixOption::Kind::kDropSteps:
      return "no --steps-per-epoch";
  }
  return {};
}

std::string_view ResultName(dist::FindingSeverity worst) {
  switch (worst) {
    case dist::FindingSeverity::kError:
      return "fail";
    case dist::FindingSeverity::kWarning:
      return "warn";
    case dist::FindingSeverity::kInfo:
      return "ok";
  }
  return "ok";
}

std::string Verdict(const dist::CheckResult& r) {
  size_t errors = 0, warnings = 0;
  for (const dist::Finding& f : r.findings) {
    errors += f.severity == dist::FindingSeverity::kError;
    warnings += f.severity == dist::FindingSeverity::kWarning;
  }
  const std::string bound = r.upper_bound.empty() ? "" : "; " + r.upper_bound;
  switch (r.Worst()) {
    case dist::FindingSeverity::kError:
      return fmt::format(
          "fail: the job would fail, hang, or feed records twice or never ({} error{}, {} "
          "warning{}){}",
          errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s", bound);
    case dist::FindingSeverity::kWarning:
      return fmt::format("warn: the job runs; {} warning{} below{}", warnings,
                         warnings == 1 ? "" : "s", bound);
    case dist::FindingSeverity::kInfo:
      return r.upper_bound.empty() ? "ok: no problem found"
                                   : fmt::format("ok: no problem found as counted{}", bound);
  }
  return {};
}

nlohmann::ordered_json ResultJson(const dist::CheckResult& r, const dist::CheckContext& ctx,
                                  const dist::DistributeOptions& d) {
  nlohmann::ordered_json out;
  out["result"] = ResultName(r.Worst());
  out["strategy"] = dist::StrategyName(ctx.strategy);
  out["loop"] = dist::LoopName(ctx.loop);
  out["tf_version"] = fmt::format("2.{}", ctx.version.minor);
  out["keras"] = ctx.version.Keras3() ? 3 : 2;
  out["workers"] = d.topology.workers;
  out["replicas"] = d.topology.replicas;
  out["steps_per_epoch_given"] =
      ctx.steps_per_epoch ? nlohmann::ordered_json(*ctx.steps_per_epoch) : nullptr;
  out["epochs"] = ctx.epochs;
  out["upper_bound"] = r.upper_bound.empty() ? nullptr : nlohmann::ordered_json(r.upper_bound);
  out["findings"] = nlohmann::ordered_json::array();
  for (const dist::Finding& f : r.findings) {
    nlohmann::ordered_json j;
    j["kind"] = dist::FindingName(f.kind);
    j["severity"] = dist::SeverityName(f.severity);
    j["tensorflow"] = f.tensorflow;
    j["other_versions"] = f.other_versions;
    j["evidence"] = f.evidence;
    j["fix"] = f.fix;
    j["fix_flags"] = nlohmann::ordered_json::array();
    for (const dist::FixOption& option : f.options) j["fix_flags"].push_back(FlagsText(option));
    out["findings"].push_back(std::move(j));
  }
  if (r.steps_per_epoch) {
    const dist::StepsPerEpoch& s = *r.steps_per_epoch;
    out["steps_per_epoch"] = {
        {"min", s.min}, {"max", s.max}, {"at_min", s.at_min}, {"at_max", s.at_max}};
  } else {
    out["steps_per_epoch"] = nullptr;
  }
  return out;
}

// The traced input's lines, the verdict and the job: the text output's head.
std::string HeadText(const dist::CheckResult& r, const dist::CheckContext& ctx,
                     const dist::DistributeOptions& d, const std::string& trace,
                     const std::string& source) {
  return fmt::format(
      "{}check: {}\njob:   {}{}, loop {}{}{}, TF 2.{} (Keras {})\n", trace, Verdict(r),
      StrategyText(ctx.strategy, d.topology), TerminalText(source), dist::LoopName(ctx.loop),
      ctx.steps_per_epoch ? fmt::format(", steps_per_epoch {}", *ctx.steps_per_epoch) : "",
      ctx.epochs > 1 ? fmt::format(", {} epochs", ctx.epochs) : "", ctx.version.minor,
      ctx.version.Keras3() ? 3 : 2);
}

void PrintResult(const dist::CheckResult& r, const dist::CheckContext& ctx,
                 const dist::DistributeOptions& d, const std::string& trace,
                 const std::string& source) {
  fmt::print("{}", HeadText(r, ctx, d, trace, source));
  for (const dist::Finding& f : r.findings) {
    fmt::print("\n{}: {}\n", dist::SeverityName(f.severity), dist::FindingName(f.kind));
    fmt::print("  tensorflow: {}\n", TerminalText(f.tensorflow));
    if (!f.other_versions.empty()) {
      fmt::print("  other versions: {}\n", TerminalText(f.other_versions));
    }
    fmt::print("  evidence: {}\n", TerminalText(f.evidence));
    fmt::print("  fix: {}\n", TerminalText(f.fix));
    std::string flags;
    for (const dist::FixOption& option : f.options) {
      flags += fmt::format("{}{}{}", flags.empty() ? "" : "; or ", FlagsText(option),
                           option.kind == dist::FixOption::Kind::kReshard
                               ? " (then the pipeline reads the new files)"
                               : "");
    }
    if (!flags.empty()) fmt::print("  fix here: {}\n", TerminalText(flags));
  }
  if (r.steps_per_epoch) {
    const dist::StepsPerEpoch& s = *r.steps_per_epoch;
    fmt::print("\nsteps_per_epoch: min {}, max {}\n", s.min, s.max);
    fmt::print("  min {}: {}\n", s.min, TerminalText(s.at_min));
    fmt::print("  max {}: {}\n", s.max, TerminalText(s.at_max));
  }
}

// The combinations TensorFlow cannot run, worded as flags (the library's
// ValidateCheck states the same rules in TensorFlow's terms).
Status CheckCombination(const dist::CheckContext& ctx, const dist::DistributeOptions& d) {
  const int64_t W = d.topology.workers;
  switch (ctx.strategy) {
    case dist::Strategy::kMirrored:
      if (W != 1) {
        return Status::InvalidArgument(fmt::format(
            "--strategy mirrored is one worker (MirroredStrategy); for {} workers give "
            "--strategy multi-worker (MultiWorkerMirroredStrategy), or tpu for TPU hosts",
            W));
      }
      break;
    case dist::Strategy::kMultiWorker:
      if (W < 2) {
        return Status::InvalidArgument(
            "--strategy multi-worker (MultiWorkerMirroredStrategy) needs --workers 2 or more; "
            "one worker is --strategy mirrored");
      }
      break;
    case dist::Strategy::kTpu:
      break;
    case dist::Strategy::kParameterServer:
      if (d.api != dist::Api::kFromFunction) {
        return Status::InvalidArgument(
            "--strategy parameter-server takes the per-worker dataset function "
            "(ClusterCoordinator.create_per_worker_dataset): give --api from-function");
      }
      if (ctx.loop != dist::Loop::kNext && ctx.loop != dist::Loop::kFit) {
        return Status::InvalidArgument(fmt::format(
            "--strategy parameter-server with --loop {}: a ClusterCoordinator schedules a "
            "number of steps; give --loop next or fit, with --steps-per-epoch",
            dist::LoopName(ctx.loop)));
      }
      if (ctx.version.minor < 4) {
        return Status::InvalidArgument(fmt::format(
            "--strategy parameter-server with --tf-version 2.{}: ClusterCoordinator came in TF "
            "2.4; give --tf-version 2.4 or later",
            ctx.version.minor));
      }
      if (!ctx.steps_per_epoch) {
        return Status::InvalidArgument(
            "--strategy parameter-server needs --steps-per-epoch: model.fit's "
            "steps_per_epoch=None is not supported with ParameterServerStrategy");
      }
      break;
  }
  if ((ctx.loop == dist::Loop::kFor || ctx.loop == dist::Loop::kForTf) && ctx.steps_per_epoch) {
    return Status::InvalidArgument(fmt::format(
        "--loop {} with --steps-per-epoch: a for loop over the dataset runs until the data ends; "
        "a fixed count of steps is --loop next",
        dist::LoopName(ctx.loop)));
  }
  if (ctx.loop == dist::Loop::kNext && !ctx.steps_per_epoch) {
    return Status::InvalidArgument(
        "--loop next needs --steps-per-epoch N: the calls of next(iterator) an epoch");
  }
  if (ctx.loop == dist::Loop::kEstimator && ctx.version.Keras3()) {
    return Status::InvalidArgument(fmt::format(
        "--loop estimator with --tf-version 2.{}: tf.estimator was removed in TF 2.16; give "
        "--tf-version 2.15 or earlier",
        ctx.version.minor));
  }
  if (ctx.loop == dist::Loop::kEstimator &&
      (ctx.strategy == dist::Strategy::kTpu || ctx.strategy == dist::Strategy::kParameterServer)) {
    return Status::InvalidArgument(fmt::format(
        "--loop estimator with --strategy {}: Estimator takes mirrored or multi-worker (on a "
        "TPU it is TPUEstimator, another API)",
        dist::StrategyName(ctx.strategy)));
  }
  if (ctx.loop == dist::Loop::kEstimator && ctx.strategy == dist::Strategy::kMultiWorker &&
      d.api != dist::Api::kFromFunction) {
    return Status::InvalidArgument(
        "--loop estimator with --strategy multi-worker: Estimator calls its input_fn on each "
        "worker, without auto-sharding; give --api from-function");
  }
  return dist::ValidateCheck(ctx, d);
}

int RunCheck(const CheckOptions& o) {
  const bool json = o.format.json();
  if (Status s = o.format.CheckHtml(); !s.ok()) return ReportError(s, false);
  dist::CheckContext ctx;
  Result<dist::Loop> loop = dist::ParseLoop(o.loop);
  if (!loop.ok()) return ReportError(loop.status(), json);
  ctx.loop = *loop;
  if (!o.tf_version.empty()) {
    Result<dist::TfVersion> version = dist::ParseTfVersion(o.tf_version);
    if (!version.ok()) {
      return ReportError(Status::InvalidArgument(fmt::format(
                             "--tf-version {}: a TensorFlow 2.x release, 2.0 to 2.{} (e.g. 2.15)",
                             o.tf_version, dist::kNewestTfVersion.minor)),
                         json);
    }
    ctx.version = *version;
  }
  ctx.steps_per_epoch = o.steps_per_epoch;
  ctx.epochs = o.epochs;
  Result<ResolvedDistribute> resolved = ResolveDistributeArgs(o.distribute, true);
  if (!resolved.ok()) return ReportError(resolved.status(), json);
  dist::DistributeOptions& d = resolved->options;
  d.worker.reset();
  if (o.strategy) {
    Result<dist::Strategy> strategy = dist::ParseStrategy(*o.strategy);
    if (!strategy.ok()) return ReportError(strategy.status(), json);
    ctx.strategy = *strategy;
  } else {
    ctx.strategy = dist::DefaultStrategy(d.topology);
  }
  // The combination first: nothing is read for a job TensorFlow cannot run.
  if (Status s = CheckCombination(ctx, d); !s.ok()) return ReportError(s, json);
  // A parameter server's workers each call the dataset function with
  // InputContext(1, 0): the function is traced and checked as one worker's.
  const dist::Topology shown = d.topology;
  if (ctx.strategy == dist::Strategy::kParameterServer) {
    ctx.ps_workers = d.topology.workers;
    d.topology.workers = 1;
  }
  Result<LoadedPipeline> loaded = LoadDistributedPipeline(o.pipeline, o.distribute, d, json);
  if (!loaded.ok()) return ExitCodeFor(loaded.status());
  // A policy the user chose (--policy, or the traced code's with_options)
  // was asked for: OFF's duplicates are then no error.
  ctx.policy_given = o.distribute.policy.has_value() || (loaded->trace && loaded->trace->policy);
  // The API may come from the traced code: check the combination again.
  dist::DistributeOptions as_given = d;
  as_given.topology = shown;
  if (Status s = CheckCombination(ctx, as_given); !s.ok()) return ReportError(s, json);
  const data::Pipeline& pipeline = loaded->pipeline;
  const data::BuildOptions build = o.pipeline.build_options(*loaded);
  Result<dist::CheckResult> result = dist::Check(pipeline, d, build, ctx);
  if (!result.ok()) return ReportPipelineError(result.status(), pipeline.text, json);
  if (json || o.format.html()) {
    nlohmann::ordered_json out = ResultJson(*result, ctx, as_given);
    out["topology_source"] = resolved->source;
    // As layout's: the traced input and the assumptions beside the result.
    const nlohmann::ordered_json trace = TraceJson(*loaded);
    if (trace.contains("input")) {
      out["input"] = trace["input"];
      out["assumptions"] = trace["assumptions"];
    }
    if (o.format.html()) {
      fmt::print("{}", CheckPage(out, HeadText(*result, ctx, as_given, TraceHeader(*loaded),
                                               resolved->source_text)));
    } else {
      PrintJson(out);
    }
  } else {
    PrintResult(*result, ctx, as_given, TraceHeader(*loaded), resolved->source_text);
  }
  return result->Worst() == dist::FindingSeverity::kError ? kExitFindingError : 0;
}

}  // namespace

void AddCheckCommand(CLI::App& app, Action* action) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Before launch: will this tf.distribute job fail, hang, or feed a record twice or never? "
      "A verdict, then each finding with what TensorFlow does at run time under the loop, "
      "strategy and version, the evidence and the fix (exit 6 when one is an error)");
  AddPipelineArgs(*cmd, &o->pipeline);
  AddIndexDirOption(*cmd);
  AddDistributeArgs(*cmd, &o->distribute, "", "");
  // check judges every worker, one epoch of the data at a time: a worker
  // to show or a number of steps to plan mean nothing here.
  cmd->remove_option(cmd->get_option("--worker"));
  cmd->remove_option(cmd->get_option("--steps"));
  AddFormatOptions(
      *cmd, &o->format, "the verdict, a block per finding, then the steps_per_epoch values",
      "one object: result, findings, steps_per_epoch (the contract for scripts)", {}, {},
      "one self-contained page: the verdict, a card per finding, the "
      "steps_per_epoch values; the JSON it draws embedded");
  cmd->add_option("--loop", o->loop,
                  "How the training loop consumes the dataset: for (for x in dist_dataset, "
                  "eager), for-tf (the same loop in a tf.function), next (--steps-per-epoch "
                  "calls of next(iterator) an epoch, one iterator), fit (Keras model.fit), "
                  "estimator (tf.estimator, TF 2.15 and before)")
      ->check(CLI::IsMember({"for", "for-tf", "next", "fit", "estimator"}))
      ->default_str("for");
  cmd->add_option("--strategy", o->strategy,
                  "mirrored (1 worker), multi-worker (2 or more), tpu (--workers hosts of "
                  "--replicas cores; static shapes) or parameter-server (--api from-function); "
                  "default: mirrored for 1 worker, multi-worker for more")
      ->check(CLI::IsMember({"mirrored", "multi-worker", "tpu", "parameter-server"}));
  cmd->add_option("--tf-version", o->tf_version,
                  fmt::format("The TensorFlow release the job runs, 2.0 to 2.{} (Keras 3 from "
                              "2.16): what TensorFlow does follows it",
                              dist::kNewestTfVersion.minor))
      ->default_str(fmt::format("2.{}", dist::kNewestTfVersion.minor));
  cmd->add_option("--steps-per-epoch", o->steps_per_epoch,
                  "The loop's steps an epoch (fit's steps_per_epoch, next()'s count, "
                  "estimator's steps); default: until the data ends")
      ->check(IntAtLeast(1));
  cmd->add_option("--epochs", o->epochs, "Epochs the job trains")
      ->default_val(1)
      ->check(IntAtLeast(1));
  cmd->callback([o, action] { *action = [o] { return RunCheck(*o); }; });
}

}  // namespace tfdist::cli
