// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Declared features: names, shapes and defaults checked once, for every parser.

#include "tfdist/data/features.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>
#include <set>

namespace tfdist::data {

std::string_view FeatureTypeName(FeatureType type) {
  switch (type) {
    case FeatureType::kInt64:
      return "int64";
    case FeatureType::kFloat:
      return "float";
    case FeatureType::kBytes:
      return "bytes";
  }
  return "?";
}

std::string_view FeatureDtypeName(FeatureType type) {
  switch (type) {
    case FeatureType::kInt64:
      return "tf.int64";
    case FeatureType::kFloat:
      return "tf.float32";
    case FeatureType::kBytes:
      return "tf.string";
  }
  return "?";
}

int64_t FeatureSpec::num_values() const {
  // Checked: a shape CheckFeatures has not seen yet (a parser that reports
  // the default's size first) may multiply past int64. It then counts as
  // more values than any default holds.
  int64_t n = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

std::string ShapeText(std::span<const int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

Status CheckFeatures(std::span<const FeatureSpec> features) {
  constexpr int64_t kMaxValues = int64_t{1} << 31;
  std::set<std::string_view> names;
  for (const FeatureSpec& f : features) {
    if (!names.insert(f.name).second) {
      return Status::InvalidArgument(fmt::format("feature '{}' is declared twice", f.name));
    }
    if (f.var_len) {
      if (!f.shape.empty()) {
        return Status::InvalidArgument(fmt::format(
            "feature '{}': a VarLenFeature has no shape; got {}", f.name, ShapeText(f.shape)));
      }
      if (f.default_value) {
        return Status::InvalidArgument(
            fmt::format("feature '{}': a VarLenFeature has no default_value", f.name));
      }
      continue;
    }
    // As TensorFlow's TensorShape, dimension by dimension: a product that
    // overflows int64 on the way is an error even if a later 0 would make it
    // 0 ([2^32, 2^32, 0]).
    int64_t n = 1;
    bool overflow = false;
    for (int64_t d : f.shape) {
      if (d < 0) {
        return Status::InvalidArgument(fmt::format(
            "feature '{}': shape {} has a negative dimension; FixedLenFeature needs a fully "
            "defined shape",
            f.name, ShapeText(f.shape)));
      }
      overflow = overflow || __builtin_mul_overflow(n, d, &n);
    }
    if (overflow) {
      return Status::InvalidArgument(
          fmt::format("feature '{}': shape {} holds more values than an int64 counts", f.name,
                      ShapeText(f.shape)));
    }
    if (n > kMaxValues) {
      return Status::InvalidArgument(fmt::format(
          "feature '{}': shape {} holds more than 2^31 values", f.name, ShapeText(f.shape)));
    }
    if (f.default_value) {
      const FeatureValues& d = *f.default_value;
      const size_t got = f.type == FeatureType::kInt64   ? d.int64s.size()
                         : f.type == FeatureType::kFloat ? d.floats.size()
                                                         : d.bytes.size();
      const size_t others = d.int64s.size() + d.floats.size() + d.bytes.size() - got;
      if (others != 0) {
        return Status::InvalidArgument(
            fmt::format("feature '{}': default_value holds values of another type than {}", f.name,
                        FeatureDtypeName(f.type)));
      }
      if (got != static_cast<size_t>(n)) {
        return Status::InvalidArgument(
            fmt::format("feature '{}': default_value has {} value{}; shape {} needs {}", f.name,
                        got, got == 1 ? "" : "s", ShapeText(f.shape), n));
      }
    }
  }
  if (features.size() >= std::numeric_limits<uint32_t>::max() / 4) {
    return Status::InvalidArgument("too many features");
  }
  return Status::OK();
}

}  // namespace tfdist::data
