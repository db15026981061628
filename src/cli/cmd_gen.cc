// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist gen: deterministic synthetic TFRecord datasets.

#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "file_args.h"
#include "report.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/base/random.h"
#include "tfdist/base/text.h"
#include "tfdist/io/file_list.h"
#include "tfdist/io/output_set.h"
#include "tfdist/io/record_writer.h"
#include "tfdist/io/reshard.h"
#include "tfdist/proto/synthetic.h"
#include "validators.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

struct GenOptions {
  std::string output;
  uint64_t files = 1;
  std::string records = "100";
  std::string size = "100";
  std::string kind = "example";
  std::string text = "{g}";
  std::string compression = "none";
  int level = -1;
  uint64_t seed = 0;
  bool force = false;
  FormatArgs format;
  bool no_fsync = false;
};

// Seeds the draw of uneven record counts (--records A-B) apart from the
// payloads: "records" in ASCII.
constexpr uint64_t kRecordCountStream = 0x7265636f726473;

std::string OutputName(const GenOptions& o, io::Compression c, uint64_t i) {
  if (o.files == 1) return o.output;
  return io::ShardFileName(o.output, i, o.files, c);
}

int RunGen(const GenOptions& o) {
  const bool json = o.format.json();
  if (Status s =
          CheckOutputName(o.output, "a file name (with --files N > 1, a prefix of file names)");
      !s.ok()) {
    return ReportError(s, json);
  }
  Result<io::Compression> compression = io::ParseCompression(o.compression);
  if (!compression.ok()) return ReportError(compression.status(), json);
  proto::PayloadOptions payload;
  Result<proto::PayloadType> type = proto::ParsePayloadType(o.kind);
  if (!type.ok()) return ReportError(type.status(), json);
  payload.type = *type;
  Result<proto::SizeDistribution> size = proto::ParseSizeDistribution(o.size);
  if (!size.ok()) return ReportError(size.status().Annotate("--size"), json);
  if (payload.type != proto::PayloadType::kText && size->max > proto::kMaxPayloadBytes) {
    return ReportError(
        Status::InvalidArgument(fmt::format(
            "--size: '{}' goes over {}G, the most a record can have (records are built in memory)",
            o.size, proto::kMaxPayloadBytes >> 30)),
        json);
  }
  payload.size = *size;
  // Records per file, as --size parses a size: fixed, or uniform over a range.
  Result<proto::SizeDistribution> records = proto::ParseSizeDistribution(o.records);
  if (!records.ok()) {
    const bool reversed = records.status().message().ends_with("exceeds the maximum");
    return ReportError(
        reversed
            ? records.status().Annotate("--records")
            : Status::InvalidArgument(fmt::format(
                  "--records: '{}' is not a count (100, 10k) or a range (100-1000)", o.records)),
        json);
  }
  // Each file's count, drawn in file order from a stream of its own, so that
  // the payloads of a fixed count stay what they were.
  std::vector<uint64_t> counts(o.files, records->min);
  if (records->max > records->min) {
    Rng draw(o.seed ^ kRecordCountStream);
    for (uint64_t& c : counts) c = draw.Uniform(records->min, records->max);
  }
  payload.text_template = o.text;
  payload.seed = o.seed;

  io::RecordWriterOptions options;
  options.compression = *compression;
  options.compression_level = o.level;
  options.overwrite = o.force;
  options.sync = !o.no_fsync;

  // Every file is staged and all replace what was there in one commit
  // (io::OutputSet): an error or a signal leaves the folder as it was.
  io::OutputSetOptions set_options;
  set_options.replace = o.force;
  set_options.sync = !o.no_fsync;
  set_options.command = "gen";
  set_options.note = PrintNote;
  const std::string folder = io::OutputFolderOf(o.output);
  Result<std::unique_ptr<io::OutputSet>> set = io::OutputSet::Begin({&folder, 1}, set_options);
  if (!set.ok()) return ReportError(set.status(), json);
  if (o.files > 1) {
    Status s = (*set)->ExpectFamily({o.output, io::ShardFileSuffix(*compression)});
    if (!s.ok()) return ReportError(s, json);
  }
  proto::PayloadGenerator gen(payload);
  std::vector<std::string> names;
  nlohmann::ordered_json files = nlohmann::ordered_json::array();  // {path, records, bytes}
  std::string record;
  uint64_t global = 0, bytes = 0;
  for (uint64_t f = 0; f < o.files; ++f) {
    const uint64_t records_before = global, bytes_before = bytes;
    // Writes notice an interrupt, but with --records 0 there are none.
    if (Interrupted()) return ReportError(Status::Interrupted(), json);
    names.push_back(OutputName(o, *compression, f));
    Result<std::unique_ptr<io::AtomicFile>> file = (*set)->Create(names.back());
    if (!file.ok()) return ReportError(file.status(), json);
    Result<std::unique_ptr<io::RecordWriter>> w = io::RecordWriter::Open(std::move(*file), options);
    if (!w.ok()) return ReportError(w.status(), json);
    for (uint64_t i = 0; i < counts[f]; ++i, ++global) {
      if (Status s = gen.Next(f, i, global, record); !s.ok()) return ReportError(s, json);
      bytes += record.size();
      if (Status s = (*w)->Write(record); !s.ok()) return ReportError(s, json);
    }
    if (Status s = (*w)->Finish(); !s.ok()) return ReportError(s, json);
    (*set)->Add((*w)->TakeFile());
    files.push_back({{"path", names.back()},
                     {"records", global - records_before},
                     {"bytes", bytes - bytes_before}});
  }
  if (Status s = (*set)->Commit(); !s.ok()) return ReportError(s, json);
  if (json) {
    nlohmann::ordered_json out;
    for (auto& f : files) {
      const std::optional<uint64_t> on_disk = io::FileSize(f["path"].get<std::string>());
      f["file_bytes"] = on_disk ? nlohmann::ordered_json(*on_disk) : nullptr;
    }
    out["files"] = std::move(files);
    out["records"] = global;
    out["bytes"] = bytes;
    out["compression"] = io::CompressionName(*compression);
    PrintJson(out);
  } else {
    for (size_t f = 0; f < names.size(); ++f) {
      if (records->max > records->min) {
        fmt::print("{}  {} {}\n", TerminalText(names[f]), counts[f],
                   counts[f] == 1 ? "record" : "records");
      } else {
        fmt::print("{}\n", TerminalText(names[f]));
      }
    }
    fmt::print("wrote {} records, {} payload bytes, in {} {} ({})\n", global, bytes, o.files,
               o.files == 1 ? "file" : "files", io::CompressionName(*compression));
  }
  return 0;
}

}  // namespace

