// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Pieces shared by the subcommands: registration, errors, file arguments.

#ifndef TFDIST_CLI_CLI_UTIL_H_
#define TFDIST_CLI_CLI_UTIL_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/io/file_count.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::cli {

// What a subcommand runs once its arguments are parsed; returns the exit code.
using Action = std::function<int()>;

// Each subcommand adds itself to `app` and, when chosen, sets *action.
void AddCountCommand(CLI::App& app, Action* action);
void AddVerifyCommand(CLI::App& app, Action* action);
void AddCatCommand(CLI::App& app, Action* action);
void AddGenCommand(CLI::App& app, Action* action);
void AddTakeCommand(CLI::App& app, Action* action);
void AddLayoutCommand(CLI::App& app, Action* action);
void AddIndexCommand(CLI::App& app, Action* action);
void AddRunCommand(CLI::App& app, Action* action);
void AddReshardCommand(CLI::App& app, Action* action);
void AddConvertCommand(CLI::App& app, Action* action);

// A message and its advice, the remedy worded as the flags or commands that
// do it ("...: already exists (use --force to overwrite)"). The one place
// where the library's terms become flags.
std::string Describe(std::string_view message, const Advice& advice);
// Describe(status.message(), status.advice()).
std::string Describe(const Status& status);

// Prints "tfdist: error: <Describe(status)>" to stderr and, when `json`, the error
// object of the manual's JSON OUTPUT to stdout. Returns the exit code for `status`.
int ReportError(const Status& status, bool json);

// --output as a name or prefix of files: not empty and not a folder ("out/",
// which would name files "out/-00000-of-00002..."). Error: InvalidArgument,
// "--output needs <needs>; got '<output>'".
Status CheckOutputName(const std::string& output, std::string_view needs);

// {"code": "DATA_LOSS", "message": Describe(status)}
nlohmann::ordered_json ErrorJson(const Status& status);

// The FILE arguments and --compression shared by count, verify and cat.
struct FileArgs {
  std::vector<std::string> patterns;
  std::string compression = "auto";
};
void AddFileArgs(CLI::App& cmd, FileArgs* args);

struct ResolvedFiles {
  std::vector<std::string> files;  // expanded and sorted (see ExpandFilePatterns)
  io::Compression compression;
};
// Error: InvalidArgument for an unknown compression or a pattern matching nothing.
Result<ResolvedFiles> ResolveFileArgs(const FileArgs& args);

// One file's count by count or verify: io::CountFiles's, and the file.
struct FileScan : io::FileCount {
  std::string path;
  std::optional<uint64_t> file_bytes;

  bool from_index() const { return source != io::CountSource::kScan; }
};

// Counts the files (io::CountFiles: in parallel), keeping their order in
// the result. With `use_index`, an up-to-date FILE.idx stands in for
// reading the file; otherwise every file is read.
std::vector<FileScan> ScanFiles(const std::vector<std::string>& files,
                                const io::RecordReaderOptions& options, bool use_index = false);

// One file's scan as JSON: path, ok, records, bytes, file_bytes, compression,
// and for a failed scan error {code, message, offset} (offset: the record
// offset named, or null).
nlohmann::ordered_json FileScanJson(const FileScan& scan);

// The first failed scan's status, or OK.
Status FirstScanError(const std::vector<FileScan>& scans);

// Prints each failed scan's error to stderr; returns the exit code (0 if none).
int ReportScanErrors(const std::vector<FileScan>& scans);

// Size of a file on disk, or nullopt (standard input, an error).
std::optional<uint64_t> FileSize(const std::string& path);

// The pipeline expression (an argument or --pipeline-file) and the options
// that shape how it is built, shared by the commands that run pipelines.
struct PipelineArgs {
  std::string expression;
  std::string file;
  int64_t cpus = 0;
  std::optional<uint64_t> seed;

  data::BuildOptions build_options() const;
};
void AddPipelineArgs(CLI::App& cmd, PipelineArgs* args);

// Reads and parses the pipeline expression. A mistake is reported (stderr,
// and stdout when `json`) with the line of the expression and a caret under
// the column; the returned status is the error.
Result<data::Pipeline> ParsePipelineArgs(const PipelineArgs& args, bool json);

// Reports an error met while parsing, building or running the pipeline
// expression `text`; when the error has a position() the line of `text` and
// a caret under it follow. Returns the exit code.
int ReportPipelineError(const Status& status, std::string_view text, bool json);

// ParsePipelineArgs, then BuildDataset, reporting errors the same way.
Result<std::shared_ptr<const data::Dataset>> BuildPipeline(const PipelineArgs& args,
                                                           const data::BuildOptions& options,
                                                           bool json);

// Prints JSON on one line (jq-friendly) followed by a newline.
void PrintJson(const nlohmann::ordered_json& j);

// Checks for integer options, added with ->check(). CLI11 2.1 wraps "-1" into
// an unsigned option (2^64 - 1) and saturates a value too large for the type;
// these reject both, and a value below `min`, with the option's name first:
// "--files: must be at least 1; got 0". A value that is no integer at all is
// left to CLI11's conversion error.
// Every unsigned (uint32/uint64/size_t) option takes UintAtLeast.
CLI::Validator UintAtLeast(uint64_t min);
CLI::Validator IntAtLeast(int64_t min);

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_CLI_UTIL_H_
