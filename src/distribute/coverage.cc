// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Record coverage: the duplicates and misses of a distribution, counted
// from the layout's summary where the seeds are fixed, and drawn by running
// every worker with a seed of its own where they are not.

#include "tfdist/distribute/coverage.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <unordered_map>
#include <variant>

#include "tfdist/base/interrupt.h"
#include "tfdist/distribute/execute.h"
#include "tfdist/distribute/shape.h"

namespace tfdist::dist {
namespace {

// ---- The sample of a draw ----

uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t HashBytes(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }

// A leaf element's identity: a record by its file and index (its payload
// when it names no file), an integer, a name; the same on every worker.
uint64_t LeafHash(const data::Element& e) {
  using Kind = data::Element::Kind;
  switch (e.kind) {
    case Kind::kRecord:
    case Kind::kRecordId:
      if (e.origin.file != nullptr) {
        return Mix(HashBytes(*e.origin.file) ^ Mix(e.origin.index + 0x9E3779B97F4A7C15ULL));
      }
      return Mix(HashBytes(e.payload()) ^ 0x243F6A8885A308D3ULL);
    case Kind::kInt:
      return Mix(static_cast<uint64_t>(e.int_value()) ^ 0x13198A2E03707344ULL);
    case Kind::kName:
      return Mix(HashBytes(e.bytes) ^ 0xA4093822299F31D0ULL);
    case Kind::kBatch:
    case Kind::kPair:
      break;
  }
  return 0;  // not a leaf
}

template <typename F>
void ForEachLeaf(const data::Element& e, const F& f) {
  if (e.kind == data::Element::Kind::kBatch) {
    for (const data::Element& item : e.items) ForEachLeaf(item, f);
  } else if (e.kind == data::Element::Kind::kPair) {
    if (!e.items.empty()) ForEachLeaf(e.items.front(), f);  // enumerate()'s element
  } else {
    f(LeafHash(e));
  }
}

// How many times each sampled record was fed, by the reference pass (one
// worker) and by the W workers. The sample is every record whose hash is
// at most limit(); when it would pass `cap` entries the limit halves and
// the entries above it go, so the counts of those kept stay complete.
class FeedSample {
 public:
  struct Entry {
    uint32_t reference = 0;  // feeds in the reference pass
    uint32_t feeds = 0;      // feeds by the workers
    int32_t first = -1;      // the first two workers that fed it
    int32_t second = -1;
  };

  explicit FeedSample(size_t cap) : cap_(std::max<size_t>(cap, 1)) {}

  void Reference(uint64_t h) {
    if (h > limit_) return;
    Entry& e = entries_[h];
    if (e.reference < UINT32_MAX) ++e.reference;
    Shrink();
  }
  void Feed(uint64_t h, int64_t worker) {
    if (h > limit_) return;
    Entry& e = entries_[h];
    if (e.feeds < UINT32_MAX) ++e.feeds;
    const auto w = static_cast<int32_t>(worker);
    if (e.first < 0) {
      e.first = w;
    } else if (e.second < 0 && e.first != w) {
      e.second = w;
    }
    Shrink();
  }

  uint64_t limit() const { return limit_; }
  const std::unordered_map<uint64_t, Entry>& entries() const { return entries_; }

 private:
  void Shrink() {
    while (entries_.size() > cap_) {
      limit_ >>= 1;
      std::erase_if(entries_, [&](const auto& kv) { return kv.first > limit_; });
    }
  }

