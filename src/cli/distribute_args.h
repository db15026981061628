// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The topology and distribution options shared by layout and run, and the
// launcher environment they fall back on.

#ifndef TFDIST_CLI_DISTRIBUTE_ARGS_H_
#define TFDIST_CLI_DISTRIBUTE_ARGS_H_

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pipeline_args.h"
#include "tfdist/base/result.h"
#include "tfdist/distribute/decide.h"
#include "tfdist/distribute/launcher.h"

namespace tfdist::cli {

struct DistributeArgs {
  std::optional<int64_t> workers;
  int64_t replicas = 1;
  std::optional<int64_t> worker;
  std::optional<std::string> api;     // default: distribute (or what a traced function says)
  std::optional<std::string> policy;  // default: AUTO (or the traced code's with_options)
  std::string rebatch = "auto";
  std::optional<int64_t> steps;
  bool read_by_index = false;  // DATA: each worker reads only its records (index files)
};

// Adds --workers, --replicas, --worker, --api, --policy, --rebatch and
// --steps; `worker_help` and `steps_help` say what they mean to the command.
void AddDistributeArgs(CLI::App& cmd, DistributeArgs* args, const std::string& worker_help,
                       const std::string& steps_help);
// Adds --read-by-index (run: tfdist's DATA shortcut, opt-in).
void AddReadByIndexFlag(CLI::App& cmd, DistributeArgs* args);

struct ResolvedDistribute {
  dist::DistributeOptions options;
  nlohmann::ordered_json source;  // where workers/worker came from: {"workers": "--workers", ...}
  std::string source_text;        // " (from Open MPI: worker 1 of 4)" or empty
};

// The options, with the launcher's environment (TF_CONFIG, Open MPI, Slurm,
// torchrun) where a flag was not given.
// Error: InvalidArgument for a bad value, a malformed environment, or a
// worker outside the workers.
// The launcher's environment is read only for what the flags leave open:
// with --workers, and --worker or `all_workers`, it is not read at all, so a
// stale or broken TF_CONFIG cannot stop an explicit command line.
Result<ResolvedDistribute> ResolveDistributeArgs(const DistributeArgs& args,
                                                 bool all_workers = false);

// The pipeline of layout and run: the topology of `d` checked first (a
// traced function is called with it), then LoadPipeline with the input
// context of the topology's worker (worker 0 when all are laid out) and the
// --api asked for, and what a traced function says of its distribution
// applied to `d` where the flags leave it open: it takes an input context
// (--api from-function), gives each worker a pipeline of its own
// (DistributeOptions::worker_pipelines), or sets an auto-shard policy
// (--policy); each said as an "assumed:" line, as is a flag that overrides
// the code. Errors are reported (as LoadPipeline does) and returned.
Result<LoadedPipeline> LoadDistributedPipeline(const PipelineArgs& pipeline,
                                               const DistributeArgs& args,
                                               dist::DistributeOptions& d, bool json);

// The decision's words for the user: a requested split is named by its
// --rebatch value, and warnings say their remedies as flags (Describe).
std::string SplitReasonText(const dist::Decision& d);
std::string WarningText(const dist::Warning& w);
std::vector<std::string> WarningTexts(const dist::Decision& d);

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_DISTRIBUTE_ARGS_H_
