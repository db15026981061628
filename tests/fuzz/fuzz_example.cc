// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Fuzz target: the dense Example parser and the payload formatter (cat's
// text and JSON) over any bytes. The first byte picks the declared
// features; the rest is one serialized record, parsed alone and as the
// second of a batch.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_target.h"
#include "tfdist/data/dataset.h"
#include "tfdist/data/features.h"
#include "tfdist/proto/example_format.h"
#include "tfdist/proto/example_parse.h"

namespace {

using tfdist::data::FeatureSpec;
using tfdist::data::FeatureType;

FeatureSpec Spec(const char* name, FeatureType type, std::vector<int64_t> shape, bool var_len,
                 bool with_default) {
  FeatureSpec s;
  s.name = name;
  s.type = type;
  s.var_len = var_len;
  if (!var_len) s.shape = std::move(shape);  // a VarLenFeature has none
  if (with_default && !var_len) {
    int64_t n = 1;
    for (int64_t d : s.shape) n *= d;
    s.default_value = tfdist::data::FeatureValues{};
    for (int64_t i = 0; i < n; ++i) {
      if (type == FeatureType::kInt64) s.default_value->int64s.push_back(i);
      if (type == FeatureType::kFloat) s.default_value->floats.push_back(0.5f);
      if (type == FeatureType::kBytes) s.default_value->bytes.push_back("d");
    }
  }
  return s;
}

// Feature sets, picked by the input's first byte: names short and long,
// every dtype, fixed and variable length, with and without defaults.
std::vector<FeatureSpec> Features(uint8_t pick) {
  const bool defaults = pick & 1;
  const bool var_len = pick & 2;
  switch ((pick >> 2) % 3) {
    case 0:
      return {Spec("id", FeatureType::kInt64, {}, false, defaults),
              Spec("label", FeatureType::kInt64, {}, var_len, defaults),
              Spec("data", FeatureType::kBytes, {}, var_len, defaults)};
    case 1:
      return {Spec("a", FeatureType::kFloat, {2, 2}, var_len, defaults),
              Spec("b", FeatureType::kInt64, {3}, false, defaults),
              Spec("image/encoded", FeatureType::kBytes, {2}, var_len, defaults)};
    default:
      return {Spec("", FeatureType::kBytes, {}, var_len, defaults),
              Spec("x", FeatureType::kFloat, {}, false, defaults)};
  }
}

tfdist::data::Element Record(std::string payload, uint64_t index) {
  static const std::string* file = tfdist::data::InternPath("fuzz");
  tfdist::data::Element e;
  e.kind = tfdist::data::Element::Kind::kRecord;
  e.bytes = std::move(payload);
  e.origin = {file, index, 0};
  return e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string payload(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto parser = tfdist::proto::DenseParser::Create(Features(data[0]));
  if (!parser.ok()) __builtin_trap();  // the sets above are valid
  const std::vector<tfdist::data::Element> records = {Record("", 0), Record(payload, 1)};
  for (size_t from : {size_t{0}, size_t{1}}) {
    std::span<const tfdist::data::Element> batch(records.data() + from, records.size() - from);
    const uint64_t bound = parser->MaxBatchBytes(batch.size(), payload.size());
    auto out = std::make_unique<char[]>(bound);
    auto layout = parser->ParseBatch(batch, std::span<char>(out.get(), bound));
    if (layout.ok() && layout->total_bytes > bound) __builtin_trap();
  }
  tfdist::proto::TextOptions options;
  options.max_values = data[0] & 1 ? 0 : 8;
  (void)tfdist::proto::PayloadToText(payload, options);
  (void)tfdist::proto::PayloadToJson(payload).dump(
      -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return 0;
}
