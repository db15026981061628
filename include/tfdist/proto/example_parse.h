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

#include "tfdist/base/result.h"
#include "tfdist/data/dataset.h"
#include "tfdist/data/features.h"

namespace tfdist::proto {

// Where the columns of a parsed batch lie in the output block.
//
// Every column starts at a multiple of 8, features in declared order. For n
// records, a FixedLenFeature of k = num_values() values per record has one
// column, its values, at offsets[f], in record-major order (record i's
// values at [i*k, (i+1)*k)). A VarLenFeature has two, back to back: its row
// splits at row_splits_offsets[f], n+1 little-endian uint64 where record i's
// values are [splits[i], splits[i+1]) (splits[0] = 0, as
// tf.RaggedTensor.row_splits), then its values at offsets[f], those of all
// records concatenated (m = splits[n] of them). A values column of v values
// (v = n*k or m) holds:
//  * kInt64: v little-endian int64;
//  * kFloat: v little-endian IEEE float32, zero-padded to a multiple of 8 bytes;
//  * kBytes: v+1 little-endian uint64 offsets into the column's data, which
//    starts right after them (value j is data[off[j], off[j+1])), then the
//    data, zero-padded to a multiple of 8 bytes.
// (The row splits come first: their size is known before the values are
// read, so int64 and float values are written in one pass, with no scratch
// memory.)
struct ColumnLayout {
  // No column: the row_splits_offsets entry of a FixedLenFeature.
  static constexpr uint64_t kNoColumn = ~uint64_t{0};

  std::vector<uint64_t> offsets;             // values column, one per feature, in declared order
  std::vector<uint64_t> row_splits_offsets;  // one per feature; kNoColumn for a FixedLenFeature
  uint64_t total_bytes = 0;                  // bytes written from the start of the block
};

// Parses serialized tf.train.Examples into the columns of declared
// features, as tf.io.parse_example does with FixedLenFeatures and
// VarLenFeatures: the wire format is read directly (no protobuf objects),
// keys are looked up without allocation, and values are written straight
// into the columns.
//
// Semantics (TensorFlow's, example_proto_fast_parsing.cc):
//  * Any valid protobuf encoding is accepted: packed and unpacked repeated
//    values, fields in any order, unknown fields at every level (skipped),
//    concatenated messages (merged as protobuf merges them).
//  * A key repeated in the features map: the last entry wins, where an entry
//    whose Feature has no list set counts as absent.
//  * A FixedLenFeature absent from a record takes its default; without a
//    default it is an error. A VarLenFeature absent from a record has no
//    values there (never an error). A feature whose Feature has no list set
//    is absent.
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
  // payloads hold `payload_bytes` bytes in all. With VarLenFeatures it grows
  // with the payload: up to 8 output bytes per payload byte for int64 values
  // (a 1-byte varint becomes 8 bytes), 4 for bytes values (2 bytes of tag and
  // length become an 8-byte offset), 1 for floats.
  uint64_t MaxBatchBytes(uint64_t n, uint64_t payload_bytes) const;

  // Parses `records` (kind kRecord; payload() is a serialized Example) into
  // `out`, which must hold at least MaxBatchBytes(records.size(), the sum of
  // their payload sizes) bytes; bytes of `out` past the returned total_bytes
  // are left as they were.
  // Return values:
  //  * the layout written                      - success
  //  * DataLoss                                - a record is not a valid Example
  //  * InvalidArgument                         - a FixedLenFeature is missing
  //    (with no default) or has the wrong number of values, a feature is of
  //    another type; or `out`
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
  // Output bytes per payload byte that the columns' data may take at most:
  // 1 with a bytes FixedLenFeature or a float VarLenFeature, 4 with a bytes
  // VarLenFeature, 8 with an int64 VarLenFeature, else 0.
  uint64_t payload_factor_ = 0;
};

}  // namespace tfdist::proto

#endif  // TFDIST_PROTO_EXAMPLE_PARSE_H_
