// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Record-level DATA sharding: whether each worker can read only the records
// it keeps, located by the files' indexes, instead of every file.

#ifndef TFDIST_DISTRIBUTE_RECORD_INDEX_PLAN_H_
#define TFDIST_DISTRIBUTE_RECORD_INDEX_PLAN_H_

#include "policy.h"
#include "tfdist/distribute/distribute.h"

namespace tfdist::dist {

// Applies when DATA sharding was decided (`d`) for several workers under
// --api distribute, build.use_record_index is set, the reader is told no
// compression (or auto) and keeps its order (no deterministic=False), and
// every file name reaching the reader (at most 1,000,000 of them) has an
// up-to-date index. Then sets d.record_index, says so in d.reason, drops
// the warning that every worker reads the whole dataset, and returns true:
// build the workers' pipelines with deferred_payloads and fetch the kept
// records. A stale index is named in a warning (every file is read).
// Error: the names pipeline's own errors.
Result<bool> PlanRecordIndex(const data::Pipeline& pipeline, const Structure& s,
                             const DistributeOptions& options, const data::BuildOptions& build,
                             Decision& d);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_RECORD_INDEX_PLAN_H_
