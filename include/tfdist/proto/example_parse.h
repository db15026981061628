// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A fast parser of serialized tf.train.Examples into the dense columns of
// declared features (data/features.h), one contiguous block per batch.

#ifndef TFDIST_PROTO_EXAMPLE_PARSE_H_
#define TFDIST_PROTO_EXAMPLE_PARSE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/data/dataset.h"
#include "tfdist/data/features.h"
#include "tfdist/base/result.h"

namespace tfdist::proto {

// Where the columns of a parsed batch lie in the output block.
//
// For n records and a feature of k = num_values() values per record, the
// column starts at offsets[f] (a multiple of 8) and holds, in record-major
// order (record i's values at [i*k, (i+1)*k)):
//  * kInt64: n*k little-endian int64;
//  * kFloat: n*k little-endian IEEE float32, zero-padded to a multiple of 8 bytes;
//  * kBytes: n*k+1 little-endian uint64 offsets into the column's data, which
//    starts right after them (value j is data[off[j], off[j+1])), then the
//    data, zero-padded to a multiple of 8 bytes.
struct ColumnLayout {
  std::vector<uint64_t> offsets;  // one per feature, in declared order
  uint64_t total_bytes = 0;       // bytes written from the start of the block
};

// Parses serialized tf.train.Examples into the dense columns of declared
// features, as tf.io.parse_example does with FixedLenFeatures: the wire
// format is read directly (no protobuf objects), keys are looked up without
// allocation, and values are written straight into the columns.
//
// Semantics (TensorFlow's, example_proto_fast_parsing.cc):
//  * Any valid protobuf encoding is accepted: packed and unpacked repeated
//    values, fields in any order, unknown fields at every level (skipped),
//    concatenated messages (merged as protobuf merges them).
//  * A key repeated in the features map: the last entry wins, where an entry
//    whose Feature has no list set counts as absent.
//  * A feature absent from a record takes its default; without a default it
//    is an error. A feature whose Feature has no list set is absent.
//  * Undeclared features are skipped without looking inside their values.
//
// Thread-safe: ParseBatch is const and keeps no state between calls, so
// several threads may share one parser.
class DenseParser {
 public:
  // Error: InvalidArgument naming the feature (data::CheckFeatures).
  static Result<DenseParser> Create(std::vector<data::FeatureSpec> features);

  const std::vector<data::FeatureSpec>& features() const { return features_; }

  // An upper bound of the bytes ParseBatch writes for `n` records whose
  // payloads hold `payload_bytes` bytes in all.
  uint64_t MaxBatchBytes(uint64_t n, uint64_t payload_bytes) const;

  // Parses `records` (kind kRecord; payload() is a serialized Example) into
  // `out`, which must hold at least MaxBatchBytes(records.size(), the sum of
  // their payload sizes) bytes; bytes of `out` past the returned total_bytes
  // are left as they were.
  // Return values:
  //  * the layout written                      - success
  //  * DataLoss                                - a record is not a valid Example
  //  * InvalidArgument                         - a feature is missing (with no
  //    default), of another type, or has the wrong number of values; or `out`
  //    is too small, or an element is not a record
  // Messages name the record as "FILE:INDEX at byte OFFSET" and the feature.
  Result<ColumnLayout> ParseBatch(std::span<const data::Element> records,
                                  std::span<char> out) const;

 private:
  explicit DenseParser(std::vector<data::FeatureSpec> features);

  // Finds the index of a declared feature by name, or -1. No allocation.
  int Find(std::string_view name) const;

  std::vector<data::FeatureSpec> features_;
  // Lookup table: open addressing over a power-of-two number of slots, each
  // holding a feature index + 1 (0 is empty).
  std::vector<uint32_t> slots_;
  uint64_t default_bytes_ = 0;  // sum of the bytes defaults' data sizes
};

}  // namespace tfdist::proto

#endif  // TFDIST_PROTO_EXAMPLE_PARSE_H_
