// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// TensorFlow's seed rules (python/framework/random_seed.py get_seed, eager).

#include "tfdist/data/seeds.h"

#include <variant>

#include "tfdist/data/pipeline.h"

namespace tfdist::data {
namespace {

// Python's x % kMaxSeed: never negative.
int64_t Truncate(int64_t x) {
  const int64_t r = x % kMaxSeed;
  return r < 0 ? r + kMaxSeed : r;
}

// Gives each random op of `ops` made without a seed the counter's next op
// seed, in the order Python makes them: left to right, a concatenate()'s
// dataset at its place (its argument is made before the call).
void Resolve(std::vector<Op>& ops, OpSeedCounter& counter) {
  for (Op& op : ops) {
    if (std::optional<int64_t>* seed = OpSeedOf(op)) {
      if (!*seed) *seed = counter.Next();
    } else if (auto* c = std::get_if<ConcatenateOp>(&op.params)) {
      auto inner = std::make_shared<Pipeline>(*c->dataset);
      Resolve(inner->ops, counter);
      c->dataset = std::move(inner);
    }
  }
}

}  // namespace

SeedPair OpSeeds(std::optional<int64_t> global, int64_t op_seed) {
  SeedPair p{global ? Truncate(*global) : kDefaultGraphSeed, Truncate(op_seed)};
  if (p.seed == 0 && p.seed2 == 0) p.seed2 = kMaxSeed;
  return p;
}

OpSeedCounter::OpSeedCounter(const GlobalSeed& global) : random_(global.seed) {
  for (int64_t i = 0; i < global.op_seed_offset; ++i) Next();
}

Pipeline ResolveOpSeeds(const Pipeline& pipeline, const GlobalSeed& global) {
  Pipeline out = pipeline;
  OpSeedCounter counter(global);
  Resolve(out.ops, counter);
  return out;
}

const std::optional<int64_t>* OpSeedOf(const Op& op) {
  if (const auto* s = std::get_if<ShuffleOp>(&op.params)) return &s->seed;
  if (const auto* l = std::get_if<ListFilesOp>(&op.params); l && l->shuffle) return &l->seed;
  return nullptr;
}

std::optional<int64_t>* OpSeedOf(Op& op) {
  return const_cast<std::optional<int64_t>*>(OpSeedOf(static_cast<const Op&>(op)));
}

bool HasUnseededShuffle(const Pipeline& pipeline) {
  for (const Op& op : pipeline.ops) {
    if (const std::optional<int64_t>* seed = OpSeedOf(op); seed && !*seed) return true;
    if (const auto* c = std::get_if<ConcatenateOp>(&op.params);
        c && HasUnseededShuffle(*c->dataset)) {
      return true;
    }
  }
  return false;
}

}  // namespace tfdist::data
