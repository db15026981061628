// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The index layer as one include, for code written before it was split:
// per-file indexes (file_index.h) and directory indexes (directory_index.h).
// New code includes what it uses.

#ifndef TFDIST_IO_RECORD_INDEX_H_
#define TFDIST_IO_RECORD_INDEX_H_

#include "tfdist/io/directory_index.h"
#include "tfdist/io/file_index.h"

#endif  // TFDIST_IO_RECORD_INDEX_H_
