// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0

#include "tfdist/base/string_list.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tfdist {
namespace {

TEST_CASE("a string list holds its strings in order, empty ones too, and shares them when copied") {
  const std::vector<std::string> strings = {"a", "", "data/part-00001", std::string(1000, 'x'),
                                            std::string("nul\0byte", 8)};
  const StringList list(strings);
  REQUIRE(list.size() == strings.size());
  for (size_t i = 0; i < strings.size(); ++i) CHECK(list[i] == strings[i]);
  CHECK(list == strings);
  CHECK(list.ToVector() == strings);
  CHECK(std::vector<std::string_view>(list.begin(), list.end()).size() == strings.size());
  CHECK(list.front() == "a");
  CHECK(list.back() == std::string("nul\0byte", 8));
  const StringList copy = list;
  CHECK(&copy[2][0] == &list[2][0]);  // one block
  CHECK(StringList().empty());
  CHECK(StringList({"b", "a"}) == StringList({"b", "a"}));
  CHECK_FALSE(StringList({"b", "a"}) == StringList({"b"}));
  CHECK(std::is_sorted(StringList({"a", "b", "c"}).begin(), StringList({"a", "b", "c"}).end()));
  StringList::Builder b;
  for (int i = 0; i < 1000; ++i) b.Add(std::to_string(i));
  const StringList built = std::move(b).Finish();
  CHECK(built.size() == 1000);
  CHECK(built[999] == "999");
  CHECK(built.end() - built.begin() == 1000);
}

}  // namespace
}  // namespace tfdist
