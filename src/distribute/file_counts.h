// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The records of many files for the FILE summary, from directory indexes,
// FILE.idx or scans (private to distribute until io holds this ladder).

#ifndef TFDIST_DISTRIBUTE_FILE_COUNTS_H_
#define TFDIST_DISTRIBUTE_FILE_COUNTS_H_

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tfdist/distribute/decide.h"
#include "tfdist/io/file_list.h"
#include "tfdist/io/record_index.h"

namespace tfdist::dist {

struct FileCounts {
  std::vector<io::FileRecords> records;  // per file asked for
  std::string source;                    // where they came from, for the summary
  std::vector<Warning> warnings;         // directory indexes ignored
};

class FileCounter {
 public:
  FileCounter() = default;
  FileCounter(const FileCounter&) = delete;
  FileCounter& operator=(const FileCounter&) = delete;

  // Reads the directory indexes of the folders `patterns` list: where one's
  // listing is current, listings() stands in for reading the folder; the
  // entries the patterns match are checked (one stat each) on a thread.
  void Prepare(const std::vector<std::string>& patterns);
  const io::FolderListings& listings() const { return listings_; }

  // The records of `files` (distinct; `sorted` when byte-wise sorted), read
  // with `compression`. Error: a scan's DataLoss or NotFound.
  Result<FileCounts> Count(std::span<const std::string_view> files, bool sorted,
                           io::Compression compression,
                           const std::function<void(uint64_t, uint64_t)>& progress);

 private:
  std::map<std::string, std::unique_ptr<io::DirectoryIndex>> early_;  // by folder
  io::FolderListings listings_;  // views into early_
  std::jthread checker_;
};

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_FILE_COUNTS_H_
