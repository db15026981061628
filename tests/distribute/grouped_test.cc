// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The bounds of a grouping's batches against TensorFlow's GroupByWindowDataset
// simulated on every key sequence of a few elements: the fewest and the most
// batches, and their sizes, are exactly those some key sequence makes.

#include "tfdist/distribute/grouped.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tfdist/data/pipeline.h"

namespace tfdist::dist {
namespace {

data::GroupByWindowOp OpOf(const std::string& expr) {
  auto p = data::ParsePipeline(expr);
  REQUIRE_MESSAGE(p.ok(), p.status().message());
  const std::optional<size_t> at = FindGrouping(*p);
  REQUIRE(at);
  return std::get<data::GroupByWindowOp>(p->ops[*at].params);
}

// What GroupByWindowDataset makes of elements with keys `keys`: each
// element into its key's window, a window reduced when it holds the key's
// window size, every window left reduced at the end; the reduce batches
// the window by `b` (the bucket's size for buckets). Returns the sizes of
// the batches made.
std::vector<uint64_t> Simulate(const data::GroupByWindowOp& op, const std::vector<int>& keys,
                               uint64_t window_of_func) {
  std::map<int, uint64_t> windows;
  std::vector<uint64_t> out;
  auto window_size = [&](int key) -> uint64_t {
    if (op.window_sizes.empty()) return window_of_func;
    return static_cast<uint64_t>(op.window_sizes[op.buckets ? key : 0].value);
  };
  auto batch_size = [&](int key) -> uint64_t {
    return op.buckets ? window_size(key) : static_cast<uint64_t>(op.reduce_batch_size->value);
  };
  auto reduce = [&](int key, uint64_t n) {
    const uint64_t b = batch_size(key);
    for (; n >= b; n -= b) out.push_back(b);
    if (n > 0 && !op.drop_remainder) out.push_back(n);
  };
  for (int key : keys) {
    if (++windows[key] == window_size(key)) {
      reduce(key, windows[key]);
      windows[key] = 0;
    }
  }
  for (const auto& [key, n] : windows) {
    if (n > 0) reduce(key, n);
  }
  return out;
}

// Every key sequence of n elements over `keys` keys: the fewest and most
// batches made, and the smallest and largest batch.
struct Seen {
  uint64_t fewest = ~uint64_t{0}, most = 0, smallest = ~uint64_t{0}, largest = 0;
};
Seen Enumerate(const data::GroupByWindowOp& op, uint64_t n, int keys, uint64_t window_of_func) {
  Seen s;
  std::vector<int> seq(n, 0);
  while (true) {
    const std::vector<uint64_t> batches = Simulate(op, seq, window_of_func);
    s.fewest = std::min<uint64_t>(s.fewest, batches.size());
    s.most = std::max<uint64_t>(s.most, batches.size());
    for (uint64_t b : batches) {
      s.smallest = std::min(s.smallest, b);
      s.largest = std::max(s.largest, b);
    }
    size_t i = 0;
    while (i < n && ++seq[i] == keys) seq[i++] = 0;
    if (i == n) break;
  }
  return s;
}

TEST_CASE("bucket_by_sequence_length: the bounds are exactly the fewest and most batches") {
  for (const char* drop : {"False", "True"}) {
    for (const std::string sizes : {"[2, 3]", "[3, 1, 2]", "[4, 4]", "[1, 5, 2]"}) {
      const std::string boundaries = sizes == "[2, 3]" || sizes == "[4, 4]" ? "[5]" : "[5, 9]";
      const data::GroupByWindowOp op =
          OpOf("range(9).bucket_by_sequence_length(opaque(\"len\"), " + boundaries + ", " + sizes +
               ", drop_remainder=" + drop + ")");
      const int k = static_cast<int>(op.window_sizes.size());
      for (uint64_t n = 0; n <= 7; ++n) {
        CAPTURE(sizes);
        CAPTURE(drop);
        CAPTURE(n);
        const Seen seen = Enumerate(op, n, k, 0);
        const Bounds b = GroupedBatches(op, n);
        CHECK(b.min == seen.fewest);
        CHECK(b.max == seen.most);
        const std::optional<Bounds> size = GroupedBatchSize(op, n);
        REQUIRE(size.has_value() == (seen.most > 0));
        if (size) {
          CHECK(size->max == seen.largest);
          CHECK(size->min == seen.smallest);
        }
      }
    }
  }
}

TEST_CASE("group_by_window: the bounds hold every key sequence, and are met") {
  struct Case {
    const char* reduce;
    const char* window;
    bool tight;  // the fewest is met (the batch size divides the window)
  };
  const Case cases[] = {
      {"window.batch(3)", "window_size=3", true},
      {"window.batch(2)", "window_size=2", true},
      {"window.padded_batch(3, drop_remainder=True)", "window_size=3", true},
      {"window.batch(4, drop_remainder=True)", "window_size=3", true},
      {"window.batch(5)", "window_size=2", true},
      {"window.batch(2)", "window_size=4", true},
      {"window.batch(2)", "window_size=3", false},
      {"window.batch(2, drop_remainder=True)", "window_size=5", true},
  };
  for (const Case& c : cases) {
    const data::GroupByWindowOp op =
        OpOf(std::string("range(9).group_by_window(opaque(\"k\"), lambda key, window: ") +
             c.reduce + ", " + c.window + ")");
    for (uint64_t n = 0; n <= 6; ++n) {
      CAPTURE(c.reduce);
      CAPTURE(c.window);
      CAPTURE(n);
      // Any number of keys: n keys cover every grouping of n elements.
      const Seen seen = Enumerate(op, n, static_cast<int>(std::max<uint64_t>(n, 1)), 0);
      const Bounds b = GroupedBatches(op, n);
      CHECK(b.max == seen.most);
      CHECK(b.min <= seen.fewest);
      if (c.tight) CHECK(b.min == seen.fewest);
      const std::optional<Bounds> size = GroupedBatchSize(op, n);
      REQUIRE(size.has_value() == (seen.most > 0));
      if (size) {
        CHECK(size->min <= seen.smallest);
        CHECK(size->max == seen.largest);
      }
    }
  }
}

TEST_CASE("group_by_window with window_size_func: bounds over any window size") {
  for (const char* drop : {"False", "True"}) {
    const data::GroupByWindowOp op =
        OpOf(std::string("range(9).group_by_window(opaque(\"k\"), lambda key, window: "
                         "window.batch(2, drop_remainder=") +
             drop + "), window_size_func=opaque(\"size\"))");
    for (uint64_t n = 0; n <= 5; ++n) {
      Seen all;
      for (uint64_t w = 1; w <= n + 1; ++w) {
        const Seen s = Enumerate(op, n, static_cast<int>(std::max<uint64_t>(n, 1)), w);
        all.fewest = std::min(all.fewest, s.fewest);
        all.most = std::max(all.most, s.most);
      }
      CAPTURE(drop);
      CAPTURE(n);
      const Bounds b = GroupedBatches(op, n);
      CHECK(b.min == all.fewest);
      CHECK(b.max == all.most);
    }
  }
}

TEST_CASE("the ops after a grouping carry its bounds, or are refused") {
  auto parse = [](const std::string& expr) {
    auto p = data::ParsePipeline(expr);
    REQUIRE_MESSAGE(p.ok(), p.status().message());
    return *p;
  };
  const std::string group =
      "range(9).group_by_window(opaque(\"k\"), lambda k, w: w.batch(3), window_size=3)";
  {
    const data::Pipeline p = parse(group + ".prefetch(2).take(4).repeat(2)");
    REQUIRE(CheckAfterGrouping(p, 1).ok());
    CHECK(AfterGrouping(p, 1, {3, 9}) == Bounds{6, 8});
  }
  {
    const data::Pipeline p = parse(group + ".filter(opaque(\"f\")).skip(1)");
    REQUIRE(CheckAfterGrouping(p, 1).ok());
    CHECK(AfterGrouping(p, 1, {3, 9}) == Bounds{0, 8});
  }
  {
    const data::Pipeline p = parse(group + ".repeat()");
    REQUIRE(CheckAfterGrouping(p, 1).ok());
    CHECK(AfterGrouping(p, 1, {0, 9}) == Bounds{0, Bounds::kUnbounded});
  }
  for (const char* after : {".batch(2)", ".unbatch()", ".rebatch(2)", ".shard(2, 0)",
                            ".take(ctx.num_input_pipelines)"}) {
    const data::Pipeline p = parse(group + after);
    const Status s = CheckAfterGrouping(p, 1);
    CAPTURE(after);
    CHECK(s.code() == StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace tfdist::dist
