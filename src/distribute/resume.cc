// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// LocateResume: the epoch replayed as record ids, dealt into steps as
// layouts deal them, counted up to the resume step and handed on after it.

#include "tfdist/distribute/resume.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <variant>

#include "tfdist/base/interrupt.h"
#include "tfdist/data/ops.h"
#include "tfdist/distribute/execute.h"
#include "tfdist/distribute/shape.h"

namespace tfdist::dist {
namespace {

// Appends one step's batch sizes to the runs of steps.
void AddStep(SizeRuns& runs, const std::vector<uint64_t>& sizes) {
  if (sizes.empty()) return;
  if (!runs.empty() && runs.back().first == sizes) {
    ++runs.back().second;
  } else {
    runs.emplace_back(sizes, 1);
  }
}

// The first op of `pipeline` (a concatenate()'s datasets looked through)
// whose output depends on payloads or on timing; null when none.
const data::Op* FirstUnresumable(const data::Pipeline& pipeline, bool endless_ok,
                                 std::string& why) {
  for (const data::Op& op : pipeline.ops) {
    const data::OpParams& p = op.params;
    if (std::holds_alternative<data::FilterOp>(p)) {
      why = "filter() keeps what its predicate picks from the payloads, which tfdist does not run";
    } else if (std::holds_alternative<data::IgnoreErrorsOp>(p)) {
      why =
          "ignore_errors() drops what fails to read, which a replay of ids cannot promise "
          "to meet again";
    } else if (std::holds_alternative<data::GroupByWindowOp>(p)) {
      why =
          "grouping by a key of the payloads decides the batches, and tfdist does not run "
          "the key function";
    } else if (const auto* m = std::get_if<data::MapOp>(&p);
               m && m->deterministic == false && m->num_parallel_calls) {
      why = "map(deterministic=False) lets the order depend on timing";
    } else if (const auto* i = std::get_if<data::InterleaveOp>(&p);
               i && i->deterministic == false && i->num_parallel_calls) {
      why = "interleave(deterministic=False) lets the order depend on timing";
    } else if (const auto* b = std::get_if<data::BatchOp>(&p);
               b && b->deterministic == false && b->num_parallel_calls) {
      why = "batch(deterministic=False) lets the order depend on timing";
    } else if (const auto* r = std::get_if<data::RepeatOp>(&p);
               !endless_ok && r &&
               (!r->count ||
                (r->count->symbol == data::IntArg::Symbol::kLiteral && r->count->value < 0))) {
      why =
          "repeat() without a count never ends its epoch, so there is no rest of it to "
          "resume (give repeat() a count, make each epoch a pass of fit(epochs=N), or say how "
          "many steps an epoch takes: fit(steps_per_epoch=S))";
    } else if (const auto* c = std::get_if<data::ConcatenateOp>(&p); c && c->dataset) {
      if (const data::Op* inner = FirstUnresumable(*c->dataset, endless_ok, why)) return inner;
      continue;
    } else {
      continue;
    }
    return &op;
  }
  return nullptr;
}

// The first random op of `pipeline` without an op seed (a concatenate()'s
// looked through), or null.
const data::Op* UnseededOp(const data::Pipeline& pipeline) {
  for (const data::Op& op : pipeline.ops) {
    if (const std::optional<int64_t>* seed = data::OpSeedOf(op); seed && !seed->has_value()) {
      return &op;
    }
    if (const auto* c = std::get_if<data::ConcatenateOp>(&op.params); c && c->dataset) {
      if (const data::Op* inner = UnseededOp(*c->dataset)) return inner;
    }
  }
  return nullptr;
}

// From a function: the batch size of its last batch(), each replica's
// (a number, or ctx.get_per_replica_batch_size(G) = G / replicas in sync);
// nullopt when it is neither.
std::optional<int64_t> PerReplicaBatch(const data::Pipeline& pipeline, const Topology& t) {
  for (auto op = pipeline.ops.rbegin(); op != pipeline.ops.rend(); ++op) {
    const auto* b = std::get_if<data::BatchOp>(&op->params);
    if (b == nullptr) continue;
    const data::IntArg& a = b->batch_size;
    if (a.symbol == data::IntArg::Symbol::kLiteral && a.value > 0) return a.value;
    if (a.symbol == data::IntArg::Symbol::kPerReplicaBatchSize &&
        a.value % t.num_replicas_in_sync() == 0 && a.value > 0) {
      return a.value / t.num_replicas_in_sync();
    }
    return std::nullopt;
  }
  return std::nullopt;
}

bool DrawsSeeds(const data::Op& op) {
  if (const auto* s = std::get_if<data::ShuffleOp>(&op.params)) return s->reshuffle_each_iteration;
  if (const auto* l = std::get_if<data::ListFilesOp>(&op.params)) return l->shuffle;
  return false;
}

// One worker's share of the epoch being replayed.
struct Tally {
  uint64_t consumed = 0;
  uint64_t remaining = 0;
  uint64_t remaining_bytes = 0;
  uint64_t remaining_batches = 0;
  std::vector<uint64_t> replica_consumed, replica_remaining;
  SizeRuns sizes;
  std::vector<uint64_t> step;  // this step's batch sizes so far
  std::string first, last;

