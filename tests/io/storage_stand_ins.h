// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Stand-ins for the functions of storage.cc (issue 28's wiring: IsRemote,
// ParseLocation, StorageFor, StatObject) that the read-ahead source calls,
// for the tests of the source and the engine where they are linked without
// it. Weak: where the real ones are linked, they win (a test must then
// install its storage with io::SetStorageForTesting instead).
// Include it in one source file of a test program.

#ifndef TFDIST_TESTS_IO_STORAGE_STAND_INS_H_
#define TFDIST_TESTS_IO_STORAGE_STAND_INS_H_

#include <string>
#include <string_view>

#include "tfdist/io/storage.h"

namespace tfdist::testing {

// What the stand-in StorageFor returns, for every scheme.
inline io::Storage*& StandInStorage() {
  static io::Storage* storage = nullptr;
  return storage;
}

}  // namespace tfdist::testing

namespace tfdist::io {

__attribute__((weak)) bool IsRemote(std::string_view name) {
  return name.starts_with("s3://") || name.starts_with("gs://");
}
__attribute__((weak)) Result<Location> ParseLocation(std::string_view name) {
  Location l;
  l.scheme = name.starts_with("gs://") ? Scheme::kGcs : Scheme::kS3;
  l.text = std::string(name);
  return l;
}
__attribute__((weak)) Storage& StorageFor(Scheme) { return *testing::StandInStorage(); }
__attribute__((weak)) Result<ObjectInfo> StatObject(std::string_view name) {
  return StorageFor(Scheme::kS3).Stat(name);
}

}  // namespace tfdist::io

#endif  // TFDIST_TESTS_IO_STORAGE_STAND_INS_H_
