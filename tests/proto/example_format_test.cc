// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Payload classification and rendering; synthetic payloads.

#include "tfdist/proto/example_format.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "example.pb.h"
#include "tfdist/proto/synthetic.h"

namespace tfdist::proto {
namespace {

std::string SampleExample() {
  tensorflow::Example ex;
  auto& f = *ex.mutable_features()->mutable_feature();
  f["label"].mutable_bytes_list()->add_value(std::string("cat"));
  f["ids"].mutable_int64_list()->add_value(-3);
  f["ids"].mutable_int64_list()->add_value(7);
  for (int i = 0; i < 10; ++i) f["x"].mutable_float_list()->add_value(0.5f * i);
  f["empty"];  // a Feature with no kind set
  return ex.SerializeAsString();
}

TEST_CASE("Examples, SequenceExamples and other bytes are told apart") {
  CHECK(ClassifyPayload(SampleExample()) == PayloadKind::kExample);
  tensorflow::SequenceExample seq;
  (*seq.mutable_context()->mutable_feature())["n"].mutable_int64_list()->add_value(1);
  (*seq.mutable_feature_lists()->mutable_feature_list())["s"]
      .add_feature()
      ->mutable_bytes_list()
      ->add_value(std::string("a"));
  CHECK(ClassifyPayload(seq.SerializeAsString()) == PayloadKind::kSequenceExample);
  CHECK(ClassifyPayload("hello world") == PayloadKind::kRaw);
  CHECK(ClassifyPayload("") == PayloadKind::kRaw);
  CHECK(ClassifyPayload("12345") == PayloadKind::kRaw);
}

TEST_CASE("a payload too large for protobuf's int size is not decoded, only shown raw") {
  // protobuf aborts on a size of 2 GiB or more; cat must never get there.
  CHECK(DecodesPayload(0));
  CHECK(DecodesPayload(kMaxDecodedPayloadSize));
  CHECK_FALSE(DecodesPayload(kMaxDecodedPayloadSize + 1));
  CHECK_FALSE(DecodesPayload(size_t{1} << 31));
  CHECK(kMaxDecodedPayloadSize < size_t{1} << 31);
  CHECK(RawPayloadToJson("hi") == nlohmann::ordered_json{{"kind", "raw"}, {"text", "hi"}});
}

TEST_CASE("an Example renders as sorted feature lines, eliding long lists") {
  const std::string text = PayloadToText(SampleExample(), TextOptions{});
  CHECK(text ==
        "  empty: (no value)\n"
        "  ids: int64_list[2] = [-3, 7]\n"
        "  label: bytes_list[1] = [\"cat\"]\n"
        "  x: float_list[10] = [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, ... (10 values)]\n");
  TextOptions full;
  full.max_values = 0;
  CHECK(PayloadToText(SampleExample(), full).find("4.5]") != std::string::npos);
}

TEST_CASE("JSON keeps every value, bytes as text or base64, odd floats as strings") {
  tensorflow::Example ex;
  auto& f = *ex.mutable_features()->mutable_feature();
  f["b"].mutable_bytes_list()->add_value(std::string("\xff\x00", 2));
  f["b"].mutable_bytes_list()->add_value(std::string("ok"));
  f["f"].mutable_float_list()->add_value(std::numeric_limits<float>::infinity());
  const auto j = PayloadToJson(ex.SerializeAsString());
  CHECK(j.dump() == R"({"kind":"example","features":{"b":{"bytes_list":[{"base64":"/wA="},"ok"]},)"
                    R"("f":{"float_list":["Infinity"]}}})");
  CHECK(PayloadToJson("hi").dump() == R"({"kind":"raw","text":"hi"})");
  CHECK(PayloadToJson(std::string("\xff", 1)).dump() == R"({"kind":"raw","base64":"/w=="})");
}

TEST_CASE("synthetic Examples have the drawn size and are the same for the same seed") {
  PayloadOptions options;
  options.size = {200, 5000};
  options.seed = 3;
  PayloadGenerator a(options), b(options);
  std::string x, y;
  for (uint64_t i = 0; i < 50; ++i) {
    REQUIRE(a.Next(0, i, i, x).ok());
    REQUIRE(b.Next(0, i, i, y).ok());
    CHECK(x == y);
    CHECK(x.size() >= 200);
    CHECK(x.size() <= 5000);
    CHECK(ClassifyPayload(x) == PayloadKind::kExample);
  }
  options.size = {1000, 1000};
  PayloadGenerator fixed(options);
  for (uint64_t i = 0; i < 20; ++i) {
    REQUIRE(fixed.Next(0, i, i * 1000003, x).ok());
    CHECK(x.size() == 1000);
  }
}

TEST_CASE("a payload over kMaxPayloadBytes is an error, never an empty record") {
  for (PayloadType type : {PayloadType::kExample, PayloadType::kRandom}) {
    PayloadOptions options;
    options.type = type;
    options.size = {kMaxPayloadBytes + 1, uint64_t{3} << 30};
    PayloadGenerator gen(options);
    std::string out = "stale";
    const Status s = gen.Next(0, 0, 0, out);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find("over the limit") != std::string::npos);
    CHECK(out.empty());
  }
}

TEST_CASE("text payloads expand the template; sizes and kinds parse with units") {
  PayloadOptions options;
  options.type = PayloadType::kText;
  options.text_template = "f{f}-r{i}-g{g}-{x}";
  PayloadGenerator gen(options);
  std::string out;
  REQUIRE(gen.Next(2, 5, 17, out).ok());
  CHECK(out == "f2-r5-g17-{x}");
  CHECK(*ParseByteCount("10k") == 10240);
  CHECK(*ParseByteCount("1MiB") == 1048576);
  CHECK(ParseByteCount("1x").status().code() == StatusCode::kInvalidArgument);
  CHECK(ParseSizeDistribution("100-1k")->max == 1024);
  CHECK(ParseSizeDistribution("9-3").status().code() == StatusCode::kInvalidArgument);
  // A range with an empty side names what was given, not the empty side.
  for (std::string_view bad : {"-5", "5-", "-", ""}) {
    const Status s = ParseSizeDistribution(bad).status();
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message() ==
          fmt::format("'{}' is not a byte count (100, 10k, 1M) or a range (100-1000)", bad));
  }
  CHECK(
      ParseSizeDistribution("1k-2x").status().message().starts_with("'1k-2x': '2x': unknown unit"));
  CHECK(ParsePayloadType("nope").status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tfdist::proto
