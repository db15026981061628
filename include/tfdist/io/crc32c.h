// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// CRC-32C (Castagnoli) and the masking TFRecord applies to stored CRCs.

#ifndef TFDIST_IO_CRC32C_H_
#define TFDIST_IO_CRC32C_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tfdist::io::crc32c {

// Returns the CRC-32C of data[0,n) continued from `crc`, the CRC of some
// earlier bytes A, so that Extend(Value(A), B) == Value(A + B).
// Uses the SSE4.2 crc32 instruction, three streams interleaved, when the CPU
// has it (checked once at run time); a portable slicing-by-8 table otherwise.
// Thread-safe.
uint32_t Extend(uint32_t crc, const char* data, size_t n);

inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(std::string_view s) { return Extend(0, s.data(), s.size()); }

inline constexpr uint32_t kMaskDelta = 0xa282ead8u;

// TFRecord stores masked CRCs: a CRC of data that itself holds CRCs is
// otherwise weak (leveldb, TensorFlow).
inline constexpr uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline constexpr uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

// The implementations behind Extend, exposed so tests can check both on the
// same vectors. ExtendHardware REQUIRES: HaveHardwareCrc().
uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n);
uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n);
bool HaveHardwareCrc();

}  // namespace tfdist::io::crc32c

#endif  // TFDIST_IO_CRC32C_H_
