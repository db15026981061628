// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist digest: records per file and in total, and two digests of their
// payloads (one that depends on the order, one that does not), to prove
// that a conversion lost nothing.

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "commands.h"
#include "file_args.h"
#include "job.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/cluster/cluster.h"
#include "tfdist/io/record_digest.h"
#include "tfdist/io/storage.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

struct DigestOptions {
  FileArgs inputs;
  FormatArgs format;
};

constexpr std::string_view kHashName = "xxh3-64";

std::string Hex(uint64_t v) { return fmt::format("{:016x}", v); }

nlohmann::ordered_json FileJson(const std::string& path, const io::FileDigest& f) {
  nlohmann::ordered_json j;
  j["path"] = path;
  j["ok"] = f.status.ok();
  j["records"] = f.digest.records;
  j["bytes"] = f.digest.payload_bytes;
  j["compression"] = io::CompressionName(f.compression);
  if (f.status.ok()) {
    j["ordered"] = Hex(f.digest.ordered);
    j["unordered"] = Hex(f.digest.unordered);
  } else {
    nlohmann::ordered_json e = ErrorJson(f.status);
    e["offset"] = f.error_offset ? nlohmann::ordered_json(*f.error_offset) : nullptr;
    j["error"] = e;
  }
  return j;
}

int RunDigest(const DigestOptions& o) {
  // In a job of several ranks each digests its share; rank 0 prints them all.
  Result<std::optional<SplitFiles>> split = SplitFileArgs(o.inputs, /*by_ranges=*/true);
  if (!split.ok()) return ReportJobError(split.status(), o.format.json());
  if (!split->has_value()) return 0;  // rank 0 stopped the job, and says why
  const ResolvedFiles* inputs = &(*split)->resolved;
  io::RecordReaderOptions options;
  options.compression = inputs->compression;
  const std::vector<std::string> files = MyFiles(**split);
  io::PrefetchObjects(files);  // objects read one after another
  Result<std::vector<io::FileDigest>> gathered =
      GatherDigests(**split, io::DigestFiles(files, options), options);
  if (!gathered.ok()) return ReportJobError(gathered.status(), o.format.json());
  if (!cluster::IsRoot()) return 0;
  const std::vector<io::FileDigest>& digests = *gathered;

  // The total, in the files' order, covers the files read to the end, as
  // count's; with a bad file it has no digests (that file's records after
  // the error are unknown).
  io::RecordDigest total;
  size_t bad = 0;
  Status first_error;
  for (const io::FileDigest& f : digests) {
    if (f.status.ok()) {
      total.Append(f.digest);
    } else if (bad++ == 0) {
      first_error = f.status;
    }
  }

  if (o.format.json()) {
    nlohmann::ordered_json out;
    out["hash"] = kHashName;
    out["files"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < digests.size(); ++i) {
      out["files"].push_back(FileJson(inputs->files[i], digests[i]));
    }
    out["records"] = total.records;
    out["bytes"] = total.payload_bytes;
    out["ordered"] =
        bad ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(Hex(total.ordered));
    out["unordered"] =
        bad ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(Hex(total.unordered));
    AddWarningsJson(out, inputs->warnings);
    if (bad) out["error"] = ErrorJson(first_error);
    PrintJson(out);
  } else {
    const size_t w_rec = std::max<size_t>(7, fmt::formatted_size("{}", total.records));
    const size_t w_bytes = std::max<size_t>(5, fmt::formatted_size("{}", total.payload_bytes));
    fmt::print("{:>{}}  {:>{}}  {:<16}  {:<16}  {:<11}  {}\n", "records", w_rec, "bytes", w_bytes,
               "ordered", "unordered", "compression", "file");
    for (size_t i = 0; i < digests.size(); ++i) {
      const io::FileDigest& f = digests[i];
      const bool ok = f.status.ok();
      fmt::print("{:>{}}  {:>{}}  {:<16}  {:<16}  {:<11}  {}\n",
                 ok ? fmt::format("{}", f.digest.records) : "error", w_rec,
                 ok ? fmt::format("{}", f.digest.payload_bytes) : "-", w_bytes,
                 ok ? Hex(f.digest.ordered) : "-", ok ? Hex(f.digest.unordered) : "-",
                 io::CompressionName(f.compression), TerminalText(inputs->files[i]));
    }
    const size_t n = digests.size();
    fmt::print("{:>{}}  {:>{}}  {:<16}  {:<16}  {:<11}  total ({} {}{})\n", total.records, w_rec,
               total.payload_bytes, w_bytes, bad ? "-" : Hex(total.ordered),
               bad ? "-" : Hex(total.unordered), "", n, n == 1 ? "file" : "files",
               bad ? fmt::format(", {} bad: no digest", bad) : "");
    fmt::print(
        "hash: {} of each payload; unordered: their sum mod 2^64, ordered: a polynomial "
        "over them mod 2^61-1\n",
        kHashName);
  }
  FlushStdout();
  int rc = 0;
  for (const io::FileDigest& f : digests) {
    if (f.status.ok()) continue;
    PrintMessage("error", Describe(f.status));
    rc = std::max(rc, ExitCodeFor(f.status));
  }
  return rc;
}

}  // namespace

void AddDigestCommand(CLI::App& app, Action* action) {
  auto o = std::make_shared<DigestOptions>();
  CLI::App* cmd = app.add_subcommand(
      "digest",
      "Count the records and digest their payloads (XXH3-64 per record), in order and "
      "regardless of order, to compare two datasets across reshard and convert (CRCs checked)");
  AddFileArgs(*cmd, &o->inputs);
  AddFormatOptions(*cmd, &o->format, "a line per file, then the total and the hash used");
  cmd->footer(
      "Each record's hash h is XXH3-64 (xxHash, seed 0) of its payload alone, so neither digest "
      "depends on the framing, the compression or how the records are cut into files. "
      "unordered: the sum of the h mod 2^64, the same in any order, and changed by a record "
      "there twice (an XOR would cancel it). ordered: h_0*B^(n-1) + ... + h_(n-1) mod 2^61-1 "
      "over the records in file order (files sorted as list_files does), changed by any "
      "move. A corrupt file is exit 3 naming it and the offset; the total then has no "
      "digest.");
  cmd->callback([o, action] { *action = [o] { return RunDigest(*o); }; });
}

}  // namespace tfdist::cli
