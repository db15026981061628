// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The pipeline expression argument and the options that shape its build.

#ifndef TFDIST_CLI_PIPELINE_ARGS_H_
#define TFDIST_CLI_PIPELINE_ARGS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tfdist/base/result.h"
#include "tfdist/data/pipeline.h"

namespace tfdist::cli {

// The pipeline expression (an argument or --pipeline-file) and the options
// that shape how it is built, shared by the commands that run pipelines.
struct PipelineArgs {
  std::string expression;
  std::string file;
  int64_t cpus = 0;
  std::optional<uint64_t> seed;

  data::BuildOptions build_options() const;
};
void AddPipelineArgs(CLI::App& cmd, PipelineArgs* args);

// Reads and parses the pipeline expression. A mistake is reported (stderr,
// and stdout when `json`) with the line of the expression and a caret under
// the column; the returned status is the error.
Result<data::Pipeline> ParsePipelineArgs(const PipelineArgs& args, bool json);

// ParsePipelineArgs, then BuildDataset, reporting errors the same way.
Result<std::shared_ptr<const data::Dataset>> BuildPipeline(const PipelineArgs& args,
                                                           const data::BuildOptions& options,
                                                           bool json);

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_PIPELINE_ARGS_H_
