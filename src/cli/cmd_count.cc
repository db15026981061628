// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist count: records, payload bytes and file bytes per file and in total.

#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "file_args.h"
#include "html_page.h"
#include "job.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/cluster/cluster.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

struct CountOptions {
  FileArgs inputs;
  FormatArgs format;
  bool no_crc = false;
  bool no_index = false;
};

int RunCount(const CountOptions& o) {
  if (Status s = o.format.CheckHtml(); !s.ok()) return ReportError(s, false);
  const bool json = o.format.json();
  // In a job of several ranks each counts its share; rank 0 prints them all.
  // A file counted from its index is read by one rank: only a count that
  // reads every file reads large ones in byte ranges.
  Result<std::optional<SplitFiles>> split = SplitFileArgs(o.inputs, /*by_ranges=*/o.no_index);
  if (!split.ok()) return ReportJobError(split.status(), json);
  if (!split->has_value()) return 0;  // rank 0 stopped the job, and says why
  const ResolvedFiles* inputs = &(*split)->resolved;

  io::RecordReaderOptions options;
  options.compression = inputs->compression;
  options.verify_checksums = !o.no_crc;
  Result<std::vector<FileScan>> gathered =
      GatherScans(**split, ScanFiles(MyFiles(**split), options, !o.no_index), options);
  if (!gathered.ok()) return ReportJobError(gathered.status(), json);
  if (!cluster::IsRoot()) return 0;
  const std::vector<FileScan>& scans = *gathered;
  for (const FileScan& s : scans) {
    if (!s.stale_index.empty()) {
      PrintMessage("warning", fmt::format("ignoring the index: {}", s.stale_index));
    }
  }

  // Totals cover the files read to the end; a bad file is listed on its own.
  uint64_t records = 0, bytes = 0, file_bytes = 0;
  for (const FileScan& s : scans) {
    if (!s.count.status.ok()) continue;
    records += s.count.records;
    bytes += s.count.payload_bytes;
    file_bytes += s.file_bytes.value_or(0);
  }

  if (json || o.format.html()) {
    nlohmann::ordered_json out;
    out["files"] = nlohmann::ordered_json::array();
    for (const FileScan& s : scans) out["files"].push_back(FileScanJson(s));
    out["records"] = records;
    out["bytes"] = bytes;
    out["file_bytes"] = file_bytes;
    AddWarningsJson(out, inputs->warnings);
    if (Status e = FirstScanError(scans); !e.ok()) out["error"] = ErrorJson(e);
    if (o.format.html()) {
      fmt::print("{}", FilesPage("tfdist count",
                                 "the records and payload bytes of each file, "
                                 "in the order listed",
                                 out));
    } else {
      PrintJson(out);
    }
  } else {
    const size_t w_rec = std::max<size_t>(7, fmt::formatted_size("{}", records));
    const size_t w_bytes = std::max<size_t>(5, fmt::formatted_size("{}", bytes));
    const size_t w_file = std::max<size_t>(10, fmt::formatted_size("{}", file_bytes));
    fmt::print("{:>{}}  {:>{}}  {:>{}}  {:<11}  {}\n", "records", w_rec, "bytes", w_bytes,
               "file_bytes", w_file, "compression", "file");
    for (const FileScan& s : scans) {
      const std::string fb = s.file_bytes ? fmt::format("{}", *s.file_bytes) : "-";
      if (s.count.status.ok()) {
        fmt::print("{:>{}}  {:>{}}  {:>{}}  {:<11}  {}{}\n", s.count.records, w_rec,
                   s.count.payload_bytes, w_bytes, fb, w_file,
                   io::CompressionName(s.count.compression), TerminalText(s.path),
                   s.source == io::CountSource::kDirectoryIndex ? "  (from its folder's index)"
                   : s.from_index()                             ? "  (from its index)"
                                                                : "");
      } else {
        fmt::print("{:>{}}  {:>{}}  {:>{}}  {:<11}  {}\n", "error", w_rec, "-", w_bytes, fb, w_file,
                   io::CompressionName(s.count.compression), TerminalText(s.path));
      }
    }
    const size_t good = static_cast<size_t>(std::count_if(
        scans.begin(), scans.end(), [](const FileScan& s) { return s.count.status.ok(); }));
    fmt::print("{:>{}}  {:>{}}  {:>{}}  {:<11}  total ({} {})\n", records, w_rec, bytes, w_bytes,
               file_bytes, w_file, "", good, good == 1 ? "file" : "files");
  }
  return ReportScanErrors(scans);
}

}  // namespace

void AddCountCommand(CLI::App& app, Action* action) {
  auto o = std::make_shared<CountOptions>();
  CLI::App* cmd = app.add_subcommand(
      "count", "Count the records and payload bytes of TFRecord files (CRCs checked)");
  AddFileArgs(*cmd, &o->inputs);
  AddFormatOptions(*cmd, &o->format, "a table: a line per file, then the total", {}, {}, {},
                   "one self-contained page: each file's records and bytes as columns, so "
                   "uneven files show, and a table; the JSON it draws embedded");
  cmd->add_flag("--no-crc", o->no_crc,
                "Do not check the payload CRCs (framing only: each length is still checked "
                "against its CRC)");
  cmd->add_flag("--no-index", o->no_index,
                "Read every file, even one with an up-to-date index (by default its index is "
                "trusted: the count comes without reading the records)");
  AddIndexDirOption(*cmd);
  cmd->callback([o, action] { *action = [o] { return RunCount(*o); }; });
}

}  // namespace tfdist::cli
