// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The binding of call arguments (src/data/binder.h, map_function.h): Python's
// matching of positionals and keywords, TensorFlow's signatures in messages,
// the typed values, and every method and source bound to its own op.

#include "binder.h"

#include <doctest/doctest.h>

#include <string>
#include <variant>

#include "expression.h"
#include "map_function.h"

namespace tfdist::data {
namespace {

// The calls of `text` (kept alive: Bind points into them).
struct Parsed {
  explicit Parsed(std::string t) : text(std::move(t)), binder(text) {
    Result<Chain> c = ParseChain(text);
    REQUIRE_MESSAGE(c.ok(), c.status().ToString());
    chain = std::move(*c);
  }
  std::string text;
  Binder binder;
  Chain chain;
};

constexpr Param kAbc[] = {{"a", true}, {"b", false}, {"c", false}};

TEST_CASE("Signature names the required parameters, then the optional ones") {
  constexpr Param kNone[] = {{"x", false}};
  constexpr Param kThree[] = {{"a", true}, {"b", true}, {"c", true}};
  constexpr Param kTwoOptional[] = {{"a", true}, {"b", true}, {"c", false}, {"d", false}};
  CHECK(Binder::Signature("f", std::span<const Param>()) == "f() takes no arguments");
  CHECK(Binder::Signature("enumerate", kNone) == "enumerate() takes optionally x");
  CHECK(Binder::Signature("f", kAbc) == "f() takes a (and optionally b, c)");
  CHECK(Binder::Signature("f", kThree) == "f() takes a, b and c");
  CHECK(Binder::Signature("f", kTwoOptional) == "f() takes a and b (and optionally c, d)");
}

TEST_CASE("Bind puts positionals first, then keywords, and leaves the omitted null") {
  Parsed p("f(1, c=3)");
  auto bound = p.binder.Bind(p.chain.calls[0], "f", kAbc);
  REQUIRE(bound.ok());
  REQUIRE(bound->size() == 3);
  REQUIRE((*bound)[0] != nullptr);
  CHECK((*bound)[0]->number == 1);
  CHECK((*bound)[1] == nullptr);
  REQUIRE((*bound)[2] != nullptr);
  CHECK((*bound)[2]->number == 3);
}

TEST_CASE("Bind's errors point at the argument, or at the call for a count") {
  const std::pair<const char*, const char*> cases[] = {
      {"f(a=1, 2)", "column 8: a positional argument cannot follow a keyword argument"},
      {"f(1, 2, 3, 4)", "column 1: f() takes a (and optionally b, c); got 4 arguments"},
      {"f(1, z=2)", "column 6: f() has no argument 'z'; f() takes a (and optionally b, c)"},
      {"f(1, a=2)", "column 6: f() got a twice"},
      {"f()", "column 1: f() takes a (and optionally b, c); got 0 arguments"},
      {"f(b=1)", "column 1: f() takes a (and optionally b, c); got 1 argument"},
  };
  for (const auto& [text_binding, message] : cases) {
    const char* text = text_binding;  // (clang 14 captures no structured binding)
    CAPTURE(text);
    Parsed p(text);
    auto bound = p.binder.Bind(p.chain.calls[0], "f", kAbc);
    REQUIRE_FALSE(bound.ok());
    CHECK(bound.status().code() == StatusCode::kInvalidArgument);
    CHECK(bound.status().message() == message);
    CHECK(bound.status().position().has_value());
  }
}

TEST_CASE("Int reads literals, AUTOTUNE, SHARD_HINT and the input context's names") {
  struct Case {
    const char* text;
    IntArg::Symbol symbol;
    int64_t value;
  };
  const Case cases[] = {
      {"f(7)", IntArg::Symbol::kLiteral, 7},
      {"f(-3)", IntArg::Symbol::kLiteral, -3},
      {"f(tf.data.AUTOTUNE)", IntArg::Symbol::kLiteral, kAutotune},
      {"f(AUTOTUNE)", IntArg::Symbol::kLiteral, kAutotune},
      {"f(tf.data.experimental.SHARD_HINT)", IntArg::Symbol::kShardHint, -1},
      {"f(ctx.num_input_pipelines)", IntArg::Symbol::kNumInputPipelines, 0},
      {"f(ctx.input_pipeline_id)", IntArg::Symbol::kInputPipelineId, 0},
      {"f(ctx.num_replicas_in_sync)", IntArg::Symbol::kNumReplicasInSync, 0},
      {"f(ctx.get_per_replica_batch_size(64))", IntArg::Symbol::kPerReplicaBatchSize, 64},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    Parsed p(c.text);
    auto a = p.binder.Int(p.chain.calls[0].args[0].value, "x");
    REQUIRE_MESSAGE(a.ok(), a.status().ToString());
    CHECK(a->symbol == c.symbol);
    CHECK(a->value == c.value);
    CHECK(a->pos == 2);
  }
  // A context name must be dotted: a bare name is no integer.
  Parsed p("f(num_input_pipelines)");
  auto a = p.binder.Int(p.chain.calls[0].args[0].value, "x");
  REQUIRE_FALSE(a.ok());
  CHECK(a.status().message() == "column 3: expected an integer for x; got num_input_pipelines");
}

TEST_CASE("the optional values take None or an omission as not given") {
  Parsed p("f(None, 5, True)");
  const Call& call = p.chain.calls[0];
  auto none = p.binder.OptInt(&call.args[0].value, "x");
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  auto omitted = p.binder.OptBool(nullptr, "x");
  REQUIRE(omitted.ok());
  CHECK_FALSE(omitted->has_value());
  auto fallback = p.binder.IntOr(&call.args[0].value, "x", 42, 9);
  REQUIRE(fallback.ok());
  CHECK(fallback->value == 42);
  CHECK(fallback->pos == 9);
  auto seed = p.binder.Seed(&call.args[1].value);
  REQUIRE(seed.ok());
  CHECK(*seed == std::optional<int64_t>(5));
  auto flag = p.binder.OptBool(&call.args[2].value, "x");
  REQUIRE(flag.ok());
  CHECK(*flag == std::optional<bool>(true));
  auto compression = p.binder.Compression(nullptr);
  REQUIRE(compression.ok());
  CHECK(*compression == io::Compression::kNone);
}

TEST_CASE("every method is bound to its own op, under the name it was written with") {
  struct Case {
    const char* method;
    size_t alternative;  // of OpParams
  };
  const Case cases[] = {
      {"shard(2, 0)", 4},
      {"interleave(tfrecord)", 5},
      {"flat_map(tfrecord)", 5},
      {"shuffle(3)", 6},
      {"repeat()", 7},
      {"batch(2)", 8},
      {"take(1)", 9},
      {"skip(1)", 10},
      {"enumerate()", 11},
      {"prefetch(1)", 12},
      {"map(parse_example({\"x\": FixedLenFeature([], tf.int64)}))", 13},
  };
  for (const Case& c : cases) {
    CAPTURE(c.method);
    Parsed p(std::string("range(3).") + c.method);
    auto op = p.binder.Transform(p.chain.calls[1]);
    REQUIRE_MESSAGE(op.ok(), op.status().ToString());
    CHECK(op->params.index() == c.alternative);
    CHECK(op->name == p.chain.calls[1].name);
    CHECK(op->pos == 9);
  }
  Parsed flat("range(3).flat_map(tfrecord)");
  auto op = flat.binder.Transform(flat.chain.calls[1]);
  REQUIRE(op.ok());
  CHECK(std::get<InterleaveOp>(op->params).flat_map);
}

TEST_CASE("every source is bound to its own op; TensorFlow's spellings name it as tfdist does") {
  struct Case {
    const char* source;
    size_t alternative;
    const char* name;
  };
  const Case cases[] = {
      {"list_files('a*')", 0, "list_files"},
      {"tf.data.Dataset.list_files('a*')", 0, "list_files"},
      {"from_tensor_slices(['a'])", 1, "from_tensor_slices"},
      {"tfrecord('a')", 2, "tfrecord"},
      {"tf.data.TFRecordDataset('a')", 2, "tfrecord"},
      {"Dataset.TFRecordDataset('a')", 2, "tfrecord"},
      {"range(3)", 3, "range"},
      {"data.Dataset.range(1, 3)", 3, "range"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.source);
    Parsed p(c.source);
    auto op = p.binder.Source(p.chain.calls[0]);
    REQUIRE_MESSAGE(op.ok(), op.status().ToString());
    CHECK(op->params.index() == c.alternative);
    CHECK(op->name == c.name);
  }
}

TEST_CASE("BindMapFunction reads the features of either function, in the dict's order") {
  for (const char* text :
       {"f(parse_example({'b': FixedLenFeature([2], tf.float32, default_value=[1, 2.5]), "
        "'a': tf.io.FixedLenFeature((), tf.string)}))",
        "f(lambda r: tf.io.parse_single_example(r, features={'b': FixedLenFeature(2, "
        "tf.float32, [1, 2.5]), 'a': FixedLenFeature([], tf.string)}))"}) {
    CAPTURE(text);
    Parsed p(text);
    MapOp map;
    Status s = BindMapFunction(p.binder, p.chain.calls[0].args[0].value, map);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    CHECK(map.single_example == (std::string(text).find("single") != std::string::npos));
    REQUIRE(map.features.size() == 2);
    CHECK(map.features[0].name == "b");
    CHECK(map.features[0].type == FeatureType::kFloat);
    CHECK(map.features[0].shape == std::vector<int64_t>{2});
    REQUIRE(map.features[0].default_value.has_value());
    CHECK(map.features[0].default_value->floats == std::vector<float>{1, 2.5});
    CHECK(map.features[1].name == "a");
    CHECK(map.features[1].type == FeatureType::kBytes);
    CHECK(map.features[1].shape.empty());
    CHECK_FALSE(map.features[1].default_value.has_value());
  }
}

TEST_CASE("BindMapFunction reads VarLenFeature(dtype) under TensorFlow's names") {
  Parsed p(
      "f(parse_example({'a': tf.io.VarLenFeature(tf.int64), 'b': tf.VarLenFeature(tf.float32), "
      "'c': io.VarLenFeature(dtype=tf.string), 'd': VarLenFeature(tf.dtypes.int64), "
      "'e': FixedLenFeature([], tf.int64)}))");
  MapOp map;
  Status s = BindMapFunction(p.binder, p.chain.calls[0].args[0].value, map);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  REQUIRE(map.features.size() == 5);
  const FeatureType types[] = {FeatureType::kInt64, FeatureType::kFloat, FeatureType::kBytes,
                               FeatureType::kInt64, FeatureType::kInt64};
  for (size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(map.features[i].name == std::string(1, static_cast<char>('a' + i)));
    CHECK(map.features[i].type == types[i]);
    CHECK(map.features[i].var_len == (i < 4));
    CHECK(map.features[i].shape.empty());
    CHECK_FALSE(map.features[i].default_value.has_value());
  }
}

TEST_CASE("BindMapFunction's errors point at the mistake") {
  const std::pair<const char*, const char*> cases[] = {
      {"f(lambda r: parse_example(x, {'a': FixedLenFeature([], tf.int64)}))",
       "column 27: the lambda must parse its argument: lambda r: parse_example(r, {...})"},
      {"f(parse_example({'a': FixedLenFeature([None], tf.int64)}))",
       "column 40: feature 'a': a FixedLenFeature shape must be fully defined; got None"},
      {"f(parse_example({'a': FixedLenFeature([2], tf.int64, default_value=[[1], [2, 3]])}))",
       "column 74: feature 'a': default_value is not rectangular (rows of 1 and 2 values)"},
      {"f(parse_example({'a': SparseFeature('i', 'v', tf.int64, 3)}))",
       "column 23: feature 'a': tfdist parses tf.io.FixedLenFeature and tf.io.VarLenFeature; got "
       "SparseFeature"},
      {"f(parse_example({'a': tf.io.RaggedFeature(tf.int64)}))",
       "column 23: feature 'a': tfdist parses tf.io.FixedLenFeature and tf.io.VarLenFeature; got "
       "RaggedFeature"},
      {"f(parse_example({'a': VarLenFeature([], tf.int64)}))",
       "column 23: VarLenFeature() takes dtype; got 2 arguments"},
      {"f(parse_example({'a': VarLenFeature(dtype=tf.int32)}))",
       "column 43: feature 'a': parse_example parses tf.int64, tf.float32 and tf.string; got "
       "tf.int32"},
      // Shapes whose product overflows int64: checked multiplication (the
      // product was signed overflow, undefined), and an error naming the
      // feature at its shape, also when a later 0 would make the product 0
      // or a default's size is to be compared with it.
      {"f(parse_example({'a': FixedLenFeature([4294967296, 4294967296, 16], tf.int64)}))",
       "column 39: feature 'a': shape [4294967296, 4294967296, 16] holds more values than an "
       "int64 counts"},
      {"f(parse_example({'b': FixedLenFeature([2], tf.int64), "
       "'a': FixedLenFeature([4294967296, 4294967296, 0], tf.int64)}))",
       "column 76: feature 'a': shape [4294967296, 4294967296, 0] holds more values than an "
       "int64 counts"},
      {"f(parse_example({'a': FixedLenFeature([4294967296, 4294967296, 0], tf.int64, "
       "default_value=[])}))",
       "column 39: feature 'a': shape [4294967296, 4294967296, 0] holds more values than an "
       "int64 counts"},
      {"f(parse_example({'a': FixedLenFeature([9223372036854775807, 2], tf.float32, [1.0])}))",
       "column 39: feature 'a': shape [9223372036854775807, 2] holds more values than an int64 "
       "counts"},
      {"f(parse_example({'a': FixedLenFeature([65536, 65536], tf.string)}))",
       "column 39: feature 'a': shape [65536, 65536] holds more than 2^31 values"},
  };
  for (const auto& [text_binding, message] : cases) {
    const char* text = text_binding;  // (clang 14 captures no structured binding)
    CAPTURE(text);
    Parsed p(text);
    MapOp map;
    Status s = BindMapFunction(p.binder, p.chain.calls[0].args[0].value, map);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message() == message);
  }
}

TEST_CASE("num_values saturates rather than overflow for a shape not yet checked") {
  FeatureSpec f;
  f.shape = {int64_t{1} << 32, int64_t{1} << 32, 0};
  CHECK(f.num_values() == std::numeric_limits<int64_t>::max());
  f.shape = {int64_t{1} << 31, 4};
  CHECK(f.num_values() == int64_t{1} << 33);
  CHECK_FALSE(CheckFeatures(std::span(&f, 1)).ok());
}

}  // namespace
}  // namespace tfdist::data
