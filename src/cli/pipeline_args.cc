// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Reading, parsing and building the pipeline expression.

#include "pipeline_args.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "report.h"
#include "validators.h"

namespace tfdist::cli {

data::BuildOptions PipelineArgs::build_options() const {
  data::BuildOptions o;
  o.cpus = cpus;
  o.default_seed = seed;
  return o;
}

void AddPipelineArgs(CLI::App& cmd, PipelineArgs* args) {
  cmd.add_option("pipeline", args->expression,
                 "A tf.data method chain, e.g. 'list_files(\"data/*.tfrecord\", shuffle=False)"
                 ".interleave(tfrecord, cycle_length=4).batch(64)' (see the manual for the "
                 "grammar)");
  cmd.add_option("--pipeline-file", args->file,
                 "Read the pipeline expression from a file (- for standard input); newlines and "
                 "# comments are free");
  cmd.add_option("--cpus", args->cpus,
                 "CPUs of the modelled host: TensorFlow's default (AUTOTUNE) cycle_length and "
                 "num_parallel_calls (default: this machine's)")
      ->check(IntAtLeast(1));
  cmd.add_option("--seed", args->seed,
                 "Seed for shuffles given no seed (default: a random one per run, as in "
                 "TensorFlow)")
      ->check(UintAtLeast(0));
}

Result<data::Pipeline> ParsePipelineArgs(const PipelineArgs& args, bool json) {
  std::string text = args.expression;
  auto fail = [&](Status s) -> Result<data::Pipeline> {
    ReportError(s, json);
    return s;
  };
  if (!args.file.empty()) {
    if (!text.empty()) {
      return fail(
          Status::InvalidArgument("give the pipeline as an argument or --pipeline-file, not both"));
    }
    std::stringstream ss;
    if (args.file == "-") {
      ss << std::cin.rdbuf();
    } else {
      struct stat st;
      if (stat(args.file.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        return fail(Status::InvalidArgument(
            fmt::format("{}: is a folder, not a pipeline file", args.file)));
      }
      std::ifstream in(args.file);
      if (!in) {
        return fail(
            Status::InvalidArgument(fmt::format("{}: cannot read the pipeline file", args.file)));
      }
      ss << in.rdbuf();
    }
    text = ss.str();
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return fail(Status::InvalidArgument("no pipeline expression given"));
  }
  Result<data::Pipeline> pipeline = data::ParsePipeline(text);
  if (!pipeline.ok()) ReportPipelineError(pipeline.status(), text, json);
  return pipeline;
}

Result<std::shared_ptr<const data::Dataset>> BuildPipeline(const PipelineArgs& args,
                                                           const data::BuildOptions& options,
                                                           bool json) {
  TFDIST_ASSIGN_OR_RETURN(data::Pipeline pipeline, ParsePipelineArgs(args, json));
  Result<std::shared_ptr<const data::Dataset>> dataset = data::BuildDataset(pipeline, options);
  if (!dataset.ok()) ReportPipelineError(dataset.status(), pipeline.text, json);
  return dataset;
}

}  // namespace tfdist::cli
