// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Declared features (tf.io.FixedLenFeature, tf.io.VarLenFeature): what
// map(parse_example(...)) asks for, as plain data. proto::DenseParser parses
// records into them.

#ifndef TFDIST_DATA_FEATURES_H_
#define TFDIST_DATA_FEATURES_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/status.h"

namespace tfdist::data {

// The value kinds of a Feature, with the dtypes TensorFlow parses them into.
enum class FeatureType {
  kInt64,  // Int64List -> tf.int64
  kFloat,  // FloatList -> tf.float32
  kBytes,  // BytesList -> tf.string
};

// "int64", "float" or "bytes" (the list kinds of feature.proto).
std::string_view FeatureTypeName(FeatureType type);
// "tf.int64", "tf.float32" or "tf.string".
std::string_view FeatureDtypeName(FeatureType type);

// The values of a default, flattened in row-major order; only the vector of
// the feature's type is used.
struct FeatureValues {
  std::vector<int64_t> int64s;
  std::vector<float> floats;
  std::vector<std::string> bytes;

  friend bool operator==(const FeatureValues&, const FeatureValues&) = default;
};

// tf.io.FixedLenFeature(shape, dtype, default_value) or
// tf.io.VarLenFeature(dtype) under a feature name.
struct FeatureSpec {
  std::string name;
  FeatureType type = FeatureType::kInt64;
  std::vector<int64_t> shape;  // [] is a scalar: one value
  // Used when a record lacks the feature; without it the feature is required.
  // REQUIRES (checked by CheckFeatures): num_values() values.
  std::optional<FeatureValues> default_value;
  // A VarLenFeature: each record holds any number of values (none when it
  // lacks the feature, as in TensorFlow), parsed into a values column and
  // row splits (proto::ColumnLayout).
  // REQUIRES (checked by CheckFeatures): `shape` empty and no default_value.
  // Default: false (a FixedLenFeature).
  bool var_len = false;

  // The product of `shape` (1 for a scalar): values per record of a
  // FixedLenFeature. Meaningless for a VarLenFeature.
  int64_t num_values() const;

  friend bool operator==(const FeatureSpec&, const FeatureSpec&) = default;
};

// "[2, 3]": a shape as messages show it.
std::string ShapeText(std::span<const int64_t> shape);

// Checks what a parser of `features` relies on: names unique, shapes
// non-negative, at most 2^31 values per record, defaults of the feature's
// type and of exactly num_values() values; a VarLenFeature with no shape and
// no default.
// Error: InvalidArgument naming the feature.
Status CheckFeatures(std::span<const FeatureSpec> features);

}  // namespace tfdist::data

#endif  // TFDIST_DATA_FEATURES_H_
