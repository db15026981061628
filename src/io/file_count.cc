// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The index-else-scan ladder: directory index entries looked up by folder,
// then FILE.idx or a scan per file, in parallel.

#include "tfdist/io/file_count.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "fs_util.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/storage.h"

namespace tfdist::io {
namespace {

bool IndexesApply(const RecordReaderOptions& scan) {
  return scan.compression != Compression::kGzip && scan.compression != Compression::kZlib;
}

// A file named relative to its open folders, for ReadIndexAt.
struct InFolder {
  const IndexedFolder& folder;
  std::string name;
};

// CountRecords for a file to be read only if it is uncompressed: one
// reader, which detects the compression (for kAuto) before it reads on.
// (Many small files: one open each, not one to look and one to count.)
RecordCount CountIfUncompressed(const std::string& path, const RecordReaderOptions& scan) {
  RecordCount count;
  count.compression = scan.compression;
  Result<std::unique_ptr<RecordReader>> reader = RecordReader::Open(path, scan);
  if (!reader.ok()) {
    count.status = reader.status();
    return count;
  }
  RecordReader& r = **reader;
  count.compression = r.compression();
  if (count.compression != Compression::kNone) return count;
  count.payload_bytes = r.SkipRecords(std::numeric_limits<uint64_t>::max());
  count.records = r.records_read();
  count.status = r.status();
  count.error_offset = r.error_offset();
  return count;
}

// The rungs below the directory index for `path` (as messages name it),
// its FILE.idx read relative to `at` when given.
FileCount CountBelowDirectoryIndex(const std::string& path, const InFolder* at,
                                   const CountOptions& o) {
  FileCount out;
  if (o.file_index && IndexesApply(o.scan) && path != "-") {
    const std::optional<IndexedCount> index =
        at != nullptr ? ReadIndexAt(at->folder, at->name, &out.stale_index)
                      : ReadIndex(path, &out.stale_index);
    if (index) {
      static_cast<FileRecords&>(out.count) = index->count;
      out.source = CountSource::kFileIndex;
      return out;
    }
  }
  if (o.uncompressed_only) {
    out.count = CountIfUncompressed(path, o.scan);
    return out;
  }
  out.count = CountRecords(path, o.scan);
  return out;
}

constexpr uint32_t kNoFolder = std::numeric_limits<uint32_t>::max();

// The files of one folder, and its directory index.
struct Folder {
  std::string_view dir;  // as the paths spell it: "" or "/" or "a/b"
  // Where each of its files is in the list, sorted by base name; empty
  // when they are the run [first, first + count) of the list, in order.
  std::vector<size_t> files;
  size_t first = 0;
  size_t count = 0;
  const DirectoryIndex* index = nullptr;

  size_t File(size_t k) const { return files.empty() ? first + k : files[k]; }
};

// The first rung for many files: their folders' directory indexes. A list
// of one folder's names in order (list_files') takes a few bytes per file.
class DirectoryRung {
 public:
  // Groups `files` by folder (standard input has none).
  explicit DirectoryRung(const StringList& files) : list_(files), folder_of_(files.size()) {
    std::unordered_map<std::string_view, uint32_t> number;
    uint32_t last = kNoFolder;
    std::vector<uint8_t> in_order;  // per folder: its files are one run, sorted
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string_view path = files[i];
      if (path == "-") {
        folder_of_[i] = kNoFolder;
        last = kNoFolder;  // the run of the folder before ends here
        continue;
      }
      const std::string_view dir = DirName(path);
      if (last == kNoFolder || folders_[last].dir != dir) {
        auto [it, inserted] = number.emplace(dir, static_cast<uint32_t>(folders_.size()));
        if (inserted) {
          folders_.emplace_back().dir = dir;
          folders_.back().first = i;
          in_order.push_back(1);
        } else {
          Spell(folders_[it->second]);  // the folder's files are not one run
          in_order[it->second] = 0;
        }
        last = it->second;
      }
      Folder& folder = folders_[last];
      if (in_order[last] && folder.count > 0 && !(BaseName(files[i - 1]) < BaseName(path))) {
        Spell(folder);
        in_order[last] = 0;
      }
      if (!folder.files.empty() || !in_order[last]) folder.files.push_back(i);
      ++folder.count;
      folder_of_[i] = last;
    }
    for (size_t k = 0; k < folders_.size(); ++k) {
      if (!in_order[k]) SortByName(folders_[k]);
    }
  }