  void Reset(int64_t replicas) {
    *this = Tally();
    replica_consumed.assign(static_cast<size_t>(replicas), 0);
    replica_remaining.assign(static_cast<size_t>(replicas), 0);
  }
  // A per-replica batch after the resume step.
  void AddRemaining(int64_t replica, const std::vector<data::Element>& elements) {
    const uint64_t n = data::Leaves(elements);
    remaining += n;
    replica_remaining[static_cast<size_t>(replica)] += n;
    remaining_bytes += data::PayloadBytes(elements);
    ++remaining_batches;
    step.push_back(n);
    if (!elements.empty()) {
      if (first.empty()) first = elements.front().Label(data::LabelMode::kRef);
      last = elements.back().Label(data::LabelMode::kRef);
    }
  }
  // The step's batches are all in.
  void EndStep() {
    AddStep(sizes, step);
    step.clear();
  }
  WorkerCursor Cursor(int64_t worker) const {
    WorkerCursor c;
    c.worker = worker;
    c.consumed = consumed;
    c.remaining = remaining;
    c.remaining_bytes = remaining_bytes;
    c.replica_consumed = replica_consumed;
    c.replica_remaining = replica_remaining;
    c.batch_sizes = sizes;
    c.remaining_batches = remaining_batches;
    c.first_remaining = first;
    c.last_remaining = last;
    return c;
  }
};

// The remainder's records in the uninterrupted global order (step by step,
// each step's workers and their replicas in order), dealt to a new topology
// as tf.distribute deals a global batch over the replicas in sync: each
// global batch of G records cut into N = W*R consecutive pieces, the first
// G mod N of them one record longer; piece j goes to worker j / R, local
// replica j mod R. The last global batch may be short and is cut the same
// way. Memory: one global batch.
class Redealer {
 public:
  Redealer(Topology to, uint64_t global_batch, RemainderSink* sink)
      : to_(to), global_batch_(global_batch), sink_(sink) {
    tallies_.resize(static_cast<size_t>(to.workers));
    for (Tally& t : tallies_) t.Reset(to.replicas);
  }

  Status Add(std::vector<data::Element>& elements) {
    for (data::Element& e : elements) {
      pending_.push_back(std::move(e));
      if (pending_.size() == global_batch_) TFDIST_RETURN_IF_ERROR(Deal());
    }
    return Status::OK();
  }
  Status Finish() { return pending_.empty() ? Status::OK() : Deal(); }

  int64_t steps() const { return steps_; }
  std::vector<WorkerCursor> Cursors() const {
    std::vector<WorkerCursor> out;
    for (size_t w = 0; w < tallies_.size(); ++w) {
      out.push_back(tallies_[w].Cursor(static_cast<int64_t>(w)));
    }
    return out;
  }

 private:
  Status Deal() {
    ++steps_;
    const uint64_t n = static_cast<uint64_t>(to_.num_replicas_in_sync());
    const uint64_t size = pending_.size();
    const uint64_t floor = size / n, extra = size % n;
    std::vector<data::Element> piece;
    for (uint64_t j = 0; j < n; ++j) {
      const uint64_t take = floor + (j < extra ? 1 : 0);
      piece.clear();
      for (uint64_t i = 0; i < take; ++i) {
        piece.push_back(std::move(pending_.front()));
        pending_.pop_front();
      }
      const int64_t worker = static_cast<int64_t>(j) / to_.replicas;
      const int64_t replica = static_cast<int64_t>(j) % to_.replicas;
      tallies_[static_cast<size_t>(worker)].AddRemaining(replica, piece);
      if (sink_) TFDIST_RETURN_IF_ERROR(sink_->OnBatch(worker, replica, piece));
    }
    for (Tally& t : tallies_) t.EndStep();
    return Status::OK();
  }