  size_t cap_;
  uint64_t limit_ = UINT64_MAX;
  std::unordered_map<uint64_t, Entry> entries_;
};

// Feeds every per-replica batch of worker `w`'s pass to `f`.
template <typename F>
Status StreamWorker(const Execution& ex, int64_t w, const F& f) {
  TFDIST_ASSIGN_OR_RETURN(auto stream, ex.Open(w));
  std::vector<data::Element> batch;
  for (uint64_t n = 0;; ++n) {
    if (n % 4096 == 0 && Interrupted()) return Status::Interrupted();
    bool end = false;
    batch.clear();
    TFDIST_RETURN_IF_ERROR(stream->Next(batch, end));
    if (end) return Status::OK();
    for (const data::Element& e : batch) ForEachLeaf(e, f);
  }
}

// One draw: the reference pass (one worker, when `reference`), then every
// worker with a seed of its own, the sample counted.
Result<CoverageDraw> Draw(const data::Pipeline& pipeline, const DistributeOptions& options,
                          const data::BuildOptions& build, const CoverageOptions& coverage,
                          bool reference) {
  CoverageDraw draw;
  draw.seed = coverage.seed ? *coverage.seed
                            : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  data::BuildOptions b = build;
  b.default_seed = draw.seed;
  b.record_ids = data::RecordIds::kPlain;
  b.counters.reset();
  FeedSample sample(coverage.sample_cap);
  if (reference) {
    DistributeOptions one = options;
    one.topology.workers = 1;
    one.worker.reset();
    one.max_steps.reset();
    one.epochs = 1;
    one.worker_pipelines.reset();
    one.worker_seeds = false;
    one.read_by_index = false;
    if (one.api == Api::kDistribute && one.policy != AutoShardPolicy::kHint) {
      one.policy = AutoShardPolicy::kOff;
    }
    data::BuildOptions rb = b;
    rb.default_seed = Mix(draw.seed ^ 0x5851F42D4C957F2DULL);
    TFDIST_ASSIGN_OR_RETURN(const Execution ex, Execution::Plan(pipeline, one, rb));
    TFDIST_RETURN_IF_ERROR(StreamWorker(ex, 0, [&](uint64_t h) {
      ++draw.reference_records;
      sample.Reference(h);
    }));
  }
  DistributeOptions all = options;
  all.worker.reset();
  all.max_steps.reset();
  all.epochs = 1;
  all.worker_seeds = true;
  TFDIST_ASSIGN_OR_RETURN(const Execution ex, Execution::Plan(pipeline, all, b));
  for (int64_t w : ex.workers()) {
    TFDIST_RETURN_IF_ERROR(StreamWorker(ex, w, [&](uint64_t h) { sample.Feed(h, w); }));
  }
  draw.hash_limit = sample.limit();
  std::map<std::pair<int64_t, int64_t>, uint64_t> pairs;
  RecordCounts& c = draw.counts;
  for (const auto& [h, e] : sample.entries()) {
    ++c.records;
    const uint32_t expected = std::max<uint32_t>(e.reference, 1);
    if (e.feeds == 0) {
      ++c.missed;
    } else if (e.feeds > expected) {
      ++c.duplicated;
      c.extra_feeds += e.feeds - expected;
    } else {
      ++draw.once;
    }
    if (e.second >= 0) ++pairs[{std::min(e.first, e.second), std::max(e.first, e.second)}];
  }
  for (const auto& [pair, n] : pairs) draw.overlaps.push_back({pair, n});
  std::stable_sort(draw.overlaps.begin(), draw.overlaps.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  if (draw.overlaps.size() > 3) draw.overlaps.resize(3);
  return draw;
}

// ---- What the pipeline holds ----

// Whether `op` draws an order no seed fixes: a random op with no op seed,
// or a concatenate() whose dataset has one.
bool Unseeded(const data::Op& op) {
  if (const auto* seed = data::OpSeedOf(op); seed != nullptr && !seed->has_value()) return true;
  const auto* c = std::get_if<data::ConcatenateOp>(&op.params);
  return c != nullptr && c->dataset && data::HasUnseededShuffle(*c->dataset);
}

// The first op of [begin, end) that is Unseeded, or nullopt.
std::optional<size_t> FirstUnseeded(const data::Pipeline& p, size_t begin, size_t end) {
  for (size_t i = begin; i < std::min(end, p.ops.size()); ++i) {
    if (Unseeded(p.ops[i])) return i;
  }
  return std::nullopt;
}

// The first shard() that each worker cuts by its own index: one whose
// index is ctx.input_pipeline_id (from-function), or whose num_shards is
// SHARD_HINT (the HINT policy).
std::optional<size_t> WorkerShard(const data::Pipeline& p, bool hint) {
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const auto* s = std::get_if<data::ShardOp>(&p.ops[i].params);
    if (s == nullptr) continue;
    if (hint ? s->num_shards.symbol == data::IntArg::Symbol::kShardHint
             : s->index.symbol == data::IntArg::Symbol::kInputPipelineId) {
      return i;
    }
  }
  return std::nullopt;
}

std::string OpAt(const data::Pipeline& p, size_t i) {
  return fmt::format("{}() at {}", p.ops[i].name, data::DescribePosition(p.text, p.ops[i].pos));
}

// The change that seeds the random op `i`.
std::string SeedFix(const data::Pipeline& p, size_t i) {
  const data::Op& op = p.ops[i];
  if (std::holds_alternative<data::ListFilesOp>(op.params)) {
    return fmt::format("`list_files(..., seed=S)` (or `shuffle=False`) at {}",
                       data::DescribePosition(p.text, op.pos));
  }
  if (std::holds_alternative<data::ShuffleOp>(op.params)) {
    return fmt::format("`shuffle(..., seed=S)` at {}", data::DescribePosition(p.text, op.pos));
  }
  return fmt::format("a seed on every shuffle of the dataset joined by {}", OpAt(p, i));
}

// The k of a draw's "1/k" sample of records.
uint64_t SampleDenominator(const CoverageDraw& draw) {
  return static_cast<uint64_t>(std::ldexp(1.0, 64) / (static_cast<double>(draw.hash_limit) + 1));
}

std::string Fraction(double x) { return fmt::format("{:.3f}", x); }

std::string Share(uint64_t part, uint64_t whole) {
  return whole == 0 ? "0.000" : Fraction(static_cast<double>(part) / static_cast<double>(whole));
}

// The policies, in the API's terms (the command words them as --policy).
const char* kPolicyFile =
    "the FILE policy (`options.experimental_distribute.auto_shard_policy = "
    "tf.data.experimental.AutoShardPolicy.FILE`)";
const char* kPolicyData =
    "the DATA policy (`options.experimental_distribute.auto_shard_policy = "
    "tf.data.experimental.AutoShardPolicy.DATA`)";
const char* kShardByContext =
    "`ds = ds.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)`";

std::string DeterminismText(const CheckContext& ctx) {
  constexpr const char* kError =
      "with tf.config.experimental.enable_op_determinism() it raises RuntimeError \"Random ops "
      "require a seed to be set when determinism is enabled. Please set a seed before running "
      "the op, e.g. by calling tf.random.set_seed(1).\"";
  if (ctx.version.minor >= 8) return kError;
  return "";
}

// ---- The findings ----

struct Facts {
  const data::Pipeline& pipeline;
  const DistributeOptions& options;
  const LayoutSummary& summary;
  const CheckContext& ctx;
  int64_t W = 1;
  PipelineShape shape;
  bool global_seed = false;  // the program's tf.random.set_seed()
};

// A summary's count over all its epochs, as one epoch's.
uint64_t PerEpoch(const Facts& f, uint64_t count) {
  return count / static_cast<uint64_t>(std::max<int64_t>(f.options.epochs, 1));
}

// FILE could take the workers' shares: its rewrite applies to the reader,
// and the file names (each worker of DATA or OFF reads them all) are at
// least one per worker.
bool FileFits(const Facts& f) {
  if (!f.shape.file_blocker.empty() || f.summary.workers.empty()) return false;
  return PerEpoch(f, f.summary.workers.front().files) >= static_cast<uint64_t>(f.W);
}

// What DATA sharding also needs of this pipeline to cut the same stream on
// every worker: its unseeded shuffles seeded (one at the shuffle itself, or
// the program's global seed for several); empty when nothing.
std::string DataNeeds(const Facts& f) {
  if (f.global_seed) return "";
  const size_t end = f.pipeline.ops.size();
  const std::optional<size_t> first = FirstUnseeded(f.pipeline, 0, end);
  if (!first) return "";
  if (FirstUnseeded(f.pipeline, *first + 1, end)) {
    return "`tf.random.set_seed(S)` on every worker before the dataset is made";
  }
  return fmt::format("{} (the same S on every worker)", SeedFix(f.pipeline, *first));
}

Finding NewFinding(FindingKind kind, FindingSeverity severity = FindingSeverity::kWarning) {
  Finding f;
  f.kind = kind;
  f.severity = severity;
  return f;
}

std::string SilentText(std::string_view why) {
  return fmt::format("nothing (silent): {}; TensorFlow gives no warning", why);
}

// OFF over several workers: every worker feeds everything.
// OFF over several workers, or HINT with no shard(SHARD_HINT, ...) to
// rewrite (`hint`): every worker feeds the whole dataset.
void OffFindings(const Facts& f, bool hint, CoverageResult& out) {
  const LayoutSummary& s = f.summary;
  const uint64_t n = PerEpoch(f, s.workers.empty() ? 0 : s.workers.front().records);
  if (n == 0) return;
  const uint64_t fed = PerEpoch(f, s.ReceivedRecords());
  const uint64_t W = static_cast<uint64_t>(f.W);
  out.counts.exact = RecordCounts{n, n, fed > n ? fed - n : 0, 0};
  Finding d = NewFinding(FindingKind::kDuplicateRecords);
  // HINT asks for the shards its placeholders name, not for duplicates.
  d.severity = f.ctx.policy_given && !hint ? FindingSeverity::kWarning : FindingSeverity::kError;
  d.tensorflow = SilentText(fmt::format(
      "{} every worker reads and feeds the whole dataset (the rebatch still splits each global "
      "batch), so an epoch has {} times the steps and every record is fed {} times",
      hint ? "AutoShardPolicy.HINT rewrites only shard(SHARD_HINT, SHARD_HINT) placeholders, "
             "and the pipeline has none, so"
           : "with AutoShardPolicy.OFF",
      W, W));
  if (f.ctx.loop == Loop::kFit && !f.ctx.version.Keras3()) {
    d.tensorflow +=
        "; Keras 2's fit (derived from its data handler): with a known cardinality N it runs N "
        "global steps an epoch on new iterators, so each worker only ever feeds the first 1/W "
        "of its stream; with an unknown one, W times N steps";
  }
  d.other_versions =
      hint ? "the same in every 2.x release"
           : "the same in every 2.x release (auto_shard_dataset returns the dataset unchanged "
             "under OFF)";
  d.evidence = fmt::format(
      "each of the {} workers feeds all {} records{}: every record fed {} times, {} extra feeds "
      "in an epoch ({} global steps where one pass over the data would take about {})",
      W, n,
      hint                 ? " (HINT, and no shard(SHARD_HINT, ...) in the pipeline)"
      : f.ctx.policy_given ? " (the OFF policy, as asked)"
                           : "",
      W, fed > n ? fed - n : 0, PerEpoch(f, s.steps), (PerEpoch(f, s.steps) + W - 1) / W);
  const uint64_t files = PerEpoch(f, s.workers.front().files);
  // DATA cuts one stream the same way on every worker only where its
  // shuffles are seeded: say so, or it trades duplicates for misses.
  const std::string needs = DataNeeds(f);
  const std::string data = fmt::format("{}: each worker keeps one piece in {}{}", kPolicyData, W,
                                       needs.empty() ? "" : fmt::format(", with {}", needs));
  if (FileFits(f)) {
    d.fix = fmt::format("{}: each worker reads its own {} of the {} files; or {}", kPolicyFile,
                        files / W, files, data);
    d.options.push_back(FixOption::Policy(AutoShardPolicy::kFile));
  } else {
    d.fix = fmt::format("{}{}", data,
                        f.shape.file_blocker.empty()
                            ? fmt::format(" (FILE needs at least {} files; {} found)", W, files)
                            : "");
  }
  if (needs.empty()) d.options.push_back(FixOption::Policy(AutoShardPolicy::kData));
  if (hint) {
    d.fix = fmt::format(
        "`.shard(tf.data.experimental.SHARD_HINT, tf.data.experimental.SHARD_HINT)` {}; or {}",
        f.shape.reader
            ? fmt::format("on the file names, before {}", OpAt(f.pipeline, *f.shape.reader))
            : std::string("before the batch"),
        d.fix);
  }
  out.findings.push_back(std::move(d));
}

// An input function that does not shard: every worker feeds all of it.
// A parameter server's workers: each calls the dataset function with
// InputContext(1, 0) and so makes the whole dataset, and the coordinator
// schedules each step on whichever worker is free.
void ParameterServerFindings(const Facts& f, CoverageResult& out) {
  const uint64_t W = static_cast<uint64_t>(f.ctx.ps_workers);
  const LayoutSummary& s = f.summary;
  const uint64_t n = PerEpoch(f, s.workers.empty() ? 0 : s.workers.front().records);
  if (n == 0) return;
  const bool own_orders =
      !f.global_seed && FirstUnseeded(f.pipeline, 0, f.pipeline.ops.size()).has_value();
  Finding d = NewFinding(FindingKind::kDuplicateRecords,
                         own_orders ? FindingSeverity::kWarning : FindingSeverity::kError);
  d.tensorflow = fmt::format(
      "nothing (silent): ClusterCoordinator.create_per_worker_dataset calls the dataset "
      "function on every worker with InputContext(num_input_pipelines=1, "
      "input_pipeline_id=0), so a shard() by the context keeps everything and every worker "
      "makes all {} records; the coordinator runs each scheduled step on whichever worker is "
      "free, from that worker's own iterator",
      n);
  d.other_versions = "the same in every release with ClusterCoordinator (2.4 on)";
  if (own_orders) {
    d.evidence = fmt::format(
        "{} workers each make the whole dataset in an order of their own (an unseeded "
        "shuffle): which records a run's steps feed is a sample, some twice and some never "
        "in an epoch, as the parameter-server design expects",
        W);
    d.fix =
        "none needed for the parameter-server design (shuffle and repeat(), a fixed number of "
        "steps); for every record exactly once an epoch, MultiWorkerMirroredStrategy with "
        "FILE or DATA sharding";
  } else {
    d.evidence = fmt::format(
        "{} workers each make the same {} records in the same order: the steps scheduled on "
        "each worker feed the same first batches of that order, so those records are fed up "
        "to {} times and the later ones not at all until the workers get to them",
        W, n, W);
    d.fix =
        "`shuffle(buffer_size)` with no seed (and no tf.random.set_seed) in the dataset "
        "function, so that each worker draws its own order, with `repeat()`";
  }
  out.findings.push_back(std::move(d));
}

void UnshardedFunctionFindings(const Facts& f, CoverageResult& out) {
  const LayoutSummary& s = f.summary;
  const uint64_t W = static_cast<uint64_t>(f.W);
  const uint64_t n = PerEpoch(f, s.workers.empty() ? 0 : s.workers.front().records);
  std::string reads;
  if (s.reads && s.reads->distinct > 0) {
    reads = fmt::format(
        " ({} of the {} records read were read by more than one worker, {} reads "
        "in all)",
        s.reads->shared, s.reads->distinct, s.reads->total);
  }
  if (n == 0) return;
  const uint64_t fed = PerEpoch(f, s.ReceivedRecords());
  out.counts.exact = RecordCounts{n, n, fed > n ? fed - n : 0, 0};
  Finding d = NewFinding(FindingKind::kDuplicateRecords, FindingSeverity::kError);
  d.tensorflow = SilentText(
      f.ctx.strategy == Strategy::kParameterServer
          ? "ClusterCoordinator.create_per_worker_dataset calls the dataset function on every "
            "worker and neither shards nor rebatches what it returns, so every worker feeds all "
            "of it"
          : "distribute_datasets_from_function calls the input function on every worker and "
            "neither shards nor rebatches what it returns (auto_shard_policy is ignored), so "
            "every worker feeds all of it");
  d.other_versions = "the same in every 2.x release";
  d.evidence = fmt::format(
      "the input function does not shard by its InputContext: each of the {} workers feeds the "
      "same {} records, every record {} times, {} extra feeds in an epoch{}",
      W, n, W, fed > n ? fed - n : 0, reads);
  d.fix = f.shape.reader
              ? fmt::format(
                    "in the input function, {} on the file names, before {} (with fewer "
                    "files than workers, after it)",
                    kShardByContext, OpAt(f.pipeline, *f.shape.reader))
              : fmt::format("in the input function, {} before the batch", kShardByContext);
  out.findings.push_back(std::move(d));
}

std::string DrawEvidence(const CoverageDraw& draw, int64_t workers, bool missed) {
  const RecordCounts& c = draw.counts;
  const CoverageFractions x = draw.Fractions();
  const std::string covered =
      draw.Complete() ? fmt::format("all {} records", c.records)
                      : fmt::format(
                            "{} sampled records (those whose id hash falls in the lowest 1/{} of "
                            "hashes, of the {} one worker feeds)",
                            c.records, SampleDenominator(draw), draw.reference_records);
  std::string out = fmt::format(
      "one draw of the first epoch (run seed {}; every run draws anew) over {}: {} fed twice or "
      "more ({}, {} extra "
      "feeds), {} never ({}), {} once ({})",
      draw.seed, covered, c.duplicated, Fraction(x.duplicated), c.extra_feeds, c.missed,
      Fraction(x.missed), draw.once, Fraction(x.once));
  if (!missed && !draw.overlaps.empty() && workers > 2) {
    const auto& [pair, n] = draw.overlaps.front();
    out += fmt::format("; workers {} and {} both feed {} of them, the most of any two", pair.first,
                       pair.second, n);
  }
  return out;
}

// Each worker cuts its own random order: the fractions and a draw.
Status SeedPerWorkerFindings(const Facts& f, const data::BuildOptions& build,
                             const CoverageOptions& coverage, size_t unseeded,
                             std::optional<size_t> shard_op, CoverageResult& out) {
  const CoverageFractions x = ExpectedCoverage(f.W);
  out.counts.expected = x;
  const bool function = f.options.api == Api::kFromFunction;
  if (!coverage.draw) {
    out.counts.no_draw = "not asked for";
  } else if (f.shape.endless_at) {
    out.counts.no_draw =
        fmt::format("{} repeats forever: no epoch to count", OpAt(f.pipeline, *f.shape.endless_at));
  } else {
    TFDIST_ASSIGN_OR_RETURN(out.counts.draw,
                            Draw(f.pipeline, f.options, build, coverage, /*reference=*/true));
  }
  // The cut: a shard() of the pipeline's, or DATA's at the end.
  const bool own_shard = shard_op && *shard_op < f.pipeline.ops.size();
  const std::string where = own_shard ? fmt::format("{} cuts", OpAt(f.pipeline, *shard_op))
                                      : fmt::format("DATA sharding keeps one piece in {} of", f.W);
  const std::string why = fmt::format(
      "{} has no seed and the program sets no global seed, so each of the {} workers draws its "
      "own order, and {} a different permutation on each: each record is fed to c ~ "
      "Binomial({}, 1/{}) replicas",
      OpAt(f.pipeline, unseeded), f.W, where, f.W, f.W);
  const std::string expected = fmt::format(
      "expected over {} workers: {} of the records missed, {} fed exactly once, {} fed twice or "
      "more",
      f.W, Fraction(x.missed), Fraction(x.once), Fraction(x.duplicated));
  const std::string tensorflow = SilentText(
      "each worker's process draws its own seeds for the shuffle, so the shard cuts a different "
      "permutation on each worker (with reshuffle_each_iteration, a new one every epoch)");
  const std::string fix =
      own_shard ? fmt::format(
                      "{} (the same S on every worker), or `tf.random.set_seed(S)` in "
                      "every worker before {} builds the dataset; or "
                      "shard before the shuffle",
                      SeedFix(f.pipeline, unseeded), function ? "the input function" : "it")
                : fmt::format(
                      "{} (the same S on every worker), or `tf.random.set_seed(S)` on "
                      "every worker before the dataset is made{}",
                      SeedFix(f.pipeline, unseeded),
                      FileFits(f) ? fmt::format("; or {} (each worker then shuffles its own "
                                                "files)",
                                                kPolicyFile)
                                  : "");
  const std::string draw_text = out.counts.draw ? DrawEvidence(*out.counts.draw, f.W, false)
                                                : fmt::format("no draw ({})", out.counts.no_draw);
  Finding d = NewFinding(FindingKind::kDuplicateRecords, FindingSeverity::kError);
  d.tensorflow = tensorflow;
  d.other_versions = "the same in every 2.x release";
  d.evidence = fmt::format("{}; {}; {}", why, expected, draw_text);
  d.fix = fix;
  if (!own_shard && FileFits(f)) d.options.push_back(FixOption::Policy(AutoShardPolicy::kFile));
  out.findings.push_back(d);
  Finding m = d;
  m.kind = FindingKind::kMissedRecords;
  m.evidence = fmt::format("{}; {} of the records fed to no replica ((1 - 1/{})^{}); {}", why,
                           Fraction(x.missed), f.W, f.W,
                           out.counts.draw ? DrawEvidence(*out.counts.draw, f.W, true)
                                           : fmt::format("no draw ({})", out.counts.no_draw));
  out.findings.push_back(std::move(m));
  return Status::OK();
}

// An input function that shards, whose workers' reads overlap or leave
// records unread (summary.reads, exact for that run).
Status OverlapFindings(const Facts& f, const data::BuildOptions& build,
                       const CoverageOptions& coverage, bool drawn, CoverageResult& out) {
  const ReadOverlap& r = *f.summary.reads;
  const uint64_t unread = r.unread.value_or(0);
  if (r.shared == 0 && unread == 0) return Status::OK();
  const uint64_t per_pass = r.total / static_cast<uint64_t>(std::max<int64_t>(r.passes, 1));
  out.counts.exact = RecordCounts{r.distinct + unread, r.shared,
                                  per_pass > r.distinct ? per_pass - r.distinct : 0, unread};
  std::string pairs;
  if (r.shared > 0 && coverage.draw && !f.shape.endless_at) {
    CoverageOptions named = coverage;
    TFDIST_ASSIGN_OR_RETURN(const CoverageDraw draw,
                            Draw(f.pipeline, f.options, build, named, /*reference=*/false));
    for (const auto& [pair, n] : draw.overlaps) {
      pairs +=
          fmt::format("{}workers {} and {} ({}{} records in common)", pairs.empty() ? "" : ", ",
                      pair.first, pair.second, draw.Complete() ? "" : "sampled: ", n);
    }
  }
  const std::string measured =
      drawn ? "measured on one run, whose unseeded shuffles differ run to run" : "measured, exact";
  const std::string tensorflow = SilentText(
      "distribute_datasets_from_function feeds what each worker's input function gives, "
      "overlapping or not");
  const std::string fix = fmt::format(
      "give the workers disjoint files: in the input function, {} on the file names before any "
      "unseeded shuffle of them",
      kShardByContext);
  if (r.shared > 0) {
    Finding d = NewFinding(FindingKind::kDuplicateRecords, FindingSeverity::kError);
    d.tensorflow = tensorflow;
    d.other_versions = "the same in every 2.x release";
    d.evidence = fmt::format(
        "the workers' file lists overlap: {} of the {} records read were read by more than one "
        "worker ({} reads in all, {} per record){}{} ({})",
        r.shared, r.distinct, r.total, Fraction(r.Amplification()), pairs.empty() ? "" : ": ",
        pairs, measured);
    d.fix = fix;
    out.findings.push_back(std::move(d));
  }
  if (unread > 0) {
    Finding m = NewFinding(FindingKind::kMissedRecords, FindingSeverity::kError);
    m.tensorflow = tensorflow;
    m.other_versions = "the same in every 2.x release";
    m.evidence = fmt::format(
        "{} records in the files the input functions list are read by no worker ({} of {}) ({})",
        unread, Share(unread, r.distinct + unread), r.distinct + unread, measured);
    m.fix = fix;
    out.findings.push_back(std::move(m));
  }
  return Status::OK();
}

// list_files matched a file more than once: TensorFlow reads it once per
// match, whatever the policy. The seeds are fixed here (an unseeded cut is
// drawn above), so counting the feeds of one run is exact for its sample.
Status ListedTwiceFindings(const Facts& f, const data::BuildOptions& build,
                           const CoverageOptions& coverage, CoverageResult& out) {
  if (f.shape.endless_at) return Status::OK();
  TFDIST_ASSIGN_OR_RETURN(const CoverageDraw run,
                          Draw(f.pipeline, f.options, build, coverage, /*reference=*/false));
  if (run.counts.duplicated == 0) return Status::OK();
  std::string named;
  for (const Warning& w : f.summary.decision.warnings) {
    if (w.kind == WarningKind::kFileListedTwice) {
      named = w.message;
      break;
    }
  }
  const RecordCounts& c = run.counts;
  if (run.Complete()) out.counts.exact = c;
  Finding d = NewFinding(FindingKind::kDuplicateRecords, FindingSeverity::kError);
  d.tensorflow = SilentText(
      "list_files keeps a file that several patterns match once per match, and the reader reads "
      "it each time");
  d.other_versions = "the same in every 2.x release";
  const std::string over =
      run.Complete() ? fmt::format("of all {} records", c.records)
                     : fmt::format(
                           "of {} sampled records (those whose id hash falls in the lowest 1/{} of "
                           "hashes)",
                           c.records, SampleDenominator(run));
  d.evidence = fmt::format("{} {} are fed twice or more in an epoch ({} extra feeds): {}",
                           c.duplicated, over, c.extra_feeds, named);
  d.fix = "list each file once: patterns of list_files that match no file twice (or one pattern)";
  out.findings.push_back(std::move(d));
  return Status::OK();
}

void UnseededFinding(const Facts& f, size_t unseeded, bool coverage_error, CoverageResult& out) {
  Finding u = NewFinding(FindingKind::kUnseededShuffle,
                         coverage_error ? FindingSeverity::kError : FindingSeverity::kWarning);
  const std::string determinism = DeterminismText(f.ctx);
  u.tensorflow = fmt::format(
      "draws the shuffle's seeds at random in every process: the order differs run to run{}{}",
      coverage_error ? " and worker to worker, so the shard feeds records twice or never "
                       "(duplicate_records, missed_records), silently"
                     : "",
      determinism.empty() ? "" : "; " + determinism);
  u.other_versions =
      f.ctx.version.minor >= 8
          ? "before 2.8 there is no op determinism, so never an error"
          : "from 2.8, with tf.config.experimental.enable_op_determinism(), RuntimeError "
            "\"Random ops require a seed to be set when determinism is enabled...\"";
  u.evidence = fmt::format(
      "{} has no seed and the program sets no global seed{}", OpAt(f.pipeline, unseeded),
      coverage_error ? fmt::format(", before the shard of {} workers", f.W) : "");
  u.fix = fmt::format("{}, or `tf.random.set_seed(S)` before the dataset is made",
                      SeedFix(f.pipeline, unseeded));
  out.findings.push_back(std::move(u));
}

void NondeterministicFinding(const Facts& f, size_t op, bool before_shard, CoverageResult& out) {
  Finding n = NewFinding(FindingKind::kNondeterministic,
                         before_shard ? FindingSeverity::kError : FindingSeverity::kInfo);
  const bool function = f.options.api == Api::kFromFunction;
  if (before_shard) {
    n.tensorflow = SilentText(
        "the order of a parallel op with deterministic=False depends on its threads' timing, so "
        "the "
        "shard keeps a different set of records on each worker and in each run");
    n.evidence = fmt::format(
        "{}, before {} of {} workers: which records each keeps, and so the duplicates and "
        "misses, cannot be known (tfdist reads in the deterministic order)",
        f.shape.nondeterministic, function ? "the input function's shard()" : "DATA sharding", f.W);
    n.fix = fmt::format("`deterministic=True` at {}{}",
                        data::DescribePosition(f.pipeline.text, f.pipeline.ops[op].pos),
                        function || !FileFits(f) ? "" : fmt::format("; or {}", kPolicyFile));
    if (!function && FileFits(f)) n.options.push_back(FixOption::Policy(AutoShardPolicy::kFile));
  } else {
    n.tensorflow =
        "the order depends on thread timing and differs run to run; no record is fed "
        "twice or lost by it";
    n.evidence = fmt::format("{}: order only", f.shape.nondeterministic);
    n.fix = fmt::format("`deterministic=True` at {} for a repeatable order",
                        data::DescribePosition(f.pipeline.text, f.pipeline.ops[op].pos));
  }
  n.other_versions = "the same in every 2.x release";
  out.findings.push_back(std::move(n));
}

}  // namespace

CoverageFractions ExpectedCoverage(int64_t workers) {
  if (workers <= 1) return {};
  const double W = static_cast<double>(workers);
  CoverageFractions x;
  x.missed = std::pow(1 - 1 / W, W);
  x.once = std::pow(1 - 1 / W, W - 1);
  x.duplicated = std::max(0.0, 1 - x.missed - x.once);
  return x;
}

CoverageFractions CoverageDraw::Fractions() const {
  if (counts.records == 0) return {0, 0, 0};
  const double n = static_cast<double>(counts.records);
  return {static_cast<double>(counts.missed) / n, static_cast<double>(once) / n,
          static_cast<double>(counts.duplicated) / n};
}

Result<CoverageResult> CoverageFindings(const data::Pipeline& pipeline,
                                        const DistributeOptions& options,
                                        const data::BuildOptions& build,
                                        const LayoutSummary& summary, const CheckContext& ctx,
                                        const CoverageOptions& coverage) {
  CoverageResult out;
  Facts f{pipeline,
          options,
          summary,
          ctx,
          summary.topology.workers,
          Analyze(pipeline),
          build.global_seed.has_value()};
  out.counts.workers = f.W;
  const Decision& d = summary.decision;
  const bool function = options.api == Api::kFromFunction;
  const bool several = f.W > 1;
  // Where each worker's share is cut from a stream they all make: DATA's
  // shard at the end, or the input function's shard(); nullopt where the
  // workers' shares are fixed (FILE, one worker) or there is no cut.
  std::optional<size_t> cut;
  const bool hint = !function && d.applied == AutoShardPolicy::kHint;
  const std::optional<size_t> shard_op = WorkerShard(pipeline, hint);
  if (several && !function && d.ShardsData(summary.topology)) cut = pipeline.ops.size();
  if (several && (hint || (function && d.function_shards && !options.worker_pipelines)) &&
      shard_op) {
    cut = *shard_op;
  }

  std::optional<size_t> unseeded_before_cut;
  if (cut && !build.global_seed) unseeded_before_cut = FirstUnseeded(pipeline, 0, *cut);

  if (ctx.strategy == Strategy::kParameterServer && ctx.ps_workers > 1) {
    ParameterServerFindings(f, out);
  } else if (several && !function && (d.applied == AutoShardPolicy::kOff || (hint && !shard_op))) {
    OffFindings(f, d.applied == AutoShardPolicy::kHint, out);
  } else if (several && function && !d.function_shards) {
    UnshardedFunctionFindings(f, out);
  } else if (unseeded_before_cut) {
    TFDIST_RETURN_IF_ERROR(
        SeedPerWorkerFindings(f, build, coverage, *unseeded_before_cut, shard_op, out));
  } else if (several && function && summary.reads &&
             !(d.function_shards && shard_op && f.shape.reader && *shard_op > *f.shape.reader)) {
    // (A shard() by the context after the reader: every worker reads every
    // file and keeps its own records, an overlap of reads, not of feeds.)
    // The traced per-worker pipelines and their unseeded shuffles: the
    // reads measured are one run's.
    bool drawn = false;
    if (options.worker_pipelines && !build.global_seed) {
      for (const data::Pipeline& p : *options.worker_pipelines) {
        drawn = drawn || data::HasUnseededShuffle(p);
      }
    }
    TFDIST_RETURN_IF_ERROR(OverlapFindings(f, build, coverage, drawn, out));
  } else if (d.HasWarning(WarningKind::kFileListedTwice)) {
    TFDIST_RETURN_IF_ERROR(ListedTwiceFindings(f, build, coverage, out));
  }

  // unseeded_shuffle: an error where the cut depends on it; else a warning
  // for a shuffle of records (a shuffle of file names alone changes which
  // file comes first; FILE moves it after its shard).
  if (unseeded_before_cut) {
    UnseededFinding(f, *unseeded_before_cut, /*coverage_error=*/true, out);
  } else if (!build.global_seed && !(ctx.strategy == Strategy::kParameterServer)) {
    // (A parameter server's workers want an order each: said above.)
    const size_t records_from = f.shape.reader ? *f.shape.reader + 1 : 0;
    if (const auto at = FirstUnseeded(pipeline, records_from, pipeline.ops.size())) {
      UnseededFinding(f, *at, /*coverage_error=*/false, out);
    }
  }

  if (const std::optional<size_t> op = f.shape.nondeterministic_at) {
    const bool before_cut = cut && *op < *cut;
    NondeterministicFinding(f, *op, before_cut, out);
  }
  return out;
}

}  // namespace tfdist::dist
