// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Planning a distribution: the I/O the decisions need (expanding globs,
// counting file names), then the decisions, then each worker's pipeline.

#include "plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <iterator>
#include <random>

namespace tfdist::dist {

Result<uint64_t> CountFileNames(const data::Pipeline& pipeline, const PipelineShape& shape,
                                const data::BuildOptions& build, uint64_t limit) {
  if (const StringList* listed = StaticFileNames(pipeline, shape)) {
    return std::min<uint64_t>(listed->size(), limit);
  }
  TFDIST_ASSIGN_OR_RETURN(auto names, data::BuildDataset(FileNames(pipeline, shape), build));
  TFDIST_ASSIGN_OR_RETURN(auto it, names->MakeIterator());
  uint64_t found = 0;
  for (; found < limit; ++found) {
    data::Element e;
    bool end = false;
    TFDIST_RETURN_IF_ERROR(it->GetNext(e, end));
    if (end) break;
  }
  return found;
}

namespace {

// FILE over several workers: the datasets concatenate() joins after the
// reader need a file name per worker too (TensorFlow shards each).
Status CheckJoinedFileCounts(const data::Pipeline& pipeline, const PipelineShape& shape,
                             const data::BuildOptions& build, int64_t workers) {
  for (size_t i = *shape.reader + 1; i < pipeline.ops.size(); ++i) {
    const auto* c = std::get_if<data::ConcatenateOp>(&pipeline.ops[i].params);
    if (c == nullptr) continue;
    const data::Pipeline& other = *c->dataset;
    const PipelineShape other_shape = Analyze(other);
    TFDIST_ASSIGN_OR_RETURN(const uint64_t found, CountFileNames(other, other_shape, build,
                                                                 static_cast<uint64_t>(workers)));
    if (Status s = CheckFileCount(found, workers); !s.ok()) {
      return data::PositionError(pipeline.text, pipeline.ops[i].pos,
                                 std::move(s).Annotate("concatenate()'s dataset"));
    }
    TFDIST_RETURN_IF_ERROR(CheckJoinedFileCounts(other, other_shape, build, workers));
  }
  return Status::OK();
}

// Worker w's seed for shuffles without any seed, from the run's: SplitMix64
// of the two, so that neighbouring workers' seeds share no bits by design.
uint64_t WorkerSeed(uint64_t run_seed, int64_t w) {
  uint64_t z = run_seed + static_cast<uint64_t>(w) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A shuffle with neither its own seed nor the program's: TensorFlow draws
// its seeds at random, so no order shown can be the one a run will get.
void WarnUnseeded(Distribution& d, const data::BuildOptions& build) {
  if (build.global_seed) return;
  bool unseeded = data::HasUnseededShuffle(d.pipeline);
  for (const data::Pipeline& p : d.worker_pipelines) {
    unseeded = unseeded || data::HasUnseededShuffle(p);
  }
  if (!unseeded) return;
  d.decision.Warn(WarningKind::kUnseededShuffle, data::kUnseededShuffleMessage,
                  Advice{Remedy::kSeedShuffles, ""});
}

}  // namespace

namespace {

// What list_files' matches warn of: a file listed twice (several patterns
// matching it, also by another spelling), two sets of shards of one prefix.
void ListWarnings(const StringList& files, size_t patterns, std::vector<Warning>& out) {
  const std::vector<std::pair<size_t, size_t>> same = io::SameFiles(files, patterns > 1);
  constexpr size_t kNamed = 10;
  for (size_t k = 0; k < same.size() && k < kNamed; ++k) {
    const auto [i, first] = same[k];
    out.push_back(
        {WarningKind::kFileListedTwice,
         files[i] == files[first]
             ? fmt::format("list_files: {} matched by more than one pattern; kept twice, as "
                           "TensorFlow reads it twice",
                           files[i])
             : fmt::format("list_files: {} matched by more than one pattern (the same file as "
                           "{}); kept twice, as TensorFlow reads it twice",
                           files[i], files[first]),
         {}});
  }
  if (same.size() > kNamed) {
    out.push_back({WarningKind::kFileListedTwice,
                   fmt::format("list_files: {} more files matched by more than one pattern; "
                               "each kept twice, as TensorFlow reads them",
                               same.size() - kNamed),
                   {}});
  }
  for (std::string& w : io::ShardSetWarnings(files)) {
    out.push_back({WarningKind::kTwoShardSets, "list_files: " + std::move(w), {}});
  }
}

}  // namespace

Result<data::Pipeline> ExpandListFiles(const data::Pipeline& in, const io::FolderListings& listings,
                                       std::vector<Warning>* warnings) {
  data::Pipeline out = in;
  const auto* l = std::get_if<data::ListFilesOp>(&in.ops[0].params);
  if (l == nullptr) return out;
  TFDIST_ASSIGN_OR_RETURN(std::vector<data::Op> ops,
                          data::LowerListFiles(in.ops[0], in.text, listings));
  if (warnings != nullptr) {
    ListWarnings(std::get<data::FromTensorSlicesOp>(ops[0].params).names, l->patterns.size(),
                 *warnings);
  }
  out.ops.erase(out.ops.begin());
  out.ops.insert(out.ops.begin(), std::make_move_iterator(ops.begin()),
                 std::make_move_iterator(ops.end()));
  return out;
}

Result<Distribution> PlanDistribution(const data::Pipeline& original,
                                      const DistributeOptions& options,
                                      const data::BuildOptions& build,
                                      const io::FolderListings& listings) {
  const Topology& t = options.topology;
  assert(!options.worker || (0 <= *options.worker && *options.worker < t.workers));
  assert(!options.max_steps || (0 <= *options.max_steps && *options.max_steps <= kMaxSteps));
  Distribution out;
  // Op seeds first, on the pipeline as the program made it: the rewrites
  // below move and drop shuffles, not the draws TensorFlow made for them.
  auto resolved = [&](const data::Pipeline& p) {
    return build.global_seed ? data::ResolveOpSeeds(p, *build.global_seed) : p;
  };
  std::vector<Warning> listed;
  TFDIST_ASSIGN_OR_RETURN(out.pipeline, ExpandListFiles(resolved(original), listings, &listed));
  TFDIST_RETURN_IF_ERROR(CheckTopology(t));
  out.build = build;
  if (!out.build.default_seed)
    out.build.default_seed = (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  out.shape = Analyze(out.pipeline);
  if (options.api == Api::kFromFunction) {
    if (options.worker_pipelines) {
      assert(options.worker_pipelines->size() == static_cast<size_t>(t.workers));
      for (const data::Pipeline& p : *options.worker_pipelines) {
        TFDIST_ASSIGN_OR_RETURN(data::Pipeline expanded, ExpandListFiles(resolved(p), listings));
        out.worker_pipelines.push_back(std::move(expanded));
      }
    }
    out.tally = std::make_shared<data::FileReadTally>();
    out.decision = DecideFromFunction(out.shape, options);
    out.decision.warnings.insert(out.decision.warnings.begin(), listed.begin(), listed.end());
    WarnUnseeded(out, build);
    return out;
  }
  TFDIST_ASSIGN_OR_RETURN(out.decision, Decide(out.shape, options));
  out.decision.warnings.insert(out.decision.warnings.begin(), listed.begin(), listed.end());
  WarnUnseeded(out, build);
  Decision& d = out.decision;
  if (d.ShardsFiles(t)) {
    TFDIST_ASSIGN_OR_RETURN(d.num_files, CountFileNames(out.pipeline, out.shape, out.build,
                                                        static_cast<uint64_t>(t.workers)));
    TFDIST_RETURN_IF_ERROR(CheckFileCount(*d.num_files, t.workers));
    TFDIST_RETURN_IF_ERROR(CheckJoinedFileCounts(out.pipeline, out.shape, out.build, t.workers));
  }
  // DATA read by index: the pipeline runs over record ids, and each worker
  // fetches the payloads of only those it keeps.
  TFDIST_ASSIGN_OR_RETURN(out.build.read_by_index,
                          PlanReadByIndex(out.pipeline, out.shape, options, out.build, d));
  return out;
}

std::optional<data::Pipeline> Distribution::WorkerPipeline(const Topology& t, int64_t w) const {
  if (!worker_pipelines.empty()) return worker_pipelines[static_cast<size_t>(w)];
  if (!decision.ShardsFiles(t)) return std::nullopt;
  return ShardFiles(pipeline, shape, t.workers, w);
}

data::BuildOptions Distribution::WorkerBuild(const DistributeOptions& options, int64_t w) const {
  const Topology& t = options.topology;
  data::BuildOptions b = build;
  b.counters = std::make_shared<data::ReadCounters>();
  b.counters->worker = w;
  if (options.api == Api::kFromFunction) {
    b.context = data::InputContext{t.workers, w, t.num_replicas_in_sync()};
    b.counters->tally = tally;
  } else if (decision.applied == AutoShardPolicy::kHint) {
    b.shard_hint = std::make_pair(t.workers, w);
  }
  const bool own_seed = options.api == Api::kFromFunction || options.worker_seeds;
  if (own_seed && w > 0 && b.default_seed) b.default_seed = WorkerSeed(*b.default_seed, w);
  return b;
}

bool Distribution::SamePipelineForAll(const DistributeOptions& options) const {
  return options.api == Api::kDistribute && !options.worker_seeds &&
         !decision.ShardsFiles(options.topology) && decision.applied != AutoShardPolicy::kHint;
}

}  // namespace tfdist::dist
