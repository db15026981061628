// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The pipeline's phases in order: syntax (expression.cc), binding
// (binder.cc, map_function.cc), the checks across ops (here), building
// (builder.cc).

#include "tfdist/data/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <thread>
#include <utility>
#include <variant>

#include "binder.h"
#include "builder.h"
#include "expression.h"

namespace tfdist::data {
namespace {

// map(parse_example) needs records, unbatch() and rebatch() batches:
// follows the kind of element each op produces (batches keep their
// elements' kind) and how deep the batches nest.
Status CheckElements(const Pipeline& pipeline) {
  enum class Kind { kNames, kRecords, kInts, kPairs, kParsed };
  Kind kind = Kind::kRecords;
  int depth = 0;  // batches of batches of ...
  // Sources, readers and enumerate() make elements of a kind, not batches.
  auto make = [&](Kind k) {
    kind = k;
    depth = 0;
  };
  for (const Op& op : pipeline.ops) {
    const OpParams& p = op.params;
    const bool batched = depth > 0;
    if (std::holds_alternative<ListFilesOp>(p)) {
      make(Kind::kNames);
    } else if (const auto* slices = std::get_if<FromTensorSlicesOp>(&p)) {
      make(slices->integers ? Kind::kInts : Kind::kNames);
    } else if (std::holds_alternative<TFRecordOp>(p) || std::holds_alternative<InterleaveOp>(p)) {
      make(Kind::kRecords);
    } else if (std::holds_alternative<RangeOp>(p)) {
      make(Kind::kInts);
    } else if (std::holds_alternative<EnumerateOp>(p)) {
      make(Kind::kPairs);
    } else if (std::holds_alternative<BatchOp>(p) || std::holds_alternative<GroupByWindowOp>(p)) {
      ++depth;
    } else if (std::holds_alternative<UnbatchOp>(p) || std::holds_alternative<RebatchOp>(p)) {
      if (!batched) {
        return PositionError(pipeline.text, op.pos,
                             fmt::format("{}() takes batches; here the elements are not "
                                         "batches (batch() them first)",
                                         op.name));
      }
      if (std::holds_alternative<UnbatchOp>(p)) --depth;
    } else if (const auto* c = std::get_if<ConcatenateOp>(&p)) {
      TFDIST_RETURN_IF_ERROR(CheckElements(*c->dataset));
    } else if (const auto* m = std::get_if<MapOp>(&p); m != nullptr && m->opaque.empty()) {
      std::string_view what;
      switch (kind) {
        case Kind::kNames:
          what = "file names; apply it after the reader (tfrecord, interleave or flat_map)";
          break;
        case Kind::kInts:
          what = "integers from range()";
          break;
        case Kind::kPairs:
          what = "(index, element) pairs from enumerate(); apply it before enumerate()";
          break;
        case Kind::kParsed:
          what = "already parsed by an earlier map(parse_example); declare every feature in one";
          break;
        case Kind::kRecords:
          break;
      }
      if (!what.empty()) {
        return PositionError(pipeline.text, op.pos,
                             fmt::format("map(parse_example) parses records; here the elements "
                                         "are {}",
                                         what));
      }
      if (m->single_example && batched) {
        return PositionError(pipeline.text, op.pos,
                             "parse_single_example parses one record, but after batch() "
                             "each element is a batch; use parse_example");
      }
      kind = Kind::kParsed;
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<const Dataset>> BuildDataset(const Pipeline& pipeline,
                                                    const BuildOptions& options) {
  if (pipeline.ops.empty()) return Status::InvalidArgument("empty pipeline");
  // ParsePipeline bounds the chain, and distribution adds a few stages; a
  // pipeline made in code gets a bound too, as the stages recurse.
  if (pipeline.ops.size() > 2 * kMaxMethodCalls) {
    return Status::InvalidArgument(
        fmt::format("the pipeline has {} stages; tfdist builds at most {}", pipeline.ops.size(),
                    2 * kMaxMethodCalls));
  }
  if (options.global_seed) {
    return Builder(ResolveOpSeeds(pipeline, *options.global_seed), options).Build();
  }
  return Builder(pipeline, options).Build();
}

Result<Pipeline> ParsePipeline(std::string_view text) {
  TFDIST_ASSIGN_OR_RETURN(Chain chain, ParseChain(text));
  Binder binder(text);
  Pipeline pipeline;
  pipeline.text = std::string(text);
  TFDIST_ASSIGN_OR_RETURN(Op source, binder.Source(chain.calls[0]));
  pipeline.ops.push_back(std::move(source));
  for (size_t i = 1; i < chain.calls.size(); ++i) {
    TFDIST_ASSIGN_OR_RETURN(Op op, binder.Transform(chain.calls[i]));
    pipeline.ops.push_back(std::move(op));
  }
  TFDIST_RETURN_IF_ERROR(CheckElements(pipeline));
  return pipeline;
}

void FileReadTally::Add(const std::string* file, int64_t worker, uint64_t records) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = files_[file];
  if (worker == e.best_worker) {
    e.best = std::max(e.best, records);
  } else if (records > e.best) {
    // The old best is another worker's, and at least every other one.
    e.second = e.best;
    e.best = records;
    e.best_worker = worker;
  } else {
    e.second = std::max(e.second, records);
  }
}

FileReadTally::Totals FileReadTally::totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  Totals t;
  for (const auto& [file, e] : files_) {
    t.distinct += e.best;
    t.shared += e.second;
  }
  return t;
}

bool FileReadTally::Read(const std::string* file) const {
  std::lock_guard<std::mutex> lock(mu_);
  return files_.contains(file);
}

void ReadCounters::FileClosed(const std::string* file, uint64_t bytes, uint64_t records) {
  bytes_read.fetch_add(bytes, std::memory_order_relaxed);
  records_read.fetch_add(records, std::memory_order_relaxed);
  if (tally && file != nullptr) tally->Add(file, worker, records);
}

int64_t AutotuneCpus(const BuildOptions& options) {
  return options.cpus > 0 ? options.cpus
                          : std::max<int64_t>(1, std::thread::hardware_concurrency());
}

int64_t AutotuneCycleLength(std::optional<int64_t> num_parallel_calls, int64_t cpus) {
  if (!num_parallel_calls) return cpus;
  if (*num_parallel_calls != kAutotune) return std::min(*num_parallel_calls, cpus);
  return (cpus + 2) / 3;  // kDefaultCyclePrefetchFactor + 1 threads per slot
}

namespace {

bool IsAutotune(const std::optional<IntArg>& a) {
  return a && a->symbol == IntArg::Symbol::kLiteral && a->value == kAutotune;
}

// A literal argument's value (AUTOTUNE included); nullopt for None or a
// ctx.* name.
std::optional<int64_t> LiteralOf(const std::optional<IntArg>& a) {
  if (!a || a->symbol != IntArg::Symbol::kLiteral) return std::nullopt;
  return a->value;
}

}  // namespace

std::vector<std::pair<std::string, int64_t>> AutotunedArguments(const Pipeline& pipeline,
                                                                int64_t cpus) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const Op& op : pipeline.ops) {
    if (const auto* c = std::get_if<ConcatenateOp>(&op.params)) {
      for (auto& a : AutotunedArguments(*c->dataset, cpus)) out.push_back(std::move(a));
      continue;
    }
    if (const auto* t = std::get_if<TFRecordOp>(&op.params);
        t && IsAutotune(t->num_parallel_reads)) {
      out.emplace_back(op.name + "(num_parallel_reads): cycle_length",
                       AutotuneCycleLength(kAutotune, cpus));
      continue;
    }
    const auto* i = std::get_if<InterleaveOp>(&op.params);
    if (i == nullptr || i->flat_map) continue;
    if (!i->cycle_length || IsAutotune(i->cycle_length)) {
      out.emplace_back(op.name + "(cycle_length)",
                       AutotuneCycleLength(LiteralOf(i->num_parallel_calls), cpus));
    }
    if (IsAutotune(i->num_parallel_calls)) out.emplace_back(op.name + "(num_parallel_calls)", cpus);
  }
  return out;
}

int64_t ReaderThreads(int64_t calls, int64_t cycle_length, int64_t cpus) {
  return std::min({calls == kAutotune ? cpus : calls, kMaxReaderThreads,
                   2 * std::min(cycle_length, kMaxReaderThreads)});
}

std::vector<std::string> ThreadNotes(const Pipeline& pipeline, const BuildOptions& options) {
  const int64_t cpus = AutotuneCpus(options);
  std::vector<std::string> out;
  // `calls` and `cycle` literal (AUTOTUNE included), as the builder resolves them.
  auto note = [&](const Op& op, std::string_view argument, int64_t calls, int64_t cycle) {
    const int64_t threads = ReaderThreads(calls, cycle, cpus);
    const int64_t asked = calls == kAutotune ? std::min(cpus, cycle) : calls;
    if (threads >= asked) return;
    out.push_back(fmt::format(
        "{}({}={}): read by {} threads ({}); the order is TensorFlow's, which does not depend "
        "on them",
        op.name, argument,
        calls == kAutotune ? fmt::format("AUTOTUNE, {} CPUs", cpus) : std::to_string(calls),
        threads,
        threads == kMaxReaderThreads
            ? std::string("tfdist's limit")
            : fmt::format("twice its cycle length {}: every input it reads at once", cycle)));
  };
  for (const Op& op : pipeline.ops) {
    if (const auto* c = std::get_if<ConcatenateOp>(&op.params)) {
      for (auto& n : ThreadNotes(*c->dataset, options)) out.push_back(std::move(n));
    } else if (const auto* t = std::get_if<TFRecordOp>(&op.params)) {
      const std::optional<int64_t> n = LiteralOf(t->num_parallel_reads);
      if (!n || (*n <= 0 && *n != kAutotune)) continue;
      note(op, "num_parallel_reads", *n,
           *n == kAutotune ? AutotuneCycleLength(kAutotune, cpus) : *n);
    } else if (const auto* i = std::get_if<InterleaveOp>(&op.params); i && !i->flat_map) {
      const std::optional<int64_t> calls = LiteralOf(i->num_parallel_calls);
      if (!calls || (*calls <= 0 && *calls != kAutotune)) continue;
      std::optional<int64_t> cycle = LiteralOf(i->cycle_length);
      if (!i->cycle_length || cycle == kAutotune) cycle = AutotuneCycleLength(calls, cpus);
      if (!cycle || *cycle <= 0) continue;
      note(op, "num_parallel_calls", *calls, *cycle);
    }
  }
  return out;
}

}  // namespace tfdist::data
