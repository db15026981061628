// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Fuzz target: the trace answer, the JSON the Python stand-in writes and
// the C++ side reads (--python). Any bytes are an answer or an error.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_target.h"
#include "tfdist/trace/python_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  tfdist::trace::TraceRequest request;
  request.file = "input_fn.py";
  std::string details;
  auto trace = tfdist::trace::ReadTraceAnswer(
      request, std::string(reinterpret_cast<const char*>(data) + 1, size - 1), "printed\n",
      (data[0] & 1) != 0, &details);
  if (trace.ok() && trace->chain.empty()) __builtin_trap();  // said to name a pipeline
  return 0;
}
