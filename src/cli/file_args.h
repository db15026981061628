// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The FILE arguments of count, verify and cat, their scans, and output names.

#ifndef TFDIST_CLI_FILE_ARGS_H_
#define TFDIST_CLI_FILE_ARGS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/base/string_list.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/io/file_count.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::cli {

// --output as a name or prefix of files: not empty and not a folder ("out/",
// which would name files "out/-00000-of-00002..."). Error: InvalidArgument,
// "--output needs <needs>; got '<output>'".
Status CheckOutputName(const std::string& output, std::string_view needs);

// The FILE arguments and --input-compression shared by count, verify and cat.
struct FileArgs {
  std::vector<std::string> patterns;
  std::string input_compression = "auto";
};
void AddFileArgs(CLI::App& cmd, FileArgs* args);

// The flags of reads from object stores (io::RemoteOptions): --read-ahead,
// --remote-attempts, --remote-timeout, --no-sign-request; each sets the
// process's options (io::SetRemoteOptions) as it is parsed.
void AddRemoteOptions(CLI::App& cmd);

// --input-compression: auto, none, gzip or zlib, of the files a command reads.
CLI::Option* AddInputCompressionOption(CLI::App& cmd, std::string* compression);
// --output-compression: none, gzip or zlib, of the files a command writes,
// `what` ending its help.
CLI::Option* AddOutputCompressionOption(CLI::App& cmd, std::string* compression,
                                        std::string_view what);

// --index-dir DIR: where the indexes are read (and, for `index`, written)
// instead of tfdist's cache (io::SetIndexFolder). `write`: the folder is
// created when missing; otherwise it must exist.
void AddIndexDirOption(CLI::App& cmd, bool write = false);

struct ResolvedFiles {
  std::vector<std::string> files;  // expanded and sorted, each once (io::ExpandFileArguments)
  io::Compression compression;
  std::vector<std::string> warnings;  // printed to stderr already; for JSON output
};
// Prints each warning of the expansion to stderr ("tfdist: warning: ...").
// Error: InvalidArgument for an unknown compression or a pattern matching nothing.
Result<ResolvedFiles> ResolveFileArgs(const FileArgs& args);

// io::ExpandFileArguments, its warnings printed to stderr and kept in `warnings`.
Result<StringList> ExpandFileArgs(std::span<const std::string> patterns,
                                  std::vector<std::string>& warnings);

// `warnings` as a JSON member of `out` ("warnings"), when there are any.
void AddWarningsJson(nlohmann::ordered_json& out, const std::vector<std::string>& warnings);

// One file's count by count or verify: io::CountFiles's, and the file.
struct FileScan : io::FileCount {
  std::string path;
  std::optional<uint64_t> file_bytes;

  bool from_index() const { return source != io::CountSource::kScan; }
};

// Counts the files (io::CountFiles: in parallel), keeping their order in
// the result. With `use_index`, an up-to-date entry of the file's folder's
// directory index (an object folder's counts compressed objects too), else
// an up-to-date FILE.idx, stands in for reading the file; otherwise every
// file is read.
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

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_FILE_ARGS_H_
