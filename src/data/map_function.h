// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The feature sub-language of map(): map(parse_example({...})) (private).

#ifndef TFDIST_DATA_MAP_FUNCTION_H_
#define TFDIST_DATA_MAP_FUNCTION_H_

#include "binder.h"
#include "expression.h"
#include "tfdist/base/status.h"
#include "tfdist/data/ops.h"

namespace tfdist::data {

// Binds the function of map() into `p` (its features and single_example):
// parse_example({...}) or parse_single_example({...}) under TensorFlow's
// names (tf.io., io., tf. or none), or a lambda applying one to its argument,
// `lambda x: tf.io.parse_example(x, features={...})`. The dict maps feature
// names to tf.io.FixedLenFeature(shape, dtype, default_value=None), as
// ParsePipeline (pipeline.h) describes, or to tf.io.VarLenFeature(dtype)
// (FeatureSpec::var_len), under the same names and dtypes.
// Error: InvalidArgument at the position of the mistake (Binder::ErrorAt):
// another function, another kind of feature (SparseFeature, RaggedFeature,
// FixedLenSequenceFeature, ...), an unknown or unsupported
// dtype, a shape not fully defined, a default_value of the wrong type or
// number of values, a feature declared twice, or CheckFeatures' errors.
Status BindMapFunction(const Binder& b, const Expr& e, MapOp& p);

}  // namespace tfdist::data

#endif  // TFDIST_DATA_MAP_FUNCTION_H_
