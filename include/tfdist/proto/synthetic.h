// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Deterministic synthetic payloads for `tfdist gen`, tests and benchmarks.

#ifndef TFDIST_PROTO_SYNTHETIC_H_
#define TFDIST_PROTO_SYNTHETIC_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "tfdist/base/random.h"
#include "tfdist/base/result.h"

namespace tfdist::proto {

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

}  // namespace tfdist::proto

#endif  // TFDIST_PROTO_SYNTHETIC_H_
