// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Tracing a Python input function: the user's file run by python3 with
// tfdist's stand-in tensorflow (python/tfdist_trace), which hands back the
// tf.data pipeline the code built as a method chain (doc/python.md).

#ifndef TFDIST_TRACE_PYTHON_TRACE_H_
#define TFDIST_TRACE_PYTHON_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tfdist/base/result.h"

namespace tfdist::trace {

// The most tfdist reads of an input function's code: far more than any
// real one.
inline constexpr size_t kMaxSourceBytes = size_t{16} << 20;  // 16 MiB

// What to trace and how.
struct TraceRequest {
  std::string file;  // "-": standard input, whose code the caller reads into `source`
  // The code, when the caller has read it (standard input, at most
  // kMaxSourceBytes); else the trace reads `file`.
  std::optional<std::string> source;
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
  // Past timeout_seconds the trace gets SIGINT (Python then says where it
  // was), and grace_seconds later its process group SIGKILL.
  double timeout_seconds = 60;
  double grace_seconds = 2;
  uint64_t memory_bytes = uint64_t{4} << 30;  // the trace's address space
  // The interpreter, a path or a name looked up on PATH; empty: $TFDIST_PYTHON
  // when set, else python3.
  std::string python;
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

// Runs the trace: the interpreter (request.python) in its own process
// group, isolated from the user's Python environment (-I -S), with the
// request (TraceRequestJson) on its standard input, a time limit (SIGINT,
// then SIGKILL past it), a memory limit (RLIMIT_AS), and its output
// captured. It dies with this process (PR_SET_PDEATHSIG), and what it left
// in its process group is killed when it exits. SIGPIPE is ignored while it
// runs; a handled signal (Interrupted()) kills it.
// Error: InvalidArgument "FILE:LINE: <what>" for a failure of the user's
// code or a construct tfdist cannot follow (exit 2), with `details`
// (when not null) set to the lines to show after it: the source line and
// what the program printed; a trace past its time limit carries
// Remedy::kLongerTraceTimeout. FailedPrecondition when the interpreter or the
// stand-in is missing, or the interpreter ends without an answer;
// ResourceExhausted when no process can be started; Cancelled when
// interrupted.
Result<PythonTrace> TracePythonInput(const TraceRequest& request, std::string* details);

// What TracePythonInput makes of the stand-in's answer (`answer`, the JSON
// it wrote; `output`, what the program printed; `timed_out`, whether it was
// stopped at the time limit). Any bytes are an answer or an error, never a
// crash: the C++ side trusts nothing the child wrote.
// Error: as TracePythonInput's; FailedPrecondition for an answer that is not
// the stand-in's JSON; Internal for one that names no pipeline.
Result<PythonTrace> ReadTraceAnswer(const TraceRequest& request, std::string answer,
                                    std::string output, bool timed_out, std::string* details);

// The JSON the interpreter reads on its standard input (one line, ASCII):
// the file, the code when given (`source`), the entry, the defines as
// [NAME, EXPR] pairs, the input context, the seeds and the limits. A byte
// of a name, a define or the code that is not UTF-8 goes as \udcXX (Python's
// surrogate escape), so the child gets the same bytes back (os.fsencode).
std::string TraceRequestJson(const TraceRequest& request);

// The folder holding the stand-in package (tfdist_trace), or empty:
// $TFDIST_TRACE_DIR, beside the installed program (../share/tfdist/python),
// else the source tree's.
std::string TraceModuleFolder();

}  // namespace tfdist::trace

#endif  // TFDIST_TRACE_PYTHON_TRACE_H_