  // Looks every file up in its folder's index: the one `ahead` holds for
  // the folder, else one opened now. keep(i, records, compression) takes
  // each file an entry describes, from any thread; stale(i) each whose
  // entry no longer does. `read_as`: how the files are read (a local
  // folder's index holds uncompressed files only: with kGzip or kZlib it is
  // not read; an object folder's holds compressed ones too).
  template <typename Keep, typename Stale>
  void LookUp(const std::map<std::string, std::unique_ptr<DirectoryIndex>, std::less<>>& ahead,
              Compression read_as, Keep&& keep, Stale&& stale) {
    for (Folder& folder : folders_) {
      if (!IsRemote(folder.dir) && !IndexesApply(RecordReaderOptions{.compression = read_as})) {
        continue;
      }
      const auto it = ahead.find(folder.dir);
      if (it != ahead.end()) {
        folder.index = it->second.get();
      } else {
        opened_.push_back(DirectoryIndex::Open(std::string(folder.dir)));
        folder.index = opened_.back().get();
      }
      if (!folder.index->found()) continue;
      found_ = true;
      if (!folder.index->problem().empty()) {
        const std::string dir = folder.dir.empty() ? "." : std::string(folder.dir);
        ignored_.push_back(
            {fmt::format("{} is ignored: {}", folder.index->index_path(), folder.index->problem()),
             {Remedy::kRewriteDirectoryIndex, dir}});
        continue;
      }
      stale_ += folder.index
                    ->LookUpEach(
                        folder.count, [&](size_t k) { return BaseName(list_[folder.File(k)]); },
                        [&](size_t k, const FileRecords& records, Compression c) {
                          keep(folder.File(k), records, c);
                        },
                        read_as, [&](size_t k) { stale(folder.File(k), *folder.index); })
                    .stale;
    }
  }

  // File i relative to its open folder; nullopt for none (or not opened).
  std::optional<InFolder> At(size_t i, std::string_view path) const {
    if (folder_of_[i] == kNoFolder) return std::nullopt;
    const Folder& folder = folders_[folder_of_[i]];
    if (folder.index == nullptr || folder.index->folder().data_fd < 0) return std::nullopt;
    return InFolder{folder.index->folder(), std::string(BaseName(path))};
  }

  bool found() const { return found_; }
  uint64_t stale() const { return stale_; }
  std::vector<IgnoredIndex>& ignored() { return ignored_; }

 private:
  // Lists a run folder's files one by one.
  static void Spell(Folder& folder) {
    if (!folder.files.empty() || folder.count == 0) return;
    folder.files.resize(folder.count);
    std::iota(folder.files.begin(), folder.files.end(), folder.first);
  }

  void SortByName(Folder& folder) const {
    Spell(folder);
    std::sort(folder.files.begin(), folder.files.end(),
              [&](size_t a, size_t b) { return BaseName(list_[a]) < BaseName(list_[b]); });
  }

