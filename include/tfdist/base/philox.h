// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Philox4x32-10 and CPython's Mersenne Twister: the two generators whose
// streams decide TensorFlow's seeded shuffle orders (doc/semantics.md,
// "Seeded shuffles").

#ifndef TFDIST_BASE_PHILOX_H_
#define TFDIST_BASE_PHILOX_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace tfdist {

// The counter-based generator Philox4x32 with 10 rounds (Salmon et al.,
// SC'11), keyed and counted as TensorFlow's PhiloxRandom(seed, seed2) is:
// key = the two 32-bit halves of `seed`, counter = (0, 0, halves of
// `seed2`). Next() gives a block's four outputs in order, then the 128-bit
// counter steps by one (TensorFlow's SingleSampleAdapter).
class Philox {
 public:
  Philox(uint64_t seed, uint64_t seed2)
      : key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)},
        counter_{0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)} {}

  uint32_t Next() {
    if (used_ == block_.size()) {
      block_ = Block(counter_, key_);
      used_ = 0;
      // The 128-bit counter, least significant word first.
      for (uint32_t& word : counter_) {
        if (++word != 0) break;
      }
    }
    return block_[used_++];
  }

  // The ten rounds over one counter value.
  static std::array<uint32_t, 4> Block(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
    for (int round = 0; round < 10; ++round) {
      const uint64_t p0 = uint64_t{0xD2511F53} * c[0];
      const uint64_t p1 = uint64_t{0xCD9E8D57} * c[2];
      c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
      k[0] += 0x9E3779B9;
      k[1] += 0xBB67AE85;
    }
    return c;
  }

 private:
  std::array<uint32_t, 2> key_;
  std::array<uint32_t, 4> counter_;
  std::array<uint32_t, 4> block_{};
  size_t used_ = 4;
};

// CPython's random.Random(seed) for an integer seed (MT19937 seeded by
// init_by_array over the 32-bit words of |seed|), for the draws TensorFlow
// makes from it: tf.random.set_seed(G) makes random.Random(G), and each
// random op made without a seed takes randint(0, 2**31 - 1) as its seed.
class PyRandom {
 public:
  explicit PyRandom(int64_t seed);

  // getrandbits(32).
  uint32_t Next32();
  // randint(0, n - 1) = randrange(n): rejection over getrandbits(k), k the
  // bit length of n. REQUIRES: 0 < n <= 2^31.
  uint64_t Below(uint64_t n);

 private:
  std::array<uint32_t, 624> mt_;
  size_t index_ = 624;
};

}  // namespace tfdist

#endif  // TFDIST_BASE_PHILOX_H_
