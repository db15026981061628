// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Error reporting and argument helpers for the subcommands.

#include "cli_util.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <tbb/parallel_for.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tfdist/io/file_list.h"

namespace tfdist::cli {

std::string Describe(std::string_view message, const Advice& a) {
  switch (a.remedy) {
    case Remedy::kNone:
      return std::string(message);
    case Remedy::kOverwrite:
      return fmt::format("{} (use --force to overwrite)", message);
    case Remedy::kRewriteFileIndex:
      return fmt::format("{} (tfdist index --force {} writes it again)", message, a.subject);
    case Remedy::kRewriteDirectoryIndex:
      return fmt::format("{}; rewrite it with tfdist index --directory {} --force", message,
                         a.subject);
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
    case Remedy::kOneWorker:
      return fmt::format("{} (run one worker with --worker)", message);
    case Remedy::kLegacySplit:
      return fmt::format("{} (see them with --rebatch legacy)", message);
  }
  return std::string(message);
}

std::string Describe(const Status& status) { return Describe(status.message(), status.advice()); }

nlohmann::ordered_json ErrorJson(const Status& status) {
  std::string_view code = StatusCodeName(status.code());
  // The contract has four codes; the others map onto the nearest.
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
  fmt::print(stderr, "tfdist: error: {}\n", Describe(status));
  if (json) PrintJson({{"error", ErrorJson(status)}});
  return ExitCodeFor(status);
}

Status CheckOutputName(const std::string& output, std::string_view needs) {
  if (!output.empty() && output.back() != '/') return Status::OK();
  return Status::InvalidArgument(fmt::format("--output needs {}; got '{}'", needs, output));
}

void AddFileArgs(CLI::App& cmd, FileArgs* args) {
  cmd.add_option("files", args->patterns,
                 "Files or glob patterns, sorted byte-wise together as list_files does; - "
                 "is standard input")
      ->required();
  cmd.add_option("--compression", args->compression,
                 "Compression of the input files: auto (detect gzip/zlib by magic, confirmed "
                 "by a valid first record), none, gzip, zlib")
      ->default_str("auto");
}

Result<ResolvedFiles> ResolveFileArgs(const FileArgs& args) {
  ResolvedFiles resolved;
  TFDIST_ASSIGN_OR_RETURN(resolved.compression, io::ParseCompression(args.compression));
  TFDIST_ASSIGN_OR_RETURN(resolved.files, io::ExpandFilePatterns(args.patterns));
  return resolved;
}

std::vector<FileScan> ScanFiles(const std::vector<std::string>& files,
                                const io::RecordReaderOptions& options, bool use_index) {
  io::CountOptions o;
  o.file_index = use_index;
  o.scan = options;
  std::vector<io::FileCount> counts = io::CountFiles(files, o);
  std::vector<FileScan> scans(files.size());
  tbb::parallel_for(size_t{0}, files.size(), [&](size_t i) {
    static_cast<io::FileCount&>(scans[i]) = std::move(counts[i]);
    scans[i].path = files[i];
    scans[i].file_bytes = FileSize(files[i]);
  });
  return scans;
}

nlohmann::ordered_json FileScanJson(const FileScan& scan) {
  nlohmann::ordered_json f;
  f["path"] = scan.path;
  f["ok"] = scan.count.status.ok();
  f["records"] = scan.count.records;
  f["bytes"] = scan.count.payload_bytes;
  f["file_bytes"] = scan.file_bytes ? nlohmann::ordered_json(*scan.file_bytes) : nullptr;
  f["compression"] = io::CompressionName(scan.count.compression);
  if (scan.from_index()) f["from_index"] = true;
  if (!scan.count.status.ok()) {
    nlohmann::ordered_json e = ErrorJson(scan.count.status);
    e["offset"] =
        scan.count.error_offset ? nlohmann::ordered_json(*scan.count.error_offset) : nullptr;
    f["error"] = e;
  }
  return f;
}

Status FirstScanError(const std::vector<FileScan>& scans) {
  for (const FileScan& s : scans) {
    if (!s.count.status.ok()) return s.count.status;
  }
  return Status::OK();
}

int ReportScanErrors(const std::vector<FileScan>& scans) {
  std::fflush(stdout);
  int rc = 0;
  for (const FileScan& s : scans) {
    if (s.count.status.ok()) continue;
    fmt::print(stderr, "tfdist: error: {}\n", s.count.status.message());
    rc = std::max(rc, ExitCodeFor(s.count.status));
  }
  return rc;
}

data::BuildOptions PipelineArgs::build_options() const {
  data::BuildOptions o;
  o.cpus = cpus;
  o.default_seed = seed;
  return o;
}

void AddPipelineArgs(CLI::App& cmd, PipelineArgs* args) {
  cmd.add_option("pipeline", args->expression,
                 "A tf.data method chain, e.g. 'list_files(\"data/*.tfrecord\", shuffle=False)"
                 ".interleave(tfrecord, cycle_length=4).batch(64)' (see the manual for the "
                 "grammar)");
  cmd.add_option("--pipeline-file", args->file,
                 "Read the pipeline expression from a file (- for standard input); newlines and "
                 "# comments are free");
  cmd.add_option("--cpus", args->cpus,
                 "CPUs of the modelled host: TensorFlow's default (AUTOTUNE) cycle_length and "
                 "num_parallel_calls (default: this machine's)")
      ->check(IntAtLeast(1));
  cmd.add_option("--seed", args->seed,
                 "Seed for shuffles given no seed (default: a random one per run, as in "
                 "TensorFlow)")
      ->check(UintAtLeast(0));
}

namespace {

// The line of `text` holding byte `pos`, and a caret under it.
std::string PointAt(std::string_view text, size_t pos) {
  pos = std::min(pos, text.size());
  const size_t begin = text.rfind('\n', pos == 0 ? 0 : pos - 1);
  const size_t start = begin == std::string_view::npos || pos == 0 ? 0 : begin + 1;
  const size_t end = std::min(text.find('\n', start), text.size());
  std::string caret;
  for (size_t i = start; i < pos; ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) caret += text[i] == '\t' ? '\t' : ' ';
  }
  return fmt::format("  {}\n  {}^", text.substr(start, end - start), caret);
}

}  // namespace

