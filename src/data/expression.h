// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The syntax of pipeline expressions: a Python-like method chain (private).

#ifndef TFDIST_DATA_EXPRESSION_H_
#define TFDIST_DATA_EXPRESSION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/result.h"

namespace tfdist::data {

struct Arg;
struct Call;

// A value written as an argument.
struct Expr {
  enum class Kind {
    kInt,     // 42, -1
    kFloat,   // 0.5, -1e-3, 2.
    kString,  // "a", 'a' or b"a"
    kList,    // [a, b]
    kTuple,   // (), (a,), (a, b)
    kDict,    // {k: v, ...}
    kName,    // tfrecord, True, None, ctx.num_input_pipelines (dotted)
    kCall,    // tfrecord(compression_type="GZIP"), ctx.get_per_replica_batch_size(64)
    kLambda,  // lambda f: tf.data.TFRecordDataset(f)
    kChain,   // a method chain: list_files("b*").interleave(tfrecord)
  };
  Kind kind = Kind::kInt;
  size_t pos = 0;      // byte offset of the value in the text
  int64_t number = 0;  // kInt
  double real = 0;     // kFloat
  std::string text;    // kString: the value; kName, kCall: the dotted name; kLambda: the
                       // parameters, joined by ", "
  // kList, kTuple: the elements; kDict: key, value, key, value, ...;
  // kLambda: {the body}
  std::vector<Expr> items;
  std::vector<Arg> args;    // kCall
  std::vector<Call> calls;  // kChain: the source call, then the method calls
};

struct Arg {
  std::string keyword;  // empty for a positional argument
  size_t pos = 0;       // byte offset of the argument
  Expr value;
};

struct Call {
  std::string name;     // dotted for the source ("tf.data.Dataset.range")
  size_t pos = 0;       // byte offset of the name
  size_t args_pos = 0;  // byte offset of "("
  std::vector<Arg> args;
};

// The most method calls a chain takes after its source. Each stage builds,
// runs and destroys its iterator by recursing into its input's, so tens of
// thousands of calls overflow an 8 MiB stack (about 20,000 in a release
// build, 10,000 under AddressSanitizer); real pipelines have a dozen.
inline constexpr size_t kMaxMethodCalls = 1000;

// The source call, then the method calls in order.
struct Chain {
  std::vector<Call> calls;
};

// Parses `text`. Error: InvalidArgument "<position>: expected ..." (PositionError).
Result<Chain> ParseChain(std::string_view text);

}  // namespace tfdist::data

#endif  // TFDIST_DATA_EXPRESSION_H_
