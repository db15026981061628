// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist reshard and tfdist convert: rewrite a dataset into N files, or recompress it.

#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "file_args.h"
#include "html_page.h"
#include "job.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/cluster/cluster.h"
#include "tfdist/io/file_list.h"
#include "tfdist/io/reshard.h"
#include "tfdist/io/storage.h"
#include "validators.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

// Options shared by reshard and convert.
struct RewriteArgs {
  std::vector<std::string> patterns;
  std::string input_compression = "auto";
  std::string output_compression = "none";
  int level = -1;
  bool force = false;
  bool no_fsync = false;
  bool no_index = false;
  FormatArgs format;
};

struct ReshardArgs : RewriteArgs {
  std::string output;
  uint64_t num_shards = 0;
  uint64_t records_per_shard = 0;
  std::string balance = "records";
  std::optional<uint64_t> seed;
};

struct ConvertArgs : RewriteArgs {
  std::string output_dir;
};

// Returns --output-compression, which `what` ends the help of.
CLI::Option* AddRewriteArgs(CLI::App& cmd, RewriteArgs* a, std::string_view what) {
  cmd.add_option("files", a->patterns,
                 "Input files or glob patterns, sorted byte-wise together as list_files does")
      ->required();
  CLI::Option* output = AddOutputCompressionOption(cmd, &a->output_compression, what);
  AddInputCompressionOption(cmd, &a->input_compression);
  AddRemoteOptions(cmd);
  cmd.add_option("--level", a->level,
                 "Compression level: -1 (default) ISA-L's fast deflate, about zlib's default size "
                 "at several times its speed; 0 to 9 zlib's levels")
      ->check(CLI::Range(-1, 9));
  cmd.add_flag("-f,--force", a->force,
               "Replace existing outputs and (reshard) the whole old set PREFIX-*-of-* of the "
               "prefix, any count, which is otherwise an error; the old set or the new one stays "
               "whole whatever stops the commit");
  cmd.add_flag("--no-fsync", a->no_fsync,
               "Do not fsync the outputs before renaming them into place (scratch data)");
  cmd.add_flag("--no-index", a->no_index,
               "Scan every input, even one with an up-to-date index (by default the index "
               "plans the copy, and the CRCs are checked while copying)");
  AddIndexDirOption(cmd);
  AddFormatOptions(cmd, &a->format, "a line per file written, then the total", {}, {}, {},
                   "one self-contained page: each file written's records and bytes as "
                   "columns, so an unbalanced set shows, and a table; the JSON it draws "
                   "embedded");
  return output;
}

// Fills the options shared by reshard and convert; expands the patterns.
Result<std::vector<std::string>> ResolveRewriteArgs(const RewriteArgs& a, io::RewriteOptions* o) {
  TFDIST_ASSIGN_OR_RETURN(o->input_compression, io::ParseCompression(a.input_compression));
  TFDIST_ASSIGN_OR_RETURN(o->output_compression, io::ParseCompression(a.output_compression));
  o->compression_level = a.level;
  o->overwrite = a.force;
  o->sync = !a.no_fsync;
  o->use_index = !a.no_index;
  o->note = PrintNote;
  // Under mpirun the ranks share the work: every one must see the same
  // inputs (checked here) and the output folder (checked by rank 0 there).
  o->group = &cluster::JobGroup();
  std::vector<std::string> warnings;
  Result<std::vector<std::string>> files = [&]() -> Result<std::vector<std::string>> {
    TFDIST_ASSIGN_OR_RETURN(const StringList list, ExpandFileArgs(a.patterns, warnings));
    return list.ToVector();
  }();
  TFDIST_RETURN_IF_ERROR(CheckSameFiles(files));
  return files;
}

// `old_key`: the list of files under the name of the last release too
// ("shards"), which goes in the next.
void PrintSummary(const io::RewriteSummary& s, const std::string& what, const FormatArgs& format,
                  const char* old_key = nullptr) {
  if (format.json() || format.html()) {
    nlohmann::ordered_json out;
    out["files"] = nlohmann::ordered_json::array();
    for (const io::OutputSummary& o : s.outputs) {
      out["files"].push_back({{"path", o.path},
                              {"records", o.count.records},
                              {"bytes", o.count.payload_bytes},
                              {"file_bytes", o.file_bytes}});
    }
    if (old_key) out[old_key] = out["files"];
    out["records"] = s.total.records;
    out["bytes"] = s.total.payload_bytes;
    if (format.html()) {
      fmt::print("{}", FilesPage(old_key ? "tfdist reshard" : "tfdist convert", what, out));
    } else {
      PrintJson(out);
    }
    return;
  }
  uint64_t file_bytes = 0;
  for (const io::OutputSummary& o : s.outputs) file_bytes += o.file_bytes;
  const size_t w_rec = std::max<size_t>(7, fmt::formatted_size("{}", s.total.records));
  const size_t w_bytes = std::max<size_t>(5, fmt::formatted_size("{}", s.total.payload_bytes));
  const size_t w_file = std::max<size_t>(10, fmt::formatted_size("{}", file_bytes));
  fmt::print("{:>{}}  {:>{}}  {:>{}}  {}\n", "records", w_rec, "bytes", w_bytes, "file_bytes",
             w_file, "file");
  for (const io::OutputSummary& o : s.outputs) {
    fmt::print("{:>{}}  {:>{}}  {:>{}}  {}\n", o.count.records, w_rec, o.count.payload_bytes,
               w_bytes, o.file_bytes, w_file, TerminalText(o.path));
  }
  fmt::print("{:>{}}  {:>{}}  {:>{}}  total ({})\n", s.total.records, w_rec, s.total.payload_bytes,
             w_bytes, file_bytes, w_file, what);
}

