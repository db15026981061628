// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The cluster module of a build without MPI: a job of one rank, where
// every collective step is this process's own value.

#include "tfdist/base/interrupt.h"
#include "tfdist/cluster/cluster.h"

namespace tfdist::cluster {

bool Available() { return false; }
Status Join(const Launch&) { return Status::OK(); }
void Leave() {}
void Abort(int code) { ExitRemovingTempFiles(code); }
int Rank() { return 0; }
int Size() { return 1; }

Result<std::vector<std::string>> Gather(std::string_view mine) {
  return std::vector<std::string>{std::string(mine)};
}
Result<std::vector<std::string>> AllGather(std::string_view mine, bool) {
  return std::vector<std::string>{std::string(mine)};
}
Group& JobGroup() { return LoneGroup(); }
Result<std::string> Broadcast(std::string value) { return value; }
Result<bool> AllTrue(bool mine) { return mine; }
Result<int64_t> Max(int64_t mine) { return mine; }
Status Barrier() { return Status::OK(); }
Result<StepVote> StepAllReduce(uint64_t, const StepVote& mine) { return mine; }
void TellFailure() {}
bool FailureTold() { return false; }

}  // namespace tfdist::cluster
