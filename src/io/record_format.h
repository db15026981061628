// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// TFRecord framing constants and little-endian helpers (private to src/io).

#ifndef TFDIST_IO_RECORD_FORMAT_H_
#define TFDIST_IO_RECORD_FORMAT_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tfdist/io/crc32c.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::io {

// uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)
inline constexpr size_t kRecordHeaderSize = sizeof(uint64_t) + sizeof(uint32_t);
inline constexpr size_t kRecordFooterSize = sizeof(uint32_t);
static_assert(kRecordHeaderSize + kRecordFooterSize == kRecordFramingBytes);

inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;  // TFRecord is little endian, as is every host tfdist builds for
}
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void EncodeFixed64(char* p, uint64_t v) { std::memcpy(p, &v, sizeof v); }
inline void EncodeFixed32(char* p, uint32_t v) { std::memcpy(p, &v, sizeof v); }

// length + kRecordFooterSize in decimal, for messages: a damaged length
// field can make the sum pass 2^64 - 1.
inline std::string PayloadAndFooterBytes(uint64_t length) {
  const uint64_t low = length % 10 + kRecordFooterSize;
  const uint64_t high = length / 10 + low / 10;
  return (high == 0 ? std::string() : std::to_string(high)) + static_cast<char>('0' + low % 10);
}

// True when a 12-byte header's length CRC matches its length.
inline bool HeaderIsValid(std::string_view header) {
  return crc32c::Unmask(DecodeFixed32(header.data() + 8)) ==
         crc32c::Value(header.data(), sizeof(uint64_t));
}

}  // namespace tfdist::io

#endif  // TFDIST_IO_RECORD_FORMAT_H_
