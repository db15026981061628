// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Status: the outcome of an operation, with TensorFlow's error-code meanings.

#ifndef TFDIST_BASE_STATUS_H_
#define TFDIST_BASE_STATUS_H_

#include <fmt/format.h>

#include <cstddef>
#include <optional>
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
  kPermissionDenied = 7,    // an object store refused the credentials (HTTP 401, 403)
  kResourceExhausted = 8,   // out of disk space, quota, memory or file descriptors
  kFailedPrecondition = 9,  // the system is not in a state to do this
  kOutOfRange = 11,         // clean end of input (EOF at a record boundary)
  kInternal = 13,           // a bug or an unexpected system failure
  kUnavailable = 14,        // a remote store that stays unreachable or failing after retries
  kDataLoss = 15,           // corrupt or truncated data; names path and offset
};

// The upper-case name used in JSON error objects ("INVALID_ARGUMENT").
std::string_view StatusCodeName(StatusCode code);

// What the caller can change to get past an error or a warning, named in
// the API's own terms. The message never says it: a front end words it in
// its own terms (src/cli names the flag that does it), RemedyText in the
// API's. Some remedies name a subject (Advice::subject): a path or a number.
enum class Remedy {
  kNone,
  kOverwrite,              // allow replacing the existing output
  kRewriteFileIndex,       // write the index of the file `subject` again
  kRewriteDirectoryIndex,  // write the directory index of the folder `subject` again
  kOtherOutputFolder,      // write the output to another folder
  kFewerShards,            // ask for at most `subject` output files
  kDataPolicy,             // use the DATA (or AUTO) auto-shard policy
  kDataPolicyOrMoreFiles,  // use DATA sharding, or rewrite the data into more files
                           // (`subject`: the count of files found, fewer than workers)
  kPlanSteps,              // give a number of global steps to plan
  kFewerSteps,             // plan fewer steps (the streaming run takes any number)
  kFromFunction,           // use distribute_datasets_from_function (Api::kFromFunction)
  kHintPolicy,             // use the HINT auto-shard policy
  kMoreFilesFewerWorkers,  // rewrite the data into more files, or use fewer workers
                           // (`subject`: the count a shard found, fewer than its shards)
  kOneWorker,              // run one worker on this host
  kLegacySplit,            // look at the legacy split (Split::kLegacy) to compare
  kIndexFolder,            // name a folder for index files (io::SetIndexFolder)
  kMoveIndexes,            // move the index files out of the data folder `subject`
  kSeedShuffles,           // give the program's global seed, or the shuffle a seed
  kDeclareCompression,     // read the input with the compression `subject` (none, GZIP, ZLIB)
  kLongerTraceTimeout,     // give the trace of an input function more time
  kFewerWorkers,           // use at most `subject` workers (each one then gets a share)
  kNoSignRequest,          // send object-store requests unsigned (a public bucket)
};

// A remedy and its subject.
struct Advice {
  Remedy remedy = Remedy::kNone;
  std::string subject;

  bool operator==(const Advice&) const = default;
};

// The remedy in the API's terms, as a clause to append to a message
// ("(allow overwriting to replace it)"); empty for kNone.
std::string RemedyText(const Advice& advice);

// A success, or an error code with a message. Cheap to copy when ok.
//
// Errors are made with the named factories:
//   return Status::DataLoss(fmt::format("{}: corrupted record at {}", path, offset));
// Facts a front end shows in its own way travel beside the message, never
// inside it to be parsed back: where in a pipeline expression the error is
// (WithPosition), and what the caller can do about it (WithAdvice). A caller
// that knows more of where an error happened names it with Annotate, which
// keeps both:
//   return std::move(s).Annotate(fmt::format("replica {}", replica));
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  // The one wording of an operation stopped by a signal (Interrupted()):
  // Cancelled "interrupted". A front end adds the signal's name.
  static Status Interrupted() { return Cancelled("interrupted"); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
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

  // The byte offset in a pipeline expression that the message's position
  // ("column C", "line L, column C") names; nullopt when it names none.
  const std::optional<size_t>& position() const { return position_; }
  Status WithPosition(size_t position) && {
    position_ = position;
    return std::move(*this);
  }

  // What the caller can do about the error; Remedy::kNone when nothing.
  const Advice& advice() const { return advice_; }
  Status WithAdvice(Remedy remedy, std::string subject = "") && {
    advice_ = Advice{remedy, std::move(subject)};
    return std::move(*this);
  }

  // The same error with what the caller knows of where it happened named
  // first: "<context>: <message>", as tfdist's messages name their subject
  // ("replica 2: " + "a.tfrecord: corrupted record at 12"). The code,
  // position() and advice() are kept. (riegeli's Annotate, which appends;
  // here the context goes first.) An OK status stays OK, unannotated.
  Status Annotate(std::string_view context) const&;
  Status Annotate(std::string_view context) &&;

  // "DATA_LOSS: a.tfrecord: corrupted record at 12", or "OK"; the advice,
  // if any, follows in the API's terms (RemedyText).
  std::string ToString() const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_ && a.position_ == b.position_ &&
           a.advice_ == b.advice_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::optional<size_t> position_;
  Advice advice_;
};

// Returns the status of a Status or of a Result<T> (see result.h).
inline const Status& GetStatus(const Status& status) { return status; }

// Maps a status to the exit code of the manual's EXIT STATUS:
// 0 ok, 2 invalid usage or argument, 3 data error, 5 out of a resource,
// 7 a remote store unreachable or failing after every retry,
// 128 + the signal's number when interrupted (InterruptExitCode(): 130 for
// SIGINT), 1 internal.
int ExitCodeFor(const Status& status);

// Whether a system call's `err` says the system ran out of something the
// user can free or raise (disk space or quota, memory, file descriptors, the
// file size limit) rather than that the call or its data are wrong.
bool IsResourceErrno(int err);

// The error of a system call that failed with `err`: "`what`: strerror(err)",
// with code kResourceExhausted for IsResourceErrno(err), else `otherwise`.
// A full disk is then told apart from a bug, whatever the caller's code.
Status ErrnoError(int err, StatusCode otherwise, std::string_view what);

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
