// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The feature sub-language of map(): parse_example and its dict of
// FixedLenFeature and VarLenFeature, with TensorFlow's names, dtypes, shapes
// and defaults.

#include "map_function.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace tfdist::data {
namespace {

// parse_example / parse_single_example under TensorFlow's names; `single`
// tells which.
bool IsParseName(std::string_view name, bool& single) {
  for (std::string_view prefix : {"", "tf.io.", "io.", "tf."}) {
    if (!name.starts_with(prefix)) continue;
    const std::string_view rest = name.substr(prefix.size());
    if (rest == "parse_example" || rest == "parse_single_example") {
      single = rest == "parse_single_example";
      return true;
    }
  }
  return false;
}

// Flattens a (nested) default_value of `type`; nested lists must be
// rectangular, as a tensor is. `dims[depth]` is the size seen at each depth.
Status DefaultValues(const Binder& b, const Expr& e, FeatureType type, const std::string& name,
                     size_t depth, std::vector<size_t>& dims, FeatureValues& out) {
  if (e.kind == Expr::Kind::kList || e.kind == Expr::Kind::kTuple) {
    if (depth >= 32) return b.ErrorAt(e.pos, "default_value nests too deep");
    if (dims.size() <= depth) dims.resize(depth + 1, e.items.size());
    if (dims[depth] != e.items.size()) {
      return b.ErrorAt(e.pos, fmt::format("feature '{}': default_value is not rectangular (rows "
                                          "of {} and {} values)",
                                          name, dims[depth], e.items.size()));
    }
    for (const Expr& item : e.items) {
      TFDIST_RETURN_IF_ERROR(DefaultValues(b, item, type, name, depth + 1, dims, out));
    }
    return Status::OK();
  }
  if (dims.size() > depth) {
    return b.ErrorAt(e.pos, fmt::format("feature '{}': default_value is not rectangular", name));
  }
  switch (type) {
    case FeatureType::kInt64:
      if (e.kind == Expr::Kind::kInt) {
        out.int64s.push_back(e.number);
        return Status::OK();
      }
      break;
    case FeatureType::kFloat:
      if (e.kind == Expr::Kind::kInt || e.kind == Expr::Kind::kFloat) {
        out.floats.push_back(e.kind == Expr::Kind::kInt ? static_cast<float>(e.number)
                                                        : static_cast<float>(e.real));
        return Status::OK();
      }
      break;
    case FeatureType::kBytes:
      if (e.kind == Expr::Kind::kString) {
        out.bytes.push_back(e.text);
        return Status::OK();
      }
      break;
  }
  return b.ErrorAt(e.pos, fmt::format("feature '{}': default_value for {} cannot hold {}", name,
                                      FeatureDtypeName(type), Binder::ExprText(e)));
}

Result<FeatureType> Dtype(const Binder& b, const Expr& e, const std::string& name) {
  std::string_view t = e.kind == Expr::Kind::kName ? std::string_view(e.text) : "";
  for (std::string_view prefix : {"tf.dtypes.", "tf.", "dtypes."}) {
    if (t.starts_with(prefix)) {
      t.remove_prefix(prefix.size());
      break;
    }
  }
  if (t == "int64") return FeatureType::kInt64;
  if (t == "float32") return FeatureType::kFloat;
  if (t == "string") return FeatureType::kBytes;
  if (t == "float") {
    return b.ErrorAt(e.pos, fmt::format("feature '{}': unknown dtype {} (TensorFlow has no "
                                        "tf.float; use tf.float32)",
                                        name, e.text));
  }
  for (std::string_view other :
       {"int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64", "float16", "half",
        "float64", "double", "bfloat16", "bool", "complex64", "complex128"}) {
    if (t == other) {
      return b.ErrorAt(e.pos, fmt::format("feature '{}': parse_example parses tf.int64, tf.float32 "
                                          "and tf.string; got {}",
                                          name, e.text));
    }
  }
  return b.ErrorAt(e.pos, fmt::format("feature '{}': unknown dtype {}; expected tf.int64, "
                                      "tf.float32 or tf.string",
                                      name, Binder::ExprText(e)));
}

// [], [3], (2, 2), () or 3 (one dimension, as TensorShape(3)).
Result<std::vector<int64_t>> Shape(const Binder& b, const Expr& e, const std::string& name) {
  std::vector<int64_t> shape;
  if (e.kind == Expr::Kind::kInt) {
    shape.push_back(e.number);
  } else if (e.kind == Expr::Kind::kList || e.kind == Expr::Kind::kTuple) {
    for (const Expr& d : e.items) {
      if (d.kind == Expr::Kind::kName && d.text == "None") {
        return b.ErrorAt(d.pos, fmt::format("feature '{}': a FixedLenFeature shape must be fully "
                                            "defined; got None",
                                            name));
      }
      if (d.kind != Expr::Kind::kInt) {
        return b.ErrorAt(d.pos, fmt::format("feature '{}': expected an integer dimension; got {}",
                                            name, Binder::ExprText(d)));
      }
      shape.push_back(d.number);
    }
  } else {
    return b.ErrorAt(e.pos, fmt::format("feature '{}': expected a shape such as [], [3] or (2, 2); "
                                        "got {}",
                                        name, Binder::ExprText(e)));
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      const Expr& d = e.kind == Expr::Kind::kInt ? e : e.items[i];
      return b.ErrorAt(d.pos, fmt::format("feature '{}': dimensions must be non-negative; got {}",
                                          name, shape[i]));
    }
  }
  return shape;
}

