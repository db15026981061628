// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The planning steps PlanLayout and the streaming executor share: the
// topology check, the policy and split decision, list_files expanded once.

#ifndef TFDIST_DISTRIBUTE_PLAN_H_
#define TFDIST_DISTRIBUTE_PLAN_H_

#include "policy.h"
#include "tfdist/distribute.h"

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
Result<data::Pipeline> ExpandListFiles(const data::Pipeline& in);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_PLAN_H_
