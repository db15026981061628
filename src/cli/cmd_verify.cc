// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist verify: framing and both CRCs of every record of every file.

#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "file_args.h"
#include "job.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/cluster/cluster.h"
#include "tfdist/io/byte_stream.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

struct VerifyOptions {
  FileArgs inputs;
  FormatArgs format;
  bool quiet = false;
  bool cold = false;
};

int RunVerify(const VerifyOptions& o) {
  const bool json = o.format.json();
  io::SetColdReads(o.cold);
  // In a job of several ranks each verifies its share; rank 0 prints them all.
  Result<std::optional<SplitFiles>> split = SplitFileArgs(o.inputs, /*by_ranges=*/true);
  if (!split.ok()) return ReportJobError(split.status(), json);
  if (!split->has_value()) return 0;  // rank 0 stopped the job, and says why
  const ResolvedFiles* inputs = &(*split)->resolved;

  io::RecordReaderOptions options;
  options.compression = inputs->compression;
  Result<std::vector<FileScan>> gathered =
      GatherScans(**split, ScanFiles(MyFiles(**split), options), options);
  if (!gathered.ok()) return ReportJobError(gathered.status(), json);
  if (!cluster::IsRoot()) return 0;
  const std::vector<FileScan>& scans = *gathered;

  // Totals cover every good record, also those before a file's first error.
  size_t bad = 0;
  uint64_t records = 0, bytes = 0;
  for (const FileScan& s : scans) {
    records += s.count.records;
    bytes += s.count.payload_bytes;
    bad += s.count.status.ok() ? 0 : 1;
  }

  if (json) {
    nlohmann::ordered_json out;
    out["files"] = nlohmann::ordered_json::array();
    for (const FileScan& s : scans) out["files"].push_back(FileScanJson(s));
    out["ok"] = bad == 0;
    out["files_checked"] = scans.size();
    out["bad_files"] = bad;
    out["records"] = records;
    out["bytes"] = bytes;
    AddWarningsJson(out, inputs->warnings);
    if (Status e = FirstScanError(scans); !e.ok()) out["error"] = ErrorJson(e);
    PrintJson(out);
  } else {
    for (const FileScan& s : scans) {
      if (s.count.status.ok()) {
        if (!o.quiet) {
          fmt::print("OK   {}  {} {}, {} bytes, {}\n", TerminalText(s.path), s.count.records,
                     s.count.records == 1 ? "record" : "records", s.count.payload_bytes,
                     io::CompressionName(s.count.compression));
        }
      } else {
        // The message names the file too; the line already starts with it.
        std::string_view message = s.count.status.message();
        if (message.starts_with(s.path + ": ")) message.remove_prefix(s.path.size() + 2);
        fmt::print("BAD  {}  after {} good {}: {}\n", TerminalText(s.path), s.count.records,
                   s.count.records == 1 ? "record" : "records", TerminalText(message));
      }
    }
    fmt::print("{} {} checked: {} good, {} bad; {} records, {} bytes\n", scans.size(),
               scans.size() == 1 ? "file" : "files", scans.size() - bad, bad, records, bytes);
  }
  return ReportScanErrors(scans);
}

}  // namespace

void AddVerifyCommand(CLI::App& app, Action* action) {
  auto o = std::make_shared<VerifyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Check the framing and both CRCs of every record; report the first bad record of each "
      "file with its byte offset (exit 3 if any file is bad)");
  AddFileArgs(*cmd, &o->inputs);
  AddFormatOptions(*cmd, &o->format, "OK or BAD and the file, a line each, then the total");
  cmd->add_flag("-q,--quiet", o->quiet, "Print only bad files and the summary");
  cmd->add_flag("--cold", o->cold,
                "Evict each file from the page cache before reading it (a cold read of the "
                "storage)");
  cmd->callback([o, action] { *action = [o] { return RunVerify(*o); }; });
}

}  // namespace tfdist::cli
