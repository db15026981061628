// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Status: the outcome of an operation, with TensorFlow's error-code meanings.

#ifndef TFDIST_BASE_STATUS_H_
#define TFDIST_BASE_STATUS_H_

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>

namespace tfdist {

// Codes keep abseil's / TensorFlow's numeric values and meanings.
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,           // interrupted by a signal
  kInvalidArgument = 3,     // bad usage, pipeline, topology or argument
  kNotFound = 5,            // a file that cannot be opened
  kFailedPrecondition = 9,  // the system is not in a state to do this
  kOutOfRange = 11,         // clean end of input (EOF at a record boundary)
  kInternal = 13,           // a bug or an unexpected system failure
  kUnavailable = 14,        // a device that is not there (no GPU)
  kDataLoss = 15,           // corrupt or truncated data; names path and offset
};

// The upper-case name used in JSON error objects ("INVALID_ARGUMENT").
std::string_view StatusCodeName(StatusCode code);

// A success, or an error code with a message. Cheap to copy when ok.
//
// Errors are made with the named factories:
//   return Status::DataLoss(fmt::format("{}: corrupted record at {}", path, offset));
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "DATA_LOSS: a.tfrecord: corrupted record at 12", or "OK".
  std::string ToString() const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Returns the status of a Status or of a Result<T> (see result.h).
inline const Status& GetStatus(const Status& status) { return status; }

// Maps a status to the exit code of the manual's EXIT STATUS:
// 0 ok, 2 invalid usage or argument, 3 data error, 130 interrupted, 1 internal.
int ExitCodeFor(const Status& status);

}  // namespace tfdist

#define TFDIST_STATUS_CONCAT_INNER_(a, b) a##b
#define TFDIST_STATUS_CONCAT_(a, b) TFDIST_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` (a Status or a Result) fails.
#define TFDIST_RETURN_IF_ERROR(expr)                                             \
  do {                                                                           \
    auto&& tfdist_value_ = (expr); /* keeps a temporary alive */                 \
    const ::tfdist::Status& tfdist_status_ = ::tfdist::GetStatus(tfdist_value_); \
    if (!tfdist_status_.ok()) return tfdist_status_;                             \
  } while (0)

template <>
struct fmt::formatter<tfdist::Status> : fmt::formatter<std::string_view> {
  auto format(const tfdist::Status& s, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(s.ToString(), ctx);
  }
};

#endif  // TFDIST_BASE_STATUS_H_
