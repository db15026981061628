// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Error reporting and JSON printing for the subcommands.

#include "report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tfdist/base/text.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/io/index_location.h"

namespace tfdist::cli {

namespace {

// " --index-dir DIR" when the indexes are not in tfdist's cache.
std::string IndexDirArgument() {
  const std::string dir = io::ExplicitIndexFolder();
  return dir.empty() ? "" : fmt::format(" --index-dir {}", dir);
}

}  // namespace

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
          "{} (use --policy DATA, or split the data into more files with tfdist reshard)",
          message);
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
  // The contract has five codes (RESOURCE_EXHAUSTED passes as it is); the
  // others map onto the nearest.
  switch (status.code()) {
    case StatusCode::kFailedPrecondition:
    case StatusCode::kUnavailable:
      code = "INVALID_ARGUMENT";
      break;
    case StatusCode::kOutOfRange:
      code = "DATA_LOSS";
      break;
    case StatusCode::kCancelled:
      code = "INTERNAL";
      break;
    default:
      break;
  }
  return {{"code", code}, {"message", Describe(status)}};
}

int ReportError(const Status& status, bool json) {
  std::fflush(stdout);
  PrintMessage("error", Describe(status));
  if (json) PrintJson({{"error", ErrorJson(status)}});
  return ExitCodeFor(status);
}

void PrintMessage(std::string_view kind, std::string_view message) {
  fmt::print(stderr, "tfdist: {}: {}\n", kind, TerminalText(message));
}

namespace {

// The line of `text` holding byte `pos`, and a caret under it.
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
  // Shown escaped (a name in a string literal may hold anything), the caret
  // under the escaped text.
  std::string caret;
  for (const char c : TerminalText(text.substr(start, pos - start))) {
    if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) caret += ' ';
  }
  return fmt::format("  {}\n  {}^", TerminalText(text.substr(start, end - start)), caret);
}

}  // namespace

int ReportPipelineError(const Status& status, std::string_view text, bool json) {
  const int rc = ReportError(status, json);
  if (status.position()) fmt::print(stderr, "{}\n", PointAt(text, *status.position()));
  return rc;
}

void PrintJson(const nlohmann::ordered_json& j) {
  fmt::print("{}\n", j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace tfdist::cli