  const StringList& list_;
  std::vector<Folder> folders_;
  std::vector<uint32_t> folder_of_;  // per file
  std::vector<std::unique_ptr<DirectoryIndex>> opened_;
  bool found_ = false;
  uint64_t stale_ = 0;
  std::vector<IgnoredIndex> ignored_;
};

// The rungs below the directory index for the files `todo` names, in
// parallel; keep(i, FileCount&&) takes each, from any thread. `rung` (when
// given) opened the files' folders. `done` counts files for `progress`.
template <typename Keep>
void CountRest(const StringList& files, std::span<const size_t> todo, const DirectoryRung* rung,
               const CountOptions& options, Keep&& keep, std::atomic<uint64_t>& done,
               const std::function<void(uint64_t, uint64_t)>& progress) {
  // Each worker takes the next file in the list's order: objects in a
  // store are prefetched in that order (PrefetchObjects), and a worker that
  // started far ahead (as parallel_for's split halves do) would find none of
  // its objects prefetched, and make the prefetches of the others' wasted.
  std::atomic<size_t> next{0};
  const size_t workers =
      std::min<size_t>(todo.size(), std::max(1, tbb::this_task_arena::max_concurrency()));
  tbb::parallel_for(size_t{0}, workers, [&](size_t) {
    for (size_t t; (t = next.fetch_add(1)) < todo.size();) {
      const size_t i = todo[t];
      const std::string path(files[i]);
      const std::optional<InFolder> at = rung != nullptr ? rung->At(i, path) : std::nullopt;
      keep(i, CountBelowDirectoryIndex(path, at ? &*at : nullptr, options));
      const uint64_t n = ++done;
      if (progress && (n % 1024 == 0 || n == files.size())) progress(n, files.size());
    }
  });
}

using Ahead = std::map<std::string, std::unique_ptr<DirectoryIndex>, std::less<>>;

// Fetches ahead (PrefetchObjects), in order, the first bytes of the objects
// among the files `todo` names that are about to be read: those no NAME.idx
// counts (when `options` try one). An object an index counts is not read.
void PrefetchToRead(const StringList& files, std::span<const size_t> todo,
                    const CountOptions& options) {
  std::vector<size_t> objects;
  for (const size_t i : todo) {
    if (IsRemote(files[i])) objects.push_back(i);
  }
  if (objects.empty()) return;
  std::vector<uint8_t> read(objects.size(), 1);
  if (options.file_index && IndexesApply(options.scan)) {
    tbb::parallel_for(size_t{0}, objects.size(), [&](size_t k) {
      std::string stale;
      read[k] = ReadIndex(std::string(files[objects[k]]), &stale) ? 0 : 1;
    });
  }
  std::vector<std::string> names;
  for (size_t k = 0; k < objects.size(); ++k) {
    if (read[k]) names.emplace_back(files[objects[k]]);
  }
  PrefetchObjects(names);
}

// Why the entry of a file in its folder's index (`index`) was not taken.
std::string StaleEntry(std::string_view path, const DirectoryIndex& index) {
  return fmt::format("{}: its entry for {} no longer describes it (changed since it was indexed)",
                     index.index_path(), path);
}

}  // namespace

std::vector<FileCount> CountFiles(std::span<const std::string> files, const CountOptions& options) {
  std::vector<FileCount> out(files.size());
  const StringList views(files);
  std::vector<size_t> todo;
  std::optional<DirectoryRung> rung;
  if (options.directory_index) {
    rung.emplace(views);
    std::vector<uint8_t> listed(files.size(), 0);
    rung->LookUp(
        Ahead(), options.scan.compression,
        [&](size_t i, const FileRecords& records, Compression c) {
          static_cast<FileRecords&>(out[i].count) = records;
          out[i].count.compression = c;
          out[i].source = CountSource::kDirectoryIndex;
          listed[i] = 1;
        },
        [&](size_t i, const DirectoryIndex& index) {
          out[i].stale_index = StaleEntry(files[i], index);
        });
    for (size_t i = 0; i < files.size(); ++i) {
      if (!listed[i]) todo.push_back(i);
    }
  } else {
    todo.resize(files.size());
    std::iota(todo.begin(), todo.end(), size_t{0});
  }
  PrefetchToRead(views, todo, options);
  std::atomic<uint64_t> done{0};
  CountRest(views, todo, rung ? &*rung : nullptr, options,
            [&](size_t i, FileCount&& c) {
              if (c.stale_index.empty()) c.stale_index = std::move(out[i].stale_index);
              out[i] = std::move(c);
            },
            done, {});
  return out;
}

FileCount CountFileAt(const IndexedFolder& folder, const std::string& name,
                      const CountOptions& options) {
  const InFolder at{folder, name};
  return CountBelowDirectoryIndex(JoinPath(folder.data_dir, name), &at, options);
}

