// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The pipeline expression argument and the options that shape its build.

#ifndef TFDIST_CLI_PIPELINE_ARGS_H_
#define TFDIST_CLI_PIPELINE_ARGS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/trace/python_trace.h"

namespace tfdist::cli {

using trace::PythonTrace;
using trace::TraceRequest;

// --op-seed-offset's bound: draws a program could make before its pipeline.
inline constexpr int64_t kMaxOpSeedOffset = int64_t{1} << 24;

// The pipeline expression (an argument, --pipeline-file, or --python: an
// input function traced) and the options that shape how it is built, shared
// by the commands that run pipelines.
struct PipelineArgs {
  std::string expression;
  std::string file;
  std::string python;                // --python FILE ("-": standard input)
  std::string entry;                 // --entry NAME
  std::vector<std::string> defines;  // --define NAME=EXPR
  double trace_timeout = 60;
  int64_t cpus = 0;
  std::optional<uint64_t> seed;
  std::optional<int64_t> global_seed;  // --global-seed: tf.random.set_seed()
  int64_t op_seed_offset = 0;

  // The build options, with the program's global seed: a traced
  // tf.random.set_seed(G) of a known G, else --global-seed.
  data::BuildOptions build_options(const struct LoadedPipeline& loaded) const;
};
void AddPipelineArgs(CLI::App& cmd, PipelineArgs* args);

// The input context a traced input function receives (and the
// num_replicas_in_sync of a strategy it makes).
struct TraceContext {
  int64_t workers = 1;
  int64_t worker = 0;
  int64_t replicas = 1;
  std::string api;  // --api when given, else empty
};

// A pipeline, and the trace that made it (--python).
struct LoadedPipeline {
  data::Pipeline pipeline;  // the context's worker's, when per worker
  std::optional<PythonTrace> trace;
  // A traced function that gives each worker its own pipeline: all of
  // them, by worker (dist::DistributeOptions::worker_pipelines); else null.
  std::shared_ptr<const std::vector<data::Pipeline>> worker_pipelines;
};

// Reads and parses the pipeline expression, or traces the input function
// of --python. A mistake is reported (stderr, and stdout when `json`) with
// the line of the expression and a caret under the column, or the user's
// file and line; the returned status is the error.
Result<LoadedPipeline> LoadPipeline(const PipelineArgs& args, const TraceContext& context,
                                    bool json);

// LoadPipeline, then BuildDataset, reporting errors the same way.
Result<std::shared_ptr<const data::Dataset>> BuildPipeline(const LoadedPipeline& loaded,
                                                           const data::BuildOptions& options,
                                                           bool json);

// What the header of a layout or a run says of a traced pipeline: "input:"
// (the file and the call) and one "assumption:" line each; empty without
// a trace.
std::string TraceHeader(const LoadedPipeline& loaded);

// The same as JSON members: "input" {"python", "entry", "chain"} and
// "assumptions" [...]; an empty object without a trace.
nlohmann::ordered_json TraceJson(const LoadedPipeline& loaded);

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_PIPELINE_ARGS_H_
