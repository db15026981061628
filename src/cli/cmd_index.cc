// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist index: DALI-format record indexes of uncompressed TFRecord files,
// or one directory index for a whole folder.

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "commands.h"
#include "file_args.h"
#include "job.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/cluster/cluster.h"
#include "tfdist/io/directory_index.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/file_list.h"
#include "tfdist/io/index_location.h"
#include "tfdist/io/storage.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

struct IndexOptions {
  std::vector<std::string> patterns;
  std::string directory;
  bool force = false;
  FormatArgs format;
};

int RunDirectoryIndex(const IndexOptions& o) {
  const bool json = o.format.json();
  Result<io::DirectoryIndexReport> r = io::WriteDirectoryIndex(o.directory, o.force);
  if (!r.ok()) return ReportError(r.status(), json);
  // At most this many left-out files are named on stderr.
  constexpr size_t kNamed = 20;
  for (size_t i = 0; i < r->skipped.size() && i < kNamed; ++i) {
    PrintMessage("warning",
                 fmt::format("not indexed: {}: {}", r->skipped[i].first, r->skipped[i].second));
  }
  if (r->skipped.size() > kNamed) {
    PrintMessage("warning", fmt::format("not indexed: {} more", r->skipped.size() - kNamed));
  }
  if (json) {
    nlohmann::ordered_json skipped = nlohmann::ordered_json::array();
    // "file" and a count under "files": the names of the last release, which
    // go in the next.
    for (const auto& [path, why] : r->skipped) {
      skipped.push_back({{"path", path}, {"reason", why}, {"file", path}});
    }
    PrintJson({{"index", r->index_path},
               {"indexed_files", r->files},
               {"files", r->files},
               {"records", r->total.records},
               {"bytes", r->total.payload_bytes},
               {"from_index_files", r->from_file_indexes},
               {"listing", r->listing},
               {"skipped", skipped}});
  } else {
    fmt::print("{}  {} file{}, {} record{} ({} from index files, {} scanned); {} not indexed\n",
               TerminalText(r->index_path), r->files, r->files == 1 ? "" : "s", r->total.records,
               r->total.records == 1 ? "" : "s", r->from_file_indexes,
               r->files - r->from_file_indexes, r->skipped.size());
  }
  return 0;
}

int RunIndex(const IndexOptions& o) {
  const bool json = o.format.json();
  if (o.directory.empty() == o.patterns.empty()) {
    return ReportUsageError(
        Status::InvalidArgument("give either files or --directory DIR (one index for the folder)"),
        json);
  }
  if (!o.directory.empty()) {
    if (!cluster::IsRoot()) return 0;  // one index, written by rank 0
    if (Result<io::Location> l = io::ParseLocation(o.directory); !l.ok()) {
      return ReportError(l.status(), json);
    }
    return RunDirectoryIndex(o);
  }
  if (std::find(o.patterns.begin(), o.patterns.end(), "-") != o.patterns.end()) {
    return ReportUsageError(
        Status::InvalidArgument("cannot index standard input (-): an index describes a file"),
        json);
  }
  // In a job of several ranks each indexes its share of the files, into
  // --index-dir: each host's own cache would hold only its share.
  if (cluster::Size() > 1) {
    const std::string folder = io::ExplicitIndexFolder();
    if (folder.empty()) {
      return ReportUsageError(
          Status::InvalidArgument(
              "under mpirun or srun, give --index-dir DIR on a file system "
              "every rank sees: each host's own cache would hold only its share"),
          json);
    }
    if (Status shared = CheckSharedFolder(folder); !shared.ok()) {
      return ReportJobError(shared, json);
    }
  }
  Result<std::optional<SplitFiles>> split =
      SplitFileArgs(FileArgs{o.patterns, "auto"}, /*by_ranges=*/true);
  if (!split.ok()) return ReportJobError(split.status(), json);
  if (!split->has_value()) return 0;  // rank 0 stopped the job, and says why
  // Large files first, every rank a byte range of each.
  Result<std::vector<Result<io::IndexedCount>>> ranged = IndexRanges(**split, o.force);
  if (!ranged.ok()) return ReportJobError(ranged.status(), json);
  const std::vector<std::string> mine = MyFiles(**split);
  io::PrefetchObjects(mine);
  // This rank's files, each indexed or its error, up to the first error.
  std::vector<Result<io::IndexedCount>> written;
  for (const std::string& path : mine) {
    written.push_back(io::WriteIndex(path, o.force));
    if (!written.back().ok()) break;
  }
  Result<std::vector<std::optional<Result<io::IndexedCount>>>> all =
      GatherIndexes(**split, std::move(written));
  if (!all.ok()) return ReportJobError(all.status(), json);
  if (!cluster::IsRoot()) return 0;
  for (size_t k = 0; k < ranged->size(); ++k) {
    (*all)[(*split)->ranged[k]].emplace(std::move((*ranged)[k]));
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  nlohmann::ordered_json old = nlohmann::ordered_json::array();  // "indexes", of the last release
  for (size_t i = 0; i < all->size(); ++i) {
    const std::string& path = (*split)->resolved.files[i];
    // A file after another rank's error is not reached by one process.
    if (!(*all)[i]) break;
    const Result<io::IndexedCount>& index = *(*all)[i];
    if (!index.ok()) return ReportError(index.status(), json);
    if (json) {
      out.push_back({{"path", path},
                     {"records", index->count.records},
                     {"bytes", index->count.payload_bytes},
                     {"index", index->index_path}});
      old.push_back({{"file", path},
                     {"index", index->index_path},
                     {"records", index->count.records},
                     {"bytes", index->count.payload_bytes}});
    } else {
      fmt::print("{}  {} record{}\n", TerminalText(index->index_path), index->count.records,
                 index->count.records == 1 ? "" : "s");
    }
  }
  if (json) PrintJson({{"files", out}, {"indexes", old}});
  return 0;
}

}  // namespace

void AddIndexCommand(CLI::App& app, Action* action) {
  auto o = std::make_shared<IndexOptions>();
  CLI::App* cmd = app.add_subcommand(
      "index",
      "Write each uncompressed file's record index (NAME.idx: one \"offset size\" line per "
      "record, NVIDIA DALI's tfrecord2idx format, and its stamp NAME.idx.stamp) to tfdist's "
      "cache, out of the data folder; count, layout --format summary, run --read-by-index and "
      "reshard find them there, and use one only while its file's size, times and inode (an "
      "object's URL, size and ETag or generation) are unchanged");
  cmd->add_option("files", o->patterns, "Files or glob patterns");
  cmd->add_option("--directory", o->directory,
                  "Index every file of this folder in one directory index (.tfdist-index: a line "
                  "per uncompressed TFRecord file with its stamp and record count); of an object "
                  "folder (s3://B/PREFIX, gs://B/PREFIX), a line per object, gzip and zlib "
                  "ones too, with its size and version, in tfdist's local cache");
  AddIndexDirOption(*cmd, /*write=*/true);
  AddRemoteOptions(*cmd);
  cmd->add_flag("-f,--force", o->force, "Replace existing indexes");
  AddFormatOptions(*cmd, &o->format, "a line per index written");
  cmd->callback([o, action] { *action = [o] { return RunIndex(*o); }; });
}

}  // namespace tfdist::cli
