// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// JSON as the commands print it and the trace reads it: names that are not
// UTF-8 survive both ways as Python's surrogate escapes.

#include "tfdist/base/json.h"

#include <doctest/doctest.h>

#include <string>

namespace tfdist {
namespace {

TEST_CASE("JSON of valid UTF-8 is nlohmann's own") {
  const nlohmann::ordered_json j = {{"path", "d/caf\xc3\xa9\n"}, {"n", 1.5}, {"a", {1, nullptr}}};
  CHECK(DumpJson(j) == j.dump());
  CHECK(DumpJson(j, true) == j.dump(-1, ' ', true));
  CHECK(DumpJson(nlohmann::ordered_json("x")) == "\"x\"");
}

TEST_CASE("a name that is not UTF-8 is written as surrogate escapes, not replaced") {
  nlohmann::ordered_json j;
  j["files"] = {{{"path", "d/\xff\xfe.tfrecord"}, {"records", 6}}};
  j["k\x80"] = "caf\xc3\xa9";
  CHECK(DumpJson(j) ==
        R"({"files":[{"path":"d/\udcff\udcfe.tfrecord","records":6}],"k\udc80":"café"})");
  CHECK(DumpJson(j, true) ==
        R"({"files":[{"path":"d/\udcff\udcfe.tfrecord","records":6}],"k\udc80":"caf\u00e9"})");
  CHECK(DumpJson(nlohmann::ordered_json("\xff")) == R"("\udcff")");
}

TEST_CASE("what Python writes for such a name is read back as its bytes") {
  // json.dumps({"chain": os.fsdecode(b"d/\xff\xfe"), ...})
  const nlohmann::json j = ParseJson(
      std::string(R"({"chain": "d/\udcff\udcfe", "k\udc80": ["\ud83d\ude00", "\\udcff", )") +
      R"("\ufdd0", ")" + "\xef\xb7\x90" + R"("]})");
  REQUIRE_FALSE(j.is_discarded());
  CHECK(j["chain"] == "d/\xff\xfe");
  REQUIRE(j.contains("k\x80"));
  const nlohmann::json& list = j["k\x80"];
  CHECK(list[0] == "\xf0\x9f\x98\x80");
  CHECK(list[1] == "\\udcff");
  CHECK(list[2] == "\xef\xb7\x90");
  CHECK(list[3] == "\xef\xb7\x90");
  // Round trip through the writer.
  CHECK(ParseJson(DumpJson(j)) == j);
  CHECK(ParseJson(DumpJson(j, true)) == j);
}

TEST_CASE("what is not JSON stays an error") {
  CHECK(ParseJson(R"({"a": "\ud800"})").is_discarded());  // a lone high surrogate
  CHECK(ParseJson(R"({"a": "\udc41"})").is_discarded());  // not a byte's escape
  CHECK(ParseJson(R"({"a": \udcff})").is_discarded());    // outside a string
  CHECK(ParseJson("{\"a\": \"\xff\"}").is_discarded());   // a raw byte
  CHECK(ParseJson(std::string(100000, '[') + "\"\\udcff\"").is_discarded());
}

TEST_CASE("nesting deeper than kMaxJsonDepth is refused before it is parsed") {
  const auto nested = [](size_t n) {
    return R"j({"chain": "range(9)", "a": )j" + std::string(n, '[') + std::string(n, ']') + "}";
  };
  CHECK_FALSE(JsonNestsDeeperThan(nested(kMaxJsonDepth - 1), kMaxJsonDepth));
  CHECK_FALSE(ParseJson(nested(kMaxJsonDepth - 1)).is_discarded());
  CHECK(JsonNestsDeeperThan(nested(kMaxJsonDepth), kMaxJsonDepth));
  CHECK(ParseJson(nested(kMaxJsonDepth)).is_discarded());
  // Brackets in strings, escaped quotes and backslashes included, are text.
  const std::string text = R"({"a": "[[[\"[[[", "b": ["]]]{{{"]})";
  CHECK_FALSE(JsonNestsDeeperThan(text, 2));
  CHECK(JsonNestsDeeperThan(text, 1));
  CHECK_FALSE(JsonNestsDeeperThan(R"(["\\", [1]])", 2));
  CHECK(JsonNestsDeeperThan(R"(["\\", [[1]]])", 2));
}

}  // namespace
}  // namespace tfdist
