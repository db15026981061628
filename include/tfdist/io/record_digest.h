// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Digests of the payloads of TFRecord files: one that depends on the
// records' order and one that does not, both independent of how the
// records are cut into files, framed or compressed.

#ifndef TFDIST_IO_RECORD_DIGEST_H_
#define TFDIST_IO_RECORD_DIGEST_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/io/record_reader.h"

namespace tfdist::io {

// The hash of one record: XXH3-64 (xxHash, seed 0) of its payload bytes.
uint64_t RecordHash(std::string_view payload);

// The digest of a sequence of records, each taken as h = RecordHash of its
// payload:
//  * unordered: the sum of the h modulo 2^64. It does not depend on the
//    order, and it counts multiplicity: a record there twice adds h twice
//    (an XOR would cancel it);
//  * ordered: the polynomial sum h_0 B^(n-1) + h_1 B^(n-2) + ... + h_(n-1)
//    modulo the prime 2^61 - 1 (kOrderedModulus), B = kOrderedBase: a
//    moved, dropped or doubled record changes it.
// Both compose: the digest of A then B is A.Append(B), so files digested
// apart (in parallel) combine into the digest of their concatenation, and
// the same records in the same order give the same digests however they
// are split into files.
struct RecordDigest {
  static constexpr uint64_t kOrderedModulus = (uint64_t{1} << 61) - 1;
  static constexpr uint64_t kOrderedBase = 0x1d8e4e27c47d124f % kOrderedModulus;

  uint64_t records = 0;
  uint64_t payload_bytes = 0;
  uint64_t unordered = 0;
  uint64_t ordered = 0;

  // Adds a record at the end.
  void Add(std::string_view payload);
  // Adds the records of `next` after those of this digest.
  void Append(const RecordDigest& next);

  bool operator==(const RecordDigest&) const = default;
};

// One file's digest: its good records before the end or the first error.
struct FileDigest {
  RecordDigest digest;
  Compression compression = Compression::kNone;  // as used (detected if kAuto)
  Status status;                                 // OK, or the first error
  std::optional<uint64_t> error_offset;          // the record offset the error names
};

// A byte range of an uncompressed file digested apart (by one process of
// several), for JoinDigestedRanges: as RangeCount (record_reader.h).
struct RangeDigest {
  std::optional<uint64_t> begin;
  uint64_t end = 0;
  FileDigest digest;
};

// The digest of the records of the uncompressed file `path` that start in
// [from, to), as CountFileRange counts them. REQUIRES: options.compression
// kNone (else the digest's status is InvalidArgument).
RangeDigest DigestFileRange(const std::string& path, const RecordReaderOptions& options,
                            uint64_t from, uint64_t to, uint64_t min_part_size = uint64_t{32} << 20,
                            size_t max_parts = 0);

// The digest of the whole file from its `ranges`, as JoinCountedRanges.
FileDigest JoinDigestedRanges(const std::string& path, const RecordReaderOptions& options,
                              std::span<const RangeDigest> ranges);

// Reads every record of each of `files` ("-": standard input), checking
// both CRCs as `options` say, files in parallel, and a large uncompressed
// file in parallel parts as CountRecords scans one (parts of at least
// `min_part_size` bytes, at most `max_parts`, 0: the hardware threads; the
// result is always that of one sequential read). Memory is bounded by each
// reader's blocks and its largest record (options.max_record_size; a longer
// one is the reader's ResourceExhausted). Returns a FileDigest per file, in
// their order; a file that cannot be read has its error in status.
std::vector<FileDigest> DigestFiles(std::span<const std::string> files,
                                    const RecordReaderOptions& options,
                                    uint64_t min_part_size = uint64_t{64} << 20,
                                    size_t max_parts = 0);

}  // namespace tfdist::io

#endif  // TFDIST_IO_RECORD_DIGEST_H_
