// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// CRC-32C: slicing-by-8 tables, SSE4.2 with three interleaved streams, and
// ISA-L's crc32_iscsi for longer buffers.

#include "tfdist/io/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tfdist::io::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // reflected Castagnoli polynomial

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? kPoly : 0);
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Raw register update (no pre/post inversion).
uint32_t UpdatePortable(uint32_t state, const char* p, size_t n) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  while (n >= 8) {
    const uint64_t v = Load64(reinterpret_cast<const char*>(b)) ^ state;
    state = kTables[7][v & 0xff] ^ kTables[6][(v >> 8) & 0xff] ^ kTables[5][(v >> 16) & 0xff] ^
            kTables[4][(v >> 24) & 0xff] ^ kTables[3][(v >> 32) & 0xff] ^
            kTables[2][(v >> 40) & 0xff] ^ kTables[1][(v >> 48) & 0xff] ^ kTables[0][v >> 56];
    b += 8;
    n -= 8;
  }
  while (n-- > 0) state = (state >> 8) ^ kTables[0][(state ^ *b++) & 0xff];
  return state;
}

// Product of two polynomials mod P in the reflected representation (bit 31
// is the coefficient of x^0).
constexpr uint32_t MultiplyModP(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (int i = 0; i < 32; ++i) {
    if (a & 0x80000000u) product ^= b;
    a <<= 1;
    b = (b >> 1) ^ ((b & 1) ? kPoly : 0);
  }
  return product;
}

// x^(8 * len) mod P: the effect of `len` zero bytes on a register.
constexpr uint32_t ZeroBytesOperator(size_t len) {
  uint32_t result = 0x80000000u;  // x^0
  uint32_t square = 0x00800000u;  // x^8
  for (; len != 0; len >>= 1) {
    if (len & 1) result = MultiplyModP(result, square);
    square = MultiplyModP(square, square);
  }
  return result;
}

// Multiplication of a register by x^(8 * len) as four byte-indexed tables,
// built at compile time. It lets three streams computed independently be
// joined: state(A B C) = Shift(Shift(state(A)) ^ state(B from 0)) ^ state(C from 0).
struct ShiftTables {
  std::array<std::array<uint32_t, 256>, 4> t{};

  constexpr explicit ShiftTables(size_t len) {
    const uint32_t op = ZeroBytesOperator(len);
    for (int byte = 0; byte < 4; ++byte) {
      for (uint32_t v = 0; v < 256; ++v) t[byte][v] = MultiplyModP(v << (8 * byte), op);
    }
  }

  uint32_t Apply(uint32_t s) const {
    return t[0][s & 0xff] ^ t[1][(s >> 8) & 0xff] ^ t[2][(s >> 16) & 0xff] ^ t[3][s >> 24];
  }
};

#if defined(__x86_64__)
// Stream lengths of the three-stream loop, longest first: a buffer takes the
// longest that fits, so a 10 KiB record needs four joins rather than thirteen.
constexpr size_t kStreamLengths[] = {8192, 4096, 2048, 1024, 512, 256};
constexpr size_t kShort = 256;

constexpr ShiftTables kShifts[] = {ShiftTables(8192), ShiftTables(4096), ShiftTables(2048),
                                   ShiftTables(1024), ShiftTables(512),  ShiftTables(256)};

// Runs three streams of `len` bytes each in one loop; the crc32 instruction has
// a latency of three cycles and a throughput of one, so three independent
// chains keep it busy.
__attribute__((target("sse4.2"))) inline uint32_t Update3(uint32_t state, const char*& p,
                                                          size_t len, const ShiftTables& shift) {
  uint64_t a = state, b = 0, c = 0;
  const char* pa = p;
  const char* pb = p + len;
  const char* pc = p + 2 * len;
  for (size_t i = 0; i < len; i += 8) {
    a = _mm_crc32_u64(a, Load64(pa + i));
    b = _mm_crc32_u64(b, Load64(pb + i));
    c = _mm_crc32_u64(c, Load64(pc + i));
  }
  p += 3 * len;
  const uint32_t ab = shift.Apply(static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b);
  return shift.Apply(ab) ^ static_cast<uint32_t>(c);
}

__attribute__((target("sse4.2"))) uint32_t UpdateHardware(uint32_t state, const char* p, size_t n) {
  if (n >= 3 * kShort) {
    // Align the main loops' loads to 8 bytes.
    while ((reinterpret_cast<uintptr_t>(p) & 7) != 0) {
      state = _mm_crc32_u8(state, static_cast<unsigned char>(*p++));
      --n;
    }
    for (size_t i = 0; i < std::size(kStreamLengths); ++i) {
      const size_t len = kStreamLengths[i];
      while (n >= 3 * len) {
        state = Update3(state, p, len, kShifts[i]);
        n -= 3 * len;
      }
    }
  }
  uint64_t s = state;
  while (n >= 8) {
    s = _mm_crc32_u64(s, Load64(p));
    p += 8;
    n -= 8;
  }
  state = static_cast<uint32_t>(s);
  while (n-- > 0) state = _mm_crc32_u8(state, static_cast<unsigned char>(*p++));
  return state;
}

bool DetectHardware() { return __builtin_cpu_supports("sse4.2"); }
#else
uint32_t UpdateHardware(uint32_t state, const char* p, size_t n) {
  return UpdatePortable(state, p, n);
}
bool DetectHardware() { return false; }
#endif

using UpdateFn = uint32_t (*)(uint32_t, const char*, size_t);

UpdateFn ChooseUpdate() { return DetectHardware() ? UpdateHardware : UpdatePortable; }

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n) {
  return ~UpdatePortable(~crc, data, n);
}

uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n) {
  return ~UpdateHardware(~crc, data, n);
}

bool HaveHardwareCrc() {
  static const bool have = DetectHardware();
  return have;
}

// ISA-L's crc32_iscsi from 256 bytes on, tfdist's own below: measured with
// tools/bench-crc (AMD EPYC, one thread, GB/s tfdist / ISA-L): 100 B
// 14.2 / 9.3, 256 B 16.2 / 24.4, 512 B 12.0 / 27.6, 4 KiB 6.7 / 28.4,
// 1 MiB 15.3 / 28.3. The library's per-call set-up costs more than a
// short record's whole CRC; past it, its folding runs twice as fast. (The
// record scans interleave three short records' CRCs themselves.)
constexpr size_t kLibraryFrom = 256;

uint32_t Extend(uint32_t crc, const char* data, size_t n) {
  if (n >= kLibraryFrom) {
    uint32_t state = ~crc;
    auto* p = reinterpret_cast<unsigned char*>(const_cast<char*>(data));
    while (n > 0) {  // its length is an int
      const size_t piece = std::min<size_t>(n, size_t{1} << 30);
      state = crc32_iscsi(p, static_cast<int>(piece), state);
      p += piece;
      n -= piece;
    }
    return ~state;
  }
  // A function-local static: safe to call from other static initializers.
  static const UpdateFn update = ChooseUpdate();
  return ~update(~crc, data, n);
}

}  // namespace tfdist::io::crc32c
