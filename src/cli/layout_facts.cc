// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The figures every renderer of a layout shows alike.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "layout_render.h"

namespace tfdist::cli {
namespace {

double RoundedFactor(double f) { return std::round(f * 100) / 100; }

}  // namespace

std::string FactorText(double f) { return fmt::format("{}", RoundedFactor(f)); }
nlohmann::ordered_json FactorJson(double f) {
  const double r = RoundedFactor(f);
  if (r == std::floor(r)) return static_cast<int64_t>(r);
  return r;
}

ReadAmplification AmplificationOf(const dist::LayoutSummary& l, dist::Api api) {
  const dist::Decision& d = l.decision;
  const int64_t W = l.topology.workers;
  if (W <= 1) return {};
  if (api == dist::Api::kFromFunction && l.reads) {
    const dist::ReadOverlap& r = *l.reads;
    std::string why = fmt::format("the workers' readers took {} records, {} of them distinct",
                                  r.total, r.distinct);
    if (r.passes > 1) why += fmt::format(", in {} epochs", r.passes);
    if (r.shared == 0) {
      why += ": each record read by one worker";
    } else if (r.shared == r.distinct) {
      why += ": every record read by more than one worker";
    } else {
      why += fmt::format(": {} read by more than one worker", r.shared);
    }
    if (r.unread && *r.unread > 0) {
      why += fmt::format("; {} in the listed files that no worker read", *r.unread);
    }
    return {r.Amplification(), std::move(why)};
  }
  if (api == dist::Api::kFromFunction) {
    if (d.function_shards) return {1, "the input function shards by its input context"};
    return {static_cast<double>(W),
            "the input function does not shard: every worker reads and feeds the same records"};
  }
  switch (d.applied) {
    case dist::AutoShardPolicy::kData:
      return {static_cast<double>(W),
              "DATA: every worker reads the whole dataset, as TensorFlow does"};
    case dist::AutoShardPolicy::kOff:
      return {static_cast<double>(W), "no sharding: every worker reads everything"};
    case dist::AutoShardPolicy::kFile:
      return {1, "FILE: each file is read by one worker"};
    default:
      return {};
  }
}

double Imbalance(const dist::LayoutSummary& l) {
  uint64_t max_records = 0;
  for (const auto& r : l.workers) max_records = std::max(max_records, r.records);
  const uint64_t total = l.ReceivedRecords();
  if (l.workers.empty() || total == 0) return 1.0;
  return static_cast<double>(max_records) * static_cast<double>(l.workers.size()) /
         static_cast<double>(total);
}

std::string ReadPerWorker(const dist::LayoutSummary& l) {
  std::optional<uint64_t> most;
  for (const auto& r : l.workers) {
    if (r.bytes_read && r.files > 0) most = std::max(most.value_or(0), *r.bytes_read);
  }
  return most ? fmt::format("{}", *most) : "-";
}

EmptyAndIdle EmptyAndIdleOf(const dist::LayoutSummary& l) {
  EmptyAndIdle out;
  for (const auto& w : l.workers) {
    out.empty_batches += w.empty_batches;
    out.idle_steps += w.idle_steps;
  }
  return out;
}

const dist::LayoutSummary& Comparison::AnySummary() const {
  return *std::find_if(rows.begin(), rows.end(), [](const Row& r) {
            return r.summary.ok();
          })->summary;
}

}  // namespace tfdist::cli
