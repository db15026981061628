// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Reading, parsing and building the pipeline expression.

#include "pipeline_args.h"

#include <fmt/format.h>

#include <cctype>

#include "file_args.h"
#include "input_text.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/io/url_glob.h"
#include "tfdist/trace/url_lister.h"
#include "validators.h"

namespace tfdist::cli {

data::BuildOptions PipelineArgs::build_options(const LoadedPipeline& loaded) const {
  data::BuildOptions o;
  o.cpus = cpus;
  o.default_seed = seed;
  std::optional<int64_t> g = global_seed;
  if (loaded.trace && loaded.trace->global_seed) g = loaded.trace->global_seed;
  if (g) o.global_seed = data::GlobalSeed{*g, op_seed_offset};
  return o;
}

void AddPipelineArgs(CLI::App& cmd, PipelineArgs* args) {
  cmd.add_option("pipeline", args->expression,
                 "A tf.data method chain, e.g. 'list_files(\"data/*.tfrecord\", shuffle=False)"
                 ".interleave(tfrecord, cycle_length=4).batch(64)' (see the manual for the "
                 "grammar)");
  cmd.add_option("--pipeline-file", args->file,
                 fmt::format("Read the pipeline expression from a file (- for standard input), of "
                             "at most {}; newlines and # comments are free",
                             DescribeLimit(kMaxPipelineBytes)));
  cmd.add_option(
      "--python", args->python,
      fmt::format("Trace the input function in this Python file (- for standard input), of at "
                  "most {}: tfdist runs it with python3 and a stand-in tensorflow, and lays out "
                  "the tf.data pipeline it builds. The code is the user's own, run as the user "
                  "(see the manual, PYTHON INPUT FUNCTIONS)",
                  DescribeLimit(trace::kMaxSourceBytes)));
  cmd.add_option("--entry", args->entry,
                 "With --python: the function to call, NAME or CLASS.METHOD, or a global "
                 "holding a dataset the file built as it loads, or the LINE of the call that "
                 "distributed it (default: the dataset the file distributes or fits as it "
                 "loads, with its own arguments; else the last function named like input_fn "
                 "or dataset_fn, else the last function)");
  cmd.add_option("--define", args->defines,
                 "With --python: NAME=EXPR binds a parameter, a global or an attribute "
                 "(FLAGS.batch_size, self.is_training, params) to a Python expression, or "
                 "to a spelled value: UNKNOWN (a value nobody can write) or CONTEXT (each "
                 "worker's tf.distribute.InputContext); a global of the file's own of that "
                 "name wins, and tfdist.UNKNOWN, tfdist.CONTEXT always mean these; "
                 "repeatable")
      ->take_all()
      ->allow_extra_args(false);
  cmd.add_option("--trace-timeout", args->trace_timeout,
                 "With --python: seconds the trace may take (default 60)")
      ->check(Finite())
      ->check(CLI::Range(0.1, 86400.0));
  AddRemoteOptions(cmd);
  cmd.add_option("--cpus", args->cpus,
                 "CPUs of the modelled host: TensorFlow's default (AUTOTUNE) cycle_length and "
                 "num_parallel_calls (default: this machine's)")
      ->check(IntAtLeast(1));
  cmd.add_option("--global-seed", args->global_seed,
                 "The program's tf.random.set_seed(G): shuffles come in TensorFlow's exact "
                 "order, those without a seed taking their op seeds from it as TensorFlow does");
  cmd.add_option("--op-seed-offset", args->op_seed_offset,
                 "With --global-seed: random ops without a seed that the program made after "
                 "tf.random.set_seed and before this pipeline (default 0)")
      ->check(CLI::Range(int64_t{0}, kMaxOpSeedOffset));
  cmd.add_option("--seed", args->seed,
                 "Seed for shuffles that have neither an op seed nor a global seed, whose order "
                 "is random in TensorFlow (default: a random one per run)")
      ->check(UintAtLeast(0));
}

namespace {

// The expression of an argument or of --pipeline-file.
Result<std::string> ReadExpression(const PipelineArgs& args) {
  if (args.file.empty()) return args.expression;
  return ReadInputText(args.file, kMaxPipelineBytes, "pipeline file");
}

bool IsDottedName(std::string_view name) {
  bool start = true;
  for (char c : name) {
    const bool letter = std::isalpha(static_cast<unsigned char>(c)) || c == '_';
    if (start) {
      if (!letter) return false;
      start = false;
    } else if (c == '.') {
      start = true;
    } else if (!letter && !std::isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return !name.empty() && !start;
}

Result<TraceRequest> MakeTraceRequest(const PipelineArgs& args, const TraceContext& context) {
  // tf.io.gfile.glob of a URL in the traced code: tfdist's own listing.
  trace::SetUrlLister([](const std::string& pattern) { return io::GlobUrl(pattern); });
  TraceRequest r;
  r.file = args.python;
  r.entry = args.entry;
  r.workers = context.workers;
  r.worker = context.worker;
  r.replicas = context.replicas;
  r.api = context.api;
  r.timeout_seconds = args.trace_timeout;
  r.global_seed = args.global_seed;
  r.op_seed_offset = args.op_seed_offset;
  if (r.file == "-") {
    TFDIST_ASSIGN_OR_RETURN(r.source,
                            ReadInputText("-", trace::kMaxSourceBytes, "input function's code"));
  }
  for (const std::string& d : args.defines) {
    const size_t eq = d.find('=');
    const std::string name = d.substr(0, eq);
    if (eq == std::string::npos || !IsDottedName(name) || eq + 1 == d.size()) {
      return Status::InvalidArgument(
          fmt::format("--define {}: expected NAME=EXPR, NAME a Python name or a dotted one "
                      "(FLAGS.batch_size), EXPR a Python expression",
                      d));
    }
    r.defines.emplace_back(name, d.substr(eq + 1));
  }
  return r;
}

}  // namespace

Result<LoadedPipeline> LoadPipeline(const PipelineArgs& args, const TraceContext& context,
                                    bool json) {
  auto fail = [&](Status s) -> Result<LoadedPipeline> {
    ReportError(s, json);
    return s;
  };
  const int given = !args.expression.empty() + !args.file.empty() + !args.python.empty();
  if (given > 1) {
    return fail(Status::InvalidArgument(
        "give the pipeline one way: an expression, --pipeline-file or --python"));
  }
  if (args.python.empty() && (!args.entry.empty() || !args.defines.empty())) {
    return fail(Status::InvalidArgument("--entry and --define go with --python"));
  }
  if (args.op_seed_offset != 0 && !args.global_seed && args.python.empty()) {
    return fail(Status::InvalidArgument(
        "--op-seed-offset counts the op seeds drawn after tf.random.set_seed: give "
        "--global-seed too"));
  }
  LoadedPipeline loaded;
  std::string text;
  if (!args.python.empty()) {
    Result<TraceRequest> request = MakeTraceRequest(args, context);
    if (!request.ok()) return fail(request.status());
    std::string details;
    Result<PythonTrace> trace = TracePythonInput(*request, &details);
    if (!trace.ok()) {
      ReportError(trace.status(), json);
      if (!details.empty()) fmt::print(stderr, "{}", TerminalLines(details));
      return trace.status();
    }
    text = trace->chain;
    if (trace->deterministic && !*trace->deterministic) {
      trace->assumptions.push_back(fmt::format(
          "{}: options.deterministic = False: TensorFlow may give elements out of this order",
          trace->deterministic_site));
    }
    if (trace->global_seed_site && !trace->global_seed) {
      trace->assumptions.push_back(fmt::format(
          "{}: tf.random.set_seed(...) of a value tfdist cannot know: {}", *trace->global_seed_site,
          args.global_seed ? fmt::format("--global-seed {} stands for it", *args.global_seed)
                           : std::string("shuffles without a seed are laid out as unseeded "
                                         "(--global-seed G gives its value)")));
    } else if (trace->global_seed && args.global_seed && *trace->global_seed != *args.global_seed) {
      trace->assumptions.push_back(fmt::format(
          "{}: tf.random.set_seed({}) is the program's global seed, not --global-seed {}",
          *trace->global_seed_site, *trace->global_seed, *args.global_seed));
    }
    loaded.trace = std::move(*trace);
  } else {
    Result<std::string> expression = ReadExpression(args);
    if (!expression.ok()) return fail(expression.status());
    text = std::move(*expression);
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return fail(Status::InvalidArgument("no pipeline expression given"));
  }
  auto parse = [&](const std::string& chain) -> Result<data::Pipeline> {
    Result<data::Pipeline> pipeline = data::ParsePipeline(chain);
    if (!pipeline.ok()) ReportPipelineError(pipeline.status(), chain, json);
    return pipeline;
  };
  if (loaded.trace && !loaded.trace->worker_chains.empty()) {
    auto pipelines = std::make_shared<std::vector<data::Pipeline>>();
    for (const std::string& chain : loaded.trace->worker_chains) {
      TFDIST_ASSIGN_OR_RETURN(data::Pipeline p, parse(chain));
      pipelines->push_back(std::move(p));
    }
    loaded.pipeline = pipelines->at(static_cast<size_t>(context.worker));
    loaded.worker_pipelines = std::move(pipelines);
    return loaded;
  }
  TFDIST_ASSIGN_OR_RETURN(loaded.pipeline, parse(text));
  return loaded;
}

Result<std::shared_ptr<const data::Dataset>> BuildPipeline(const LoadedPipeline& loaded,
                                                           const data::BuildOptions& options,
                                                           bool json) {
  Result<std::shared_ptr<const data::Dataset>> dataset =
      data::BuildDataset(loaded.pipeline, options);
  if (!dataset.ok()) ReportPipelineError(dataset.status(), loaded.pipeline.text, json);
  return dataset;
}

std::string TraceHeader(const LoadedPipeline& loaded) {
  if (!loaded.trace) return "";
  const PythonTrace& t = *loaded.trace;
  std::string out = fmt::format("input:    {}: {}\n", TerminalText(t.file), TerminalText(t.entry));
  for (const std::string& a : t.assumptions) out += fmt::format("assumed:  {}\n", TerminalText(a));
  return out;
}

nlohmann::ordered_json TraceJson(const LoadedPipeline& loaded) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  if (!loaded.trace) return out;
  const PythonTrace& t = *loaded.trace;
  // The chain of the worker laid out (worker 0's when all are).
  out["input"] = {{"python", t.file}, {"entry", t.entry}, {"chain", loaded.pipeline.text}};
  out["assumptions"] = t.assumptions;
  return out;
}

}  // namespace tfdist::cli
