// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Result<T>: a value or the error Status that stands in its place.

#ifndef TFDIST_BASE_RESULT_H_
#define TFDIST_BASE_RESULT_H_

#include <cassert>
#include <optional>
#include <string_view>
#include <utility>

#include "tfdist/base/status.h"

namespace tfdist {

// Holds either a T or a non-ok Status (abseil's StatusOr, riegeli's shape).
//
//   Result<std::unique_ptr<RecordReader>> r = RecordReader::Open(path, options);
//   if (!r.ok()) return r.status();
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "Result needs a value or an error");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // The error annotated (Status::Annotate); a value passes unchanged.
  //   TFDIST_ASSIGN_OR_RETURN(auto n, Count(path).Annotate("replica 2"));
  Result Annotate(std::string_view context) && {
    if (!ok()) status_ = std::move(status_).Annotate(context);
    return std::move(*this);
  }

  // REQUIRES: ok()
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

template <typename T>
const Status& GetStatus(const Result<T>& result) {
  return result.status();
}

}  // namespace tfdist

// Evaluates `expr` (a Result<T>); on error returns its status, else moves the
// value into `lhs` (which may be a declaration: `auto x`).
#define TFDIST_ASSIGN_OR_RETURN(lhs, expr) \
  TFDIST_ASSIGN_OR_RETURN_IMPL_(TFDIST_STATUS_CONCAT_(tfdist_result_, __LINE__), lhs, expr)
#define TFDIST_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#endif  // TFDIST_BASE_RESULT_H_
