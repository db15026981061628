// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// layout --compare's recommendation: the cost of each policy, and a reshard
// when it beats them all.

#include "tfdist/distribute/recommend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tfdist::dist {
namespace {

double Fraction(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

// The preference on a tie: what AUTO applies, then FILE, DATA, OFF.
int Rank(AutoShardPolicy p, AutoShardPolicy automatic) {
  if (p == automatic) return 0;
  switch (p) {
    case AutoShardPolicy::kFile:
      return 1;
    case AutoShardPolicy::kData:
      return 2;
    default:
      return 3;
  }
}

// What counts against `o` next to the choice: the terms of its cost that
// exceed the choice's (`chosen`) by 0.005 or more, the larger first, at
// most three, worded
// ("FILE drops 35.1% of the records and gives the workers uneven shares
// (imbalance 2.67)"); empty when none does.
std::string Against(const PolicyOutcome& o, const Cost& cost, const Cost& chosen, int64_t workers) {
  struct Term {
    double excess;
    std::string words;
  };
  std::vector<Term> terms = {
      {cost.dropped - chosen.dropped,
       fmt::format("drops {:.1f}% of the records", 100 * Fraction(o.dropped, o.records_read))},
      {cost.duplicated - chosen.duplicated,
       fmt::format("feeds every record {} times", o.read_amplification)},
      {cost.imbalance - chosen.imbalance,
       fmt::format("gives the workers uneven shares (imbalance {:.2f})", o.imbalance)},
      {cost.idle - chosen.idle,
       fmt::format("leaves workers idle in {} of {} worker-steps", o.idle_steps,
                   o.steps * static_cast<uint64_t>(std::max<int64_t>(workers, 1)))},
      {cost.reads - chosen.reads, fmt::format("reads the input {}x", o.read_amplification)},
  };
  std::stable_sort(terms.begin(), terms.end(),
                   [](const Term& a, const Term& b) { return a.excess > b.excess; });
  std::string out;
  size_t n = 0;
  while (n < 3 && terms[n].excess >= 0.005) ++n;
  for (size_t i = 0; i < n; ++i) {
    out += fmt::format("{}{}", i == 0 ? "" : i + 1 == n ? " and " : ", ", terms[i].words);
  }
  return out.empty() ? out : fmt::format("{} {}", PolicyName(o.policy), out);
}

}  // namespace

Cost CostOf(const PolicyOutcome& o, int64_t workers) {
  Cost c;
  const uint64_t fed = o.records_read - std::min(o.dropped, o.records_read);
  c.dropped = kDroppedWeight * Fraction(o.dropped, o.records_read);
  c.duplicated =
      kDuplicatedWeight * Fraction(o.received - std::min(o.received, fed), o.records_read);
  c.imbalance = kImbalanceWeight * std::max(0.0, o.imbalance - 1.0);
  c.idle = kIdleWeight *
           Fraction(o.idle_steps, o.steps * static_cast<uint64_t>(std::max<int64_t>(workers, 1)));
  c.reads = kExtraReadWeight * static_cast<double>(std::max<int64_t>(o.read_amplification - 1, 0));
  return c;
}

std::optional<Recommendation> Recommend(const std::vector<PolicyOutcome>& outcomes, int64_t workers,
                                        AutoShardPolicy automatic, bool reads_files) {
  Recommendation r;
  const PolicyOutcome* best = nullptr;
  double best_cost = 0;
  const PolicyOutcome* data = nullptr;
  bool file_fixable = false;
  for (const PolicyOutcome& o : outcomes) {
    if (o.policy == AutoShardPolicy::kFile) file_fixable = o.applies || o.needs_more_files;
    if (!o.applies) continue;
    if (o.policy == AutoShardPolicy::kData) data = &o;
    const double cost = CostOf(o, workers).total();
    r.costs.emplace_back(o.policy, cost);
    // Costs within a rounding error of each other are a tie.
    const bool tie = best != nullptr && std::abs(cost - best_cost) < 1e-9;
    if (best == nullptr || (!tie && cost < best_cost) ||
        (tie && Rank(o.policy, automatic) < Rank(best->policy, automatic))) {
      best = &o;
      best_cost = cost;
    }
  }
  if (best == nullptr) return std::nullopt;
  r.policy = best->policy;
  Cost chosen = CostOf(*best, workers);
  if (reads_files && file_fixable && workers > 1 && data != nullptr) {
    PolicyOutcome even = *data;
    even.policy = AutoShardPolicy::kFile;
    even.read_amplification = 1;
    const Cost even_cost = CostOf(even, workers);
    const double cost = even_cost.total() + kRewriteCost;
    r.reshard_cost = cost;
    if (cost < best_cost) {
      chosen = even_cost;
      const uint64_t w = static_cast<uint64_t>(workers);
      const uint64_t per_worker = std::max<uint64_t>(1, (data->files + w - 1) / w);
      r.num_shards = w * per_worker;
      r.policy = AutoShardPolicy::kFile;
    }
  }
  for (const PolicyOutcome& o : outcomes) {
    if (!o.applies) {
      r.against.push_back(fmt::format("{} cannot apply", PolicyName(o.policy)));
      continue;
    }
    if (!r.num_shards && o.policy == r.policy) continue;
    std::string clause = Against(o, CostOf(o, workers), chosen, workers);
    if (!clause.empty()) r.against.push_back(std::move(clause));
  }
  return r;
}

}  // namespace tfdist::dist