int ReportPipelineError(const Status& status, std::string_view text, bool json) {
  const int rc = ReportError(status, json);
  if (status.position()) fmt::print(stderr, "{}\n", PointAt(text, *status.position()));
  return rc;
}

Result<data::Pipeline> ParsePipelineArgs(const PipelineArgs& args, bool json) {
  std::string text = args.expression;
  auto fail = [&](Status s) -> Result<data::Pipeline> {
    ReportError(s, json);
    return s;
  };
  if (!args.file.empty()) {
    if (!text.empty()) {
      return fail(
          Status::InvalidArgument("give the pipeline as an argument or --pipeline-file, not both"));
    }
    std::stringstream ss;
    if (args.file == "-") {
      ss << std::cin.rdbuf();
    } else {
      struct stat st;
      if (stat(args.file.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        return fail(Status::InvalidArgument(
            fmt::format("{}: is a folder, not a pipeline file", args.file)));
      }
      std::ifstream in(args.file);
      if (!in) {
        return fail(
            Status::InvalidArgument(fmt::format("{}: cannot read the pipeline file", args.file)));
      }
      ss << in.rdbuf();
    }
    text = ss.str();
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return fail(Status::InvalidArgument("no pipeline expression given"));
  }
  Result<data::Pipeline> pipeline = data::ParsePipeline(text);
  if (!pipeline.ok()) ReportPipelineError(pipeline.status(), text, json);
  return pipeline;
}

Result<std::shared_ptr<const data::Dataset>> BuildPipeline(const PipelineArgs& args,
                                                           const data::BuildOptions& options,
                                                           bool json) {
  TFDIST_ASSIGN_OR_RETURN(data::Pipeline pipeline, ParsePipelineArgs(args, json));
  Result<std::shared_ptr<const data::Dataset>> dataset = data::BuildDataset(pipeline, options);
  if (!dataset.ok()) ReportPipelineError(dataset.status(), pipeline.text, json);
  return dataset;
}

std::optional<uint64_t> FileSize(const std::string& path) {
  struct stat st;
  if (path == "-" || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<uint64_t>(st.st_size);
}

void PrintJson(const nlohmann::ordered_json& j) {
  fmt::print("{}\n", j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

namespace {

// `text` read as CLI11 reads integers (strtoll/strtoull, base 0), checked
// against [min, max]. The message is empty when the value is in range or is
// not an integer (CLI11's conversion reports that).
std::string CheckInteger(const std::string& text, int64_t min, uint64_t max) {
  const char* begin = text.c_str();
  while (*begin == ' ' || *begin == '\t') ++begin;
  char* end = nullptr;
  errno = 0;
  bool below = false, above = false;
  if (*begin == '-') {
    const long long v = std::strtoll(begin, &end, 0);
    below = errno == ERANGE || v < min;
  } else {
    const unsigned long long v = std::strtoull(begin, &end, 0);
    above = errno == ERANGE || v > max;
    below = min > 0 && v < static_cast<uint64_t>(min);
  }
  if (end == begin || end != text.c_str() + text.size()) return {};
  if (below) return fmt::format("must be at least {}; got {}", min, text);
  if (above) return fmt::format("must be at most {}; got {}", max, text);
  return {};
}

}  // namespace

CLI::Validator UintAtLeast(uint64_t min) {
  const auto low = static_cast<int64_t>(std::min<uint64_t>(min, INT64_MAX));
  return CLI::Validator([low](std::string& text) { return CheckInteger(text, low, UINT64_MAX); },
                        "");
}

CLI::Validator IntAtLeast(int64_t min) {
  return CLI::Validator([min](std::string& text) { return CheckInteger(text, min, INT64_MAX); },
                        "");
}

}  // namespace tfdist::cli