// tf.io.VarLenFeature(dtype).
Result<FeatureSpec> VarLenFeature(const Binder& b, const Expr& e, const std::string& name) {
  static constexpr Param kParams[] = {{"dtype", true}};
  Call call{e.text, e.pos, e.pos, e.args};
  TFDIST_ASSIGN_OR_RETURN(auto bound, b.Bind(call, "VarLenFeature", kParams));
  FeatureSpec spec;
  spec.name = name;
  spec.var_len = true;
  TFDIST_ASSIGN_OR_RETURN(spec.type, Dtype(b, *bound[0], name));
  return spec;
}

Result<FeatureSpec> Feature(const Binder& b, const Expr& e, const std::string& name) {
  if (e.kind == Expr::Kind::kCall && Binder::EndsWith(e.text, "VarLenFeature")) {
    return VarLenFeature(b, e, name);
  }
  if (e.kind != Expr::Kind::kCall || !Binder::EndsWith(e.text, "FixedLenFeature")) {
    for (std::string_view other : {"SparseFeature", "RaggedFeature", "FixedLenSequenceFeature"}) {
      if (e.kind == Expr::Kind::kCall && Binder::EndsWith(e.text, other)) {
        return b.ErrorAt(e.pos, fmt::format("feature '{}': tfdist parses tf.io.FixedLenFeature "
                                            "and tf.io.VarLenFeature; got {}",
                                            name, other));
      }
    }
    return b.ErrorAt(e.pos, fmt::format("feature '{}': expected tf.io.FixedLenFeature(shape, "
                                        "dtype, default_value=None); got {}",
                                        name, Binder::ExprText(e)));
  }
  static constexpr Param kParams[] = {{"shape", true}, {"dtype", true}, {"default_value", false}};
  Call call{e.text, e.pos, e.pos, e.args};
  TFDIST_ASSIGN_OR_RETURN(auto bound, b.Bind(call, "FixedLenFeature", kParams));
  FeatureSpec spec;
  spec.name = name;
  TFDIST_ASSIGN_OR_RETURN(spec.shape, Shape(b, *bound[0], name));
  TFDIST_ASSIGN_OR_RETURN(spec.type, Dtype(b, *bound[1], name));
  // The shape's size is checked before the default's is compared with it.
  if (Status check = CheckFeatures(std::span(&spec, 1)); !check.ok()) {
    return b.ErrorAt(bound[0]->pos, std::move(check));
  }
  if (!Binder::IsNone(bound[2])) {
    FeatureValues values;
    std::vector<size_t> dims;
    TFDIST_RETURN_IF_ERROR(DefaultValues(b, *bound[2], spec.type, name, 0, dims, values));
    const size_t n = spec.type == FeatureType::kInt64   ? values.int64s.size()
                     : spec.type == FeatureType::kFloat ? values.floats.size()
                                                        : values.bytes.size();
    if (n != static_cast<size_t>(spec.num_values())) {
      return b.ErrorAt(
          bound[2]->pos,
          fmt::format("feature '{}': default_value has {} value{}; shape [{}] needs "
                      "{} (TensorFlow reshapes the default to the shape)",
                      name, n, n == 1 ? "" : "s", fmt::join(spec.shape, ", "), spec.num_values()));
    }
    spec.default_value = std::move(values);
  }
  return spec;
}

