// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Records of files for the FILE summary: a folder's directory index entry,
// else the file's FILE.idx, else a scan with both CRCs checked.

#include "file_counts.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <unordered_map>

#include "tfdist/io/record_reader.h"

namespace tfdist::dist {

void FileCounter::Prepare(const std::vector<std::string>& patterns) {
  std::map<std::string, std::vector<io::FolderPattern>> by_dir;
  for (const std::string& pattern : patterns) {
    if (std::optional<io::FolderPattern> f = io::FolderPattern::Split(pattern)) {
      by_dir[f->dir].push_back(std::move(*f));
    }
  }
  for (const auto& [dir, dir_patterns] : by_dir) {
    std::unique_ptr<io::DirectoryIndex>& index = early_[dir];
    index = io::DirectoryIndex::Open(dir);
    if (auto names = index->Listing()) listings_.emplace(dir, std::move(*names));
  }
  // (The thread only sets the entries' states; list_files reads their names.)
  checker_ = std::jthread([this, by_dir = std::move(by_dir)] {
    for (const auto& [dir, dir_patterns] : by_dir) {
      early_.at(dir)->Check([&](std::string_view name) {
        return std::any_of(dir_patterns.begin(), dir_patterns.end(),
                           [&](const io::FolderPattern& f) { return f.Matches(name); });
      });
    }
  });
}

Result<FileCounts> FileCounter::Count(std::span<const std::string_view> unique, bool sorted,
                                      io::Compression compression,
                                      const std::function<void(uint64_t, uint64_t)>& progress) {
  FileCounts out;
  const bool indexes_apply =
      compression != io::Compression::kGzip && compression != io::Compression::kZlib;
  // Records per distinct file: from its folder's directory index when an
  // entry matches the file, else from FILE.idx, else by scanning it.
  enum Source : uint8_t { kScanned, kFileIndex, kDirectoryIndex };
  std::vector<io::FileRecords>& counts = out.records;
  counts.resize(unique.size());
  std::vector<uint8_t> source(unique.size(), kScanned);
  std::atomic<uint64_t> done{0};
  uint64_t stale = 0;
  bool directory_index_found = false;
  // Each file's folder, open (its DirectoryIndex), and base name: FILE.idx
  // is then read relative to the folder.
  std::vector<std::unique_ptr<io::DirectoryIndex>> opened;
  std::vector<const io::DirectoryIndex*> folder_of_slot(unique.size(), nullptr);
  std::vector<std::string_view> folder_name_of_slot(unique.size());
  std::vector<std::string_view> base_of_slot(unique.size());
  if (indexes_apply) {
    struct Folder {
      std::vector<std::string_view> names;  // base names
      std::vector<size_t> slots;
    };
    std::vector<std::string_view> folder_dirs;
    std::vector<Folder> folders;
    std::unordered_map<std::string_view, size_t> folder_of;
    size_t last = 0;
    for (size_t u = 0; u < unique.size(); ++u) {
      const std::string_view path = unique[u];
      if (path == "-") continue;  // standard input
      const size_t slash = path.rfind('/');
      const std::string_view dir = slash == std::string_view::npos ? std::string_view()
                                   : slash == 0                    ? path.substr(0, 1)
                                                                   : path.substr(0, slash);
      const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
      if (folders.empty() || folder_dirs[last] != dir) {
        auto [it, inserted] = folder_of.emplace(dir, folders.size());
        if (inserted) {
          folder_dirs.push_back(dir);
          folders.emplace_back();
        }
        last = it->second;
      }
      folders[last].names.push_back(base);
      folders[last].slots.push_back(u);
    }
    if (checker_.joinable()) checker_.join();
    for (size_t k = 0; k < folders.size(); ++k) {
      Folder& folder = folders[k];
      // In a sorted list, each folder's names come sorted.
      if (!sorted && !std::is_sorted(folder.names.begin(), folder.names.end())) {
        std::vector<size_t> order(folder.names.size());
        std::iota(order.begin(), order.end(), size_t{0});
        std::sort(order.begin(), order.end(),
                  [&](size_t a, size_t b) { return folder.names[a] < folder.names[b]; });
        Folder by_name;
        for (size_t i : order) {
          by_name.names.push_back(folder.names[i]);
          by_name.slots.push_back(folder.slots[i]);
        }
        folder = std::move(by_name);
      }
      const std::string dir(folder_dirs[k]);
      auto checked = early_.find(dir);
      const io::DirectoryIndex* index = nullptr;
      if (checked != early_.end() && checked->second) {
        index = checked->second.get();
      } else {
        opened.push_back(io::DirectoryIndex::Open(dir));
        index = opened.back().get();
      }
      for (size_t i = 0; i < folder.names.size(); ++i) {
        folder_of_slot[folder.slots[i]] = index;
        folder_name_of_slot[folder.slots[i]] = folder_dirs[k];
        base_of_slot[folder.slots[i]] = folder.names[i];
      }
      if (!index->found()) continue;
      const io::DirectoryLookup found = index->LookUp(folder.names);
      directory_index_found = true;
      if (!found.problem.empty()) {
        out.warnings.push_back(
            Warning{WarningKind::kDirectoryIndexIgnored,
                    fmt::format("{}/{} is ignored: {}", dir.empty() ? "." : dir,
                                io::kDirectoryIndexName, found.problem),
                    Advice{Remedy::kRewriteDirectoryIndex, dir.empty() ? "." : dir}});
        continue;
      }
      stale += found.stale;
      for (size_t i = 0; i < folder.names.size(); ++i) {
        if (!found.matched[i]) continue;
        counts[folder.slots[i]] = found.counts[i];
        source[folder.slots[i]] = kDirectoryIndex;
        ++done;
      }
    }
    if (progress && done > 0) progress(done, unique.size());
  }
  std::vector<size_t> todo;
  for (size_t u = 0; u < unique.size(); ++u) {
    if (source[u] != kDirectoryIndex) todo.push_back(u);
  }
  std::vector<Status> errors(todo.size());
  tbb::parallel_for(size_t{0}, todo.size(), [&](size_t t) {
    const size_t u = todo[t];
    const std::string path(unique[u]);
    std::string why;
    if (indexes_apply) {
      const io::DirectoryIndex* folder = folder_of_slot[u];
      std::optional<io::IndexedCount> c =
          folder != nullptr && folder->dir_fd() >= 0
              ? io::ReadIndexAt(folder->dir_fd(), std::string(folder_name_of_slot[u]),
                                std::string(base_of_slot[u]), &why)
              : io::ReadIndex(path, "", &why);
      if (c) {
        counts[u] = {c->count.records, c->count.payload_bytes};
        source[u] = kFileIndex;
      }
    }
    if (source[u] == kScanned) {
      io::RecordReaderOptions o;
      o.compression = compression;
      io::RecordCount c = io::CountRecords(path, o);
      counts[u] = {c.records, c.payload_bytes};
      errors[t] = std::move(c.status);
    }
    const uint64_t n = ++done;
    if (progress && (n % 1024 == 0 || n == unique.size())) progress(n, unique.size());
  });
  for (const Status& e : errors) TFDIST_RETURN_IF_ERROR(e);
  const auto from = [&](Source k) {
    return static_cast<uint64_t>(std::count(source.begin(), source.end(), k));
  };
  const uint64_t from_directory = from(kDirectoryIndex), from_file = from(kFileIndex);
  const uint64_t scanned = unique.size() - from_directory - from_file;
  if (directory_index_found) {
    out.source = fmt::format(
        "{} file{} from {}, {} from index files, {} by scanning{}{}", from_directory,
        from_directory == 1 ? "" : "s", io::kDirectoryIndexName, from_file, scanned,
        stale == 0 ? ""
                   : fmt::format("; {} stale {} entr{} ignored", stale, io::kDirectoryIndexName,
                                 stale == 1 ? "y" : "ies"),
        listings_.empty() ? ""
                          : fmt::format("; folder names from its {}", io::kDirectoryIndexName));
  } else {
    out.source = fmt::format("{} file{} from index files, {} by scanning", from_file,
                             from_file == 1 ? "" : "s", scanned);
  }
  return out;
}

}  // namespace tfdist::dist
