// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Per-file record indexes, FILE.idx in the index folder of FILE's folder
// (index_location.h), in NVIDIA DALI's tfrecord2idx format: one
// "offset size" line per record, size counting the framing.

#ifndef TFDIST_IO_FILE_INDEX_H_
#define TFDIST_IO_FILE_INDEX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::io {

// Where the index of `path` lives: NAME.idx in the index folder of its
// folder (IndexFolderFor, index_location.h); empty when it has none.
std::string IndexPathFor(const std::string& path);

// A data folder and the folder of its indexes, both open, for reading the
// indexes of many of its files without resolving their paths.
struct IndexedFolder {
  int data_fd = -1;       // -1: not open
  std::string data_dir;   // as the paths spell it: "" is the current folder
  int index_fd = -1;      // -1: none, or not open
  std::string index_dir;  // IndexFolderFor(data_dir)
};

// What an index says about its file.
struct IndexedCount {
  FileRecords count;
  std::string index_path;
};

// An index is trusted only when it describes the file as it is now: not
// older than the file (modification times in nanoseconds; WriteIndex gives
// the index its file's), records of at least 16 bytes back to back from
// offset 0, and ending at the file's size. The readers below share that
// rule and its reasons; none reads the records (their CRCs are not checked).
//
// Each reads the index once, with one open, two stats and one read: layouts
// check the indexes of many thousands of files.
//
// Return values (all of them):
//  * the contents          - the index describes the file
//  * nullopt, `stale` set  - an index exists but does not describe the
//                            file; `stale` says why ("F.idx covers 19
//                            bytes; F has 38", "F.idx is older than F")
//  * nullopt, `stale` ""   - there is no index (or its file cannot be stat'ed)

// The records and payload bytes of `path` from IndexPathFor(path).
std::optional<IndexedCount> ReadIndex(const std::string& path, std::string* stale);

// ReadIndex for the file `name` of `folder`: the file and its index are
// resolved relative to the open folders (no path lookup).
std::optional<IndexedCount> ReadIndexAt(const IndexedFolder& folder, const std::string& name,
                                        std::string* stale);

// One framed record as an index line gives it.
struct RecordExtent {
  uint64_t offset = 0;  // of the record's header
  uint64_t size = 0;    // framed: payload + 16
};

// The records of `path` from IndexPathFor(path), in file order.
std::optional<std::vector<RecordExtent>> ReadRecordExtents(const std::string& path,
                                                           std::string* stale);

// Scans `path` (uncompressed; both CRCs checked) and writes its index to
// IndexPathFor(path) atomically (the index folder is created when missing),
// with the modification time `path` had before the scan: an index is never
// newer than what it read, so a change during or after the scan shows.
// Returns the count.
// Error: InvalidArgument for a compressed file, for an index that exists
// without `overwrite` (advice Remedy::kOverwrite), or when there is no
// index folder (MakeIndexFolderFor); DataLoss for a damaged record (no
// index is written).
Result<IndexedCount> WriteIndex(const std::string& path, bool overwrite);

}  // namespace tfdist::io

#endif  // TFDIST_IO_FILE_INDEX_H_
