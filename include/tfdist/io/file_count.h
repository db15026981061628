// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Counting the records of files from an index where one describes the file,
// else by reading it: the one "index, else scan" ladder behind count,
// index --directory and the FILE layout summary.

#ifndef TFDIST_IO_FILE_COUNT_H_
#define TFDIST_IO_FILE_COUNT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/io/directory_index.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/file_list.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::io {

// Where a file's count came from. The rungs of the ladder, tried in this
// order; each is taken only when it describes the file as it is now.
enum class CountSource : uint8_t {
  kDirectoryIndex,  // its entry in its folder's directory index (one stat)
  kFileIndex,       // its FILE.idx (one open, two stats, one read)
  kScan,            // reading it (CountRecords)
};

struct CountOptions {
  // Try the file's entry in its folder's directory index. Default: false.
  bool directory_index = false;
  // Try FILE.idx, when ReadIndex trusts it. Default: true.
  bool file_index = true;
  // How a file is read otherwise. Indexes describe uncompressed files, so
  // with scan.compression kGzip or kZlib no index is tried; standard input
  // ("-") is always read.
  RecordReaderOptions scan;
  // Leave compressed files unread (what a directory index holds): a file
  // that is, or is detected as (scan.compression kAuto), gzip or zlib gets
  // that compression, no records and an OK status; the others are read by
  // the one reader that detected it, whole. Default: false.
  bool uncompressed_only = false;
};

// One file's count.
struct FileCount {
  // From an index: its records and payload bytes, compression kNone and an
  // OK status. From a scan: what CountRecords found.
  RecordCount count;
  CountSource source = CountSource::kScan;
  // Why an existing FILE.idx was not trusted (ReadIndex's reason); empty
  // when there was none, it was trusted, or it was not looked at.
  std::string stale_index;
};

// Counts each of `files` by the first rung of the ladder that has its count,
// files in parallel. Return values: a FileCount per file, in their order;
// a file that cannot be read has its error in count.status.
std::vector<FileCount> CountFiles(std::span<const std::string> files, const CountOptions& options);

// The ladder below the directory index (options.directory_index is not
// looked at) for the file `name` of `folder`: FILE.idx is read relative to
// its open folders (ReadIndexAt), and the file is read as
// JoinPath(folder.data_dir, name).
FileCount CountFileAt(const IndexedFolder& folder, const std::string& name,
                      const CountOptions& options);

// A directory index ignored as a whole, as a warning: "INDEX is ignored:
// PROBLEM" (INDEX: the index file's path), advice
// Remedy::kRewriteDirectoryIndex with the data folder ("." for the current
// folder) as the subject.
struct IgnoredIndex {
  std::string message;
  Advice advice;

  bool operator==(const IgnoredIndex&) const = default;
};

// What FileCounter::Count found.
struct FileCounts {
  std::vector<FileRecords> counts;  // per file, in the order given
  uint64_t from_directory_index = 0;
  uint64_t from_file_index = 0;
  uint64_t scanned = 0;
  // Directory index entries of the files that no longer describe them.
  uint64_t stale_entries = 0;
  // Some file's folder has a directory index (used or ignored).
  bool directory_index_found = false;
  // FileCounter::listings() was not empty: some folder's names came from
  // its directory index.
  bool folder_names_from_index = false;
  // The files' folders' directory indexes ignored as a whole, by folder.
  std::vector<IgnoredIndex> ignored;

  // Where the counts came from, for a summary: "N files from .tfdist-index,
  // M from index files, K by scanning; S stale .tfdist-index entries
  // ignored; folder names from its .tfdist-index" (the last two parts when
  // they apply), or "M files from index files, K by scanning" when no
  // folder has a directory index.
  std::string SourcesText() const;
};

// The I/O of a FILE layout summary: the directory indexes of the folders
// that list_files' patterns list, opened before the patterns are expanded,
// and then the record counts of the files they expand to.
//
// Construction reads the directory index of each folder a pattern lists
// (FolderPattern::Split; other patterns are left to Count), so that
// listings() can stand in for reading a folder whose names its index holds,
// and starts checking, on a thread of its own, the entries the patterns
// match (one fstatat each) while the caller expands the patterns. Count
// then takes each file's count from the ladder: its folder's directory
// index entry, else its FILE.idx read relative to the open folder, else a
// scan with both CRCs checked.
//
// Thread-compatible: one thread calls listings() and Count().
class FileCounter {
 public:
  // With no patterns (or no folder pattern) nothing is opened ahead.
  explicit FileCounter(std::span<const std::string> patterns = {});
  // Waits for the checks still running.
  ~FileCounter();
  FileCounter(const FileCounter&) = delete;
  FileCounter& operator=(const FileCounter&) = delete;

  // The folders whose directory index holds all their names while they are
  // unchanged (DirectoryIndex::Listing), for ExpandFilePatterns. The views
  // point into this object.
  const FolderListings& listings() const { return listings_; }

  // Counts the records of `files`: distinct paths, best sorted byte-wise
  // (list_files' order), which spares a sort per folder. `compression` is
  // how the pipeline reads them; with kGzip or kZlib every file is scanned.
  // `progress` (when set) is called with (files counted, files.size()), from
  // any thread: once the directory indexes were looked up (if they counted
  // any file), then after every 1024th file and after the last.
  // Error: the error of the first file, in the order of `files`, whose scan
  // failed (every file is counted first).
  Result<FileCounts> Count(const StringList& files, Compression compression,
                           const std::function<void(uint64_t, uint64_t)>& progress = {});

 private:
  // Opened ahead, by folder; the checker only changes their entries' states.
  std::map<std::string, std::unique_ptr<DirectoryIndex>, std::less<>> ahead_;
  FolderListings listings_;  // views into ahead_
  std::thread checker_;      // last: joined before the indexes go
};

}  // namespace tfdist::io

#endif  // TFDIST_IO_FILE_COUNT_H_
