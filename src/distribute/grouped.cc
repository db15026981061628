// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The bounds of a grouping's batches, from TensorFlow's GroupByWindowDataset
// (group_by_window_dataset_op.cc) and bucket_by_sequence_length
// (dataset_ops.py), carried through the ops after it.

#include "tfdist/distribute/grouped.h"

#include <fmt/format.h>

#include <algorithm>

#include "tfdist/data/pipeline.h"

namespace tfdist::dist {
namespace {

constexpr uint64_t kInf = Bounds::kUnbounded;

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

uint64_t SatAdd(uint64_t a, uint64_t b) { return a > kInf - b ? kInf : a + b; }

uint64_t SatMul(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kInf / b ? kInf : a * b;
}

std::vector<uint64_t> Sizes(const data::GroupByWindowOp& op) {
  std::vector<uint64_t> out;
  for (const data::IntArg& a : op.window_sizes) out.push_back(static_cast<uint64_t>(a.value));
  return out;
}

// group_by_window: the most elements one batch holds (the window size when
// reduce_func's batch takes a whole window, else its batch size), and
// whether a full window gives no batch at all (drop_remainder with a batch
// larger than the window).
struct WindowBatch {
  uint64_t cap = 1;
  bool never = false;
};
WindowBatch OfWindow(const data::GroupByWindowOp& op) {
  const uint64_t b = static_cast<uint64_t>(op.reduce_batch_size ? op.reduce_batch_size->value : 1);
  if (op.window_sizes.empty()) return {b, false};  // window_size_func decides
  const uint64_t w = static_cast<uint64_t>(op.window_sizes[0].value);
  return {std::min(w, b), op.drop_remainder && b > w};
}

bool Is(const data::Op& op, auto pred) { return pred(op.params); }

}  // namespace

Bounds GroupedBatches(const data::GroupByWindowOp& op, uint64_t n) {
  if (n == 0) return {};
  if (!op.buckets) {
    // Any number of keys: one key for all (fewest batches) or a key each
    // (most). Each batch holds at most `cap` elements; with
    // drop_remainder, exactly `cap`, and every window may stay short.
    const WindowBatch wb = OfWindow(op);
    if (wb.never) return {};
    if (op.drop_remainder) return {0, n / wb.cap};
    return {CeilDiv(n, wb.cap), n};
  }
  // K buckets of window sizes W_k, each window one batch.
  const std::vector<uint64_t> w = Sizes(op);
  const uint64_t k = w.size();
  const uint64_t w_min = *std::min_element(w.begin(), w.end());
  const uint64_t w_max = *std::max_element(w.begin(), w.end());
  if (!op.drop_remainder) {
    // Fewest: all in the bucket of the largest windows. Most: one element
    // in each of K' = min(K, n) buckets but one, the rest in the bucket of
    // the smallest windows: K' + floor((n - K') / W_min), and no split does
    // better, as sum ceil(n_k / W_k) <= K' + floor((n - K') / W_min).
    const uint64_t used = std::min(k, n);
    return {CeilDiv(n, w_max), used + (n - used) / w_min};
  }
  // drop_remainder: each bucket may keep W_k - 1 elements unbatched; the
  // rest fill batches of at most W_max. Most: all in the smallest windows.
  uint64_t kept = 0;
  for (uint64_t size : w) kept = SatAdd(kept, size - 1);
  const uint64_t rest = n > kept ? n - kept : 0;
  return {CeilDiv(rest, w_max), n / w_min};
}

std::optional<Bounds> GroupedBatchSize(const data::GroupByWindowOp& op, uint64_t n) {
  if (GroupedBatches(op, n).max == 0) return std::nullopt;
  if (!op.buckets) {
    const uint64_t cap = OfWindow(op).cap;
    if (op.drop_remainder) return Bounds{cap, cap};
    return Bounds{1, std::min(cap, n)};
  }
  const std::vector<uint64_t> w = Sizes(op);
  if (!op.drop_remainder) {
    return Bounds{1, std::min(*std::max_element(w.begin(), w.end()), n)};
  }
  // Full windows only: the sizes of the buckets that n can fill.
  Bounds out{kInf, 0};
  for (uint64_t size : w) {
    if (size > n) continue;
    out.min = std::min(out.min, size);
    out.max = std::max(out.max, size);
  }
  return out;
}

std::optional<size_t> FindGrouping(const data::Pipeline& pipeline) {
  for (size_t i = 0; i < pipeline.ops.size(); ++i) {
    if (std::holds_alternative<data::GroupByWindowOp>(pipeline.ops[i].params)) return i;
  }
  return std::nullopt;
}

Status CheckAfterGrouping(const data::Pipeline& p, size_t at) {
  const data::Op& group = p.ops[at];
  for (size_t i = at + 1; i < p.ops.size(); ++i) {
    const data::Op& op = p.ops[i];
    auto literal = [&](const data::IntArg& a) -> Status {
      if (a.symbol == data::IntArg::Symbol::kLiteral) return Status::OK();
      return data::PositionError(
          p.text, a.pos,
          fmt::format("{}() after {}() ({}): tfdist bounds its batches with a count given as a "
                      "number",
                      op.name, group.name, data::DescribePosition(p.text, group.pos)));
    };
    const bool passes = Is(op, [](const auto& v) {
      return std::holds_alternative<data::PrefetchOp>(v) ||
             std::holds_alternative<data::MapOp>(v) || std::holds_alternative<data::ShuffleOp>(v) ||
             std::holds_alternative<data::CacheOp>(v) ||
             std::holds_alternative<data::FilterOp>(v) ||
             std::holds_alternative<data::EnumerateOp>(v) ||
             std::holds_alternative<data::IgnoreErrorsOp>(v);
    });
    if (passes) continue;
    if (const auto* t = std::get_if<data::TakeOp>(&op.params)) {
      TFDIST_RETURN_IF_ERROR(literal(t->count));
    } else if (const auto* s = std::get_if<data::SkipOp>(&op.params)) {
      TFDIST_RETURN_IF_ERROR(literal(s->count));
    } else if (const auto* r = std::get_if<data::RepeatOp>(&op.params)) {
      if (r->count) TFDIST_RETURN_IF_ERROR(literal(*r->count));
    } else {
      return data::PositionError(
          p.text, op.pos,
          fmt::format("{}() after {}() ({}): the grouping's batches have sizes only the data "
                      "decides, and tfdist cannot bound what {}() makes of them; lay out the "
                      "pipeline up to {}() and what follows it apart",
                      op.name, group.name, data::DescribePosition(p.text, group.pos), op.name,
                      op.name));
    }
  }
  return Status::OK();
}

Bounds AfterGrouping(const data::Pipeline& p, size_t at, Bounds b) {
  for (size_t i = at + 1; i < p.ops.size(); ++i) {
    const data::Op& op = p.ops[i];
    if (std::holds_alternative<data::FilterOp>(op.params)) {
      b.min = 0;  // its predicate may drop every batch
    } else if (const auto* t = std::get_if<data::TakeOp>(&op.params)) {
      if (t->count.value >= 0) {
        const uint64_t n = static_cast<uint64_t>(t->count.value);
        b = {std::min(b.min, n), std::min(b.max, n)};
      }
    } else if (const auto* s = std::get_if<data::SkipOp>(&op.params)) {
      if (s->count.value < 0) {
        b = {};
      } else {
        const uint64_t n = static_cast<uint64_t>(s->count.value);
        auto minus = [n](uint64_t v) { return v == kInf ? kInf : v > n ? v - n : 0; };
        b = {minus(b.min), minus(b.max)};
      }
    } else if (const auto* r = std::get_if<data::RepeatOp>(&op.params)) {
      if (!r->count || r->count->value < 0) {
        // An epoch without elements ends repeat(); any other repeats forever.
        b = {b.min > 0 ? kInf : 0, b.max > 0 ? kInf : 0};
      } else {
        const uint64_t n = static_cast<uint64_t>(r->count->value);
        b = {SatMul(b.min, n), SatMul(b.max, n)};
      }
    }
  }
  return b;
}

GroupedSummary BoundGrouping(const data::Pipeline& p, size_t at, const Decision& d,
                             const DistributeOptions& options,
                             const std::vector<uint64_t>& elements, bool input_repeats,
                             bool at_most) {
  const data::Op& op = p.ops[at];
  const auto& g = std::get<data::GroupByWindowOp>(op.params);
  GroupedSummary out;
  out.op = fmt::format("{}({}) ({})", op.name, g.key_func, data::DescribePosition(p.text, op.pos));
  out.input_repeats = input_repeats;
  const uint64_t R = static_cast<uint64_t>(options.topology.replicas);
  // A legacy split makes each batch one step of R pieces; otherwise each
  // batch is one replica's, R of them a step.
  const bool split = options.api == Api::kDistribute && d.split != Split::kNone;
  const uint64_t cap = options.max_steps ? static_cast<uint64_t>(*options.max_steps) : kInf;
  std::optional<Bounds> sizes;
  for (size_t w = 0; w < elements.size(); ++w) {
    const uint64_t n = elements[w];
    GroupedWorker row;
    row.worker = static_cast<int64_t>(w);
    row.elements = n;
    Bounds b = GroupedBatches(g, n);
    if (input_repeats && n > 0) {
      // Endless input: bucket_by_sequence_length's finite buckets fill
      // forever; group_by_window's keys may all differ, which fills no
      // window larger than one element.
      const WindowBatch wb = OfWindow(g);
      const bool fills = g.buckets || (!wb.never && wb.cap == 1);
      b = {fills ? kInf : 0, wb.never && !g.buckets ? 0 : kInf};
    }
    if (b.max > 0) {
      if (std::optional<Bounds> s = GroupedBatchSize(g, input_repeats ? kInf : n)) {
        sizes = sizes ? Bounds{std::min(sizes->min, s->min), std::max(sizes->max, s->max)} : *s;
      }
    }
    if (at_most) b.min = 0;
    b = AfterGrouping(p, at, b);
    const uint64_t epochs = static_cast<uint64_t>(options.epochs);
    if (b.max != kInf) b = {SatMul(b.min, epochs), SatMul(b.max, epochs)};
    row.batches = b;
    auto steps = [&](uint64_t v) {
      if (v == kInf) return cap;
      return std::min(split ? v : CeilDiv(v, R), cap);
    };
    row.steps = {steps(b.min), steps(b.max)};
    out.steps.min = std::max(out.steps.min, row.steps.min);
    out.steps.max = std::max(out.steps.max, row.steps.max);
    out.workers.push_back(row);
  }
  if (out.workers.size() > 1) {
    uint64_t least_min = kInf, least_max = kInf;
    for (const GroupedWorker& w : out.workers) {
      least_min = std::min(least_min, w.steps.min);
      least_max = std::min(least_max, w.steps.max);
    }
    out.padded_steps = {out.steps.min > least_max ? out.steps.min - least_max : 0,
                        out.steps.max - least_min};
  }
  if (sizes && split && R > 1) {
    // RebatchDataset's legacy pieces: ceil(s / R) each, the last ones short
    // or empty.
    Bounds piece{kInf, CeilDiv(sizes->max, R)};
    for (uint64_t s = sizes->min; s <= sizes->max && piece.min > 0; ++s) {
      const uint64_t full = CeilDiv(s, R) * (R - 1);
      piece.min = std::min(piece.min, s > full ? s - full : 0);
      if (s - sizes->min > 100'000) piece.min = 0;  // a bound, as wide as it can be
    }
    sizes = piece;
  }
  out.batch_records = sizes;
  return out;
}

}  // namespace tfdist::dist
