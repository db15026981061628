// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The FILE summary from per-file record counts: the same split and step
// rules as the layout, applied to counts instead of records.

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <unordered_map>

#include "plan.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/distribute/layout.h"
#include "tfdist/distribute/split.h"
#include "tfdist/distribute/steps.h"
#include "tfdist/io/file_count.h"

namespace tfdist::dist {
namespace {

// File names a summary lists (a repeat() forever before the reader would never end).
constexpr uint64_t kMaxNames = 100'000'000;

// Stages after the reader that give one element for each they take, so
// that the records of the files are the records in the batches: reordering
// (shuffle), buffering (prefetch, cache: one epoch), and a function applied
// to each element (map, parse_example included). (enumerate() is one too,
// but after the reader it rules FILE sharding out.)
bool OneToOne(const data::Op& op) {
  return std::holds_alternative<data::ShuffleOp>(op.params) ||
         std::holds_alternative<data::PrefetchOp>(op.params) ||
         std::holds_alternative<data::CacheOp>(op.params) ||
         std::holds_alternative<data::MapOp>(op.params);
}

// Whether a pipeline of `s` yields its files' records in one batch(G), by
// one-to-one stages (OneToOne) besides: then G (a literal), else nullopt.
// Where a stage after the reader is why not, `why` names it.
std::optional<int64_t> CountedBatch(const data::Pipeline& p, const PipelineShape& s,
                                    std::string& why) {
  if (!s.batched || !s.reader) return std::nullopt;
  const data::BatchOp* batch = nullptr;
  for (size_t i = *s.reader + 1; i < p.ops.size(); ++i) {
    const data::Op& op = p.ops[i];
    const std::string where =
        fmt::format("{}() ({})", op.name, data::DescribePosition(p.text, op.pos));
    if (const auto* b = std::get_if<data::BatchOp>(&op.params); b != nullptr && batch == nullptr) {
      batch = b;
    } else if (const auto* f = std::get_if<data::FilterOp>(&op.params)) {
      why = fmt::format(
          "filter({}) ({}) keeps the records its predicate picks, which record counts cannot tell",
          f->function, data::DescribePosition(p.text, op.pos));
      return std::nullopt;
    } else if (std::holds_alternative<data::IgnoreErrorsOp>(op.params)) {
      why = fmt::format("{} ends a damaged file at its first error, which only reading it finds",
                        where);
      return std::nullopt;
    } else if (!OneToOne(op)) {
      why = fmt::format("{} changes the number of elements, which the record counts do not model",
                        where);
      return std::nullopt;
    }
  }
  if (batch == nullptr || batch->batch_size.symbol != data::IntArg::Symbol::kLiteral ||
      batch->batch_size.value < 1) {  // the full layout reports a bad size
    return std::nullopt;
  }
  return batch->batch_size.value;
}

// The file names in reading order before any shuffle: shuffles of names
// move after the shard, so they change no worker's set of files.
Result<StringList> RunFileNames(const data::Pipeline& pipeline, const PipelineShape& s,
                                const data::BuildOptions& build) {
  data::Pipeline names = FileNames(pipeline, s);
  std::erase_if(names.ops, [&](const data::Op& op) {
    return &op != &names.ops[0] && std::holds_alternative<data::ShuffleOp>(op.params);
  });
  TFDIST_ASSIGN_OR_RETURN(auto dataset, data::BuildDataset(names, build));
  TFDIST_ASSIGN_OR_RETURN(auto it, dataset->MakeIterator());
  StringList::Builder out;
  for (uint64_t n = 0;; ++n) {
    data::Element e;
    bool end = false;
    TFDIST_RETURN_IF_ERROR(it->GetNext(e, end));
    if (end) break;
    if (n >= kMaxNames) {
      return Status::InvalidArgument(fmt::format(
          "the pipeline names {} files or more before its reader: does it repeat() the names "
          "forever?",
          kMaxNames));
    }
    out.Add(e.bytes);
  }
  return std::move(out).Finish();
}

// Distinct files: adjacent in a sorted list (list_files'), else by hashing.
struct DistinctFiles {
  StringList names;
  std::vector<size_t> slot;  // per listed file: its index in `names`; empty: the same

