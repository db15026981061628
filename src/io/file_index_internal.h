// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// FILE.idx read as record boundaries, for reshard's plan (private to src/io).

#ifndef TFDIST_IO_FILE_INDEX_INTERNAL_H_
#define TFDIST_IO_FILE_INDEX_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tfdist/base/status.h"

namespace tfdist::io {

// ReadRecordExtents (file_index.h) as boundaries: 0, then where each record
// ends, so that record i spans [b[i], b[i + 1]). Half the memory of extents.
std::optional<std::vector<uint64_t>> ReadRecordBoundaries(const std::string& path,
                                                          std::string* stale);

// Writes the stamp of IndexPathFor(path) (file_index.h) from the index as it
// is now and `path` as it is now, without reading the records: for an index
// written otherwise than by WriteIndex (tests write them by hand). With a
// ContentFingerprint when `fingerprint`, or when unset where the file
// system's change times are not trusted (CtimeIsTrusted), as WriteIndex.
// Error: NotFound when the file or its index cannot be read.
Status StampIndex(const std::string& path, std::optional<bool> fingerprint = std::nullopt);

}  // namespace tfdist::io

#endif  // TFDIST_IO_FILE_INDEX_INTERNAL_H_
