// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// FILE.idx read as record boundaries, for reshard's plan (private to src/io).

#ifndef TFDIST_IO_FILE_INDEX_INTERNAL_H_
#define TFDIST_IO_FILE_INDEX_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tfdist::io {

// ReadRecordExtents (file_index.h) as boundaries: 0, then where each record
// ends, so that record i spans [b[i], b[i + 1]). Half the memory of extents.
std::optional<std::vector<uint64_t>> ReadRecordBoundaries(const std::string& path,
                                                          std::string* stale);

}  // namespace tfdist::io

#endif  // TFDIST_IO_FILE_INDEX_INTERNAL_H_
