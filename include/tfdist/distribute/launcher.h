// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The worker index and count a launcher puts in the environment
// (doc/semantics.md, "Topology").

#ifndef TFDIST_DISTRIBUTE_LAUNCHER_H_
#define TFDIST_DISTRIBUTE_LAUNCHER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "tfdist/base/result.h"

namespace tfdist::dist {

struct LauncherTopology {
  std::optional<int64_t> workers;
  std::optional<int64_t> worker;
  std::string source;  // "TF_CONFIG", "Open MPI", "Slurm", "torchrun"; empty: none
};

// Reads, in this order of precedence: TF_CONFIG (TensorFlow's cluster JSON:
// task.type/task.index over cluster.chief + cluster.worker, the chief being
// worker 0), Open MPI (OMPI_COMM_WORLD_RANK/SIZE), Slurm (SLURM_PROCID,
// SLURM_NTASKS), torchrun (RANK, WORLD_SIZE). `getenv` looks a name up.
// Error: InvalidArgument for malformed or contradictory values.
Result<LauncherTopology> TopologyFromEnvironment(
    const std::function<const char*(const char*)>& getenv);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_LAUNCHER_H_
