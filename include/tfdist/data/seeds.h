// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The seeds of TensorFlow's random ops: from the op seed and the global
// seed to the pair a shuffle's kernel is given (doc/semantics.md, "Seeded
// shuffles").

#ifndef TFDIST_DATA_SEEDS_H_
#define TFDIST_DATA_SEEDS_H_

#include <cstdint>
#include <optional>

#include "tfdist/base/philox.h"

namespace tfdist::data {

// TensorFlow's bounds on seeds: op and global seeds are taken modulo
// kMaxSeed (2^31 - 1), and an op seed without a global seed is paired with
// the default graph seed.
inline constexpr int64_t kMaxSeed = 2147483647;
inline constexpr int64_t kDefaultGraphSeed = 87654321;

// What to say of a pipeline with a shuffle that has no seed at all
// (HasUnseededShuffle), with Remedy::kSeedShuffles.
inline constexpr const char* kUnseededShuffleMessage =
    "a shuffle has no seed and the program sets no global seed: TensorFlow's order differs "
    "on every run; tfdist uses an order of its own";

// The two seeds a random op's kernel gets (seed, seed2).
struct SeedPair {
  int64_t seed = 0;
  int64_t seed2 = 0;
  bool operator==(const SeedPair&) const = default;
};

// The program's tf.random.set_seed(seed), and the random ops it made
// without a seed after that call and before the pipeline: each of those
// took one op seed from the counter set_seed started.
struct GlobalSeed {
  int64_t seed = 0;
  int64_t op_seed_offset = 0;
};

// The pair TensorFlow 2 (eager) gives an op with op seed `op_seed` (its
// own, or the counter's): (global mod kMaxSeed, op_seed mod kMaxSeed) under
// a global seed, else (kDefaultGraphSeed, op_seed mod kMaxSeed); (0, 0)
// becomes (0, kMaxSeed), as 0, 0 means "random" to the kernels.
SeedPair OpSeeds(std::optional<int64_t> global, int64_t op_seed);

// The op seeds TensorFlow draws for random ops made without one while a
// global seed is set: the counter of tf.random.set_seed(G) is CPython's
// random.Random(G), and each such op takes randint(0, kMaxSeed) in the
// order the program makes them. Skips `global.op_seed_offset` draws first.
class OpSeedCounter {
 public:
  explicit OpSeedCounter(const GlobalSeed& global);

  int64_t Next() { return static_cast<int64_t>(random_.Below(uint64_t{kMaxSeed} + 1)); }

 private:
  PyRandom random_;
};

}  // namespace tfdist::data

#endif  // TFDIST_DATA_SEEDS_H_
