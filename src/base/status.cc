// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Status names and the mapping of codes to the exit codes of the manual's EXIT STATUS.

#include "tfdist/base/status.h"

#include <cerrno>
#include <cstring>

#include "tfdist/base/interrupt.h"

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
    case StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
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

std::string RemedyText(const Advice& a) {
  switch (a.remedy) {
    case Remedy::kNone:
      return "";
    case Remedy::kOverwrite:
      return "(allow overwriting to replace it)";
    case Remedy::kRewriteFileIndex:
      return fmt::format("(write the index of {} again)", a.subject);
    case Remedy::kRewriteDirectoryIndex:
      return fmt::format("(write the directory index of {} again)", a.subject);
    case Remedy::kOtherOutputFolder:
      return "(write the output to another folder)";
    case Remedy::kFewerShards:
      return fmt::format("(ask for {} shards or fewer)", a.subject);
    case Remedy::kDataPolicy:
      return "(use the DATA or AUTO policy)";
    case Remedy::kDataPolicyOrMoreFiles:
      return "(use the DATA policy, or rewrite the data into more files)";
    case Remedy::kPlanSteps:
      return "(give a number of steps to plan)";
    case Remedy::kFewerSteps:
      return "(plan fewer steps; a streaming run takes any number)";
    case Remedy::kFromFunction:
      return "(use distribute_datasets_from_function)";
    case Remedy::kHintPolicy:
      return "(use the HINT policy)";
    case Remedy::kMoreFilesFewerWorkers:
      return "(rewrite the data into more files, or use fewer workers)";
    case Remedy::kOneWorker:
      return "(run one worker on this host)";
    case Remedy::kLegacySplit:
      return "(compare with the legacy split)";
    case Remedy::kIndexFolder:
      return "(name a folder for the index files)";
    case Remedy::kMoveIndexes:
      return fmt::format("(move the index files out of {}, or narrow the pattern)", a.subject);
    case Remedy::kSeedShuffles:
      return "(with the program's global seed, or a seed for the shuffle, the order is "
             "TensorFlow's own)";
    case Remedy::kLongerTraceTimeout:
      return "(give the trace more time)";
    case Remedy::kFewerWorkers:
      return fmt::format("(use {} workers or fewer)", a.subject);
    case Remedy::kNoSignRequest:
      return "(or read a public bucket with unsigned requests)";
    case Remedy::kDeclareCompression:
      if (a.subject == "none") return "(read it as uncompressed, or detect the compression)";
      return fmt::format("(read it as {}-compressed, or detect the compression)", a.subject);
  }
  return "";
}

Status Status::Annotate(std::string_view context) const& { return Status(*this).Annotate(context); }

Status Status::Annotate(std::string_view context) && {
  if (!ok()) message_ = fmt::format("{}: {}", context, message_);
  return std::move(*this);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  const std::string advice = RemedyText(advice_);
  return fmt::format("{}: {}{}{}", StatusCodeName(code_), message_, advice.empty() ? "" : " ",
                     advice);
}

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return 0;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
      return 2;
    case StatusCode::kUnavailable:
      return 7;
    case StatusCode::kNotFound:
    case StatusCode::kPermissionDenied:
    case StatusCode::kDataLoss:
    case StatusCode::kOutOfRange:
      return 3;
    case StatusCode::kResourceExhausted:
      return 5;
    case StatusCode::kCancelled:
      return InterruptExitCode();
    case StatusCode::kInternal:
      return 1;
  }
  return 1;
}

bool IsResourceErrno(int err) {
  switch (err) {
    case ENOSPC:  // the disk is full
    case EDQUOT:  // the user's quota is used up
    case EFBIG:   // the file size limit (ulimit -f) or the file system's largest file
    case ENOMEM:
    case EMFILE:  // the process's open files (ulimit -n)
    case ENFILE:  // the system's open files
      return true;
    default:
      return false;
  }
}

Status ErrnoError(int err, StatusCode otherwise, std::string_view what) {
  return Status(IsResourceErrno(err) ? StatusCode::kResourceExhausted : otherwise,
                fmt::format("{}: {}", what, std::strerror(err)));
}

}  // namespace tfdist
