// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Tracing a Python input function: the user's file run by python3 with
// tfdist's stand-in tensorflow (python/tfdist_trace), which hands back the
// tf.data pipeline the code built as a method chain (doc/python.md).

#ifndef TFDIST_CLI_PYTHON_TRACE_H_
#define TFDIST_CLI_PYTHON_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tfdist/base/result.h"

namespace tfdist::cli {

// What to trace and how.
struct TraceRequest {
  std::string file;                                          // "-": standard input
  std::string entry;                                         // empty: the default choice
  std::vector<std::pair<std::string, std::string>> defines;  // NAME, Python expression
  // The input context the function receives (and the strategy's
  // num_replicas_in_sync): workers, one worker's index, replicas per worker.
  int64_t workers = 1;
  int64_t worker = 0;
  int64_t replicas = 1;
  // The API the user asked for (--api), or empty: under "distribute" an
  // input context parameter keeps its default (None).
  std::string api;
  // --global-seed and --op-seed-offset: the op-seed counter the stand-in
  // starts with (a traced tf.random.set_seed starts another).
  std::optional<int64_t> global_seed;
  int64_t op_seed_offset = 0;
  double timeout_seconds = 60;
  uint64_t memory_bytes = uint64_t{4} << 30;  // the trace's address space
};

// What the trace found.
struct PythonTrace {
  std::string file;  // as given
  // The pipeline: a method chain, one op a line, each line ending in
  // "#@ FILE:LINE" (where the user's code made the op).
  std::string chain;
  // When the function computes with the worker's index it was called once
  // per worker: each worker's chain (`chain` is worker 0's); else empty.
  std::vector<std::string> worker_chains;
  std::string entry;  // how it was called: "dataset_fn(input_context=<input context>)"
  // "from-function" when the function takes an input context or calls
  // distribute_datasets_from_function, "distribute" when it calls
  // experimental_distribute_dataset; empty when the code does not say.
  std::string api;
  // tf.data.Options the code set with with_options(), and where.
  std::optional<std::string> policy;  // "OFF", "AUTO", "FILE", "DATA", "HINT"
  std::string policy_site;            // "FILE:LINE"
  std::optional<bool> deterministic;
  std::string deterministic_site;
  // tf.random.set_seed(): the value (nullopt when not an int) and where.
  std::optional<std::string> global_seed_site;
  std::optional<int64_t> global_seed;
  // What was treated as opaque or defaulted, one sentence each.
  std::vector<std::string> assumptions;
};

// Runs the trace: python3 (or $TFDIST_PYTHON) in its own process group,
// isolated from the user's Python environment (-I -S), with the request on
// its standard input, a time limit (killed past it), a memory limit
// (RLIMIT_AS), and its output captured.
// Error: InvalidArgument "FILE:LINE: <what>" for a failure of the user's
// code or a construct tfdist cannot follow (exit 2), with `details`
// (when not null) set to the lines to show after it: the source line and
// what the program printed. FailedPrecondition when python3 or the stand-in
// is missing; Cancelled when interrupted.
Result<PythonTrace> TracePythonInput(const TraceRequest& request, std::string* details);

// What TracePythonInput makes of the stand-in's answer (`answer`, the JSON
// it wrote; `output`, what the program printed; `timed_out`, whether it was
// stopped at the time limit). Any bytes are an answer or an error, never a
// crash: the C++ side trusts nothing the child wrote.
// Error: as TracePythonInput's; FailedPrecondition for an answer that is not
// the stand-in's JSON; Internal for one that names no pipeline.
Result<PythonTrace> ReadTraceAnswer(const TraceRequest& request, std::string answer,
                                    std::string output, bool timed_out, std::string* details);

// The folder holding the stand-in package (tfdist_trace), or empty: beside
// the installed program (../share/tfdist/python), else the source tree's.
std::string TraceModuleFolder();

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_PYTHON_TRACE_H_