void AddGenCommand(CLI::App& app, Action* action) {
  auto o = std::make_shared<GenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "gen", "Generate a deterministic synthetic TFRecord dataset (same seed, same bytes)");
  cmd->add_option("-o,--output", o->output,
                  "Output file; with --files N > 1 a prefix: PREFIX-00000-of-0000N.tfrecord[.gz]; "
                  "its folder must exist")
      ->required();
  cmd->add_option("--files", o->files, "Number of files")->default_val(1)->check(UintAtLeast(1));
  cmd->add_option("--records", o->records,
                  "Records per file, fixed (100, 10k) or, for uneven files, each file's count "
                  "drawn uniformly over a range (100-1000) by --seed; as --size, k is 1024")
      ->default_str("100");
  cmd->add_option("--size", o->size,
                  "Payload size in bytes, fixed (100, 10k, 1M) or uniform over a range "
                  "(100-1000); at most 1G; ignored by --kind text")
      ->default_str("100");
  cmd->add_option("--kind", o->kind,
                  "example: tf.train.Example {id, label, data}; text: --text per record; "
                  "random: random bytes")
      ->check(CLI::IsMember({"example", "text", "random"}))
      ->default_str("example");
  cmd->add_option("--text", o->text,
                  "Template of --kind text: {g} global index, {f} file index, {i} index in "
                  "the file")
      ->default_str("{g}");
  AddOutputCompressionOption(*cmd, &o->compression, "")->default_str("none");
  cmd->add_option("--level", o->level,
                  "Compression level: -1 (default) ISA-L's fast deflate, about zlib's default size "
                  "at several times its speed; 0 to 9 zlib's levels")
      ->check(CLI::Range(-1, 9));
  cmd->add_option("--seed", o->seed, "Random seed")->default_val(0)->check(UintAtLeast(0));
  cmd->add_flag("-f,--force", o->force,
                "Replace existing files; with --files N, the whole old set PREFIX-*-of-* of the "
                "prefix (any count), which is otherwise an error, in one commit");
  cmd->add_flag("--no-fsync", o->no_fsync,
                "Do not fsync the files before renaming them (scratch data: much faster for "
                "many small files)");
  AddFormatOptions(*cmd, &o->format, "the names written, and a line of totals");
  cmd->callback([o, action] { *action = [o] { return RunGen(*o); }; });
}

}  // namespace tfdist::cli
