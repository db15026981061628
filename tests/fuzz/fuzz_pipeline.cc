// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Fuzz target: the pipeline expression parser and the builder. Any text is
// parsed; a pipeline that parses is built and its first elements taken.
// It runs in an empty temporary folder, so globs match nothing there.
//
// A pipeline whose numbers have more than 5 digits is only built, not run:
// range(10**6).shuffle(999999) asks for its buffer, and filling it is what
// the user asked for, not a bug; running it would only time the fuzzer out.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_target.h"
#include "tfdist/data/dataset.h"
#include "tfdist/data/pipeline.h"

namespace {

bool HasLongNumber(std::string_view text) {
  int digits = 0;
  for (char c : text) {
    digits = (c >= '0' && c <= '9') ? digits + 1 : 0;
    if (digits > 5) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  static char dir[] = "/tmp/tfdist-fuzz-pipeline.XXXXXX";
  if (mkdtemp(dir) == nullptr || chdir(dir) != 0) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto pipeline = tfdist::data::ParsePipeline(text);
  if (!pipeline.ok()) return 0;
  tfdist::data::BuildOptions options;
  options.cpus = 2;
  options.default_seed = 1;
  auto dataset = tfdist::data::BuildDataset(*pipeline, options);
  if (!dataset.ok() || HasLongNumber(text)) return 0;
  auto iterator = (*dataset)->MakeIterator();
  if (!iterator.ok()) return 0;
  for (int i = 0; i < 64; ++i) {
    tfdist::data::Element e;
    bool end = false;
    if (!(*iterator)->GetNext(e, end).ok() || end) break;
  }
  return 0;
}
