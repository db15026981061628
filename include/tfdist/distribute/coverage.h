// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Record coverage of a distributed input pipeline, for `tfdist check`: the
// records fed to more than one replica in an epoch, the records fed to
// none, and why (OFF over several workers, an input function that does not
// shard, workers whose file lists overlap, a shard that cuts a different
// random order on each worker), counted exactly where the seeds are fixed,
// and where they are not, as the expected fractions and one draw made by
// running every worker's pipeline with a seed of its own (doc/check.md).

#ifndef TFDIST_DISTRIBUTE_COVERAGE_H_
#define TFDIST_DISTRIBUTE_COVERAGE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/data/pipeline.h"
#include "tfdist/distribute/check.h"
#include "tfdist/distribute/decide.h"
#include "tfdist/distribute/layout.h"

namespace tfdist::dist {

// The expected share of records fed 0, 1 and more times in an epoch when
// each of W workers keeps each record with probability 1/W, independently
// (each cuts its own random order): missed (1 - 1/W)^W, once
// (1 - 1/W)^(W-1), duplicated the rest. W = 1: all once.
struct CoverageFractions {
  double missed = 0;
  double once = 1;
  double duplicated = 0;
};
CoverageFractions ExpectedCoverage(int64_t workers);

// How many times records are fed in an epoch, over all replicas.
struct RecordCounts {
  uint64_t records = 0;      // distinct records the counts cover
  uint64_t duplicated = 0;   // fed to more than one replica
  uint64_t extra_feeds = 0;  // feeds of those beyond their first
  uint64_t missed = 0;       // fed to none
};

// One draw: every worker's pipeline run once (one epoch), each worker's
// shuffles without any seed drawing from a seed of its own, and the
// records of a bounded sample counted.
struct CoverageDraw {
  uint64_t seed = 0;  // the run's seed (data::BuildOptions::default_seed)
  // Over the sampled records a single worker feeds (the reference pass):
  // how many, and those each of the W workers together feeds not at all,
  // exactly once, more than once.
  RecordCounts counts;
  uint64_t once = 0;
  // The sample: records whose id hash is at most `hash_limit` (2^64 - 1:
  // every record); the reference pass fed `reference_records` in all.
  uint64_t hash_limit = 0;
  uint64_t reference_records = 0;
  // The pairs of workers that feed the most sampled records in common
  // (largest first, at most 3), with how many.
  std::vector<std::pair<std::pair<int64_t, int64_t>, uint64_t>> overlaps;

  // counts.missed / counts.records, ...: 0 when nothing was sampled.
  CoverageFractions Fractions() const;
  bool Complete() const { return hash_limit == UINT64_MAX; }
};

// The counts behind the findings, for JSON.
struct CoverageCounts {
  int64_t workers = 1;
  // Seeds fixed: the counts of the whole epoch, exact.
  std::optional<RecordCounts> exact;
  // Seeds that differ per worker: what to expect, and one draw.
  std::optional<CoverageFractions> expected;
  std::optional<CoverageDraw> draw;
  // Why no draw was made where one was due (a pipeline that repeats
  // forever, CoverageOptions::draw off); empty otherwise.
  std::string no_draw;
};

struct CoverageResult {
  std::vector<Finding> findings;  // duplicate_records, missed_records, unseeded_shuffle,
                                  // nondeterministic, in that order
  CoverageCounts counts;
};

// The most sampled records a draw counts at once: past it the sample's hash
// limit halves (dropping the records above it), so memory holds at most
// this many entries (a few MB), whatever the dataset.
inline constexpr size_t kCoverageSampleCap = size_t{1} << 16;

struct CoverageOptions {
  bool draw = true;                        // false: the fractions alone
  std::optional<uint64_t> seed;            // the draw's run seed; nullopt: random
  size_t sample_cap = kCoverageSampleCap;  // REQUIRES: >= 1
};

// The record-coverage findings of `tfdist check` for `pipeline` distributed
// by `options` (its decision and counts in `summary`, made by
// SummarizeLayout or SummarizeFiles from the same arguments), under `ctx`:
//  - duplicate_records / missed_records: OFF over several workers (every
//    record fed W times: an error, a warning when ctx.policy_given); an
//    input function that does not shard (every record W times), or whose
//    workers' file lists overlap or leave records unread
//    (summary.reads); DATA over several workers after a shuffle with no
//    seed, or an input function's or HINT's shard() after one: the
//    expected fractions and a draw, an error. A file list_files matched
//    twice (read twice, under any policy): its records counted, an error.
//    FILE sharding with list_files' unseeded shuffle is safe (TensorFlow
//    moves the shuffle after the shard): no finding.
//  - unseeded_shuffle: a shuffle of records with no seed and no global
//    seed (order differs run to run: a warning), an error where the shard
//    cuts its order (above).
//  - nondeterministic: a parallel op with deterministic=False
//    (PipelineShape::nondeterministic_at) before DATA over several workers
//    or a shard() by the input context (which records each worker keeps
//    cannot be known: an error), else an info (order only).
// The draw reads the data W + 1 times (the reference pass and every
// worker; a file listed twice, W times), in memory bounded by
// CoverageOptions::sample_cap.
// Error: the pipeline's own errors while drawing, Cancelled when
// interrupted.
Result<CoverageResult> CoverageFindings(const data::Pipeline& pipeline,
                                        const DistributeOptions& options,
                                        const data::BuildOptions& build,
                                        const LayoutSummary& summary, const CheckContext& ctx,
                                        const CoverageOptions& coverage = {});

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_COVERAGE_H_
