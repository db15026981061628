// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// reshard's plan: which record goes to which shard, and the names of the
// outputs. Pure: no I/O.

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <string>

#include "tfdist/base/random.h"
#include "tfdist/io/reshard.h"

namespace tfdist::io {
namespace {

__extension__ typedef unsigned __int128 Wide;

std::string_view Suffix(Compression c) {
  return c == Compression::kGzip ? ".gz" : c == Compression::kZlib ? ".zlib" : "";
}

}  // namespace

Result<ReshardBalance> ParseReshardBalance(std::string_view text) {
  if (text == "records") return ReshardBalance::kRecords;
  if (text == "bytes") return ReshardBalance::kBytes;
  return Status::InvalidArgument(
      fmt::format("unknown balance '{}'; expected records or bytes", text));
}

std::vector<uint64_t> SeededPermutation(uint64_t n, uint64_t seed) {
  std::vector<uint64_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = i;
  Rng rng(seed);
  for (uint64_t i = n; i > 1; --i) std::swap(v[i - 1], v[rng.Below(i)]);
  return v;
}

Result<ReshardPlan> PlanReshard(std::span<const uint64_t> record_sizes,
                                const ReshardPlanOptions& options) {
  const uint64_t records = record_sizes.size();
  assert((options.num_shards == 0) != (options.records_per_shard == 0));
  if (records == 0) {
    return Status::InvalidArgument("the inputs hold no records: there is nothing to reshard");
  }
  const uint64_t n = options.num_shards != 0 ? options.num_shards
                                             : records / options.records_per_shard +
                                                   (records % options.records_per_shard != 0);
  if (n > records) {
    return Status::InvalidArgument(
               fmt::format("cannot write {} shards from {} record{}: every shard must hold at "
                           "least one record, as TensorFlow's FILE sharding expects",
                           n, records, records == 1 ? "" : "s"))
        .WithAdvice(Remedy::kFewerShards, std::to_string(records));
  }
  ReshardPlan plan;
  if (options.seed) plan.order = SeededPermutation(records, *options.seed);
  plan.bounds.assign(n + 1, records);
  plan.bounds[0] = 0;
  if (options.balance == ReshardBalance::kRecords) {
    const uint64_t q = records / n, extra = records % n;
    for (uint64_t s = 0; s <= n; ++s) plan.bounds[s] = s * q + std::min(s, extra);
    return plan;
  }
  // Shard s starts at the first record at which the bytes before it reach s
  // means: a shard ends at most one record past its share.
  Wide total = 0;
  for (uint64_t size : record_sizes) total += size;
  Wide prefix = 0;
  uint64_t s = 1;
  for (uint64_t p = 0; p < records && s < n; ++p) {
    while (s < n && prefix * n >= Wide{s} * total) plan.bounds[s++] = p;
    prefix += record_sizes[plan.record_at(p)];
  }
  // Every shard non-empty: a huge record may otherwise leave a shard nothing.
  for (s = 1; s < n; ++s) {
    plan.bounds[s] = std::max(plan.bounds[s], plan.bounds[s - 1] + 1);
    plan.bounds[s] = std::min(plan.bounds[s], records - (n - s));
  }
  return plan;
}

std::string ShardFileName(const std::string& prefix, uint64_t index, uint64_t count,
                          Compression compression) {
  return fmt::format("{}-{:05}-of-{:05}{}", prefix, index, count, ShardFileSuffix(compression));
}

std::string ShardFileSuffix(Compression compression) {
  return fmt::format(".tfrecord{}", Suffix(compression));
}

std::string ConvertedFileName(const std::string& path, Compression compression,
                              const std::string& output_dir) {
  const size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  for (std::string_view suffix : {".gz", ".zlib"}) {
    if (base.size() > suffix.size() && base.ends_with(suffix)) {
      base.resize(base.size() - suffix.size());
      break;
    }
  }
  base += Suffix(compression);
  if (!output_dir.empty()) {
    return output_dir.ends_with('/') ? output_dir + base : output_dir + "/" + base;
  }
  return slash == std::string::npos ? base : path.substr(0, slash + 1) + base;
}

}  // namespace tfdist::io