  size_t SlotOf(size_t f) const { return slot.empty() ? f : slot[f]; }
};

DistinctFiles Distinct(const StringList& files) {
  DistinctFiles d;
  bool sorted = true;
  for (size_t f = 1; f < files.size() && sorted; ++f) sorted = files[f - 1] < files[f];
  if (sorted) {  // the usual case: the list itself
    d.names = files;
    return d;
  }
  d.slot.resize(files.size());
  std::vector<std::string_view> names;
  std::unordered_map<std::string_view, size_t> slot_of;
  for (size_t f = 0; f < files.size(); ++f) {
    auto [it, inserted] = slot_of.emplace(files[f], names.size());
    if (inserted) names.push_back(files[f]);
    d.slot[f] = it->second;
  }
  d.names = StringList(std::span<const std::string_view>(names));
  return d;
}

// Per worker: its files' records (file f goes to worker f mod W), then its
// per-replica batches by the split rule, and the steps they make. Memory:
// a row per worker and a total per global step.
// Error: Cancelled when interrupted.
Status Arithmetic(const StringList& files, const DistinctFiles& distinct,
                  const std::vector<io::FileRecords>& counts, int64_t batch_size,
                  LayoutSummary& out) {
  Decision& d = out.decision;
  const Topology& t = out.topology;
  const uint64_t R = static_cast<uint64_t>(t.replicas);
  const uint64_t G = static_cast<uint64_t>(batch_size);
  out.workers.resize(static_cast<size_t>(t.workers));
  std::vector<uint64_t> read(out.workers.size(), 0);  // records per worker
  // One pass in file order (a pass per worker, striding W files, missed the
  // cache at every file).
  for (size_t f = 0, w = 0; f < files.size(); ++f, w = w + 1 == out.workers.size() ? 0 : w + 1) {
    WorkerSummary& r = out.workers[w];
    const io::FileRecords& c = counts[distinct.SlotOf(f)];
    ++r.files;
    read[w] += c.records;
    r.bytes += c.payload_bytes;
  }
  std::vector<uint64_t> step_total;  // records per global step
  std::vector<uint64_t> lengths;     // per worker: its per-replica batches
  for (int64_t w = 0; w < t.workers; ++w) {
    if (w % 256 == 0 && Interrupted()) return Status::Interrupted();
    WorkerSummary& r = out.workers[static_cast<size_t>(w)];
    r.worker = w;
    // batch(G): full batches, and the remainder as a short one or dropped.
    const uint64_t full = read[w] / G, rest = read[w] % G;
    if (d.drop_remainder && rest > 0) {
      r.dropped_remainder = rest;
      // Payload bytes are per file: the dropped records' share, pro rata.
      out.bytes_estimated = true;
      r.bytes -= static_cast<uint64_t>(static_cast<double>(r.bytes) * static_cast<double>(rest) /
                                       static_cast<double>(read[w]));
    }
    std::optional<SplitAudit> audit;
    if (d.split == Split::kBatchSizes && !d.HasWarning(WarningKind::kGuideVersusCode)) {
      audit.emplace(t.num_replicas_in_sync());
    }
    uint64_t pieces = 0;
    SizeSplitter splitter(SplitRule::For(d, t, w), [&](uint64_t size, uint64_t count) {
      if (audit) audit->Output(size, count);
      r.AddBatches(size, count);
      if ((pieces + count - 1) / R >= step_total.size()) {
        step_total.resize((pieces + count - 1) / R + 1, 0);
      }
      if (size > 0) {
        for (uint64_t i = 0; i < count; ++i) step_total[(pieces + i) / R] += size;
      }
      pieces += count;
    });
    for (uint64_t b = 0; b < full; ++b) {
      if (audit) audit->Input(G);
      splitter.Add(G);
    }
    if (rest > 0 && !d.drop_remainder) {
      if (audit) audit->Input(rest);
      splitter.Add(rest);
    }
    splitter.Finish();
    if (audit && audit->differs()) d.warnings.push_back(GuideVersusCodeWarning(audit->crosses()));
    lengths.push_back(pieces);
  }
  // Step k pads worker w's replicas where k*R + r >= its batches; the worker
  // sits idle in the steps after its last batch.
  const uint64_t steps = step_total.size();
  for (size_t w = 0; w < out.workers.size(); ++w) {
    WorkerSummary& r = out.workers[w];
    r.empty_batches += steps * R - lengths[w];
    r.idle_steps = steps - (lengths[w] + R - 1) / R;
  }
  // Short of the static global batch size only (as the layout counts them).
  if (d.global_batch_size) {
    out.short_steps = static_cast<uint64_t>(std::count_if(
        step_total.begin(), step_total.end(), [&](uint64_t total) { return total < G; }));
  }
  out.steps = steps;
  const uint64_t fewest = *std::min_element(lengths.begin(), lengths.end());
  const uint64_t padded_steps = steps - std::min(steps, fewest / R);
  if (t.workers > 1) {
    std::vector<uint64_t> records;
    for (const auto& r : out.workers) records.push_back(r.records);
    if (auto w = UnevenFilesWarning(records, true, padded_steps)) d.warnings.push_back(*w);
  }
  AddAccountingWarnings(out);
  return Status::OK();
}

}  // namespace

Result<std::optional<LayoutSummary>> SummarizeFiles(
    const data::Pipeline& original, const DistributeOptions& options,
    const data::BuildOptions& build_in, const std::function<void(uint64_t, uint64_t)>& progress,
    std::string* why_run) {
  using None = std::optional<LayoutSummary>;
  if (options.api != Api::kDistribute || options.max_steps || options.worker) return None();
  const PipelineShape early = Analyze(original);
  std::string why;
  const std::optional<int64_t> batch_size = CountedBatch(original, early, why);
  if (!batch_size && why.empty()) return None();
  // The folders' directory indexes are read first, where the summary will
  // likely apply: list_files may then take a folder's names from one, while
  // their entries are checked on another thread.
  std::span<const std::string> patterns;
  if (const auto* l = std::get_if<data::ListFilesOp>(&original.ops[0].params);
      l != nullptr && batch_size &&
      (options.policy == AutoShardPolicy::kFile ||
       (options.policy == AutoShardPolicy::kAuto && early.file_blocker.empty())) &&
      std::holds_alternative<data::InterleaveOp>(original.ops[*early.reader].params) &&
      ReaderCompression(original, early) != io::Compression::kGzip &&
      ReaderCompression(original, early) != io::Compression::kZlib) {
    patterns = l->patterns;
  }
  io::FileCounter counter(patterns);
  data::BuildOptions build = build_in;
  if (!build.default_seed) build.default_seed = 0;
  TFDIST_ASSIGN_OR_RETURN(const Distribution dist,
                          PlanDistribution(original, options, build, counter.listings()));
  if (dist.decision.applied != AutoShardPolicy::kFile) return None();
  // One worker with static batches may drop its last step: that takes the layout.
  if (DropsShortStep(dist.decision, options.topology)) return None();
  // The summary would apply but for a stage: the layout runs, and says why.
  if (!batch_size) {
    if (why_run != nullptr) *why_run = std::move(why);
    return None();
  }
  LayoutSummary out;
  out.topology = options.topology;
  out.decision = dist.decision;

  StringList files;  // shared with the pipeline, or from running it
  if (const StringList* listed = StaticFileNames(dist.pipeline, dist.shape)) {
    files = *listed;
  } else {
    TFDIST_ASSIGN_OR_RETURN(files, RunFileNames(dist.pipeline, dist.shape, dist.build));
  }
  const DistinctFiles distinct = Distinct(files);
  TFDIST_ASSIGN_OR_RETURN(
      io::FileCounts counts,
      counter.Count(distinct.names, ReaderCompression(dist.pipeline, dist.shape), progress));
  for (io::IgnoredIndex& ignored : counts.ignored) {
    out.decision.Warn(WarningKind::kDirectoryIndexIgnored, std::move(ignored.message),
                      std::move(ignored.advice));
  }
  out.records_source = counts.SourcesText();
  TFDIST_RETURN_IF_ERROR(Arithmetic(files, distinct, counts.counts, *batch_size, out));
  return std::optional<LayoutSummary>(std::move(out));
}

}  // namespace tfdist::dist
