// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// File arguments, scans and their reports.

#include "file_args.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>

#include "report.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/file_list.h"
#include "tfdist/io/index_location.h"
#include "tfdist/io/storage.h"
#include "tfdist/proto/synthetic.h"
#include "validators.h"

namespace tfdist::cli {
namespace {

// A folder that must be there: "DIR: the output folder does not exist", as
// every writer words it (io::OutputSet), or "DIR: is not a folder".
CLI::Validator ExistingFolder(std::string what) {
  return CLI::Validator(
      [what](std::string& dir) -> std::string {
        if (Status local = io::CheckLocalOutput(dir, fmt::format("the {}", what)); !local.ok()) {
          return local.message();
        }
        struct stat st;
        if (stat(dir.c_str(), &st) != 0) return fmt::format("{}: the {} does not exist", dir, what);
        if (!S_ISDIR(st.st_mode)) return fmt::format("{}: is not a folder", dir);
        return {};
      },
      "");
}

}  // namespace

Status CheckOutputName(const std::string& output, std::string_view needs) {
  TFDIST_RETURN_IF_ERROR(io::CheckLocalOutput(output, "--output"));
  if (!output.empty() && output.back() != '/') return Status::OK();
  return Status::InvalidArgument(fmt::format("--output needs {}; got '{}'", needs, output));
}

void AddFileArgs(CLI::App& cmd, FileArgs* args) {
  cmd.add_option("files", args->patterns,
                 "Files or glob patterns, sorted byte-wise together as list_files does; - "
                 "is standard input; s3://BUCKET/KEY and gs://BUCKET/KEY name objects")
      ->required();
  AddInputCompressionOption(cmd, &args->input_compression);
  AddRemoteOptions(cmd);
}

void AddRemoteOptions(CLI::App& cmd) {
  // Each flag changes its own field of the process's options, whatever the
  // order they come in.
  auto change = [](auto field) {
    return [field](const auto& value) {
      io::RemoteOptions o = io::GetRemoteOptions();
      field(o, value);
      io::SetRemoteOptions(o);
    };
  };
  const io::RemoteOptions defaults;
  // A byte count as gen --size takes it: 16M, 512k, 1G or plain bytes.
  cmd.add_option_function<std::string>(
         "--read-ahead", change([](io::RemoteOptions& o, const std::string& v) {
           o.read_ahead_bytes = proto::ParseByteCount(v).value();
         }),
         fmt::format("Bytes of object-store data (s3://, gs://) read ahead of the readers, all "
                     "objects together: the most memory remote reads buffer; k, M and G are "
                     "powers of 1024 (default {}, {} MiB)",
                     defaults.read_ahead_bytes, defaults.read_ahead_bytes >> 20))
      ->type_name("BYTES")
      ->check(
          [](const std::string& v) -> std::string {
            Result<uint64_t> n = proto::ParseByteCount(v);
            if (!n.ok()) return std::string(n.status().message());
            if (*n < 1) return fmt::format("must be at least 1; got {}", v);
            return {};
          },
          "");
  cmd.add_option_function<int>(
         "--remote-attempts", change([](io::RemoteOptions& o, int v) { o.max_attempts = v; }),
         fmt::format("Attempts of one request to an object store, the first included, before it "
                     "fails with exit status 7 (default {})",
                     defaults.max_attempts))
      ->type_name("N")
      ->check(IntAtLeast(1));
  cmd.add_option_function<double>(
         "--remote-timeout", change([](io::RemoteOptions& o, double v) { o.max_seconds = v; }),
         fmt::format("Seconds one request to an object store may take, all its attempts and "
                     "waits between them included (default {:g})",
                     defaults.max_seconds))
      ->type_name("SECONDS")
      ->check(Finite())
      ->check(Positive());
  cmd.add_flag_callback(
      "--no-sign-request",
      [] {
        io::RemoteOptions o = io::GetRemoteOptions();
        o.no_sign_request = true;
        io::SetRemoteOptions(o);
      },
      "S3: send requests unsigned, for public buckets (as the AWS CLI's --no-sign-request)");
}

CLI::Option* AddInputCompressionOption(CLI::App& cmd, std::string* compression) {
  return cmd
      .add_option("--input-compression", *compression,
                  "Compression of the files read: auto (detect gzip/zlib by magic, confirmed "
                  "by a valid first record), none, gzip, zlib")
      ->default_str("auto");
}

CLI::Option* AddOutputCompressionOption(CLI::App& cmd, std::string* compression,
                                        std::string_view what) {
  return cmd
      .add_option("--output-compression", *compression,
                  fmt::format("Compression of the files written: none, gzip or zlib{}", what))
      ->check(CLI::IsMember({"none", "gzip", "zlib"}, CLI::ignore_case));
}

void AddIndexDirOption(CLI::App& cmd, bool write) {
  CLI::Option* o = cmd.add_option_function<std::string>(
      "--index-dir", [](const std::string& dir) { io::SetIndexFolder(dir); },
      write ? "Write the indexes to this folder (which must exist), by base name, instead "
              "of tfdist's cache ($XDG_CACHE_HOME/tfdist/index, else "
              "~/.cache/tfdist/index, by the data folder's absolute path); one data folder's "
              "indexes per folder"
            : "Read the indexes from this folder (by base name; as tfdist index --index-dir "
              "wrote them, or DALI's tfrecord2idx) instead of tfdist's cache");
  o->type_name("DIR");
  o->check(ExistingFolder(write ? "output folder" : "index folder"));
}

Result<StringList> ExpandFileArgs(std::span<const std::string> patterns,
                                  std::vector<std::string>& warnings) {
  Result<io::FileArguments> expanded = io::ExpandFileArguments(patterns);
  // A store's warnings (made by the listing) also when the listing failed.
  PrintRemoteWarnings(&warnings);
  TFDIST_ASSIGN_OR_RETURN(io::FileArguments args, std::move(expanded));
  for (const std::string& w : args.warnings) PrintMessage("warning", w);
  warnings.insert(warnings.end(), args.warnings.begin(), args.warnings.end());
  return std::move(args.files);
}

void AddWarningsJson(nlohmann::ordered_json& out, const std::vector<std::string>& warnings) {
  if (!warnings.empty()) out["warnings"] = warnings;
}

Result<ResolvedFiles> ResolveFileArgs(const FileArgs& args) {
  ResolvedFiles resolved;
  TFDIST_ASSIGN_OR_RETURN(resolved.compression, io::ParseCompression(args.input_compression));
  TFDIST_ASSIGN_OR_RETURN(const StringList files, ExpandFileArgs(args.patterns, resolved.warnings));
  resolved.files = files.ToVector();
  return resolved;
}

std::vector<FileScan> ScanFiles(const std::vector<std::string>& files,
                                const io::RecordReaderOptions& options, bool use_index) {
  io::CountOptions o;
  o.file_index = use_index;
  o.directory_index = use_index;
  o.scan = options;
  // Objects are read one after another: CountFiles fetches the first bytes
  // of each ahead, but for those an index counts (no byte of theirs is read).
  std::vector<io::FileCount> counts = io::CountFiles(files, o);
  std::vector<FileScan> scans(files.size());
  tbb::parallel_for(size_t{0}, files.size(), [&](size_t i) {
    static_cast<io::FileCount&>(scans[i]) = std::move(counts[i]);
    scans[i].path = files[i];
    scans[i].file_bytes = io::FileSize(files[i]);
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
  FlushStdout();
  int rc = 0;
  for (const FileScan& s : scans) {
    if (s.count.status.ok()) continue;
    PrintMessage("error", Describe(s.count.status));
    rc = std::max(rc, ExitCodeFor(s.count.status));
  }
  return rc;
}

}  // namespace tfdist::cli
