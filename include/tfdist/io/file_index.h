// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Per-file record indexes, FILE.idx in the index folder of FILE's folder
// (index_location.h), in NVIDIA DALI's tfrecord2idx format: one
// "offset size" line per record, size counting the framing.

#ifndef TFDIST_IO_FILE_INDEX_H_
#define TFDIST_IO_FILE_INDEX_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
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

// An index is trusted only when it describes the file as it is now. WriteIndex
// writes, beside NAME.idx, its stamp NAME.idx.stamp (kIndexStampSuffix; DALI
// reads NAME.idx alone, whose format stays DALI's), one line:
//   tfdist-index-stamp 1 DEVICE INODE SIZE MTIME_NS CTIME_NS INDEX_BYTES INDEX_CRC32C FINGERPRINT
// the file's device, inode, size, modification and change times (ns) as
// they were before it was scanned; the index's size and CRC-32C (hex), so
// that a stamp is never taken for another index's; and FINGERPRINT, "-", or
// on a file system whose change times are not trusted a ContentFingerprint
// (hex) of the file (file_stamp.h names those file systems). The index is
// trusted only while all of these are EQUAL to the file's and the index's
// now: no copy tool sets a change time back (cp -p, rsync -t and touch -r
// set the mtime only, which moves the change time), and a file renamed into
// place is another inode, so a rewrite of the same size with the same or a
// future mtime shows. An index without a stamp (written by an older tfdist,
// or by DALI's tfrecord2idx) cannot be checked, and is stale. Then the
// records must be of at least 16 bytes, back to back from offset 0, ending
// at the file's size. The readers below share that rule and its reasons;
// none reads the records (their CRCs are not checked).
//
// Each reads the index once, with two opens, three stats and two reads
// (and the fingerprint's reads, where there is one): layouts check the
// indexes of many thousands of files.
//
// Return values (all of them):
//  * the contents          - the index describes the file
//  * nullopt, `stale` set  - an index exists but does not describe the
//                            file; `stale` says why ("F.idx covers 19
//                            bytes; F has 38", "F.idx was written for
//                            another version of F (its change time
//                            changed)", "F.idx has no stamp ...")
//  * nullopt, `stale` ""   - there is no index (or its file cannot be stat'ed)
inline constexpr char kIndexStampSuffix[] = ".stamp";

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
// then its stamp, of the file as it was before the scan: a change during or
// after the scan shows. Returns the count.
// Error: InvalidArgument for a compressed file, for an index that exists
// without `overwrite` (advice Remedy::kOverwrite), or when there is no
// index folder (MakeIndexFolderFor); DataLoss for a damaged record (no
// index is written).
Result<IndexedCount> WriteIndex(const std::string& path, bool overwrite);

// WriteIndex of a local file by several processes (the ranks of a job),
// each scanning a byte range of it: the leader takes the stamp of the file
// before any range is scanned (Begin), each process writes the index lines
// of the records that start in its range to a file of its own
// (WriteIndexPart), and the leader joins them into the index (Finish),
// which is WriteIndex's, byte for byte.
class IndexInParts {
 public:
  // Error: as WriteIndex's before its scan (a missing or compressed file).
  static Result<std::unique_ptr<IndexInParts>> Begin(const std::string& path, bool overwrite);
  ~IndexInParts();
  IndexInParts(const IndexInParts&) = delete;
  IndexInParts& operator=(const IndexInParts&) = delete;

  // Writes the index from `parts` (WriteIndexPart's, in order from offset 0
  // to the end of the file) and their files `part_paths`, which it removes.
  // Where a part does not start where the one before it ended, the rest of
  // the file is scanned here, from there. Error: as WriteIndex (the first
  // damaged record's DataLoss: no index is written).
  Result<IndexedCount> Finish(std::span<const RangeCount> parts,
                              std::span<const std::string> part_paths);

 private:
  struct Stamp;
  IndexInParts(std::string path, bool overwrite, std::unique_ptr<Stamp> stamp);
  std::string path_;
  bool overwrite_;
  std::unique_ptr<Stamp> stamp_;
};

// The index lines of the records of the uncompressed local file `path` that
// start in its byte range [from, to) (from the first whole valid record at
// or after `from`; both CRCs checked), written to `part_path`, a file of
// its own for IndexInParts::Finish. On error (the count's status) nothing is
// left at `part_path`.
RangeCount WriteIndexPart(const std::string& path, uint64_t from, uint64_t to,
                          const std::string& part_path);

}  // namespace tfdist::io

#endif  // TFDIST_IO_FILE_INDEX_H_