// {"name": tf.io.FixedLenFeature(shape, dtype, default_value), ...}, where a
// value may also be tf.io.VarLenFeature(dtype).
Result<std::vector<FeatureSpec>> Features(const Binder& b, const Expr& e) {
  if (e.kind != Expr::Kind::kDict) {
    return b.ErrorAt(e.pos, fmt::format("expected a dict of feature names to "
                                        "tf.io.FixedLenFeature(...); got {}",
                                        Binder::ExprText(e)));
  }
  std::vector<FeatureSpec> out;
  for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
    const Expr& key = e.items[i];
    const Expr& value = e.items[i + 1];
    if (key.kind != Expr::Kind::kString) {
      return b.ErrorAt(key.pos,
                       fmt::format("feature names are strings; got {}", Binder::ExprText(key)));
    }
    for (const FeatureSpec& f : out) {
      if (f.name == key.text) {
        return b.ErrorAt(key.pos, fmt::format("feature '{}' is declared twice", key.text));
      }
    }
    TFDIST_ASSIGN_OR_RETURN(FeatureSpec spec, Feature(b, value, key.text));
    out.push_back(std::move(spec));
  }
  if (out.empty()) return b.ErrorAt(e.pos, "parse_example needs at least one feature");
  if (Status check = CheckFeatures(out); !check.ok()) return b.ErrorAt(e.pos, std::move(check));
  return out;
}

}  // namespace

// The function of map(): parse_example({...}) or
// lambda x: tf.io.parse_example(x, {...}) (either name, features= allowed).
Status BindMapFunction(const Binder& b, const Expr& e, MapOp& p) {
  bool single = false;
  static constexpr Param kPartial[] = {{"features", true}, {"name", false}};
  static constexpr Param kFull[] = {
      {"serialized", true}, {"features", true}, {"name", false}, {"example_names", false}};
  if (e.kind == Expr::Kind::kCall && IsParseName(e.text, single)) {
    Call call{e.text, e.pos, e.pos, e.args};
    TFDIST_ASSIGN_OR_RETURN(auto bound, b.Bind(call, e.text, kPartial));
    p.single_example = single;
    TFDIST_ASSIGN_OR_RETURN(p.features, Features(b, *bound[0]));
    return Status::OK();
  }
  if (e.kind == Expr::Kind::kLambda) {
    const Expr& body = e.items[0];
    if (body.kind == Expr::Kind::kCall && IsParseName(body.text, single)) {
      Call call{body.text, body.pos, body.pos, body.args};
      TFDIST_ASSIGN_OR_RETURN(auto bound, b.Bind(call, body.text, kFull));
      if (bound[0]->kind != Expr::Kind::kName || bound[0]->text != e.text) {
        return b.ErrorAt(bound[0]->pos,
                         fmt::format("the lambda must parse its argument: lambda {0}: "
                                     "{1}({0}, {{...}})",
                                     e.text, body.text));
      }
      p.single_example = single;
      TFDIST_ASSIGN_OR_RETURN(p.features, Features(b, *bound[1]));
      return Status::OK();
    }
    return b.ErrorAt(body.pos,
                     fmt::format("tfdist only supports map(parse_example(...)); the lambda "
                                 "computes {}",
                                 Binder::ExprText(body)));
  }
  return b.ErrorAt(e.pos, fmt::format("tfdist only supports map(parse_example(...)); got {}",
                                      Binder::ExprText(e)));
}

}  // namespace tfdist::data
