// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Batch contents shared by the host and CUDA staging tests.

#ifndef TFDIST_TESTS_DEVICE_BATCH_BYTES_H_
#define TFDIST_TESTS_DEVICE_BATCH_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

namespace tfdist::device {

// Deterministic content of batch `b` of replica `r`.
inline std::string BatchBytes(int64_t r, uint64_t b, size_t n) {
  std::string s(n, '\0');
  std::mt19937_64 rng(static_cast<uint64_t>(r) * 1000003 + b);
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

}  // namespace tfdist::device

#endif  // TFDIST_TESTS_DEVICE_BATCH_BYTES_H_
