// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The implementations of io::Storage (storage.h), made once per process by
// StorageFor (storage.cc). Private to io.

#ifndef TFDIST_IO_STORAGE_STORES_H_
#define TFDIST_IO_STORAGE_STORES_H_

#include <memory>
#include <string>

#include "tfdist/io/storage.h"

namespace tfdist::io {

// The local file system (storage_local.cc).
std::unique_ptr<Storage> NewLocalStorage();

// S3 and S3-compatible stores (storage_s3.cc): credentials, endpoint and
// addressing from the environment and the AWS shared files, read when made.
std::unique_ptr<Storage> NewS3Storage();

// Cloud Storage (storage_gcs.cc): its JSON API, OAuth 2 tokens, or an
// emulator (STORAGE_EMULATOR_HOST).
std::unique_ptr<Storage> NewGcsStorage();

// A warning of a store about its configuration, for TakeRemoteWarnings
// (storage.cc). Thread-safe.
void AddRemoteWarning(std::string warning);

}  // namespace tfdist::io

#endif  // TFDIST_IO_STORAGE_STORES_H_
