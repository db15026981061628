// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The topology and distribution options shared by layout and run.

#include "distribute_args.h"

#include <fmt/format.h>

#include <cstdlib>

#include "report.h"

namespace tfdist::cli {

void AddDistributeArgs(CLI::App& cmd, DistributeArgs* args, const std::string& worker_help,
                       const std::string& steps_help) {
  cmd.add_option("--workers", args->workers,
                 "Workers (input pipelines, one per host), at most 65536 (far beyond any "
                 "published tf.distribute job); default: from TF_CONFIG, Open MPI, Slurm or "
                 "torchrun, else 1");
  cmd.add_option("--replicas", args->replicas, "Replicas in sync per worker (GPUs per host)")
      ->default_val(1);
  cmd.add_option("--worker", args->worker, worker_help);
  cmd.add_option("--api", args->api,
                 "distribute (experimental_distribute_dataset) or from-function "
                 "(distribute_datasets_from_function: the pipeline is the input function)")
      ->check(CLI::IsMember({"distribute", "from-function"}))
      ->default_str("distribute");
  cmd.add_option("--policy", args->policy, "Auto-shard policy: AUTO, FILE, DATA, OFF or HINT")
      ->default_str("AUTO");
  cmd.add_option("--rebatch", args->rebatch,
                 "How global batches are split: auto, batch-sizes (RebatchDatasetV2), legacy "
                 "(RebatchDataset), none")
      ->default_str("auto");
  cmd.add_option("--steps", args->steps, steps_help);
}

void AddReadByIndexFlag(CLI::App& cmd, DistributeArgs* args) {
  cmd.add_flag("--read-by-index", args->read_by_index,
               "tfdist's own shortcut, not TensorFlow's: under DATA sharding each worker reads "
               "only its own records, by offset from up-to-date index files (tfdist index); "
               "without it every worker reads every file, as TensorFlow does");
}

Result<ResolvedDistribute> ResolveDistributeArgs(const DistributeArgs& o, bool all_workers) {
  dist::LauncherTopology launcher;
  if (!o.workers || !(o.worker || all_workers)) {
    TFDIST_ASSIGN_OR_RETURN(launcher, dist::TopologyFromEnvironment(
                                          [](const char* name) { return std::getenv(name); }));
  }
  ResolvedDistribute r;
  dist::DistributeOptions& d = r.options;
  r.source = nlohmann::ordered_json::object();
  if (o.workers) {
    d.topology.workers = *o.workers;
    r.source["workers"] = "--workers";
  } else if (launcher.workers) {
    d.topology.workers = *launcher.workers;
    r.source["workers"] = launcher.source;
  } else {
    r.source["workers"] = "default";
  }
  d.topology.replicas = o.replicas;
  // Before anything is listed or read (CheckTopology says it again for the API).
  if (d.topology.workers > dist::kMaxWorkers) {
    return Status::InvalidArgument(fmt::format(
        "too many workers: at most {} (far beyond any published tf.distribute job); got {} "
        "({})",
        dist::kMaxWorkers, d.topology.workers, r.source.value("workers", std::string())));
  }
  if (o.worker) {
    d.worker = *o.worker;
    r.source["worker"] = "--worker";
  } else if (launcher.worker) {
    d.worker = *launcher.worker;
    r.source["worker"] = launcher.source;
  }
  if (!launcher.source.empty()) {
    r.source_text = fmt::format(" (from {}: worker {} of {})", launcher.source,
                                launcher.worker.value_or(0), launcher.workers.value_or(1));
  }
  if (d.worker && (*d.worker < 0 || *d.worker >= d.topology.workers)) {
    return Status::InvalidArgument(fmt::format("worker {} ({}) is not one of the {} workers ({})",
                                               *d.worker, r.source.value("worker", std::string()),
                                               d.topology.workers,
                                               r.source.value("workers", std::string())));
  }
  d.api = o.api.value_or("distribute") == "from-function" ? dist::Api::kFromFunction
                                                          : dist::Api::kDistribute;
  TFDIST_ASSIGN_OR_RETURN(d.policy, dist::ParsePolicy(o.policy.value_or("AUTO")));
  TFDIST_ASSIGN_OR_RETURN(d.split, dist::ParseSplit(o.rebatch));
  if (o.steps) {
    if (*o.steps < 0 || *o.steps > dist::kMaxSteps) {
      return Status::InvalidArgument(
          fmt::format("--steps must be in [0, {}]; got {}", dist::kMaxSteps, *o.steps));
    }
    d.max_steps = *o.steps;
  }
  d.read_by_index = o.read_by_index;
  return r;
}

namespace {

Status ApplyTrace(LoadedPipeline& loaded, const DistributeArgs& args, dist::DistributeOptions& d) {
  if (!loaded.trace) return Status::OK();
  PythonTrace& t = *loaded.trace;
  if (!t.api.empty() && args.api && *args.api != t.api) {
    t.assumptions.push_back(fmt::format("--api {} overrides the code, which {}", *args.api,
                                        t.api == "from-function"
                                            ? "calls distribute_datasets_from_function"
                                            : "calls experimental_distribute_dataset"));
  } else if (t.api == "from-function" && !args.api) {
    d.api = dist::Api::kFromFunction;
    t.assumptions.push_back(
        "a pipeline per worker, as distribute_datasets_from_function calls the function "
        "(--api from-function)");
  }
  if (loaded.worker_pipelines) {
    if (d.api != dist::Api::kFromFunction) {
      return Status::InvalidArgument(fmt::format(
          "{}: {} gives each worker a pipeline of its own (it computes with the worker's index), "
          "as an input function of distribute_datasets_from_function; --api distribute lays out "
          "one pipeline for all",
          t.file, t.entry));
    }
    d.worker_pipelines = loaded.worker_pipelines;
  }
  if (t.policy) {
    TFDIST_ASSIGN_OR_RETURN(const dist::AutoShardPolicy policy, dist::ParsePolicy(*t.policy));
    if (!args.policy) {
      d.policy = policy;
      t.assumptions.push_back(
          fmt::format("{}: with_options(): auto_shard_policy = {}", t.policy_site, *t.policy));
    } else if (d.policy != policy) {
      t.assumptions.push_back(
          fmt::format("--policy {} overrides the code's auto_shard_policy = {} "
                      "({})",
                      dist::PolicyName(d.policy), *t.policy, t.policy_site));
    }
  }
  return Status::OK();
}

}  // namespace

Result<LoadedPipeline> LoadDistributedPipeline(const PipelineArgs& pipeline,
                                               const DistributeArgs& args,
                                               dist::DistributeOptions& d, bool json) {
  if (Status s = dist::CheckTopology(d.topology); !s.ok()) {
    ReportError(s, json);
    return s;
  }
  const TraceContext context{d.topology.workers, d.worker.value_or(0), d.topology.replicas,
                             args.api.value_or("")};
  TFDIST_ASSIGN_OR_RETURN(LoadedPipeline loaded, LoadPipeline(pipeline, context, json));
  if (Status s = ApplyTrace(loaded, args, d); !s.ok()) {
    ReportError(s, json);
    return s;
  }
  return loaded;
}

std::string SplitReasonText(const dist::Decision& d) {
  if (!d.split_requested) return d.split_reason;
  return fmt::format("--rebatch {}{}{}", dist::SplitName(d.split),
                     d.split_reason.empty() ? "" : ": ", d.split_reason);
}

std::string WarningText(const dist::Warning& w) {
  if (w.kind == dist::WarningKind::kBatchSizesUnderData) {
    return "--rebatch batch-sizes does not apply under DATA sharding; the legacy split is used, "
           "as in TensorFlow";
  }
  return Describe(w.message, w.advice);
}

std::vector<std::string> WarningTexts(const dist::Decision& d) {
  std::vector<std::string> out;
  for (const dist::Warning& w : d.warnings) out.push_back(WarningText(w));
  return out;
}

}  // namespace tfdist::cli
