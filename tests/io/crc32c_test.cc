// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// CRC-32C: known vectors, both implementations, every length and alignment.

#include "tfdist/io/crc32c.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tfdist/proto/synthetic.h"

namespace tfdist::io::crc32c {
namespace {

using Fn = uint32_t (*)(uint32_t, const char*, size_t);

std::vector<std::pair<const char*, Fn>> Implementations() {
  std::vector<std::pair<const char*, Fn>> impls = {{"portable", ExtendPortable},
                                                   {"dispatched", Extend}};
  if (HaveHardwareCrc()) impls.push_back({"hardware", ExtendHardware});
  return impls;
}

TEST_CASE("each CRC-32C implementation gives the published check values") {
  for (auto [name_binding, fn] : Implementations()) {
    const char* name = name_binding;  // (clang 14 captures no structured binding)
    CAPTURE(name);
    CHECK(fn(0, "123456789", 9) == 0xe3069283u);
    CHECK(fn(0, "", 0) == 0u);
    // RFC 3720 (iSCSI) B.4 vectors.
    const std::string zeros(32, '\0');
    CHECK(fn(0, zeros.data(), zeros.size()) == 0x8a9136aau);
    const std::string ones(32, '\xff');
    CHECK(fn(0, ones.data(), ones.size()) == 0x62a8ab43u);
    std::string inc(32, '\0');
    for (int i = 0; i < 32; ++i) inc[i] = static_cast<char>(i);
    CHECK(fn(0, inc.data(), inc.size()) == 0x46dd794eu);
  }
}

TEST_CASE("the masked CRC of an empty record's length matches TensorFlow's bytes") {
  // The empty record: 00 x8 | 29 03 98 07 | (no data) | d8 ea 82 a2.
  const char zeros[8] = {};
  CHECK(Mask(Value(zeros, 8)) == 0x07980329u);
  CHECK(Mask(Value("", 0)) == 0xa282ead8u);
  CHECK(Unmask(Mask(0x12345678u)) == 0x12345678u);
}

TEST_CASE("hardware and portable CRCs agree for every length, alignment and split") {
  Rng rng(42);
  std::string data(3 * 8192 * 2 + 3 * 256 * 3 + 77, '\0');
  for (char& c : data) c = static_cast<char>(rng.Next());
  for (size_t len : {0, 1, 7, 8, 9, 255, 256, 257, 767, 768, 769, 24575, 24576, 24577, 50000,
                     static_cast<int>(data.size()) - 8}) {
    for (size_t align = 0; align < 8; ++align) {
      CAPTURE(len);
      CAPTURE(align);
      const uint32_t want = ExtendPortable(0, data.data() + align, len);
      CHECK(Extend(0, data.data() + align, len) == want);
      if (HaveHardwareCrc()) CHECK(ExtendHardware(0, data.data() + align, len) == want);
      const size_t split = len / 3;
      CHECK(Extend(Extend(0, data.data() + align, split), data.data() + align + split,
                   len - split) == want);
    }
  }
}

}  // namespace
}  // namespace tfdist::io::crc32c
