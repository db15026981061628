// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Deterministic synthetic payloads for `tfdist gen`, tests and benchmarks.

#ifndef TFDIST_SYNTHETIC_H_
#define TFDIST_SYNTHETIC_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "tfdist/result.h"

namespace tfdist {

// splitmix64: a small generator whose stream is the same on every platform
// and standard library (std:: distributions are not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi]. REQUIRES: lo <= hi.
  uint64_t Uniform(uint64_t lo, uint64_t hi) {
    const uint64_t span = hi - lo + 1;
    return span == 0 ? Next() : lo + Next() % span;  // bias < span / 2^64
  }

 private:
  uint64_t state_;
};

// Parses a byte count: "100", "10k"/"10KiB" (x1024), "1M"/"1MiB", "2G".
// Error: InvalidArgument naming the text.
Result<uint64_t> ParseByteCount(std::string_view text);

// The largest payload a PayloadGenerator makes: records are built in memory,
// and a serialized protobuf message must stay under 2 GiB.
inline constexpr uint64_t kMaxPayloadBytes = uint64_t{1} << 30;

// A payload size: fixed ("100") or uniform over a range ("100-1000").
struct SizeDistribution {
  uint64_t min = 100;
  uint64_t max = 100;
};
Result<SizeDistribution> ParseSizeDistribution(std::string_view text);

enum class PayloadType {
  kExample,  // tf.train.Example {id: int64, label: int64, data: bytes}
  kText,     // a text template with {g} {f} {i} placeholders
  kRandom,   // random bytes
};
Result<PayloadType> ParsePayloadType(std::string_view text);

struct PayloadOptions {
  PayloadType type = PayloadType::kExample;
  SizeDistribution size;
  // For kText: {g} the global record index, {f} the file index, {i} the index
  // within the file. Default: "{g}", so records read "0", "1", "2", ...
  std::string text_template = "{g}";
  uint64_t seed = 0;
};

// Produces payloads in a deterministic order for a given seed.
class PayloadGenerator {
 public:
  explicit PayloadGenerator(const PayloadOptions& options);

  // Fills `out` with the payload of record `index` of file `file`, the
  // `global`-th record overall. Example payloads serialize to exactly the
  // drawn size when that is at least their minimum (about 12 bytes).
  // Error: InvalidArgument when the drawn size is over kMaxPayloadBytes;
  // Internal if the Example cannot be serialized. `out` is then empty.
  Status Next(uint64_t file, uint64_t index, uint64_t global, std::string& out);

 private:
  PayloadOptions options_;
  Rng rng_;
};

}  // namespace tfdist

#endif  // TFDIST_SYNTHETIC_H_
