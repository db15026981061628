// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// ScanRecords, compiled twice: with the crc32 instruction, and portably.

#include "record_scan.h"

#include <algorithm>
#include <cstring>

#include "record_format.h"
#include "tfdist/io/crc32c.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tfdist::io {
namespace {

// The loop, parameterised on how a CRC is computed so both builds share it.
template <typename Crc>
ScanResult Scan(const char* data, size_t n, size_t stop, bool verify, Crc crc) {
  ScanResult r;
  size_t pos = 0;
  while (pos < stop && n - pos >= kRecordFramingBytes) {
    const char* p = data + pos;
    const uint64_t length = DecodeFixed64(p);
    if (length > n - pos - kRecordFramingBytes) break;
    // The length CRC always: an unchecked length walks zeros as records.
    if (crc32c::Unmask(DecodeFixed32(p + 8)) != crc(p, 8)) break;
    if (verify && crc32c::Unmask(DecodeFixed32(p + kRecordHeaderSize + length)) !=
                      crc(p + kRecordHeaderSize, length)) {
      break;
    }
    r.last_offset = pos;
    r.last_size = length;
    ++r.records;
    r.payload_bytes += length;
    pos += kRecordFramingBytes + length;
  }
  r.consumed = pos;
  return r;
}

#if defined(__x86_64__)
// Raw register update over the tail bytes of a stream (fewer than 8).
__attribute__((target("sse4.2"))) inline uint32_t CrcTail(uint32_t s, const char* p, size_t n) {
  if (n & 4) {
    s = _mm_crc32_u32(s, DecodeFixed32(p));
    p += 4;
  }
  if (n & 2) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    s = _mm_crc32_u16(s, v);
    p += 2;
  }
  if (n & 1) s = _mm_crc32_u8(s, static_cast<unsigned char>(*p));
  return s;
}

__attribute__((target("sse4.2"))) inline uint32_t InlineCrc(const char* p, size_t n) {
  if (n >= 512) return crc32c::Extend(0, p, n);  // the three-stream loop
  uint64_t s = 0xffffffffu;
  for (; n >= 8; n -= 8, p += 8) s = _mm_crc32_u64(s, DecodeFixed64(p));
  return ~CrcTail(static_cast<uint32_t>(s), p, n);
}

// Three small records at a time, their CRC chains interleaved: one chain is
// bound by the instruction's latency (3 cycles), three by its throughput.
__attribute__((target("sse4.2"))) ScanResult ScanHardware(const char* data, size_t n, size_t stop,
                                                          bool verify) {
  ScanResult r;
  size_t pos = 0;
  while (verify) {
    const char* p[3];
    uint64_t len[3];
    size_t next = pos;
    int k = 0;
    for (; k < 3; ++k) {
      if (next >= stop || n - next < kRecordFramingBytes) break;
      p[k] = data + next;
      len[k] = DecodeFixed64(p[k]);
      if (len[k] > n - next - kRecordFramingBytes || len[k] >= 512) break;
      next += kRecordFramingBytes + len[k];
    }
    if (k < 3) break;
    bool ok = true;
    for (int j = 0; j < 3; ++j) {
      ok &= crc32c::Unmask(DecodeFixed32(p[j] + 8)) ==
            ~static_cast<uint32_t>(_mm_crc32_u64(0xffffffffu, DecodeFixed64(p[j])));
    }
    uint64_t s0 = 0xffffffffu, s1 = 0xffffffffu, s2 = 0xffffffffu;
    const char* q0 = p[0] + kRecordHeaderSize;
    const char* q1 = p[1] + kRecordHeaderSize;
    const char* q2 = p[2] + kRecordHeaderSize;
    const uint64_t common = std::min({len[0], len[1], len[2]}) & ~uint64_t{7};
    for (uint64_t i = 0; i < common; i += 8) {
      s0 = _mm_crc32_u64(s0, DecodeFixed64(q0 + i));
      s1 = _mm_crc32_u64(s1, DecodeFixed64(q1 + i));
      s2 = _mm_crc32_u64(s2, DecodeFixed64(q2 + i));
    }
    const uint64_t state[3] = {s0, s1, s2};
    for (int j = 0; j < 3; ++j) {
      const char* q = p[j] + kRecordHeaderSize;
      uint64_t st = state[j];
      uint64_t i = common;
      for (; i + 8 <= len[j]; i += 8) st = _mm_crc32_u64(st, DecodeFixed64(q + i));
      const uint32_t crc = ~CrcTail(static_cast<uint32_t>(st), q + i, len[j] - i);
      ok &= crc32c::Unmask(DecodeFixed32(q + len[j])) == crc;
    }
    if (!ok) break;  // the one-at-a-time loop below finds which one
    r.last_offset = static_cast<size_t>(p[2] - data);
    r.last_size = len[2];
    r.records += 3;
    r.payload_bytes += len[0] + len[1] + len[2];
    pos = next;
  }
  ScanResult rest = Scan(data + pos, n - pos, stop > pos ? stop - pos : 0, verify, InlineCrc);
  if (rest.records > 0) {
    r.last_offset = pos + rest.last_offset;
    r.last_size = rest.last_size;
  }
  r.records += rest.records;
  r.payload_bytes += rest.payload_bytes;
  r.consumed = pos + rest.consumed;
  return r;
}
#endif

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) size_t FindHeaderHardware(const char* data, size_t n) {
  for (size_t i = 0; i + kRecordHeaderSize <= n; ++i) {
    const uint32_t crc =
        ~static_cast<uint32_t>(_mm_crc32_u64(0xffffffffu, DecodeFixed64(data + i)));
    if (crc32c::Unmask(DecodeFixed32(data + i + 8)) == crc) return i;
  }
  return n;
}
#endif

ScanResult ScanPortable(const char* data, size_t n, size_t stop, bool verify) {
  return Scan(data, n, stop, verify,
              [](const char* p, size_t len) { return crc32c::Value(p, len); });
}

}  // namespace

size_t FindValidHeader(const char* data, size_t n) {
#if defined(__x86_64__)
  if (crc32c::HaveHardwareCrc()) return FindHeaderHardware(data, n);
#endif
  for (size_t i = 0; i + kRecordHeaderSize <= n; ++i) {
    if (HeaderIsValid(std::string_view(data + i, kRecordHeaderSize))) return i;
  }
  return n;
}

ScanResult ScanRecords(const char* data, size_t n, size_t stop, bool verify) {
#if defined(__x86_64__)
  if (crc32c::HaveHardwareCrc()) return ScanHardware(data, n, stop, verify);
#endif
  return ScanPortable(data, n, stop, verify);
}

}  // namespace tfdist::io
