// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// CPython's seeding of MT19937 from an integer, and its draws.

#include "tfdist/base/philox.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <vector>

namespace tfdist {

PyRandom::PyRandom(int64_t seed) {
  // |seed| as 32-bit words, least significant first; 0 is one word.
  uint64_t magnitude =
      seed < 0 ? uint64_t{0} - static_cast<uint64_t>(seed) : static_cast<uint64_t>(seed);
  std::vector<uint32_t> key;
  do {
    key.push_back(static_cast<uint32_t>(magnitude));
    magnitude >>= 32;
  } while (magnitude != 0);
  // init_genrand(19650218), then init_by_array(key): the reference MT19937
  // seeding, which CPython uses.
  mt_[0] = 19650218u;
  for (uint32_t i = 1; i < mt_.size(); ++i) {
    mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + i;
  }
  const size_t n = mt_.size();
  size_t i = 1, j = 0;
  for (size_t k = std::max(n, key.size()); k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525u)) + key[j] +
             static_cast<uint32_t>(j);
    if (++i >= n) {
      mt_[0] = mt_[n - 1];
      i = 1;
    }
    if (++j >= key.size()) j = 0;
  }
  for (size_t k = n - 1; k > 0; --k) {
    mt_[i] =
        (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
    if (++i >= n) {
      mt_[0] = mt_[n - 1];
      i = 1;
    }
  }
  mt_[0] = 0x80000000u;
  index_ = n;
}

uint32_t PyRandom::Next32() {
  constexpr size_t kN = 624, kM = 397;
  if (index_ >= kN) {
    for (size_t k = 0; k < kN; ++k) {
      const uint32_t y = (mt_[k] & 0x80000000u) | (mt_[(k + 1) % kN] & 0x7fffffffu);
      mt_[k] = mt_[(k + kM) % kN] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    index_ = 0;
  }
  uint32_t y = mt_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t PyRandom::Below(uint64_t n) {
  assert(n > 0 && n <= (uint64_t{1} << 31));
  const int k = std::bit_width(n);  // CPython: n.bit_length(), not (n - 1)'s
  for (;;) {
    const uint64_t r = k >= 32 ? Next32() : Next32() >> (32 - k);
    if (r < n) return r;
  }
}

}  // namespace tfdist
