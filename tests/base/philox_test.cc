// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Philox4x32-10 against the known-answer vectors of its authors' Random123
// release, and PyRandom against values CPython's random module gives.

#include "tfdist/base/philox.h"

#include <doctest/doctest.h>

#include <array>
#include <vector>

namespace tfdist {
namespace {

using Block = std::array<uint32_t, 4>;

TEST_CASE("Philox4x32-10 known answers") {
  CHECK(Philox::Block({0, 0, 0, 0}, {0, 0}) ==
        Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(Philox::Block({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(Philox::Block({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("Philox streams a block's four outputs, then the next counter's") {
  Philox p(0, 0);
  std::vector<uint32_t> got;
  for (int i = 0; i < 8; ++i) got.push_back(p.Next());
  const Block first = Philox::Block({0, 0, 0, 0}, {0, 0});
  const Block second = Philox::Block({1, 0, 0, 0}, {0, 0});
  CHECK(std::vector<uint32_t>(got.begin(), got.begin() + 4) ==
        std::vector<uint32_t>(first.begin(), first.end()));
  CHECK(std::vector<uint32_t>(got.begin() + 4, got.end()) ==
        std::vector<uint32_t>(second.begin(), second.end()));
}

TEST_CASE("Philox is keyed by seed and counted from seed2, both in 32-bit halves") {
  Philox p(0x0000000200000001ull, 0x0000000400000003ull);
  CHECK(p.Next() == Philox::Block({0, 0, 3, 4}, {1, 2})[0]);
}

TEST_CASE("the counter steps in its lowest word; seed2's words stay") {
  Philox p(7, 0xffffffffull);
  for (int i = 0; i < 4; ++i) p.Next();
  CHECK(p.Next() == Philox::Block({1, 0, 0xffffffff, 0}, {7, 0})[0]);
}

// randint(0, 2**31 - 1) after random.Random(seed), from CPython 3.6-3.13.
TEST_CASE("PyRandom draws what CPython's random.Random(seed).randint does") {
  const uint64_t n = uint64_t{1} << 31;
  struct Case {
    int64_t seed;
    std::array<uint64_t, 3> draws;
  };
  const Case cases[] = {
      {1, {577090037, 271041745, 0}},
      {0, {1654615998, 1806341205, 173879092}},
      {-5, {1097127993, 1539898300, 124576495}},                      // |seed|
      {(int64_t{1} << 40) + 7, {2044078442, 1077368710, 544390359}},  // two words
      {12345, {1789368711, 43676229, 1282648386}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.seed);
    PyRandom r(c.seed);
    for (uint64_t want : c.draws) {
      if (want == 0) break;
      CHECK(r.Below(n) == want);
    }
  }
}

}  // namespace
}  // namespace tfdist
