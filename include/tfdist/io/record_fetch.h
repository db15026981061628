// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Reading chosen records of an uncompressed TFRecord file by offset: the
// positioned reads that fetch payloads at the offsets an up-to-date index
// gives (ReadRecordExtents, file_index.h), for DATA read by index.

#ifndef TFDIST_IO_RECORD_FETCH_H_
#define TFDIST_IO_RECORD_FETCH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/io/file_index.h"

namespace tfdist::io {

// One record to fetch: where it is, and (on success) its payload.
struct FetchRequest {
  uint64_t offset = 0;        // of the header
  uint64_t payload_size = 0;  // as the index says
  // Out: the payload, inside `storage` (shared by the records read in one go).
  std::shared_ptr<const std::string> storage;
  std::string_view payload;
};

// Reads the records `requests` name from `path` with positioned reads, in
// offset order whatever the order given (duplicates are read once).
// Adjacent records are read in one go, up to 4 MiB a read.
// Both CRCs are checked and the length field must equal payload_size.
// `bytes_read` (when given) is increased by the bytes read from the file.
// Error: NotFound when the file cannot be opened; DataLoss "PATH: truncated
// record at N" / "PATH: corrupted record at N" as RecordReader words them
// (N: the header offset, or the payload offset for a bad data CRC), or,
// when a length field differs from payload_size, "PATH: corrupted record at
// N: ...; the index does not describe the file" with advice
// Remedy::kRewriteFileIndex for PATH.
Status FetchRecords(const std::string& path, std::span<FetchRequest> requests,
                    uint64_t* bytes_read = nullptr);

}  // namespace tfdist::io

#endif  // TFDIST_IO_RECORD_FETCH_H_
