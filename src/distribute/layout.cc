// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// PlanLayout: choose the policy and the split as tf.distribute does, run each
// worker's pipeline, split, shard and hand batches out to replicas by step.

#include <fmt/format.h>

#include <sys/stat.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <span>
#include <thread>
#include <unordered_map>

#include "plan.h"
#include "policy.h"
#include "record_index_plan.h"
#include "tfdist/io/file_list.h"
#include "tfdist/io/record_index.h"
#include "tfdist/io/record_reader.h"
#include "tfdist/distribute/distribute.h"

namespace tfdist::dist {
namespace {

using Batches = std::vector<std::vector<data::Element>>;

// Runs `pipeline` and returns up to `limit` elements.
// Past `limit` with `limit_is_error`: InvalidArgument, worded for a plan of
// `max_steps` steps or for one until the data ends.
Result<std::vector<data::Element>> Run(const data::Pipeline& pipeline,
                                       const data::BuildOptions& build, int64_t limit,
                                       bool limit_is_error, int64_t worker,
                                       std::optional<int64_t> max_steps = std::nullopt) {
  TFDIST_ASSIGN_OR_RETURN(auto dataset, data::BuildDataset(pipeline, build));
  TFDIST_ASSIGN_OR_RETURN(auto it, dataset->MakeIterator());
  std::vector<data::Element> out;
  for (;;) {
    data::Element e;
    bool end = false;
    TFDIST_RETURN_IF_ERROR(it->GetNext(e, end));
    if (end) break;
    if (static_cast<int64_t>(out.size()) >= limit) {
      if (!limit_is_error) break;
      if (max_steps) {
        return Status::InvalidArgument(fmt::format(
            "worker {} produced more than {} elements before step {}: layout keeps its plan in "
            "memory and plans at most {} elements per worker; give fewer --steps (tfdist run "
            "streams any number)",
            worker, limit, *max_steps, limit));
      }
      return Status::InvalidArgument(fmt::format(
          "worker {} produced more than {} elements: does the pipeline repeat() forever? "
          "Give --steps to plan that many global steps",
          worker, limit));
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> Names(const std::vector<data::Element>& elements) {
  std::vector<std::string> names;
  names.reserve(elements.size());
  for (const auto& e : elements) names.push_back(e.bytes);
  return names;
}

Batches ItemsOf(std::vector<data::Element> elements) {
  Batches batches;
  batches.reserve(elements.size());
  for (auto& e : elements) batches.push_back(std::move(e.items));
  return batches;
}

// Keeps positions p % n == i (the shard() DATA sharding appends).
template <typename T>
std::vector<T> Shard(std::vector<T> in, int64_t n, int64_t i) {
  std::vector<T> out;
  for (size_t p = static_cast<size_t>(i); p < in.size(); p += static_cast<size_t>(n)) {
    out.push_back(std::move(in[p]));
  }
  return out;
}

std::vector<uint64_t> SizesOf(const Batches& batches) {
  std::vector<uint64_t> sizes;
  sizes.reserve(batches.size());
  for (const auto& b : batches) sizes.push_back(b.size());
  return sizes;
}

// Whether some output batch takes elements from two input batches (both
// are order-preserving cuts of the same elements).
bool CrossesBatches(const std::vector<uint64_t>& input, const std::vector<uint64_t>& output) {
  std::vector<uint64_t> input_ends;
  uint64_t n = 0;
  for (uint64_t b : input) input_ends.push_back(n += b);
  uint64_t start = 0;
  for (uint64_t b : output) {
    const uint64_t end = start + b;
    auto first_end = std::upper_bound(input_ends.begin(), input_ends.end(), start);
    if (b > 0 && first_end != input_ends.end() && end > *first_end) return true;
    start = end;
  }
  return false;
}

// The warning when the batch-sizes split differs from the legacy split the
// distributed input guide prints (both cut the same elements in order, so
// comparing sizes compares contents). Added once.
void WarnGuideVersusCode(Decision& d, const std::vector<uint64_t>& input,
                         const std::vector<uint64_t>& split, const std::vector<uint64_t>& legacy) {
  const std::string prefix = "guide versus code:";
  if (split == legacy) return;
  for (const auto& w : d.warnings) {
    if (w.starts_with(prefix)) return;
  }
  d.warnings.push_back(fmt::format(
      "{} TensorFlow 2.x splits with batch_sizes_for_worker{}, so the per-replica batches differ "
      "from the legacy split that TensorFlow's distributed input guide prints (see them with "
      "--rebatch legacy)",
      prefix, CrossesBatches(input, split) ? ", taking batches across global batch boundaries" : ""));
}

// The warning for FILE sharding over uneven files.
void WarnUneven(Decision& d, const std::vector<uint64_t>& records, bool batched,
                uint64_t padded_steps) {
  const auto [lo, hi] = std::minmax_element(records.begin(), records.end());
  if (records.empty() || *lo == *hi) return;
  const double mean = static_cast<double>(std::accumulate(records.begin(), records.end(), uint64_t{0})) /
                      static_cast<double>(records.size());
  std::string counts;
  for (size_t w = 0; w < records.size() && w < 16; ++w) {
    counts += fmt::format("{}{}", w ? ", " : "", records[w]);
  }
  if (records.size() > 16) counts += ", ...";
  d.warnings.push_back(fmt::format(
      "FILE sharding over uneven files: records per worker {} (max/mean {:.2f}){}", counts,
      static_cast<double>(*hi) / mean,
      batched ? fmt::format("; {} step{} with replicas fed empty batches", padded_steps,
                            padded_steps == 1 ? "" : "s")
              : ""));
}

}  // namespace

// Bounds that keep the arithmetic below from overflowing.
constexpr int64_t kMaxSteps = int64_t{1} << 30;
// File names a layout lists (a repeat() forever before the reader would never end).
constexpr int64_t kMaxNames = 100'000'000;

// Names, or an error that says what went wrong.
Result<std::vector<std::string>> RunNames(const data::Pipeline& names,
                                          const data::BuildOptions& build) {
  Result<std::vector<data::Element>> elements = Run(names, build, kMaxNames, false, 0);
  if (!elements.ok()) return elements.status();
  if (static_cast<int64_t>(elements->size()) >= kMaxNames) {
    return Status::InvalidArgument(fmt::format(
        "the pipeline names {} files or more before its reader: does it repeat() the names "
        "forever?",
        kMaxNames));
  }
  return Names(*elements);
}

// The file names a pipeline's reader gets, as a set, without running it: a
// tfrecord source's list, or a list of names followed only by shuffles and
// prefetches with literal arguments (which change only the order); nullptr
// where other ops or symbolic arguments need the pipeline run.
const std::vector<std::string>* StaticNames(const data::Pipeline& p, const Structure& s) {
  if (!s.reader) return nullptr;
  if (const auto* t = std::get_if<data::TFRecordOp>(&p.ops[0].params)) return &t->files;
  const auto* listed = std::get_if<data::FromTensorSlicesOp>(&p.ops[0].params);
  if (listed == nullptr) return nullptr;
  using Symbol = data::IntArg::Symbol;
  for (size_t i = 1; i < *s.reader; ++i) {
    if (const auto* sh = std::get_if<data::ShuffleOp>(&p.ops[i].params)) {
      if (sh->buffer_size.symbol != Symbol::kLiteral || sh->buffer_size.value < 1) return nullptr;
    } else if (const auto* pf = std::get_if<data::PrefetchOp>(&p.ops[i].params)) {
      if (pf->buffer_size.symbol != Symbol::kLiteral || pf->buffer_size.value < 0) return nullptr;
    } else {
      return nullptr;
    }
  }
  return &listed->names;
}

Status CheckTopology(const DistributeOptions& options) {
  const int64_t W = options.topology.workers, R = options.topology.replicas;
  if (W < 1 || R < 1) {
    return Status::InvalidArgument(fmt::format(
        "the topology needs at least 1 worker and 1 replica per worker; got {} workers x {} "
        "replicas",
        W, R));
  }
  // Far beyond any cluster, and small enough that W x R and the per-worker
  // tables cannot overflow or exhaust memory.
  constexpr int64_t kMaxReplicasInSync = 1 << 20;
  if (W > kMaxReplicasInSync || R > kMaxReplicasInSync || W * R > kMaxReplicasInSync) {
    return Status::InvalidArgument(fmt::format(
        "the topology is too large: at most {} replicas in sync; got {} workers x {} replicas",
        kMaxReplicasInSync, W, R));
  }
  if (options.max_steps && (*options.max_steps < 0 || *options.max_steps > kMaxSteps)) {
    return Status::InvalidArgument(
        fmt::format("--steps must be in [0, {}]; got {}", kMaxSteps, *options.max_steps));
  }
  if (options.worker && (*options.worker < 0 || *options.worker >= W)) {
    return Status::InvalidArgument(fmt::format("--worker {} is not one of the {} workers (0 to {})",
                                               *options.worker, W, W - 1));
  }
  return Status::OK();
}

Status Decide(const data::Pipeline& pipeline, const Structure& s, const DistributeOptions& options,
              const data::BuildOptions& build, Decision& d) {
  const int64_t W = options.topology.workers;
  const int64_t N = options.topology.num_replicas_in_sync();
  // The policy.
  AutoShardPolicy applied = options.policy;
  if (options.policy == AutoShardPolicy::kAuto) {
    if (s.file_blocker.empty()) {
      applied = AutoShardPolicy::kFile;
      d.reason = "AUTO: the pipeline reads files, so FILE sharding applies";
    } else {
      applied = AutoShardPolicy::kData;
      d.reason = fmt::format("AUTO: FILE sharding cannot apply ({}), so DATA", s.file_blocker);
    }
  } else if (options.policy == AutoShardPolicy::kFile) {
    if (!s.file_blocker.empty() && W > 1) {
      return Status::InvalidArgument(fmt::format(
          "FILE sharding cannot apply: {}; use --policy DATA (or AUTO)", s.file_blocker));
    }
    d.reason = W == 1 ? "FILE: one worker, nothing to shard" : "FILE: the file names are sharded";
  } else if (options.policy == AutoShardPolicy::kData) {
    d.reason = "DATA: every worker runs the whole pipeline and keeps its share of the pieces";
  } else if (options.policy == AutoShardPolicy::kOff) {
    d.reason = "OFF: no sharding, every worker reads everything";
  } else {
    d.reason = "HINT: shard(SHARD_HINT, SHARD_HINT) becomes shard(num_workers, worker)";
  }
  d.applied = applied;
  if (applied == AutoShardPolicy::kData && W > 1) {
    d.warnings.push_back(fmt::format(
        "DATA sharding: each of the {} workers reads the whole dataset and keeps 1/{} of it "
        "({}x the reads of FILE sharding)",
        W, W, W));
  }

  // The split.
  if (!s.batched) {
    d.split = Split::kNone;
    d.split_reason = "the pipeline does not end in batch(): no split";
  } else if (applied == AutoShardPolicy::kData) {
    d.split = Split::kLegacy;
    d.split_reason = "DATA sharding forces the legacy split (RebatchDataset)";
    if (options.split == Split::kBatchSizes) {
      d.warnings.push_back(
          "--rebatch batch-sizes does not apply under DATA sharding; "
          "the legacy split is used, as in TensorFlow");
    }
    if (options.split == Split::kNone) {
      d.split = Split::kNone;
      d.split_reason = "--rebatch none: each element is one replica's batch";
    }
  } else if (options.split == Split::kAuto) {
    if (N == 1) {
      d.split = Split::kNone;
      d.split_reason = "one replica in sync: nothing to split";
    } else if (s.global_batch_size) {
      d.split = Split::kBatchSizes;
      d.split_reason = fmt::format(
          "the global batch size {} is static: RebatchDatasetV2 with batch_sizes_for_worker",
          *s.global_batch_size);
    } else {
      d.split = Split::kLegacy;
      d.split_reason = "the global batch size is not static: legacy RebatchDataset";
    }
  } else {
    d.split = options.split;
    d.split_reason = fmt::format("--rebatch {}", SplitName(options.split));
    if (options.split == Split::kBatchSizes && !s.global_batch_size) {
      return Status::InvalidArgument(
          "--rebatch batch-sizes needs a static global batch size: batch(G) with a number, "
          "followed only by prefetch, repeat, shard, shuffle, skip or take");
    }
  }

  // FILE with several workers: are there enough files? (Counted up to W.)
  if (applied == AutoShardPolicy::kFile && W > 1) {
    uint64_t found = 0;
    if (const std::vector<std::string>* listed = StaticNames(pipeline, s)) {
      found = std::min<uint64_t>(listed->size(), static_cast<uint64_t>(W));
    } else {
      TFDIST_ASSIGN_OR_RETURN(auto names, Run(FileNames(pipeline, s), build, W, false, 0));
      found = names.size();
    }
    d.num_files = found;
    if (found > 0 && found < static_cast<uint64_t>(W)) {
      return Status::InvalidArgument(fmt::format(
          "FILE sharding needs at least {0} files for {0} workers; found {1} (use --policy "
          "DATA, or split the data into more files with tfdist reshard)",
          W, found));
    }
  }

  return Status::OK();
}

void DecideFromFunction(const Structure& s, Decision& d) {
  d.applied = AutoShardPolicy::kOff;
  d.reason =
      "distribute_datasets_from_function: the input function is each worker's pipeline; "
      "nothing is sharded or split by tf.distribute";
  d.split = Split::kNone;
  d.split_reason = "distribute_datasets_from_function does not split batches";
  if (s.shard_after_unseeded_shuffle) {
    d.warnings.push_back(
        "shard() follows an unseeded shuffle of file names: each worker shuffles differently, "
        "so workers disagree on the order and files are read twice or never; give the "
        "shuffle a seed, or shard before shuffling");
  }
}

Result<data::Pipeline> ExpandListFiles(const data::Pipeline& in, const io::FolderListings& listings) {
  data::Pipeline out = in;
  const auto* l = std::get_if<data::ListFilesOp>(&in.ops[0].params);
  if (l == nullptr) return out;
  Result<std::vector<std::string>> files = io::ExpandFilePatterns(l->patterns, listings);
  if (!files.ok()) {
    return data::PositionError(in.text, in.ops[0].pos,
                               fmt::format("list_files: {}", files.status().message()));
  }
  const int64_t n = static_cast<int64_t>(files->size());
  out.ops[0].params = data::FromTensorSlicesOp{std::move(*files)};
  if (l->shuffle) {
    data::ShuffleOp shuffle;
    shuffle.buffer_size.value = std::max<int64_t>(n, 1);
    shuffle.buffer_size.pos = in.ops[0].pos;
    shuffle.seed = l->seed;
    out.ops.insert(out.ops.begin() + 1, data::Op{shuffle, "shuffle", in.ops[0].pos});
  }
  return out;
}

Result<Distribution> PlanDistribution(const data::Pipeline& original,
                                      const DistributeOptions& options,
                                      const data::BuildOptions& build) {
  Distribution out;
  TFDIST_ASSIGN_OR_RETURN(out.pipeline, ExpandListFiles(original));
  TFDIST_RETURN_IF_ERROR(CheckTopology(options));
  out.build = build;
  if (!out.build.default_seed)
    out.build.default_seed = (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  const Structure& s = out.structure = Analyze(out.pipeline);
  Decision& d = out.decision;
  d.requested = options.policy;
  d.batched = s.batched;
  d.global_batch_size = s.global_batch_size;
  d.drop_remainder = s.drop_remainder;
  if (options.api == Api::kFromFunction) {
    DecideFromFunction(s, d);
    return out;
  }
  TFDIST_RETURN_IF_ERROR(Decide(out.pipeline, s, options, out.build, d));
  out.shard_files = d.applied == AutoShardPolicy::kFile && options.topology.workers > 1;
  // DATA with index files: the pipeline runs over records without their
  // payloads, and each worker reads only those it keeps.
  TFDIST_ASSIGN_OR_RETURN(out.build.deferred_payloads,
                          PlanRecordIndex(out.pipeline, s, options, out.build, d));
  return out;
}

std::optional<data::Pipeline> Distribution::WorkerShard(const DistributeOptions& options,
                                                        int64_t w) const {
  if (!shard_files) return std::nullopt;
  return ShardFiles(pipeline, structure, options.topology.workers, w);
}

data::BuildOptions Distribution::WorkerBuild(const DistributeOptions& options, int64_t w) const {
  const Topology& t = options.topology;
  data::BuildOptions b = build;
  if (options.api == Api::kFromFunction) {
    b.context = data::InputContext{t.workers, w, t.num_replicas_in_sync()};
  } else if (decision.applied == AutoShardPolicy::kHint) {
    b.shard_hint = std::make_pair(t.workers, w);
  }
  b.bytes_read = std::make_shared<std::atomic<uint64_t>>(0);
  return b;
}

Result<Layout> PlanLayout(const data::Pipeline& original, const DistributeOptions& options,
                          const data::BuildOptions& build_in) {
  TFDIST_ASSIGN_OR_RETURN(const Distribution dist, PlanDistribution(original, options, build_in));
  const data::Pipeline& pipeline = dist.pipeline;
  const Structure& s = dist.structure;
  const Topology& t = options.topology;
  const int64_t W = t.workers, R = t.replicas, N = t.num_replicas_in_sync();

  Layout layout;
  layout.topology = t;
  layout.api = options.api;
  Decision& d = layout.decision;
  d = dist.decision;

  // With --steps, read enough for that many steps on every worker: DATA keeps
  // one element (or piece) in W, so read W times as much; more is harmless.
  // The plan is kept in memory, so never more than max_elements elements per
  // worker: beyond that, --steps is an error as an endless pipeline is.
  const int64_t wanted =
      options.max_steps ? (*options.max_steps + 1) * R * W + 1 : options.max_elements;
  const int64_t limit = std::min(wanted, options.max_elements);
  const bool limit_is_error = !options.max_steps || wanted > options.max_elements;
  std::vector<Batches> per_worker(static_cast<size_t>(W));
  std::vector<std::vector<data::Element>> streams(static_cast<size_t>(W));
  layout.workers.resize(static_cast<size_t>(W));
  for (int64_t w = 0; w < W; ++w) layout.workers[static_cast<size_t>(w)].worker = w;

  auto files_of = [&](const data::Pipeline& p,
                      const data::BuildOptions& b) -> Result<std::vector<std::string>> {
    const Structure ps = Analyze(p);
    if (!ps.reader) return std::vector<std::string>{};
    return RunNames(FileNames(p, ps), b);
  };

  if (options.api == Api::kFromFunction) {
    for (int64_t w = 0; w < W; ++w) {
      const data::BuildOptions b = dist.WorkerBuild(options, w);
      TFDIST_ASSIGN_OR_RETURN(auto elements,
                              Run(pipeline, b, limit, limit_is_error, w, options.max_steps));
      layout.workers[static_cast<size_t>(w)].bytes_read = b.bytes_read->load();
      TFDIST_ASSIGN_OR_RETURN(layout.workers[static_cast<size_t>(w)].files, files_of(pipeline, b));
      if (s.batched) {
        per_worker[static_cast<size_t>(w)] = ItemsOf(std::move(elements));
      } else {
        streams[static_cast<size_t>(w)] = std::move(elements);
      }
    }
  } else {
    const AutoShardPolicy applied = d.applied;
    const bool shard_files = dist.shard_files;
    const bool deferred = dist.build.deferred_payloads;  // each worker reads what it keeps (below)

    // Each worker's elements.
    const bool same_for_all = !shard_files && applied != AutoShardPolicy::kHint;
    std::vector<data::Element> shared;
    uint64_t shared_bytes_read = 0;
    bool truncated = false;  // --steps stopped the reading early
    for (int64_t w = 0; w < W; ++w) {
      const std::optional<data::Pipeline> shard = dist.WorkerShard(options, w);
      const data::Pipeline& p = shard ? *shard : pipeline;
      const data::BuildOptions b = dist.WorkerBuild(options, w);
      std::vector<data::Element> elements;
      if (same_for_all && w > 0) {
        elements = shared;
      } else {
        TFDIST_ASSIGN_OR_RETURN(elements, Run(p, b, limit, limit_is_error, w, options.max_steps));
        truncated = truncated || static_cast<int64_t>(elements.size()) >= limit;
        if (same_for_all) shared = elements;
        shared_bytes_read = b.bytes_read->load();
      }
      // Workers running the same pipeline read the same bytes.
      layout.workers[static_cast<size_t>(w)].bytes_read = shared_bytes_read;
      TFDIST_ASSIGN_OR_RETURN(layout.workers[static_cast<size_t>(w)].files, files_of(p, b));
      if (!s.batched) {
        streams[static_cast<size_t>(w)] = std::move(elements);
        continue;
      }
      Batches batches = ItemsOf(std::move(elements));
      Batches split;
      switch (d.split) {
        case Split::kBatchSizes:
          split =
              RebatchBySizes(batches, BatchSizesForWorker(*s.global_batch_size, W, R, w), false);
          WarnGuideVersusCode(d, SizesOf(batches), SizesOf(split),
                              SizesOf(RebatchLegacy(batches, N)));
          break;
        case Split::kLegacy:
          split = RebatchLegacy(batches, N);
          break;
        default:
          split = std::move(batches);
          break;
      }
      per_worker[static_cast<size_t>(w)] = std::move(split);
    }

    // DATA: worker w keeps pieces (or elements) w, w+W, ...; each share must
    // be non-empty unless there is nothing at all.
    if (applied == AutoShardPolicy::kData && W > 1) {
      const size_t total = s.batched ? per_worker[0].size() : streams[0].size();
      if (total > 0 && total < static_cast<size_t>(W) && !truncated) {
        return Status::InvalidArgument(fmt::format(
            "DATA sharding needs at least {0} {1} for {0} workers, so that each worker gets "
            "one; found {2}",
            W, s.batched ? "per-replica batches" : "elements", total));
      }
      for (int64_t w = 0; w < W; ++w) {
        if (s.batched) {
          per_worker[static_cast<size_t>(w)] =
              Shard(std::move(per_worker[static_cast<size_t>(w)]), W, w);
        } else {
          streams[static_cast<size_t>(w)] = Shard(std::move(streams[static_cast<size_t>(w)]), W, w);
        }
        // Index files: read the payloads of this worker's records (only the
        // worker shown, with --worker).
        if (deferred && (!options.worker || *options.worker == w)) {
          data::PayloadFetcher fetcher;
          for (auto& piece : per_worker[static_cast<size_t>(w)]) fetcher.Add(std::span(piece));
          fetcher.Add(std::span(streams[static_cast<size_t>(w)]));
          TFDIST_RETURN_IF_ERROR(fetcher.Fetch());
          layout.workers[static_cast<size_t>(w)].bytes_read += fetcher.bytes_read();
        }
      }
    }
  }

  // Global steps: step k takes R batches from every worker; a replica
  // without data gets an empty batch while any replica has data.
  if (s.batched) {
    size_t steps = 0;
    for (const auto& b : per_worker)
      steps = std::max(steps, (b.size() + R - 1) / static_cast<size_t>(R));
    if (options.max_steps) steps = std::min(steps, static_cast<size_t>(*options.max_steps));
    // TensorFlow's one exception: one worker and statically shaped batches
    // (no split, drop_remainder): a step with a replica short of data is
    // dropped and the iteration ends.
    const bool static_shapes = W == 1 && d.split == Split::kNone && s.drop_remainder;
    for (size_t k = 0; k < steps; ++k) {
      Step step;
      step.step = static_cast<int64_t>(k) + 1;
      for (int64_t w = 0; w < W; ++w) {
        for (int64_t r = 0; r < R; ++r) {
          ReplicaBatch rb;
          rb.worker = w;
          rb.replica = r;
          const size_t i = k * static_cast<size_t>(R) + static_cast<size_t>(r);
          const auto& mine = per_worker[static_cast<size_t>(w)];
          if (i < mine.size()) {
            rb.elements = mine[i];
          } else {
            rb.padding = true;
          }
          step.dropped = step.dropped || (static_shapes && rb.padding);
          step.batches.push_back(std::move(rb));
        }
      }
      layout.steps.push_back(std::move(step));
      if (layout.steps.back().dropped) break;
    }
  }
  // FILE sharding over uneven files: who reads more, and who sits idle.
  if (d.applied == AutoShardPolicy::kFile && W > 1) {
    std::vector<uint64_t> records(static_cast<size_t>(W), 0);
    for (int64_t w = 0; w < W; ++w) {
      for (uint64_t n : SizesOf(per_worker[static_cast<size_t>(w)])) records[static_cast<size_t>(w)] += n;
      records[static_cast<size_t>(w)] += streams[static_cast<size_t>(w)].size();
    }
    uint64_t padded_steps = 0;
    for (const Step& step : layout.steps) {
      padded_steps += std::any_of(step.batches.begin(), step.batches.end(),
                                  [](const ReplicaBatch& b) { return b.padding; });
    }
    WarnUneven(d, records, s.batched, padded_steps);
  }
  // Without batches there are no steps: --steps N shows N elements a worker.
  if (!s.batched && options.max_steps) {
    for (auto& stream : streams) {
      if (static_cast<int64_t>(stream.size()) > *options.max_steps) {
        stream.resize(static_cast<size_t>(*options.max_steps));
      }
    }
  }
  for (int64_t w = 0; w < W; ++w) {
    WorkerLayout& wl = layout.workers[static_cast<size_t>(w)];
    wl.elements = std::move(streams[static_cast<size_t>(w)]);
    wl.batches = std::move(per_worker[static_cast<size_t>(w)]);
  }
  if (options.worker) {
    WorkerLayout only = std::move(layout.workers[static_cast<size_t>(*options.worker)]);
    layout.workers.clear();
    layout.workers.push_back(std::move(only));
    for (Step& step : layout.steps) {
      std::erase_if(step.batches,
                    [&](const ReplicaBatch& b) { return b.worker != *options.worker; });
    }
  }
  return layout;
}

}  // namespace tfdist::dist

namespace tfdist::dist {
namespace {

// The sizes of the per-replica batches a worker with `n` records produces:
// batch(G) then the split, counted as RebatchBySizes/RebatchLegacy would cut.
std::vector<uint64_t> OutputSizes(uint64_t n, int64_t g, bool drop, Split split, int64_t workers,
                                  int64_t replicas, int64_t worker) {
  const uint64_t G = static_cast<uint64_t>(g);
  const uint64_t N = static_cast<uint64_t>(workers * replicas);
  std::vector<uint64_t> in(n / G, G);
  if (n % G != 0 && !drop) in.push_back(n % G);
  if (split == Split::kNone) return in;
  std::vector<uint64_t> out;
  if (split == Split::kLegacy) {
    for (uint64_t b : in) {
      const uint64_t per = (b + N - 1) / N;
      for (uint64_t i = 0; i < N; ++i) {
        const uint64_t begin = std::min(b, per * i);
        out.push_back(std::min(b, begin + per) - begin);
      }
    }
    return out;
  }
  const std::vector<int64_t> sizes = BatchSizesForWorker(g, workers, replicas, worker);
  uint64_t left = 0;
  for (uint64_t b : in) left += b;
  for (size_t i = 0;; i = (i + 1) % sizes.size()) {
    const uint64_t desired = static_cast<uint64_t>(sizes[i]);
    const uint64_t take = std::min(desired, left);
    left -= take;
    if (take == 0 && desired > 0) break;  // nothing left for a batch that wants some
    out.push_back(take);
    if (take < desired) break;  // a short batch: the input ended
  }
  return out;
}

}  // namespace

LayoutSummary Summarize(const Layout& l) {
  LayoutSummary out;
  out.decision = l.decision;
  out.topology = l.topology;
  std::map<int64_t, WorkerSummary> rows;
  for (const auto& w : l.workers) {
    WorkerSummary& r = rows[w.worker];
    r.worker = w.worker;
    r.files = w.files.size();
    r.bytes_read = w.bytes_read;
    for (const auto& e : w.elements) {
      ++r.records;
      r.bytes += e.PayloadBytes();
    }
  }
  for (const Step& s : l.steps) {
    uint64_t total = 0;
    std::map<int64_t, bool> has_data;
    for (const ReplicaBatch& b : s.batches) {
      WorkerSummary& r = rows[b.worker];
      if (b.padding) {
        ++r.empty_batches;
        continue;
      }
      ++r.batches;
      if (b.elements.empty()) ++r.empty_batches;
      has_data[b.worker] = true;
      r.records += b.elements.size();
      for (const auto& e : b.elements) r.bytes += e.PayloadBytes();
      total += b.elements.size();
    }
    for (auto& [w, r] : rows) r.idle_steps += has_data[w] ? 0 : 1;
    const auto& g = l.decision.global_batch_size;
    if (g && total < static_cast<uint64_t>(*g)) ++out.short_steps;
    out.dropped_step = out.dropped_step || s.dropped;
  }
  out.steps = l.steps.size();
  for (auto& [w, r] : rows) out.workers.push_back(r);
  return out;
}

Result<std::optional<LayoutSummary>> SummarizeFiles(
    const data::Pipeline& original, const DistributeOptions& options,
    const data::BuildOptions& build_in, const std::function<void(uint64_t, uint64_t)>& progress) {
  using None = std::optional<LayoutSummary>;
  if (options.api != Api::kDistribute || options.max_steps || options.worker) return None();
  // The folders' directory indexes are read first. Where one's listing is
  // current, list_files takes the folder's names from it instead of reading
  // the folder. Meanwhile, the entries the patterns match are checked (one
  // stat each) on the other core, where the summary will likely apply.
  std::map<std::string, std::unique_ptr<io::DirectoryIndex>> early;  // by folder
  io::FolderListings listings;                                            // views into `early`
  std::jthread checker;
  if (const auto* l = std::get_if<data::ListFilesOp>(&original.ops[0].params)) {
    const Structure s0 = Analyze(original);
    const bool may_apply =
        s0.batched && s0.global_batch_size && s0.reader && !s0.drop_remainder &&
        (options.policy == AutoShardPolicy::kFile ||
         (options.policy == AutoShardPolicy::kAuto && s0.file_blocker.empty()));
    const auto* reader =
        s0.reader ? std::get_if<data::InterleaveOp>(&original.ops[*s0.reader].params) : nullptr;
    if (may_apply && reader != nullptr && reader->compression != io::Compression::kGzip &&
        reader->compression != io::Compression::kZlib) {
      std::map<std::string, std::vector<io::FolderPattern>> by_dir;
      for (const std::string& pattern : l->patterns) {
        if (std::optional<io::FolderPattern> f = io::FolderPattern::Split(pattern)) {
          by_dir[f->dir].push_back(std::move(*f));
        }
      }
      for (const auto& [dir, patterns] : by_dir) {
        std::unique_ptr<io::DirectoryIndex>& index = early[dir];
        index = io::DirectoryIndex::Open(dir);
        if (auto names = index->Listing()) listings.emplace(dir, std::move(*names));
      }
      // (The thread only sets the entries' states; list_files reads their names.)
      checker = std::jthread([&early, by_dir = std::move(by_dir)] {
        for (const auto& [dir, patterns] : by_dir) {
          early.at(dir)->Check([&](std::string_view name) {
            return std::any_of(patterns.begin(), patterns.end(),
                               [&](const io::FolderPattern& f) { return f.Matches(name); });
          });
        }
      });
    }
  }
  TFDIST_ASSIGN_OR_RETURN(const data::Pipeline pipeline, ExpandListFiles(original, listings));
  TFDIST_RETURN_IF_ERROR(CheckTopology(options));
  const Structure s = Analyze(pipeline);
  if (!s.batched || !s.global_batch_size || !s.reader || s.drop_remainder) return None();
  if (*s.global_batch_size < 1) return None();  // the full layout reports it
  // Only ops that keep the record count between the reader and the end.
  int batches = 0;
  for (size_t i = *s.reader + 1; i < pipeline.ops.size(); ++i) {
    const auto& op = pipeline.ops[i];
    if (std::holds_alternative<data::BatchOp>(op.params)) {
      ++batches;
    } else if (!std::holds_alternative<data::ShuffleOp>(op.params) &&
               !std::holds_alternative<data::PrefetchOp>(op.params)) {
      return None();
    }
  }
  if (batches != 1) return None();
  data::BuildOptions build = build_in;
  if (!build.default_seed) build.default_seed = 0;
  LayoutSummary out;
  out.topology = options.topology;
  Decision& d = out.decision;
  d.requested = options.policy;
  d.batched = true;
  d.global_batch_size = s.global_batch_size;
  d.drop_remainder = s.drop_remainder;
  TFDIST_RETURN_IF_ERROR(Decide(pipeline, s, options, build, d));
  if (d.applied != AutoShardPolicy::kFile) return None();

  // The file names in reading order before any shuffle: shuffles of names
  // move after the shard, so they change no worker's set of files.
  std::vector<std::string> run_names;  // when the names come from running the pipeline
  std::span<const std::string> files;
  if (const std::vector<std::string>* listed = StaticNames(pipeline, s)) {
    files = *listed;
  } else {
    data::Pipeline names = FileNames(pipeline, s);
    std::erase_if(names.ops, [&](const data::Op& op) {
      return &op != &names.ops[0] && std::holds_alternative<data::ShuffleOp>(op.params);
    });
    TFDIST_ASSIGN_OR_RETURN(run_names, RunNames(names, build));
    files = run_names;
  }
  io::Compression compression = io::Compression::kNone;
  if (const auto* t = std::get_if<data::TFRecordOp>(&pipeline.ops[0].params)) {
    compression = t->compression;
  } else if (const auto* i = std::get_if<data::InterleaveOp>(&pipeline.ops[*s.reader].params)) {
    compression = i->compression;
  }
  const bool indexes_apply =
      compression != io::Compression::kGzip && compression != io::Compression::kZlib;

  // Distinct files: adjacent in a sorted list (list_files'), else by hashing.
  std::vector<std::string_view> unique;  // views into `files`
  std::vector<size_t> file_slot(files.size());
  bool sorted = true;
  for (size_t f = 0; f < files.size() && sorted; ++f) {
    const int order = f == 0 ? -1 : files[f - 1].compare(files[f]);
    if (order < 0) unique.push_back(files[f]);
    sorted = order <= 0;
    file_slot[f] = unique.size() - 1;
  }
  if (!sorted) {
    unique.clear();
    std::unordered_map<std::string_view, size_t> slot_of;
    for (size_t f = 0; f < files.size(); ++f) {
      auto [it, inserted] = slot_of.emplace(files[f], unique.size());
      if (inserted) unique.push_back(files[f]);
      file_slot[f] = it->second;
    }
  }

  // Records per distinct file: from its folder's directory index when an
  // entry matches the file, else from FILE.idx, else by scanning it.
  enum Source : uint8_t { kScanned, kFileIndex, kDirectoryIndex };
  std::vector<io::FileRecords> counts(unique.size());
  std::vector<uint8_t> source(unique.size(), kScanned);
  std::atomic<uint64_t> done{0};
  uint64_t stale = 0;
  bool directory_index_found = false;
  // Each file's folder, open (its DirectoryIndex), and base name: FILE.idx
  // is then read relative to the folder.
  std::vector<std::unique_ptr<io::DirectoryIndex>> opened;
  std::vector<const io::DirectoryIndex*> folder_of_slot(unique.size(), nullptr);
  std::vector<std::string_view> folder_name_of_slot(unique.size());
  std::vector<std::string_view> base_of_slot(unique.size());
  if (indexes_apply) {
    struct Folder {
      std::vector<std::string_view> names;  // base names
      std::vector<size_t> slots;
    };
    std::vector<std::string_view> folder_dirs;
    std::vector<Folder> folders;
    std::unordered_map<std::string_view, size_t> folder_of;
    size_t last = 0;
    for (size_t u = 0; u < unique.size(); ++u) {
      const std::string_view path = unique[u];
      if (path == "-") continue;  // standard input
      const size_t slash = path.rfind('/');
      const std::string_view dir = slash == std::string_view::npos ? std::string_view()
                                   : slash == 0                    ? path.substr(0, 1)
                                                                   : path.substr(0, slash);
      const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
      if (folders.empty() || folder_dirs[last] != dir) {
        auto [it, inserted] = folder_of.emplace(dir, folders.size());
        if (inserted) {
          folder_dirs.push_back(dir);
          folders.emplace_back();
        }
        last = it->second;
      }
      folders[last].names.push_back(base);
      folders[last].slots.push_back(u);
    }
    if (checker.joinable()) checker.join();
    for (size_t k = 0; k < folders.size(); ++k) {
      Folder& folder = folders[k];
      // In a sorted list, each folder's names come sorted.
      if (!sorted && !std::is_sorted(folder.names.begin(), folder.names.end())) {
        std::vector<size_t> order(folder.names.size());
        std::iota(order.begin(), order.end(), size_t{0});
        std::sort(order.begin(), order.end(),
                  [&](size_t a, size_t b) { return folder.names[a] < folder.names[b]; });
        Folder by_name;
        for (size_t i : order) {
          by_name.names.push_back(folder.names[i]);
          by_name.slots.push_back(folder.slots[i]);
        }
        folder = std::move(by_name);
      }
      const std::string dir(folder_dirs[k]);
      auto checked = early.find(dir);
      const io::DirectoryIndex* index = nullptr;
      if (checked != early.end() && checked->second) {
        index = checked->second.get();
      } else {
        opened.push_back(io::DirectoryIndex::Open(dir));
        index = opened.back().get();
      }
      for (size_t i = 0; i < folder.names.size(); ++i) {
        folder_of_slot[folder.slots[i]] = index;
        folder_name_of_slot[folder.slots[i]] = folder_dirs[k];
        base_of_slot[folder.slots[i]] = folder.names[i];
      }
      if (!index->found()) continue;
      const io::DirectoryLookup found = index->LookUp(folder.names);
      directory_index_found = true;
      if (!found.problem.empty()) {
        d.warnings.push_back(fmt::format(
            "{}/{} is ignored: {}; rewrite it with tfdist index --directory {} --force",
            dir.empty() ? "." : dir, io::kDirectoryIndexName, found.problem,
            dir.empty() ? "." : dir));
        continue;
      }
      stale += found.stale;
      for (size_t i = 0; i < folder.names.size(); ++i) {
        if (!found.matched[i]) continue;
        counts[folder.slots[i]] = found.counts[i];
        source[folder.slots[i]] = kDirectoryIndex;
        ++done;
      }
    }
    if (progress && done > 0) progress(done, unique.size());
  }
  std::vector<size_t> todo;
  for (size_t u = 0; u < unique.size(); ++u) {
    if (source[u] != kDirectoryIndex) todo.push_back(u);
  }
  std::vector<Status> errors(todo.size());
  tbb::parallel_for(size_t{0}, todo.size(), [&](size_t t) {
    const size_t u = todo[t];
    const std::string path(unique[u]);
    std::string why;
    if (indexes_apply) {
      const io::DirectoryIndex* folder = folder_of_slot[u];
      std::optional<io::IndexedCount> c =
          folder != nullptr && folder->dir_fd() >= 0
              ? io::ReadIndexAt(folder->dir_fd(), std::string(folder_name_of_slot[u]),
                                std::string(base_of_slot[u]), &why)
              : io::ReadIndex(path, "", &why);
      if (c) {
        counts[u] = {c->count.records, c->count.payload_bytes};
        source[u] = kFileIndex;
      }
    }
    if (source[u] == kScanned) {
      io::RecordReaderOptions o;
      o.compression = compression;
      io::RecordCount c = io::CountRecords(path, o);
      counts[u] = {c.records, c.payload_bytes};
      errors[t] = std::move(c.status);
    }
    const uint64_t n = ++done;
    if (progress && (n % 1024 == 0 || n == unique.size())) progress(n, unique.size());
  });
  for (const Status& e : errors) TFDIST_RETURN_IF_ERROR(e);
  const auto from = [&](Source k) {
    return static_cast<uint64_t>(std::count(source.begin(), source.end(), k));
  };
  const uint64_t from_directory = from(kDirectoryIndex), from_file = from(kFileIndex);
  const uint64_t scanned = unique.size() - from_directory - from_file;
  if (directory_index_found) {
    out.records_source = fmt::format(
        "{} file{} from {}, {} from index files, {} by scanning{}{}", from_directory,
        from_directory == 1 ? "" : "s", io::kDirectoryIndexName, from_file, scanned,
        stale == 0 ? ""
                   : fmt::format("; {} stale {} entr{} ignored", stale, io::kDirectoryIndexName,
                                 stale == 1 ? "y" : "ies"),
        listings.empty() ? ""
                         : fmt::format("; folder names from its {}", io::kDirectoryIndexName));
  } else {
    out.records_source = fmt::format("{} file{} from index files, {} by scanning", from_file,
                                     from_file == 1 ? "" : "s", scanned);
  }

  // Per worker: its files' records, then its per-replica batches counted
  // one worker at a time; only per-step totals are kept across workers.
  const int64_t W = options.topology.workers, R = options.topology.replicas;
  const int64_t G = *s.global_batch_size;
  const uint64_t R64 = static_cast<uint64_t>(R);
  std::vector<uint64_t> step_total;  // records per global step
  std::vector<uint64_t> lengths(static_cast<size_t>(W));
  bool guide_warned = false;
  out.workers.resize(static_cast<size_t>(W));
  // File f goes to worker f mod W: one pass in file order (a pass per worker,
  // striding W files, missed the cache at every file).
  for (size_t f = 0, w = 0; f < files.size(); ++f, w = w + 1 == out.workers.size() ? 0 : w + 1) {
    WorkerSummary& r = out.workers[w];
    const io::FileRecords& c = counts[file_slot[f]];
    ++r.files;
    r.records += c.records;
    r.bytes += c.payload_bytes;
  }
  for (int64_t w = 0; w < W; ++w) {
    WorkerSummary& r = out.workers[static_cast<size_t>(w)];
    r.worker = w;
    const std::vector<uint64_t> outputs = OutputSizes(r.records, G, false, d.split, W, R, w);
    if (d.split == Split::kBatchSizes && !guide_warned) {
      const size_t before = d.warnings.size();
      WarnGuideVersusCode(d, OutputSizes(r.records, G, false, Split::kNone, W, R, w), outputs,
                          OutputSizes(r.records, G, false, Split::kLegacy, W, R, w));
      guide_warned = d.warnings.size() > before;
    }
    lengths[static_cast<size_t>(w)] = outputs.size();
    r.batches = outputs.size();
    r.empty_batches = static_cast<uint64_t>(std::count(outputs.begin(), outputs.end(), 0));
    step_total.resize(std::max(step_total.size(), (outputs.size() + R64 - 1) / R64), 0);
    for (size_t i = 0; i < outputs.size(); ++i) step_total[i / R64] += outputs[i];
  }
  // Step k pads worker w's replicas where k*R + r >= its batches; the worker
  // sits idle in the steps after its last batch.
  const uint64_t steps = step_total.size();
  for (int64_t w = 0; w < W; ++w) {
    WorkerSummary& r = out.workers[static_cast<size_t>(w)];
    const uint64_t n = lengths[static_cast<size_t>(w)];
    r.empty_batches += steps * R64 - n;
    r.idle_steps = steps - (n + R64 - 1) / R64;
  }
  out.short_steps = static_cast<uint64_t>(
      std::count_if(step_total.begin(), step_total.end(),
                    [&](uint64_t t) { return t < static_cast<uint64_t>(G); }));
  const uint64_t fewest = *std::min_element(lengths.begin(), lengths.end());
  const uint64_t padded_steps = steps - std::min(steps, fewest / R64);
  out.steps = steps;
  if (W > 1) {
    std::vector<uint64_t> records;
    for (const auto& r : out.workers) records.push_back(r.records);
    WarnUneven(d, records, true, padded_steps);
  }
  return std::optional<LayoutSummary>(std::move(out));
}

}  // namespace tfdist::dist
