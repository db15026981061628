// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The planning PlanLayout and the streaming executor share: list_files
// expanded once, the topology checked, the policy and split decided, and
// each worker's pipeline and build options.

#ifndef TFDIST_DISTRIBUTE_PLAN_H_
#define TFDIST_DISTRIBUTE_PLAN_H_

#include <optional>

#include "policy.h"
#include "tfdist/distribute/distribute.h"
#include "tfdist/io/file_list.h"

namespace tfdist::dist {

// The topology must have workers and replicas, --worker one of them, and
// --steps a sane count. Error: InvalidArgument saying which.
Status CheckTopology(const DistributeOptions& options);

// The policy and the split tf.distribute would apply, with the reasons, and
// the FILE policy's check that there are enough files.
Status Decide(const data::Pipeline& pipeline, const Structure& s, const DistributeOptions& options,
              const data::BuildOptions& build, Decision& d);

// What distribute_datasets_from_function does: no policy, no split; and the
// warning for a shard after an unseeded shuffle of file names.
void DecideFromFunction(const Structure& s, Decision& d);

// list_files() expanded once for all workers: from_tensor_slices() of the
// sorted matches, then the shuffle list_files(shuffle=True) stands for.
Result<data::Pipeline> ExpandListFiles(const data::Pipeline& in,
                                       const io::FolderListings& listings = io::FolderListings());

// A distribution decided, before any worker runs.
struct Distribution {
  data::Pipeline pipeline;   // list_files expanded
  Structure structure;       // of `pipeline`
  Decision decision;
  data::BuildOptions build;  // one seed for the run; deferred_payloads for DATA by index
  bool shard_files = false;  // FILE sharding over several workers

  // Worker w's own pipeline under FILE sharding (its share of the names);
  // nullopt where it runs `pipeline` as it is.
  std::optional<data::Pipeline> WorkerShard(const DistributeOptions& options, int64_t w) const;
  // Worker w's build options: its InputContext (from-function) or shard hint
  // (HINT), and a bytes_read counter of its own.
  data::BuildOptions WorkerBuild(const DistributeOptions& options, int64_t w) const;
};

// Expands list_files, checks the topology, picks the run's seed (so every
// worker draws the same unseeded shuffles), and decides the policy, the
// split and whether DATA reads by index files.
// Error: as CheckTopology and Decide, or list_files matching nothing.
Result<Distribution> PlanDistribution(const data::Pipeline& original,
                                      const DistributeOptions& options,
                                      const data::BuildOptions& build);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_PLAN_H_
