// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// What listings saw, for StatObject (storage.cc). Private to io.

#ifndef TFDIST_IO_STORAGE_LISTED_H_
#define TFDIST_IO_STORAGE_LISTED_H_

#include <cstdint>
#include <vector>

#include "tfdist/io/storage.h"

namespace tfdist::io {

// Records the objects one expansion matched (any order), so that
// StatObject answers for them without a request. The records of recent
// expansions are kept up to a bound on their bytes (names, versions and
// their records; 64 MiB, about 500,000 objects of 60-byte names): the
// oldest expansion's go first, the newest is kept whole (its matches are
// in memory as the file list anyway).
void RememberListed(std::vector<ObjectInfo> objects);

// Replaces the bound on the bytes RememberListed keeps, for tests.
void SetListedBoundForTesting(uint64_t bytes);

// How many times StatObject asked a store (Storage::Stat), for tests.
uint64_t StatRequestsForTesting();

}  // namespace tfdist::io

#endif  // TFDIST_IO_STORAGE_LISTED_H_
