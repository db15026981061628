// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Example / SequenceExample decoding with protobuf, rendered as text or JSON.

#include "tfdist/proto/example_format.h"

#include <fmt/format.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "example.pb.h"
#include "tfdist/base/text.h"

namespace tfdist::proto {
namespace {

using google::protobuf::Message;
using google::protobuf::Reflection;

// Unknown fields mean the bytes are some other message that happened to parse.
bool HasUnknownFields(const Message& m) {
  const Reflection* r = m.GetReflection();
  if (!r->GetUnknownFields(m).empty()) return true;
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const auto* f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated()) {
      for (int i = 0; i < r->FieldSize(m, f); ++i) {
        if (HasUnknownFields(r->GetRepeatedMessage(m, f, i))) return true;
      }
    } else if (HasUnknownFields(r->GetMessage(m, f))) {
      return true;
    }
  }
  return false;
}

// Feature names are shown bare unless they hold spaces, quotes or controls.
std::string QuoteIfNeeded(std::string_view name) {
  const bool plain = !name.empty() && IsPrintableUtf8(name) &&
                     name.find_first_of(" \t\":") == std::string_view::npos;
  return plain ? std::string(name) : QuoteBytes(name);
}

struct Decoded {
  PayloadKind kind = PayloadKind::kRaw;
  tensorflow::Example example;
  tensorflow::SequenceExample sequence;
};

void Decode(std::string_view payload, Decoded& d) {
  if (payload.empty() || !DecodesPayload(payload.size())) return;
  // A payload that does not parse is shown raw; protobuf's own log line for
  // it (a key that is not UTF-8, say) would only add noise on stderr.
  google::protobuf::LogSilencer quiet;
  if (d.example.ParseFromArray(payload.data(), static_cast<int>(payload.size())) &&
      !HasUnknownFields(d.example)) {
    d.kind = PayloadKind::kExample;
    return;
  }
  if (d.sequence.ParseFromArray(payload.data(), static_cast<int>(payload.size())) &&
      !HasUnknownFields(d.sequence)) {
    d.kind = PayloadKind::kSequenceExample;
  }
}

template <typename Map>
std::vector<std::string> SortedKeys(const Map& map) {
  std::vector<std::string> keys;
  keys.reserve(map.size());
  for (const auto& [k, v] : map) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string FloatText(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

std::string BytesText(const std::string& v, const TextOptions& o) {
  if (IsPrintableUtf8(v) && (o.max_bytes == 0 || v.size() <= o.max_bytes)) return QuoteBytes(v);
  const size_t shown = o.max_bytes == 0 ? v.size() : std::min(v.size(), o.max_bytes / 4);
  if (IsPrintableUtf8(v)) {
    return fmt::format("{}... ({} bytes)", QuoteBytes(v.substr(0, o.max_bytes)), v.size());
  }
  return fmt::format("<{} bytes: {}{}>", v.size(), HexBytes(std::string_view(v).substr(0, shown)),
                     shown < v.size() ? " ..." : "");
}

template <typename List, typename Fn>
std::string ListText(std::string_view kind, const List& values, const TextOptions& o, Fn fn) {
  const size_t n = static_cast<size_t>(values.size());
  const size_t shown = o.max_values == 0 ? n : std::min(n, o.max_values);
  std::string out = fmt::format("{}[{}] = [", kind, n);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    out += fn(values[static_cast<int>(i)]);
  }
  if (shown < n) out += fmt::format(", ... ({} values)", n);
  out += "]";
  return out;
}

std::string FeatureText(const tensorflow::Feature& f, const TextOptions& o) {
  switch (f.kind_case()) {
    case tensorflow::Feature::kBytesList:
      return ListText("bytes_list", f.bytes_list().value(), o,
                      [&o](const std::string& v) { return BytesText(v, o); });
    case tensorflow::Feature::kFloatList:
      return ListText("float_list", f.float_list().value(), o, FloatText);
    case tensorflow::Feature::kInt64List:
      return ListText("int64_list", f.int64_list().value(), o,
                      [](int64_t v) { return fmt::format("{}", v); });
    case tensorflow::Feature::KIND_NOT_SET:
      break;
  }
  return "(no value)";
}

void FeaturesText(const tensorflow::Features& features, const TextOptions& o,
                  std::string_view indent, std::string& out) {
  for (const std::string& name : SortedKeys(features.feature())) {
    out += fmt::format("{}{}: {}\n", indent, QuoteIfNeeded(name),
                       FeatureText(features.feature().at(name), o));
  }
}

nlohmann::ordered_json FloatJson(float v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

nlohmann::ordered_json BytesJson(const std::string& v) {
  if (IsValidUtf8(v)) return v;
  return nlohmann::ordered_json{{"base64", Base64(v)}};
}

nlohmann::ordered_json FeatureJson(const tensorflow::Feature& f) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  switch (f.kind_case()) {
    case tensorflow::Feature::kBytesList:
      for (const std::string& v : f.bytes_list().value()) list.push_back(BytesJson(v));
      return {{"bytes_list", list}};
    case tensorflow::Feature::kFloatList:
      for (float v : f.float_list().value()) list.push_back(FloatJson(v));
      return {{"float_list", list}};
    case tensorflow::Feature::kInt64List:
      for (int64_t v : f.int64_list().value()) list.push_back(v);
      return {{"int64_list", list}};
    case tensorflow::Feature::KIND_NOT_SET:
      break;
  }
  return nlohmann::ordered_json::object();
}

nlohmann::ordered_json FeaturesJson(const tensorflow::Features& features) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const std::string& name : SortedKeys(features.feature())) {
    out[name] = FeatureJson(features.feature().at(name));
  }
  return out;
}

}  // namespace