int RunReshard(const ReshardArgs& a) {
  const bool json = a.format.json();
  if (Status s = a.format.CheckHtml(); !s.ok()) return ReportUsageError(s, false);
  if (Status s = CheckOutputName(a.output, "a prefix of file names, such as out/part"); !s.ok()) {
    return ReportUsageError(s, json);
  }
  io::ReshardOptions o;
  Result<std::vector<std::string>> files = ResolveRewriteArgs(a, &o);
  if (!files.ok()) return ReportUsageError(files.status(), json);
  Result<io::ReshardBalance> balance = io::ParseReshardBalance(a.balance);
  if (!balance.ok()) return ReportUsageError(balance.status(), json);
  o.balance = *balance;
  o.output_prefix = a.output;
  o.num_shards = a.num_shards;
  o.records_per_shard = a.records_per_shard;
  o.seed = a.seed;
  if (a.num_shards == 0 && a.records_per_shard == 0) {
    return ReportUsageError(Status::InvalidArgument("give --num-shards N or --records-per-shard K"),
                            json);
  }
  Result<io::RewriteSummary> s = io::Reshard(*files, o);
  if (!s.ok()) return ReportUsageError(s.status(), json);
  if (!cluster::IsRoot()) return 0;
  const std::string order =
      a.seed ? fmt::format("shuffled with seed {}", *a.seed) : std::string("in input order");
  PrintSummary(*s,
               fmt::format("{} shards, {}, balanced by {}, {}", s->outputs.size(), order, a.balance,
                           io::CompressionName(o.output_compression)),
               a.format, "shards");
  return 0;
}

int RunConvert(const ConvertArgs& a) {
  const bool json = a.format.json();
  if (Status s = a.format.CheckHtml(); !s.ok()) return ReportUsageError(s, false);
  if (a.output_compression.empty()) {
    return ReportUsageError(
        Status::InvalidArgument("convert needs --output-compression none, gzip or zlib"), json);
  }
  // Outputs are local: beside a URL input is no place for them.
  if (!a.output_dir.empty()) {
    if (Status s = io::CheckLocalOutput(a.output_dir, "--output-dir"); !s.ok()) {
      return ReportUsageError(s, json);
    }
  } else {
    for (const std::string& pattern : a.patterns) {
      if (!io::IsRemote(pattern)) continue;
      return ReportUsageError(
          Status::InvalidArgument(fmt::format(
              "{}: convert writes beside each input unless --output-dir names a folder, and "
              "outputs are local files in this version of tfdist: give --output-dir DIR",
              pattern)),
          json);
    }
  }
  io::ConvertOptions o;
  Result<std::vector<std::string>> files = ResolveRewriteArgs(a, &o);
  if (!files.ok()) return ReportUsageError(files.status(), json);
  o.output_dir = a.output_dir;
  Result<io::RewriteSummary> s = io::Convert(*files, o);
  if (!s.ok()) return ReportUsageError(s.status(), json);
  if (!cluster::IsRoot()) return 0;
  PrintSummary(*s,
               fmt::format("{} {} converted to {}", s->outputs.size(),
                           s->outputs.size() == 1 ? "file" : "files",
                           io::CompressionName(o.output_compression)),
               a.format);
  return 0;
}

}  // namespace

void AddReshardCommand(CLI::App& app, Action* action) {
  auto a = std::make_shared<ReshardArgs>();
  CLI::App* cmd = app.add_subcommand(
      "reshard",
      "Rewrite the records of the inputs into N files balanced by records or bytes, in input "
      "order or shuffled by a seed; all shards appear at once, or none");
  AddRewriteArgs(*cmd, a.get(), " (default none)")->default_str("none");
  cmd->add_option("-o,--output", a->output,
                  "Prefix of the shards: PREFIX-00000-of-0000N.tfrecord (.gz, .zlib); its "
                  "folder must exist")
      ->required();
  auto* n = cmd->add_option("--num-shards", a->num_shards,
                            "Number of shards (at most the number of records: no shard is empty)")
                ->check(UintAtLeast(1).description("POSITIVE"));
  auto* k = cmd->add_option("--records-per-shard", a->records_per_shard,
                            "Instead of --num-shards: ceil(records / K) shards, each of at most "
                            "K records when balanced by records")
                ->check(UintAtLeast(1).description("POSITIVE"));
  n->excludes(k);
  cmd->add_option("--balance", a->balance,
                  "records: counts differ by at most 1; bytes: no shard more than one record "
                  "over the mean size")
      ->check(CLI::IsMember({"records", "bytes"}))
      ->default_str("records");
  cmd->add_option("--seed", a->seed,
                  "Shuffle the records by this seed (the same seed, the same shards); without "
                  "it each shard is a contiguous run of the input, in order")
      ->check(UintAtLeast(0));
  cmd->callback([a, action] { *action = [a] { return RunReshard(*a); }; });
}

void AddConvertCommand(CLI::App& app, Action* action) {
  auto a = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Change the compression of TFRecord files one to one (a.tfrecord.gz -> a.tfrecord); all "
      "outputs appear at once, or none");
  // Required (RunConvert), with no default; not by CLI11, for which the
  // spelling of the last release would not count.
  a->output_compression.clear();
  AddRewriteArgs(*cmd, a.get(), " (required)");
  cmd->add_option("--output-dir", a->output_dir,
                  "Write the outputs into this folder, which must exist (default: beside each "
                  "input)");
  cmd->callback([a, action] { *action = [a] { return RunConvert(*a); }; });
}

}  // namespace tfdist::cli
