// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Synthetic payloads: exact-size tf.train.Examples, text and random bytes.

#include "tfdist/proto/synthetic.h"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cctype>
#include <charconv>
#include <cstring>

#include "example.pb.h"

namespace tfdist::proto {
namespace {

void FillRandom(Rng& rng, std::string& out, size_t n) {
  out.resize(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t v = rng.Next();
    std::memcpy(out.data() + i, &v, 8);
  }
  if (i < n) {
    const uint64_t v = rng.Next();
    std::memcpy(out.data() + i, &v, n - i);
  }
}

std::string Expand(std::string_view tmpl, uint64_t file, uint64_t index, uint64_t global) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '{' && i + 2 < tmpl.size() && tmpl[i + 2] == '}') {
      const char c = tmpl[i + 1];
      if (c == 'g' || c == 'f' || c == 'i') {
        out += fmt::format("{}", c == 'g' ? global : c == 'f' ? file : index);
        i += 2;
        continue;
      }
    }
    out += tmpl[i];
  }
  return out;
}

}  // namespace

Result<uint64_t> ParseByteCount(std::string_view text) {
  uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data()) {
    return Status::InvalidArgument(fmt::format("'{}' is not a byte count", text));
  }
  std::string suffix(ptr, text.data() + text.size());
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  uint64_t scale = 1;
  if (suffix.empty() || suffix == "b") {
    scale = 1;
  } else if (suffix == "k" || suffix == "kib" || suffix == "kb") {
    scale = uint64_t{1} << 10;
  } else if (suffix == "m" || suffix == "mib" || suffix == "mb") {
    scale = uint64_t{1} << 20;
  } else if (suffix == "g" || suffix == "gib" || suffix == "gb") {
    scale = uint64_t{1} << 30;
  } else {
    return Status::InvalidArgument(
        fmt::format("'{}': unknown unit '{}' (use k, M or G, powers of 1024)", text, suffix));
  }
  if (value > (uint64_t{1} << 40) / scale) {
    return Status::InvalidArgument(fmt::format("'{}' is too large", text));
  }
  return value * scale;
}

Result<SizeDistribution> ParseSizeDistribution(std::string_view text) {
  const size_t dash = text.find('-');
  // Name all of "-5" or "5-", not its empty side.
  if (text.empty() || dash == 0 || dash + 1 == text.size()) {
    return Status::InvalidArgument(
        fmt::format("'{}' is not a byte count (100, 10k, 1M) or a range (100-1000)", text));
  }
  SizeDistribution d;
  if (dash == std::string_view::npos) {
    TFDIST_ASSIGN_OR_RETURN(d.min, ParseByteCount(text));
    d.max = d.min;
  } else {
    Result<uint64_t> min = ParseByteCount(text.substr(0, dash));
    Result<uint64_t> max = ParseByteCount(text.substr(dash + 1));
    if (!min.ok() || !max.ok()) {
      return (min.ok() ? max : min).status().Annotate(fmt::format("'{}'", text));
    }
    d.min = *min;
    d.max = *max;
    if (d.min > d.max) {
      return Status::InvalidArgument(fmt::format("'{}': the minimum exceeds the maximum", text));
    }
  }
  return d;
}

Result<PayloadType> ParsePayloadType(std::string_view text) {
  if (text == "example") return PayloadType::kExample;
  if (text == "text") return PayloadType::kText;
  if (text == "random") return PayloadType::kRandom;
  return Status::InvalidArgument(
      fmt::format("unknown payload kind '{}'; expected example, text or random", text));
}

PayloadGenerator::PayloadGenerator(const PayloadOptions& options)
    : options_(options), rng_(options.seed) {}

Status PayloadGenerator::Next(uint64_t file, uint64_t index, uint64_t global, std::string& out) {
  if (options_.type == PayloadType::kText) {
    out = Expand(options_.text_template, file, index, global);
    return Status::OK();
  }
  const uint64_t target = rng_.Uniform(options_.size.min, options_.size.max);
  if (target > kMaxPayloadBytes) {
    out.clear();
    return Status::InvalidArgument(
        fmt::format("a payload of {} bytes is over the limit of {} (kMaxPayloadBytes)", target,
                    kMaxPayloadBytes));
  }
  if (options_.type == PayloadType::kRandom) {
    FillRandom(rng_, out, target);
    return Status::OK();
  }
  tensorflow::Example example;
  auto& features = *example.mutable_features()->mutable_feature();
  features["id"].mutable_int64_list()->add_value(static_cast<int64_t>(global));
  features["label"].mutable_int64_list()->add_value(static_cast<int64_t>(rng_.Uniform(0, 9)));
  std::string* data = features["data"].mutable_bytes_list()->add_value();
  // Grow the data until the whole Example has the drawn size; varint lengths
  // make the size step at a few points, so a few rounds settle it.
  size_t n = 0;
  for (int round = 0; round < 4; ++round) {
    data->resize(n);
    const size_t size = example.ByteSizeLong();
    if (size == target) break;
    if (size > target && n == 0) break;
    n = size > target ? n - std::min(n, size - target) : n + (target - size);
  }
  FillRandom(rng_, *data, n);
  // Deterministic serialization sorts map keys: the same seed gives the same
  // bytes on every run (plain map order depends on hashing).
  out.clear();
  bool serialized = false;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    serialized = example.SerializeToCodedStream(&coded) && !coded.HadError();
  }
  if (!serialized) {
    out.clear();
    return Status::Internal(
        fmt::format("cannot serialize the Example of record {} ({} bytes)", global, target));
  }
  return Status::OK();
}

}  // namespace tfdist::proto
