// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Text the user gives in a file or on standard input (a pipeline
// expression, an input function's code), read within a size limit.

#ifndef TFDIST_CLI_INPUT_TEXT_H_
#define TFDIST_CLI_INPUT_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "tfdist/base/result.h"

namespace tfdist::cli {

// The most tfdist reads of a pipeline expression (--pipeline-file): far
// more than any real one, so that a FIFO or a device that never ends
// (/dev/zero) is an error, not a process that grows until the system kills
// it. An input function's code (--python) has trace::kMaxSourceBytes.
inline constexpr size_t kMaxPipelineBytes = size_t{1} << 20;  // 1 MiB

// "1 MiB" for a limit (kMaxPipelineBytes, trace::kMaxSourceBytes).
std::string DescribeLimit(size_t bytes);

// The whole of `path` ("-": standard input), reading at most `limit` + 1
// bytes of it: what comes after that is never read. `what` names the
// file's role in messages ("pipeline file").
// Return values:
//   the text                 when it holds at most `limit` bytes
//   INVALID_ARGUMENT         a folder, a file that cannot be opened or read, or
//                            more than `limit` bytes ("PATH: the pipeline file
//                            is over 1 MiB, the most tfdist reads")
//   RESOURCE_EXHAUSTED       out of memory or file descriptors
//   CANCELLED                interrupted while waiting for input
Result<std::string> ReadInputText(const std::string& path, size_t limit, std::string_view what);

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_INPUT_TEXT_H_