  Topology to_;
  uint64_t global_batch_;
  RemainderSink* sink_;
  std::deque<data::Element> pending_;
  std::vector<Tally> tallies_;
  int64_t steps_ = 0;
};

}  // namespace

Status CheckResumable(const data::Pipeline& pipeline, const DistributeOptions& options,
                      bool global_seed, bool steps_per_epoch) {
  auto check = [&](const data::Pipeline& p) -> Status {
    if (!global_seed && data::HasUnseededShuffle(p)) {
      constexpr char kWhy[] =
          "cannot resume exactly: this shuffle has no seed and the program sets no global seed, "
          "so TensorFlow's order differs on every run and no record can be placed (give the "
          "shuffle a seed, or the program tf.random.set_seed(G))";
      if (const data::Op* op = UnseededOp(p)) return data::PositionError(p.text, op->pos, kWhy);
      return Status::InvalidArgument(kWhy);
    }
    std::string why;
    if (const data::Op* op = FirstUnresumable(p, steps_per_epoch, why)) {
      return data::PositionError(p.text, op->pos, fmt::format("cannot resume exactly: {}", why));
    }
    if (steps_per_epoch && !Analyze(p).endless_at) {
      return Status::InvalidArgument(
          "steps_per_epoch cuts the one pass of a pipeline that repeats forever into epochs, and "
          "this pipeline ends: its epochs are its passes, fit(epochs=N)");
    }
    return Status::OK();
  };
  if (options.worker_pipelines) {
    for (const data::Pipeline& p : *options.worker_pipelines) TFDIST_RETURN_IF_ERROR(check(p));
    return Status::OK();
  }
  return check(pipeline);
}

bool PassesSkipUnread(const data::Pipeline& pipeline) {
  bool drawn = false;  // a reshuffling op seen, upstream of the current op
  for (const data::Op& op : pipeline.ops) {
    if (DrawsSeeds(op)) drawn = true;
    const bool lazy = std::holds_alternative<data::RepeatOp>(op.params) ||
                      std::holds_alternative<data::CacheOp>(op.params);
    if (drawn && lazy) return false;
    if (const auto* c = std::get_if<data::ConcatenateOp>(&op.params); c && c->dataset) {
      for (const data::Op& inner : c->dataset->ops) {
        if (DrawsSeeds(inner)) return false;
      }
    }
  }
  return true;
}

Result<ResumeCursor> LocateResume(const data::Pipeline& pipeline, const DistributeOptions& options,
                                  const data::BuildOptions& build, const ResumeOptions& resume,
                                  RemainderSink* sink) {
  TFDIST_RETURN_IF_ERROR(CheckResumable(pipeline, options, build.global_seed.has_value(),
                                        resume.steps_per_epoch.has_value()));
  if (resume.at_step < 0) return Status::InvalidArgument("the resume step must be 0 or more");
  if (resume.epoch && (*resume.epoch < 1 || *resume.epoch > options.epochs)) {
    return Status::InvalidArgument(fmt::format("epoch {} is not one of the {} epoch{} planned",
                                               *resume.epoch, options.epochs,
                                               options.epochs == 1 ? "" : "s"));
  }
  DistributeOptions all = options;
  all.worker.reset();
  all.max_steps.reset();
  data::BuildOptions ids = build;
  ids.record_ids = data::RecordIds::kPlain;
  // Files with an up-to-date index give their ids without a read; the
  // records written are read (and checked) when they are fetched.
  ids.read_by_index = true;
  auto watch = std::make_shared<data::ShuffleWatch>();
  ids.shuffle_watch = watch;
  TFDIST_ASSIGN_OR_RETURN(const Execution ex, Execution::Plan(pipeline, all, ids));
  if (!ex.batched()) {
    return Status::InvalidArgument(
        "cannot resume: the pipeline has no batch(), so there are no global steps to resume "
        "after");
  }
  ResumeCursor c;
  c.shared_reading = ex.reads_once();
  c.decision = ex.decision();
  c.topology = options.topology;
  const int64_t R = options.topology.replicas;
  std::optional<Redealer> redeal;
  if (resume.to) {
    TFDIST_RETURN_IF_ERROR(CheckTopology(*resume.to));
    const std::optional<int64_t> per_replica = PerReplicaBatch(
        options.worker_pipelines ? options.worker_pipelines->front() : pipeline, options.topology);
    if (options.api == Api::kFromFunction
            ? !per_replica
            : (!c.decision.global_batch_size || *c.decision.global_batch_size <= 0)) {
      return Status::InvalidArgument(
          "a new topology deals the rest of the epoch in global batches of the pipeline's "
          "batch(), and this pipeline's batch size is not a number");
    }
    c.to = resume.to;
    // From a function, batch(b) is each replica's: the new global batch
    // keeps b for each of the new replicas.
    const int64_t global = options.api == Api::kFromFunction
                               ? *per_replica * resume.to->num_replicas_in_sync()
                               : *c.decision.global_batch_size;
    c.to_global_batch = global;
    redeal.emplace(*resume.to, static_cast<uint64_t>(global), sink);
  }
  const size_t W = ex.workers().size();
  std::vector<Tally> tallies(W);

  // Deals one epoch from `dealer`: passes over its first `skip` steps (the
  // epochs before, in a pass that repeats forever), then deals at most
  // `limit` steps, counting those up to `at` and handing on those after
  // it. Returns the epoch's steps (fewer than `skip` ended the pass: -1).
  std::vector<data::ShuffleWatch::State> buffers;
  auto deal = [&](StepDealer& dealer, int64_t skip, int64_t at,
                  std::optional<int64_t> limit) -> Result<int64_t> {
    for (Tally& t : tallies) t.Reset(R);
    buffers.clear();
    Step step;
    for (bool end = false; skip > 0; --skip) {
      if (Interrupted()) return Status::Interrupted();
      TFDIST_RETURN_IF_ERROR(dealer.Next(step, end));
      if (end || step.dropped) return int64_t{-1};
    }
    if (at == 0 && resume.shuffle_buffers) buffers = watch->Snapshot();
    int64_t k = 0;  // steps of this epoch dealt
    for (bool end = false; !limit || k < *limit;) {
      if (Interrupted()) return Status::Interrupted();
      TFDIST_RETURN_IF_ERROR(dealer.Next(step, end));
      if (end || step.dropped) break;  // a dropped step is not trained
      if (++k == at && resume.shuffle_buffers) buffers = watch->Snapshot();
      const bool before = k <= at;
      for (ReplicaBatch& b : step.batches) {
        if (b.padding) continue;
        const size_t w = static_cast<size_t>(&b - step.batches.data()) / static_cast<size_t>(R);
        Tally& t = tallies[w];
        if (before) {
          const uint64_t n = data::Leaves(b.elements);
          t.consumed += n;
          t.replica_consumed[static_cast<size_t>(b.replica)] += n;
          continue;
        }
        t.AddRemaining(b.replica, b.elements);
        if (redeal) {
          TFDIST_RETURN_IF_ERROR(redeal->Add(b.elements));
        } else if (sink) {
          TFDIST_RETURN_IF_ERROR(sink->OnBatch(b.worker, b.replica, b.elements));
        }
      }
      for (Tally& t : tallies) t.EndStep();
    }
    return k;
  };

  int64_t epoch = 1;
  int64_t global = 0;           // steps trained before this epoch
  bool counted = true;          // `global` is known
  int64_t at = resume.at_step;  // counted within `epoch`
  int64_t k = 0;
  if (resume.steps_per_epoch) {
    // One pass, which repeats forever, cut into epochs of S steps.
    const int64_t S = *resume.steps_per_epoch;
    if (resume.epoch && resume.at_step > S) {
      return Status::InvalidArgument(fmt::format(
          "step {} is past the end of epoch {}: its epochs have {} step{} (steps_per_epoch)",
          resume.at_step, *resume.epoch, S, S == 1 ? "" : "s"));
    }
    const int64_t n = resume.epoch ? (*resume.epoch - 1) * S + resume.at_step : resume.at_step;
    epoch = resume.epoch ? *resume.epoch : n == 0 ? 1 : (n + S - 1) / S;
    if (epoch > options.epochs) {
      return Status::InvalidArgument(
          fmt::format("step {} is past the end: the {} epoch{} planned have {} steps in all", n,
                      options.epochs, options.epochs == 1 ? "" : "s", options.epochs * S));
    }
    global = (epoch - 1) * S;
    at = n - global;
    c.earlier_replayed = epoch > 1;
    TFDIST_ASSIGN_OR_RETURN(StepDealer dealer, StepDealer::Open(ex, {}));
    TFDIST_ASSIGN_OR_RETURN(k, deal(dealer, global, at, S));
    if (k < at) {
      return Status::InvalidArgument(fmt::format("the data ended after {} steps, before step {}",
                                                 global + std::max<int64_t>(k, 0), n));
    }
  } else {
    if (resume.epoch && *resume.epoch > 1) {
      epoch = *resume.epoch;
      bool skip_unread = PassesSkipUnread(pipeline);
      if (options.worker_pipelines) {
        for (const data::Pipeline& p : *options.worker_pipelines) {
          skip_unread = skip_unread && PassesSkipUnread(p);
        }
      }
      if (skip_unread) {
        for (int64_t e = 1; e < epoch; ++e) {
          TFDIST_ASSIGN_OR_RETURN(StepDealer skipped, StepDealer::Open(ex, {}));
        }
        counted = false;
        c.passes_skipped = true;
      } else {
        // The seeds a pass draws depend on its reading: replay the passes.
        for (int64_t e = 1; e < epoch; ++e) {
          TFDIST_ASSIGN_OR_RETURN(StepDealer dealer, StepDealer::Open(ex, {}));
          // Every step counted as before the resume point: none handed on.
          TFDIST_ASSIGN_OR_RETURN(
              const int64_t steps,
              deal(dealer, 0, std::numeric_limits<int64_t>::max(), std::nullopt));
          global += steps;
        }
        c.earlier_replayed = true;
      }
    }
    // The epoch the step is in: the first whose steps reach it.
    for (;; ++epoch) {
      if (epoch > options.epochs) {
        return Status::InvalidArgument(fmt::format(
            "step {} is past the end: the {} epoch{} planned have {} step{} in all", resume.at_step,
            options.epochs, options.epochs == 1 ? "" : "s", global, global == 1 ? "" : "s"));
      }
      at = resume.epoch ? resume.at_step : resume.at_step - global;
      TFDIST_ASSIGN_OR_RETURN(StepDealer dealer, StepDealer::Open(ex, {}));
      TFDIST_ASSIGN_OR_RETURN(k, deal(dealer, 0, at, std::nullopt));
      if (k >= at) break;
      if (resume.epoch) {
        return Status::InvalidArgument(
            fmt::format("step {} is past the end of epoch {}: it has {} step{}", resume.at_step,
                        epoch, k, k == 1 ? "" : "s"));
      }
      global += k;
      c.earlier_replayed = true;
    }
  }
  for (data::ShuffleWatch::State& b : buffers) {
    ShuffleBuffer& out = c.shuffles.emplace_back();
    out.worker = b.worker;
    out.pos = b.pos;
    for (const data::Element& e : b.elements) {
      out.elements.push_back(
          e.kind == data::Element::Kind::kBatch ? "[batch]" : e.Label(data::LabelMode::kRef));
    }
  }
  c.epoch = epoch;
  c.step_in_epoch = at;
  c.epoch_steps = k;
  if (counted) {
    c.first_step = global + 1;
    c.at_step = global + at;
  } else {
    c.first_step.reset();
    c.at_step.reset();
  }
  for (size_t w = 0; w < W; ++w) {
    c.workers.push_back(tallies[w].Cursor(ex.workers()[w]));
    c.consumed += tallies[w].consumed;
    c.remaining += tallies[w].remaining;
  }
  if (redeal) {
    TFDIST_RETURN_IF_ERROR(redeal->Finish());
    c.to_workers = redeal->Cursors();
    c.to_steps = redeal->steps();
  }
  return c;
}

}  // namespace tfdist::dist
