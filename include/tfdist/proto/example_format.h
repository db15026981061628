// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Decoding of record payloads (tf.train.Example, SequenceExample, raw) for display.

#ifndef TFDIST_PROTO_EXAMPLE_FORMAT_H_
#define TFDIST_PROTO_EXAMPLE_FORMAT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tfdist::proto {

enum class PayloadKind {
  kExample,          // parses as tf.train.Example with no unknown fields
  kSequenceExample,  // else as tf.train.SequenceExample with no unknown fields
  kRaw,              // anything else, including the empty payload
};

// "tf.train.Example", "tf.train.SequenceExample" or "raw".
std::string_view PayloadKindName(PayloadKind kind);
// "example", "sequence_example" or "raw" (the JSON spelling).
std::string_view PayloadKindKey(PayloadKind kind);

PayloadKind ClassifyPayload(std::string_view payload);

// The largest payload decoded as a protocol buffer; a larger one is shown
// raw. protobuf's parser takes the size as an int (2 GiB and more abort it),
// and no Example that large is one a person reads.
inline constexpr size_t kMaxDecodedPayloadSize = size_t{256} << 20;
// Whether a payload of `size` bytes is decoded (at most kMaxDecodedPayloadSize).
bool DecodesPayload(size_t size);

struct TextOptions {
  // Values shown per feature before "... (N values)"; 0 shows all. Default: 8.
  size_t max_values = 8;
  // Bytes shown of one bytes value before it is elided; 0 shows all. Default: 64.
  size_t max_bytes = 64;
};

// Human-readable lines, one per feature, sorted by feature name, each
// starting with `indent`; ends with a newline.
//   id: int64_list[1] = [42]
//   data: bytes_list[1] = [<3072 bytes: ff d8 ff e0 ...>]
// When `kind` is given, it receives the payload's kind (decoded once).
std::string PayloadToText(std::string_view payload, const TextOptions& options,
                          std::string_view indent = "  ", PayloadKind* kind = nullptr);

// A JSON object with "kind" and the decoded content: "features" (Example),
// "context" and "feature_lists" (SequenceExample), or "text" / "base64"
// (raw). A feature is {"int64_list": [...]}, {"float_list": [...]},
// {"bytes_list": [...]} or {} (no kind set); bytes values are strings when
// valid UTF-8, else {"base64": "..."}; non-finite floats are "NaN",
// "Infinity" and "-Infinity".
nlohmann::ordered_json PayloadToJson(std::string_view payload);

// PayloadToText and PayloadToJson of `payload` as kRaw, not decoded (the
// first bytes of a record too large to hold, say).
std::string RawPayloadToText(std::string_view payload, const TextOptions& options,
                             std::string_view indent = "  ");
nlohmann::ordered_json RawPayloadToJson(std::string_view payload);

}  // namespace tfdist::proto

#endif  // TFDIST_PROTO_EXAMPLE_FORMAT_H_
