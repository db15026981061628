// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// TensorFlow's seeded shuffle orders: the seed rules, the op-seed counter,
// the dataset-owned seed generator and the buffer. Expected orders are
// TensorFlow's (its shuffle kernel test, SPEC section 8) or worked out from
// its source by hand.

#include <doctest/doctest.h>

#include "test_util.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/data/seeds.h"

namespace tfdist::data {
namespace {

using V = std::vector<std::string>;

// `passes` passes over one dataset of `expr`.
V Passes(const std::string& expr, std::optional<GlobalSeed> global, int passes = 1) {
  Result<Pipeline> p = ParsePipeline(expr);
  INFO(expr);
  REQUIRE(p.ok());
  BuildOptions options;
  options.global_seed = global;
  options.default_seed = 3;
  Result<std::shared_ptr<const Dataset>> ds = BuildDataset(*p, options);
  REQUIRE(ds.ok());
  V out;
  for (int pass = 0; pass < passes; ++pass) {
    Result<std::unique_ptr<Iterator>> it = (*ds)->MakeIterator();
    REQUIRE(it.ok());
    for (;;) {
      Element e;
      bool end = false;
      REQUIRE((*it)->GetNext(e, end).ok());
      if (end) break;
      out.push_back(testing::ElementText(e));
    }
  }
  return out;
}

V Split(const std::string& s) {
  V out;
  std::string item;
  for (char c : s + " ") {
    if (c != ' ') {
      item += c;
    } else if (!item.empty()) {
      out.push_back(item);
      item.clear();
    }
  }
  return out;
}

TEST_CASE("get_seed: the pair from the op seed and the global seed") {
  CHECK(OpSeeds(std::nullopt, 42) == SeedPair{kDefaultGraphSeed, 42});
  CHECK(OpSeeds(1, 2) == SeedPair{1, 2});
  // Both modulo 2^31 - 1, as Python's % (never negative).
  CHECK(OpSeeds(int64_t{1} << 31, kMaxSeed) == SeedPair{1, 0});
  CHECK(OpSeeds(-1, -2) == SeedPair{kMaxSeed - 1, kMaxSeed - 2});
  // (0, 0) would mean "random" to the kernel.
  CHECK(OpSeeds(0, 0) == SeedPair{0, kMaxSeed});
  CHECK(OpSeeds(kMaxSeed, kMaxSeed) == SeedPair{0, kMaxSeed});
  CHECK(OpSeeds(0, 5) == SeedPair{0, 5});
}

TEST_CASE("the op-seed counter of tf.random.set_seed, with an offset") {
  OpSeedCounter c(GlobalSeed{1, 0});
  CHECK(c.Next() == 577090037);
  CHECK(c.Next() == 271041745);
  OpSeedCounter skipped(GlobalSeed{1, 1});
  CHECK(skipped.Next() == 271041745);
}

TEST_CASE("ResolveOpSeeds: seedless shuffles in the order Python makes them") {
  Result<Pipeline> p = ParsePipeline(
      "list_files('x*').shuffle(4, seed=9).concatenate(list_files('y*', shuffle=False)"
      ".shuffle(2)).shuffle(3)");
  REQUIRE(p.ok());
  const Pipeline r = ResolveOpSeeds(*p, GlobalSeed{1, 0});
  CHECK(std::get<ListFilesOp>(r.ops[0].params).seed == 577090037);
  CHECK(std::get<ShuffleOp>(r.ops[1].params).seed == 9);  // its own
  const Pipeline& inner = *std::get<ConcatenateOp>(r.ops[2].params).dataset;
  CHECK_FALSE(std::get<ListFilesOp>(inner.ops[0].params).seed);  // no shuffle, no draw
  CHECK(std::get<ShuffleOp>(inner.ops[1].params).seed == 271041745);
  CHECK(std::get<ShuffleOp>(r.ops[3].params).seed.has_value());
  // Resolved once, resolved for good.
  const Pipeline again = ResolveOpSeeds(r, GlobalSeed{5, 0});
  CHECK(std::get<ShuffleOp>(again.ops[3].params).seed == std::get<ShuffleOp>(r.ops[3].params).seed);
  CHECK_FALSE(HasUnseededShuffle(r));
  CHECK(HasUnseededShuffle(*p));
}

TEST_CASE("seeded shuffles in TensorFlow's order (its shuffle kernel test, SPEC 8.10-8.12)") {
  // A new pair per pass from the dataset's seed generator.
  CHECK(Passes("range(10).shuffle(10, seed=2)", GlobalSeed{1, 0}, 2) ==
        Split("2 6 1 3 9 5 0 8 7 4 1 6 0 5 2 7 4 3 9 8"));
  // The same pair every pass.
  CHECK(Passes("range(10).shuffle(3, seed=2, reshuffle_each_iteration=False)", GlobalSeed{1, 0},
               2) == Split("2 3 0 5 6 4 7 8 9 1 2 3 0 5 6 4 7 8 9 1"));
  // An op seed alone is paired with the default graph seed.
  CHECK(Passes("range(5).shuffle(5, seed=42)", std::nullopt) == Split("0 4 1 3 2"));
}

TEST_CASE("each epoch of a repeat() after a shuffle takes the generator's next pair") {
  // TensorFlow fuses shuffle().repeat() and reseeds at each epoch's end: the
  // epochs are the passes of the unfused pipeline.
  CHECK(Passes("range(10).shuffle(10, seed=2).repeat(2)", GlobalSeed{1, 0}) ==
        Passes("range(10).shuffle(10, seed=2)", GlobalSeed{1, 0}, 2));
  CHECK(Passes("range(10).shuffle(4, seed=2).repeat(3)", GlobalSeed{7, 0}, 2) ==
        Passes("range(10).shuffle(4, seed=2)", GlobalSeed{7, 0}, 6));
  // repeat() before the shuffle: one pass over the repeated stream.
  const V once = Passes("range(3).repeat(2).shuffle(6, seed=2)", GlobalSeed{1, 0});
  CHECK(once.size() == 6);
}

TEST_CASE("a seedless shuffle under a global seed takes the counter's op seed") {
  // set_seed(1): the first seedless op gets 577090037, the next 271041745.
  CHECK(Passes("range(10).shuffle(10)", GlobalSeed{1, 0}) ==
        Passes("range(10).shuffle(10, seed=577090037)", GlobalSeed{1, 0}));
  CHECK(Passes("range(10).shuffle(10, seed=5).shuffle(4)", GlobalSeed{1, 0}) ==
        Passes("range(10).shuffle(10, seed=5).shuffle(4, seed=577090037)", GlobalSeed{1, 0}));
  CHECK(Passes("range(10).shuffle(10)", GlobalSeed{1, 1}) ==
        Passes("range(10).shuffle(10, seed=271041745)", GlobalSeed{1, 0}));
  // The global seed changes the order even where the op seed is given.
  CHECK(Passes("range(10).shuffle(10, seed=2)", GlobalSeed{1, 0}) !=
        Passes("range(10).shuffle(10, seed=2)", GlobalSeed{3, 0}));
}

TEST_CASE("list_files shuffles the sorted matches with a buffer of all of them") {
  testing::TempDir dir;
  for (const char* name : {"a", "b", "c", "d", "e"}) testing::WriteFile(dir.File(name), "");
  const std::string glob = "list_files('" + dir.path() + "/*'";
  const std::string sorted = "from_tensor_slices(['" + dir.File("a") + "', '" + dir.File("b") +
                             "', '" + dir.File("c") + "', '" + dir.File("d") + "', '" +
                             dir.File("e") + "'])";
  CHECK(Passes(glob + ", seed=7)", GlobalSeed{1, 0}, 2) ==
        Passes(sorted + ".shuffle(5, seed=7)", GlobalSeed{1, 0}, 2));
  CHECK(Passes(glob + ", seed=7)", std::nullopt) ==
        Passes(sorted + ".shuffle(5, seed=7)", std::nullopt));
}

TEST_CASE("unseeded shuffles follow the run's seed: the same seed, the same order") {
  CHECK(Passes("range(50).shuffle(7)", std::nullopt, 2) ==
        Passes("range(50).shuffle(7)", std::nullopt, 2));
}

}  // namespace
}  // namespace tfdist::data
