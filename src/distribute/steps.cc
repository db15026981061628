// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// DATA's share, the hand-out to replicas and global steps.

#include "tfdist/distribute/steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace tfdist::dist {

Status CheckDataShare(uint64_t pieces, int64_t workers, bool batched) {
  if (pieces == 0 || pieces >= static_cast<uint64_t>(workers)) return Status::OK();
  return Status::InvalidArgument(fmt::format("DATA sharding needs at least {0} {1} for {0} "
                                             "workers, so that each worker gets one; "
                                             "found {2}",
                                             workers, batched ? "per-replica batches" : "elements",
                                             pieces))
      .WithAdvice(Remedy::kFewerWorkers, std::to_string(pieces));
}

bool DropsShortStep(const Decision& d, const Topology& t) {
  return d.batched && t.workers == 1 && d.split == Split::kNone && d.drop_remainder;
}

StepKind NextStep(bool any_batch, bool any_missing, bool drops_short_step) {
  if (!any_batch) return StepKind::kEnd;
  if (any_missing && drops_short_step) return StepKind::kDropped;
  return StepKind::kStep;
}

std::optional<Warning> UnevenFilesWarning(const std::vector<uint64_t>& records, bool batched,
                                          uint64_t padded_steps) {
  const auto [lo, hi] = std::minmax_element(records.begin(), records.end());
  if (records.empty() || *lo == *hi) return std::nullopt;
  const double mean =
      static_cast<double>(std::accumulate(records.begin(), records.end(), uint64_t{0})) /
      static_cast<double>(records.size());
  // A few workers: each count. Many: the extremes and who has them.
  std::string counts;
  if (records.size() <= 8) {
    for (size_t w = 0; w < records.size(); ++w) {
      counts += fmt::format("{}{}", w ? ", " : "", records[w]);
    }
  } else {
    counts = fmt::format("from {} (worker {}) to {} (worker {})", *lo, lo - records.begin(), *hi,
                         hi - records.begin());
  }
  return Warning{
      WarningKind::kUnevenFiles,
      fmt::format("FILE sharding over uneven files: records per worker {} (max/mean {:.2f}){}",
                  counts, static_cast<double>(*hi) / mean,
                  batched ? fmt::format("; {} step{} with replicas fed empty batches", padded_steps,
                                        padded_steps == 1 ? "" : "s")
                          : ""),
      {}};
}

}  // namespace tfdist::dist
