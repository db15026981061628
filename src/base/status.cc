// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Status names and the mapping of codes to the exit codes of the manual's EXIT STATUS.

#include "tfdist/base/status.h"

namespace tfdist {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kCancelled:
      return "CANCELLED";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case StatusCode::kOutOfRange:
      return "OUT_OF_RANGE";
    case StatusCode::kInternal:
      return "INTERNAL";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kDataLoss:
      return "DATA_LOSS";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return fmt::format("{}: {}", StatusCodeName(code_), message_);
}

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return 0;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kUnavailable:
      return 2;
    case StatusCode::kNotFound:
    case StatusCode::kDataLoss:
    case StatusCode::kOutOfRange:
      return 3;
    case StatusCode::kCancelled:
      return 130;
    case StatusCode::kInternal:
      return 1;
  }
  return 1;
}

}  // namespace tfdist
