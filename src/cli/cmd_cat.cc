// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist cat: print records, decoding tf.train.Example, as text or JSON lines.

#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "file_args.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/io/record_reader.h"
#include "tfdist/io/storage.h"
#include "tfdist/proto/example_format.h"
#include "validators.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

struct CatOptions {
  FileArgs inputs;
  FormatArgs format;
  bool full = false;
  int64_t limit = -1;
  int64_t skip = 0;
};

int RunCat(const CatOptions& o) {
  const bool json = o.format.json();
  Result<ResolvedFiles> inputs = ResolveFileArgs(o.inputs);
  if (!inputs.ok()) return ReportError(inputs.status(), json);

  io::RecordReaderOptions options;
  options.compression = inputs->compression;
  // A record too large to hold is read through and checked, and shown by
  // its first bytes: cat's memory stays bounded whatever a header declares.
  options.elide_large_records = true;
  proto::TextOptions text;
  if (o.full) text.max_values = text.max_bytes = 0;

  // Objects read one after another, their first bytes fetched ahead; not
  // for a --limit, which may need the first object only.
  if (o.limit < 0) io::PrefetchObjects(inputs->files);
  int64_t skipped = 0, printed = 0;
  for (const std::string& path : inputs->files) {
    if (o.limit >= 0 && printed >= o.limit) break;
    Result<std::unique_ptr<io::RecordReader>> reader = io::RecordReader::Open(path, options);
    if (!reader.ok()) return ReportError(reader.status(), json);
    io::RecordReader& r = **reader;
    std::string_view record;
    while ((o.limit < 0 || printed < o.limit) && r.ReadRecord(record)) {
      if (skipped < o.skip) {
        ++skipped;
        continue;
      }
      const uint64_t index = r.records_read() - 1;
      if (json) {
        nlohmann::ordered_json line;
        line["file"] = path;
        line["index"] = index;
        line["offset"] = r.last_record_offset();
        line["size"] = r.last_record_size();
        if (r.last_record_elided()) {
          line.update(proto::RawPayloadToJson(record));
          line["elided"] = true;
        } else {
          line.update(proto::PayloadToJson(record));
        }
        PrintJson(line);
      } else if (r.last_record_elided()) {
        fmt::print("# {}:{} @{} {} bytes {} (too large to decode; its first {} bytes)\n{}",
                   TerminalText(path), index, r.last_record_offset(), r.last_record_size(),
                   proto::PayloadKindName(proto::PayloadKind::kRaw), record.size(),
                   proto::RawPayloadToText(record, text));
      } else {
        proto::PayloadKind kind;
        const std::string body = proto::PayloadToText(record, text, "  ", &kind);
        fmt::print("# {}:{} @{} {} bytes {}\n{}", TerminalText(path), index, r.last_record_offset(),
                   record.size(), proto::PayloadKindName(kind), body);
      }
      ++printed;
    }
    if (!r.status().ok()) return ReportError(r.status(), json);
  }
  return 0;
}

}  // namespace

void AddCatCommand(CLI::App& app, Action* action) {
  auto o = std::make_shared<CatOptions>();
  CLI::App* cmd = app.add_subcommand(
      "cat",
      "Print records: tf.train.Example and SequenceExample decoded to their features, other "
      "payloads as quoted text or hex");
  AddFileArgs(*cmd, &o->inputs);
  AddFormatOptions(*cmd, &o->format, "a '# file:index @offset' line per record, then its features",
                   "one JSON object per record, a line each");
  cmd->add_option("-n,--limit", o->limit, "Print at most N records; -1 (default): all")
      ->check(IntAtLeast(-1));
  cmd->add_option("--skip", o->skip, "Skip the first N records")
      ->check(IntAtLeast(0).description("NONNEGATIVE"));
  cmd->add_flag("--full", o->full, "Text: show every value and every byte (no eliding)");
  cmd->callback([o, action] { *action = [o] { return RunCat(*o); }; });
}

}  // namespace tfdist::cli