std::string_view PayloadKindName(PayloadKind kind) {
  switch (kind) {
    case PayloadKind::kExample:
      return "tf.train.Example";
    case PayloadKind::kSequenceExample:
      return "tf.train.SequenceExample";
    case PayloadKind::kRaw:
      return "raw";
  }
  return "?";
}

std::string_view PayloadKindKey(PayloadKind kind) {
  switch (kind) {
    case PayloadKind::kExample:
      return "example";
    case PayloadKind::kSequenceExample:
      return "sequence_example";
    case PayloadKind::kRaw:
      return "raw";
  }
  return "?";
}

bool DecodesPayload(size_t size) { return size <= kMaxDecodedPayloadSize; }

PayloadKind ClassifyPayload(std::string_view payload) {
  Decoded d;
  Decode(payload, d);
  return d.kind;
}

std::string PayloadToText(std::string_view payload, const TextOptions& options,
                          std::string_view indent, PayloadKind* kind) {
  Decoded d;
  Decode(payload, d);
  if (kind != nullptr) *kind = d.kind;
  std::string out;
  switch (d.kind) {
    case PayloadKind::kExample:
      if (d.example.features().feature().empty()) out += fmt::format("{}(no features)\n", indent);
      FeaturesText(d.example.features(), options, indent, out);
      break;
    case PayloadKind::kSequenceExample: {
      out += fmt::format("{}context:\n", indent);
      const std::string inner = fmt::format("{}  ", indent);
      FeaturesText(d.sequence.context(), options, inner, out);
      out += fmt::format("{}feature_lists:\n", indent);
      const auto& lists = d.sequence.feature_lists().feature_list();
      for (const std::string& name : SortedKeys(lists)) {
        const auto& steps = lists.at(name).feature();
        out += fmt::format("{}{}: {} steps\n", inner, QuoteIfNeeded(name), steps.size());
        const size_t shown = options.max_values == 0
                                 ? static_cast<size_t>(steps.size())
                                 : std::min<size_t>(steps.size(), options.max_values);
        for (size_t i = 0; i < shown; ++i) {
          out += fmt::format("{}  [{}] {}\n", inner, i,
                             FeatureText(steps[static_cast<int>(i)], options));
        }
        if (shown < static_cast<size_t>(steps.size())) out += fmt::format("{}  ...\n", inner);
      }
      break;
    }
    case PayloadKind::kRaw:
      out += RawPayloadToText(payload, options, indent);
      break;
  }
  return out;
}

nlohmann::ordered_json PayloadToJson(std::string_view payload) {
  Decoded d;
  Decode(payload, d);
  nlohmann::ordered_json out;
  out["kind"] = PayloadKindKey(d.kind);
  switch (d.kind) {
    case PayloadKind::kExample:
      out["features"] = FeaturesJson(d.example.features());
      break;
    case PayloadKind::kSequenceExample: {
      out["context"] = FeaturesJson(d.sequence.context());
      nlohmann::ordered_json lists = nlohmann::ordered_json::object();
      const auto& map = d.sequence.feature_lists().feature_list();
      for (const std::string& name : SortedKeys(map)) {
        nlohmann::ordered_json steps = nlohmann::ordered_json::array();
        for (const auto& f : map.at(name).feature()) steps.push_back(FeatureJson(f));
        lists[name] = steps;
      }
      out["feature_lists"] = lists;
      break;
    }
    case PayloadKind::kRaw:
      out.update(RawPayloadToJson(payload));
      break;
  }
  return out;
}

std::string RawPayloadToText(std::string_view payload, const TextOptions& options,
                             std::string_view indent) {
  return fmt::format("{}{}\n", indent, BytesText(std::string(payload), options));
}

nlohmann::ordered_json RawPayloadToJson(std::string_view payload) {
  nlohmann::ordered_json out;
  out["kind"] = PayloadKindKey(PayloadKind::kRaw);
  if (IsValidUtf8(payload)) {
    out["text"] = std::string(payload);
  } else {
    out["base64"] = Base64(payload);
  }
  return out;
}

}  // namespace tfdist::proto