std::string FileCounts::SourcesText() const {
  if (!directory_index_found) {
    return fmt::format("{} file{} from index files, {} by scanning", from_file_index,
                       from_file_index == 1 ? "" : "s", scanned);
  }
  std::string text = fmt::format("{} file{} from {}, {} from index files, {} by scanning",
                                 from_directory_index, from_directory_index == 1 ? "" : "s",
                                 kDirectoryIndexName, from_file_index, scanned);
  if (stale_entries != 0) {
    text += fmt::format("; {} stale {} entr{} ignored", stale_entries, kDirectoryIndexName,
                        stale_entries == 1 ? "y" : "ies");
  }
  if (folder_names_from_index) {
    text += fmt::format("; folder names from its {}", kDirectoryIndexName);
  }
  return text;
}

FileCounter::FileCounter(std::span<const std::string> patterns) {
  std::map<std::string, std::vector<FolderPattern>> by_dir;
  for (const std::string& pattern : patterns) {
    if (std::optional<FolderPattern> f = FolderPattern::Split(pattern)) {
      by_dir[f->dir].push_back(std::move(*f));
    }
  }
  // Only an index whose listing stands in for the folder is read now; the
  // others when counting, after the glob (their entries and the glob's
  // names are then not in memory at once).
  std::erase_if(by_dir, [](const auto& d) { return !DirectoryIndex::ListingIsCurrent(d.first); });
  if (by_dir.empty()) return;
  for (const auto& [dir, folder_patterns] : by_dir) {
    std::unique_ptr<DirectoryIndex>& index = ahead_[dir];
    index = DirectoryIndex::Open(dir);
    if (auto names = index->Listing()) listings_.emplace(dir, std::move(*names));
  }
  // The thread only sets the entries' states; list_files reads their names.
  checker_ = std::thread([this, by_dir = std::move(by_dir)] {
    for (const auto& [dir, patterns_binding] : by_dir) {
      const auto& folder_patterns = patterns_binding;  // (clang 14 captures no binding)
      ahead_.find(dir)->second->Check([&](std::string_view name) {
        return std::any_of(folder_patterns.begin(), folder_patterns.end(),
                           [&](const FolderPattern& f) { return f.Matches(name); });
      });
    }
  });
}

FileCounter::~FileCounter() {
  if (checker_.joinable()) checker_.join();
}

Result<FileCounts> FileCounter::Count(const StringList& files, Compression compression,
                                      const std::function<void(uint64_t, uint64_t)>& progress) {
  CountOptions options;
  options.directory_index = true;
  options.scan.compression = compression;
  FileCounts out;
  out.counts.resize(files.size());
  out.folder_names_from_index = !listings_.empty();
  std::vector<uint8_t> listed(files.size(), 0);
  std::atomic<uint64_t> done{0};
  std::optional<DirectoryRung> rung;
  {
    rung.emplace(files);
    if (checker_.joinable()) checker_.join();
    rung->LookUp(
        ahead_, compression,
        [&](size_t i, const FileRecords& records, Compression) {
          out.counts[i] = records;
          listed[i] = 1;
        },
        [](size_t, const DirectoryIndex&) {});
    out.from_directory_index = static_cast<uint64_t>(std::count(listed.begin(), listed.end(), 1));
    done = out.from_directory_index;
    out.directory_index_found = rung->found();
    out.stale_entries = rung->stale();
    out.ignored = std::move(rung->ignored());
    if (progress && done > 0) progress(done, files.size());
  }
  std::vector<size_t> todo;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!listed[i]) todo.push_back(i);
  }
  PrefetchToRead(files, todo, options);
  std::mutex mu;
  std::atomic<uint64_t> from_file_index{0};
  size_t first_error = files.size();
  Status error;
  auto keep = [&](size_t i, FileCount&& c) {
    out.counts[i] = c.count;
    if (c.source == CountSource::kFileIndex) ++from_file_index;
    if (c.count.status.ok()) return;
    std::lock_guard<std::mutex> lock(mu);
    if (i < first_error) {
      first_error = i;
      error = std::move(c.count.status);
    }
  };
  CountRest(files, todo, rung ? &*rung : nullptr, options, keep, done, progress);
  TFDIST_RETURN_IF_ERROR(error);
  out.from_file_index = from_file_index.load();
  out.scanned = files.size() - out.from_directory_index - out.from_file_index;
  return out;
}

}  // namespace tfdist::io
