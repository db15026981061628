// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The one pseudo-random generator of tfdist: shuffle, reshard and gen draw from it.

#ifndef TFDIST_BASE_RANDOM_H_
#define TFDIST_BASE_RANDOM_H_

#include <cstdint>

namespace tfdist {

// splitmix64: a small generator whose stream is the same on every platform
// and standard library (std:: distributions are not), so that a seed gives
// the same output files and orders everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  // Uniform in [lo, hi], by a modulo (bias < span / 2^64). REQUIRES: lo <= hi.
  uint64_t Uniform(uint64_t lo, uint64_t hi) {
    const uint64_t span = hi - lo + 1;
    return span == 0 ? Next() : lo + Next() % span;
  }

  // Exactly uniform in [0, n), by rejection. REQUIRES: n > 0.
  uint64_t Below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;
    for (;;) {
      const uint64_t r = Next();
      if (r >= threshold) return r % n;
    }
  }

 private:
  uint64_t state_;
};

}  // namespace tfdist

#endif  // TFDIST_BASE_RANDOM_H_
