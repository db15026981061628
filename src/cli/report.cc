// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Error reporting and JSON printing for the subcommands.

#include "report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "tfdist/base/interrupt.h"
#include "tfdist/base/text.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/io/index_location.h"
#include "tfdist/io/storage.h"

namespace tfdist::cli {

namespace {
bool quiet_warnings = false;  // QuietWarnings
bool capture = false;         // CaptureMessages
std::vector<std::string> captured;
nlohmann::ordered_json captured_error;  // ReportError's, while capturing

// " --index-dir DIR" when the indexes are not in tfdist's cache.
std::string IndexDirArgument() {
  const std::string dir = io::ExplicitIndexFolder();
  return dir.empty() ? "" : fmt::format(" --index-dir {}", dir);
}

std::string command_name;  // SetCommand's

// How the command running declares that its input is compressed as
// `compression` (none, GZIP, ZLIB).
std::string DeclareCompression(std::string_view compression) {
  std::string lower(compression);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string pipeline =
      compression == "none"
          ? "compression_type=\"\" on the tfrecord source, or none at all"
          : fmt::format("compression_type=\"{}\" on the tfrecord source", compression);
  if (command_name == "take" || command_name == "layout" || command_name == "run") {
    return fmt::format("declare it in the pipeline: {}", pipeline);
  }
  if (command_name == "count" || command_name == "verify" || command_name == "cat" ||
      command_name == "digest" || command_name == "reshard" || command_name == "convert") {
    return fmt::format("use --input-compression {}, or --input-compression auto to detect it",
                       lower);
  }
  return fmt::format(
      "declare it: {} in a pipeline; --input-compression {} in the commands that read files",
      pipeline, lower);
}

}  // namespace

void SetCommand(std::string_view name) { command_name = name; }

std::string Describe(std::string_view message, const Advice& a) {
  switch (a.remedy) {
    case Remedy::kNone:
      return std::string(message);
    case Remedy::kOverwrite:
      return fmt::format("{} (use --force to overwrite)", message);
    case Remedy::kRewriteFileIndex:
      return fmt::format("{} (tfdist index --force{} {} writes it again)", message,
                         IndexDirArgument(), a.subject);
    case Remedy::kRewriteDirectoryIndex:
      return fmt::format("{}; rewrite it with tfdist index --directory {} --force{}", message,
                         a.subject, IndexDirArgument());
    case Remedy::kOtherOutputFolder:
      return fmt::format("{} (use --output-dir)", message);
    case Remedy::kFewerShards:
      return fmt::format("{} (use --num-shards {} or fewer)", message, a.subject);
    case Remedy::kDataPolicy:
      return fmt::format("{}; use --policy DATA (or AUTO)", message);
    case Remedy::kDataPolicyOrMoreFiles:
      return fmt::format(
          "{} (use --policy DATA, or split the data into more files with tfdist reshard)", message);
    case Remedy::kPlanSteps:
      return fmt::format("{} Give --steps to plan that many global steps", message);
    case Remedy::kFewerSteps:
      return fmt::format("{}; give fewer --steps (tfdist run streams any number)", message);
    case Remedy::kFromFunction:
      return fmt::format("{} (tfdist layout --api from-function)", message);
    case Remedy::kHintPolicy:
      return fmt::format("{} (--policy HINT)", message);
    case Remedy::kMoreFilesFewerWorkers:
      return fmt::format(
          "{} (split the data into more files with tfdist reshard, or use fewer --workers)",
          message);
    case Remedy::kOneWorker:
      return fmt::format("{} (run one worker with --worker)", message);
    case Remedy::kLegacySplit:
      return fmt::format("{} (see them with --rebatch legacy)", message);
    case Remedy::kIndexFolder:
      return fmt::format("{} (use --index-dir DIR)", message);
    case Remedy::kDeclareCompression:
      return fmt::format("{} ({})", message, DeclareCompression(a.subject));
    case Remedy::kLongerTraceTimeout:
      return fmt::format("{} (--trace-timeout gives it longer)", message);
    case Remedy::kFewerWorkers:
      return fmt::format("{} (use --workers {} or fewer)", message, a.subject);
    case Remedy::kNoSignRequest:
      return fmt::format("{} (or read a public bucket with --no-sign-request)", message);
    case Remedy::kSeedShuffles:
      return fmt::format(
          "{} (--global-seed G, the program's tf.random.set_seed(G), or seed= on the shuffle "
          "gives TensorFlow's exact order; --seed N repeats this one)",
          message);
    case Remedy::kMoveIndexes:
      return fmt::format(
          "{}. Move the index files out of {} (tfdist index keeps new ones in its cache, or in "
          "--index-dir DIR), or narrow the pattern",
          message, a.subject);
  }
  return std::string(message);
}

std::string Describe(const Status& status) { return Describe(status.message(), status.advice()); }

nlohmann::ordered_json ErrorJson(const Status& status) {
  std::string_view code = StatusCodeName(status.code());
  // The contract has six codes (RESOURCE_EXHAUSTED and UNAVAILABLE pass as
  // they are); the others map onto the nearest.
  switch (status.code()) {
    case StatusCode::kFailedPrecondition:
      code = "INVALID_ARGUMENT";
      break;
    case StatusCode::kOutOfRange:
      code = "DATA_LOSS";
      break;
    case StatusCode::kPermissionDenied:  // an input that cannot be read, as a local file's EACCES
      code = "NOT_FOUND";
      break;
    case StatusCode::kCancelled:
      code = "INTERNAL";
      break;
    default:
      break;
  }
  return {{"code", code}, {"message", Describe(status)}};
}

namespace {
int stdout_errno = 0;  // FlushStdout's first failure
}  // namespace

void FlushStdout() {
  errno = 0;
  if (std::fflush(stdout) != 0 && stdout_errno == 0) stdout_errno = errno != 0 ? errno : EIO;
}

int StdoutError() {
  FlushStdout();
  if (stdout_errno == 0 && std::ferror(stdout)) return EIO;
  return stdout_errno;
}

int ReportError(const Status& reported, bool json) {
  FlushStdout();
  Status status = reported;
  if (status.code() == StatusCode::kCancelled && InterruptSignal() != 0) {
    const int signal_number = InterruptSignal();
    if (signal_number == SIGXFSZ) {
      // A write went past `ulimit -f`: out of a resource, like a full disk.
      status = Status::ResourceExhausted(
          fmt::format("a file reached the size limit of this process (ulimit -f, SIGXFSZ): {}; {}",
                      std::strerror(EFBIG), status.message()));
    } else if (signal_number != SIGINT) {
      status = Status::Cancelled(
          fmt::format("{} (SIG{})", status.message(), sigabbrev_np(signal_number)));
    }
  }
  PrintRemoteWarnings();  // before the error, which may come of what they warn of
  PrintMessage("error", Describe(status));
  if (capture) {
    captured_error = ErrorJson(status);
  } else if (json) {
    PrintJson({{"error", ErrorJson(status)}});
  }
  return ExitCodeFor(status);
}

void PrintRemoteWarnings(std::vector<std::string>* kept) {
  for (std::string& w : io::TakeRemoteWarnings()) {
    PrintMessage("warning", w);
    if (kept != nullptr) kept->push_back(std::move(w));
  }
}

void QuietWarnings() { quiet_warnings = true; }
void CaptureMessages(bool on) { capture = on; }
std::vector<std::string> TakeCapturedMessages() { return std::exchange(captured, {}); }
nlohmann::ordered_json TakeCapturedErrorJson() { return std::exchange(captured_error, nullptr); }

void PrintMessage(std::string_view kind, std::string_view message) {
  if (quiet_warnings && kind == "warning") return;
  if (capture) {
    captured.push_back(fmt::format("{}: {}", kind, message));
    return;
  }
  // fwrite, not fmt::print, which throws when standard error is full or
  // closed (a hung-up terminal): the message then cannot be told, but the
  // exit status still can.
  const std::string line = fmt::format("tfdist: {}: {}\n", kind, TerminalText(message));
  std::fwrite(line.data(), 1, line.size(), stderr);
}

namespace {

// The most characters of the line an error quotes: a window around the
// caret, marked with "..." where the line goes on. The line of a real
// expression given as an argument is shown whole; a pipeline file of one
// long line (a megabyte of it) is not.
constexpr size_t kQuotedColumns = 160;

bool StartsCharacter(char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; }

// The line of `text` holding byte `pos` (a window of it when it is long),
// and a caret under the character there.
std::string PointAt(std::string_view text, size_t pos) {
  pos = std::min(pos, text.size());
  const size_t begin = text.rfind('\n', pos == 0 ? 0 : pos - 1);
  const size_t start = begin == std::string_view::npos || pos == 0 ? 0 : begin + 1;
  size_t end = std::min(text.find('\n', start), text.size());
  // A traced chain's "#@ FILE:LINE" is already in the message.
  if (const std::string_view marker = data::SourceMarker(text, pos); !marker.empty()) {
    const size_t at = static_cast<size_t>(marker.data() - text.data()) - data::kSourceMarker.size();
    end = start + text.substr(start, at - start).find_last_not_of(' ') + 1;
  }
  std::string_view line = text.substr(start, end - start);
  size_t at = std::min(pos - start, line.size());
  // The window, in characters: kQuotedColumns of them, the caret's in its
  // middle where the line allows.
  size_t chars = 0, before = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (!StartsCharacter(line[i])) continue;
    if (i < at) ++before;
    ++chars;
  }
  std::string_view cut_before, cut_after;
  if (chars > kQuotedColumns) {
    const size_t first =
        std::min(before - std::min(before, kQuotedColumns / 2), chars - kQuotedColumns);
    // Byte offsets of characters `first` and `first + kQuotedColumns`.
    size_t from = line.size(), to = line.size();
    for (size_t i = 0, c = 0; i < line.size(); ++i) {
      if (!StartsCharacter(line[i])) continue;
      if (c == first) from = i;
      if (c == first + kQuotedColumns) {
        to = i;
        break;
      }
      ++c;
    }
    if (first > 0) cut_before = "...";
    if (to < line.size()) cut_after = "...";
    at -= std::min(at, from);
    line = line.substr(from, to - from);
  }
  // Shown escaped (a name in a string literal may hold anything), the caret
  // under the escaped text.
  std::string caret(cut_before.size(), ' ');
  for (const char c : TerminalText(line.substr(0, std::min(at, line.size())))) {
    if (StartsCharacter(c)) caret += ' ';
  }
  return fmt::format("  {}{}{}\n  {}^", cut_before, TerminalText(line), cut_after, caret);
}

}  // namespace

int ReportPipelineError(const Status& status, std::string_view text, bool json) {
  const int rc = ReportError(status, json);
  if (status.position()) fmt::print(stderr, "{}\n", PointAt(text, *status.position()));
  return rc;
}

void PrintNote(std::string_view text) { PrintMessage("note", text); }

void PrintJson(const nlohmann::ordered_json& j) { fmt::print("{}\n", DumpJson(j)); }

}  // namespace tfdist::cli
