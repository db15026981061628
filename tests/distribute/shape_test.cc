// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The answers of Analyze that check reads: TensorFlow's static cardinality
// of the pipeline as written, and the first op whose order TensorFlow does
// not fix.

#include "tfdist/distribute/shape.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "tfdist/data/pipeline.h"

namespace tfdist::dist {
namespace {

PipelineShape ShapeOf(const std::string& expr) {
  auto p = data::ParsePipeline(expr);
  REQUIRE_MESSAGE(p.ok(), expr, ": ", p.status().message());
  return Analyze(*p);
}

constexpr auto kKnown = Cardinality::kKnown;
constexpr auto kInfinite = Cardinality::kInfinite;
constexpr auto kUnknown = Cardinality::kUnknown;

struct CardinalityCase {
  const char* expr;
  Cardinality cardinality;
  std::optional<int64_t> count;  // with kKnown: the count tfdist knows, if any
};

// Each row is what dataset.cardinality() gives for the same chain in
// TensorFlow (the ops' CardinalityInternal).
const CardinalityCase kCardinalityCases[] = {
    // Sources.
    {"range(10)", kKnown, 10},
    {"range(0, 10, 3)", kKnown, 4},
    {"range(10, 0, -3)", kKnown, 4},
    {"range(5, 5)", kKnown, 0},
    {"range(7, 3)", kKnown, 0},
    {"range(0, 9223372036854775807)", kInfinite, std::nullopt},
    {"from_tensor_slices(['a', 'b', 'c'])", kKnown, 3},
    {"from_tensor_slices([1, 2, 3, 4])", kKnown, 4},
    {"from_tensors([1, 2, 3])", kKnown, 1},
    {"tfrecord(['a', 'b'])", kUnknown, std::nullopt},
    {"list_files('*.tfrecord')", kKnown, std::nullopt},  // its matches, a count at run time
    {"list_files('*.tfrecord', shuffle=True, seed=1)", kKnown, std::nullopt},
    {"list_files('*.tfrecord').interleave(tfrecord)", kUnknown, std::nullopt},
    {"list_files('*.tfrecord').flat_map(tfrecord)", kUnknown, std::nullopt},
    // Ops that keep it.
    {"range(10).shuffle(4).map(opaque('f')).prefetch(2).cache().enumerate()", kKnown, 10},
    {"range(10).repeat().map(opaque('f')).prefetch(1)", kInfinite, std::nullopt},
    {"range(10).repeat().enumerate(5)", kInfinite, std::nullopt},
    // batch: ceil(n / b), floor with drop_remainder; infinite stays infinite.
    {"range(10).batch(3)", kKnown, 4},
    {"range(9).batch(3)", kKnown, 3},
    {"range(10).batch(3, drop_remainder=True)", kKnown, 3},
    {"range(10).padded_batch(4)", kKnown, 3},
    {"range(10).repeat().batch(3)", kInfinite, std::nullopt},
    {"tfrecord(['a']).batch(3)", kUnknown, std::nullopt},
    {"range(10).batch(ctx.get_per_replica_batch_size(8))", kKnown, std::nullopt},
    // repeat.
    {"range(10).repeat()", kInfinite, std::nullopt},
    {"range(10).repeat(-1)", kInfinite, std::nullopt},
    {"range(10).repeat(3)", kKnown, 30},
    {"range(10).repeat(0)", kKnown, 0},
    {"range(0).repeat()", kKnown, 0},
    {"tfrecord(['a']).repeat()", kInfinite, std::nullopt},
    {"tfrecord(['a']).repeat(2)", kUnknown, std::nullopt},
    {"list_files('*.tfrecord').repeat()", kInfinite, std::nullopt},
    {"range(10).filter(opaque('keep')).repeat()", kInfinite, std::nullopt},
    // After a repeat(), filter() and the readers make it unknown: the
    // epoch never ends, and Keras 2's fit() does not refuse it.
    {"range(10).repeat().filter(opaque('keep'))", kUnknown, std::nullopt},
    {"list_files('*.tfrecord').repeat().interleave(tfrecord, cycle_length=2)", kUnknown,
     std::nullopt},
    {"range(10).repeat().ignore_errors()", kUnknown, std::nullopt},
    {"range(10).repeat().batch(4).rebatch(2)", kUnknown, std::nullopt},
    {"range(9).repeat().group_by_window(opaque('k'), lambda k, w: w.batch(3), window_size=3)",
     kUnknown, std::nullopt},
    // take: min(n, count), -1 all; of an infinite input the count.
    {"range(10).take(5)", kKnown, 5},
    {"range(10).take(50)", kKnown, 10},
    {"range(10).take(-1)", kKnown, 10},
    {"range(10).repeat().take(25)", kKnown, 25},
    {"range(10).repeat().take(-1)", kInfinite, std::nullopt},
    {"tfrecord(['a']).take(5)", kUnknown, std::nullopt},
    {"range(10).repeat().take(ctx.num_input_pipelines)", kKnown, std::nullopt},
    // skip: max(0, n - count); negative: all skipped.
    {"range(10).skip(3)", kKnown, 7},
    {"range(10).skip(30)", kKnown, 0},
    {"range(10).skip(-1)", kKnown, 0},
    {"range(10).repeat().skip(3)", kInfinite, std::nullopt},
    // shard: the positions p % n == index.
    {"range(10).shard(3, 0)", kKnown, 4},
    {"range(10).shard(3, 2)", kKnown, 3},
    {"range(10).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)", kKnown, std::nullopt},
    {"range(10).shard(tf.data.experimental.SHARD_HINT, 0)", kUnknown, std::nullopt},
    {"range(10).repeat().shard(2, 0)", kInfinite, std::nullopt},
    // unbatch: times a static batch size.
    {"range(12).batch(4, drop_remainder=True).unbatch()", kKnown, 12},
    {"range(12).batch(4, drop_remainder=True).prefetch(1).unbatch()", kKnown, 12},
    {"range(10).batch(4).unbatch()", kUnknown, std::nullopt},
    {"range(12).batch(4, drop_remainder=True).map(opaque('f')).unbatch()", kUnknown, std::nullopt},
    {"range(12).repeat().batch(4).unbatch()", kInfinite, std::nullopt},
    // concatenate: infinite if either is, then unknown if either is, else the sum.
    {"range(10).concatenate(range(5))", kKnown, 15},
    {"range(10).concatenate(range(5).repeat())", kInfinite, std::nullopt},
    {"range(10).concatenate(range(5).filter(opaque('keep')))", kUnknown, std::nullopt},
    {"range(10).filter(opaque('keep')).concatenate(range(5).repeat())", kInfinite, std::nullopt},
    {"range(10).concatenate(list_files('*.tfrecord'))", kKnown, std::nullopt},
};

TEST_CASE("cardinality: what dataset.cardinality() reports for the pipeline as written") {
  for (const CardinalityCase& c : kCardinalityCases) {
    const std::string expr = c.expr;
    CAPTURE(expr);
    const PipelineShape s = ShapeOf(expr);
    CHECK(static_cast<int>(s.cardinality) == static_cast<int>(c.cardinality));
    CHECK(s.known_cardinality.has_value() == c.count.has_value());
    CHECK(s.known_cardinality.value_or(-1) == c.count.value_or(-1));
  }
}

TEST_CASE("cardinality: counts past int64 are unknown, as TensorFlow's arithmetic overflows") {
  const PipelineShape s = ShapeOf("range(4611686018427387904).repeat(4)");
  CHECK(s.cardinality == kUnknown);
  CHECK_FALSE(s.known_cardinality);
}

struct OrderCase {
  const char* expr;
  std::optional<size_t> at;
  const char* name;
};

const OrderCase kOrderCases[] = {
    {"list_files('*.tfrecord').interleave(tfrecord, cycle_length=4, num_parallel_calls=4, "
     "deterministic=False)",
     1, "interleave(deterministic=False) (column 26)"},
    // Without num_parallel_calls the op is sequential: deterministic does nothing.
    {"list_files('*.tfrecord').interleave(tfrecord, cycle_length=4, deterministic=False)",
     std::nullopt, ""},
    {"list_files('*.tfrecord').interleave(tfrecord, num_parallel_calls=4, deterministic=True)",
     std::nullopt, ""},
    {"list_files('*.tfrecord').interleave(tfrecord, num_parallel_calls=4)", std::nullopt, ""},
    {"range(8).map(opaque('f'), num_parallel_calls=4, deterministic=False)", 1,
     "map(deterministic=False) (column 10)"},
    {"range(8).map(opaque('f'), deterministic=False)", std::nullopt, ""},
    {"range(8).batch(2, num_parallel_calls=2, deterministic=False)", 1,
     "batch(deterministic=False) (column 10)"},
    {"tfrecord(['a']).batch(2).apply(tf.data.experimental.parse_example_dataset("
     "{'x': tf.io.FixedLenFeature([], tf.int64)}, num_parallel_calls=2, deterministic=False))",
     2, "apply(parse_example_dataset(..., deterministic=False)) (column 26)"},
    // The first one.
    {"range(8).map(opaque('f'), num_parallel_calls=2, deterministic=False)\n"
     "  .batch(2, num_parallel_calls=2, deterministic=False)",
     1, "map(deterministic=False) (line 1, column 10)"},
    // A joined dataset's, named by its own op.
    {"range(4).concatenate(range(4).map(opaque('f'), num_parallel_calls=2, deterministic=False))",
     1, "map(deterministic=False) (column 31)"},
    {"range(4).shuffle(4).prefetch(2)", std::nullopt, ""},
};

TEST_CASE("nondeterministic: the first op whose order TensorFlow does not fix") {
  for (const OrderCase& c : kOrderCases) {
    const std::string expr = c.expr;
    CAPTURE(expr);
    const PipelineShape s = ShapeOf(expr);
    CHECK(s.nondeterministic_at.has_value() == c.at.has_value());
    CHECK(s.nondeterministic_at.value_or(99) == c.at.value_or(99));
    CHECK(s.nondeterministic == c.name);
  }
}

TEST_CASE("filter and nondeterministic name an op the same way") {
  const PipelineShape s = ShapeOf(
      "range(8)\n  .filter(opaque('keep'))\n"
      "  .map(opaque('f'), num_parallel_calls=2, deterministic=False)");
  CHECK(s.filter == "filter(keep) (line 2, column 4)");
  CHECK(s.nondeterministic == "map(deterministic=False) (line 3, column 4)");
}

struct EndlessCase {
  const char* expr;
  std::optional<size_t> endless_at;
  bool batches_after;
};

const EndlessCase kEndlessCases[] = {
    {"range(10).batch(3)", std::nullopt, false},
    {"range(10).batch(3).repeat()", 2, false},
    {"range(10).repeat().batch(3)", 1, true},
    {"range(10).repeat(-1).padded_batch(3).prefetch(1)", 1, true},
    {"range(10).batch(3).repeat().rebatch(1)", 2, true},
    {"range(10).repeat().batch(3).take(5)", std::nullopt, false},
    {"range(10).repeat(2).batch(3)", std::nullopt, false},
    {"range(10).batch(3).repeat().map(opaque('f')).prefetch(1)", 2, false},
};

TEST_CASE("endless: the repeat() forever, and whether batches are made after it") {
  for (const EndlessCase& c : kEndlessCases) {
    const std::string expr = c.expr;
    CAPTURE(expr);
    const PipelineShape s = ShapeOf(expr);
    CHECK(s.endless_at.has_value() == c.endless_at.has_value());
    CHECK(s.endless_at.value_or(99) == c.endless_at.value_or(99));
    CHECK(s.batches_after_endless == c.batches_after);
  }
}

}  // namespace
}  // namespace tfdist::dist
